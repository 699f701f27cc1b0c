"""Speed against memory (sitegen/analysis/frontier.py): a full pass's latency and memory paired
shape by shape, and the frontier of those no other beats on both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from sitegen.analysis.frontier import frontiers_of, pareto
from sitegen.analysis.kernels import RunFacts, Series, analyse
from sitegen.analysis.series import passes_of
from sitegen.content.run_summary import Value
from sitegen.model.digest import digest
from sitegen.pipeline import check_content
from tests.analysis.test_verdicts import H100, set_latency
from tests.site.planned import CONTENT


def with_full_latency(root: Path, medians: dict[tuple[str, int], int]) -> Path:
    """The fixture plus a full-pass latency protocol and, for each (provider, hidden) of
    `medians`, a full-pass latency run on the H100 (the fixture has full-pass memory only)."""
    content = root / "content"
    shutil.copytree(CONTENT, content)
    forward = json.loads((content / "protocols" / "liger-bench-do-bench-forward.json").read_text())
    full = json.loads(json.dumps(forward))
    full["metadata"] = {
        "name": "liger-bench-do-bench-full",
        "title": "Liger benchmark harness · full pass",
    }
    full["spec"]["comparability"]["notes"] = "Timed: forward and backward together."
    (content / "protocols" / "liger-bench-do-bench-full.json").write_text(json.dumps(full))
    protocol = digest("BenchmarkProtocol", full["spec"])
    for (provider, hidden), median in medians.items():
        (source,) = (content / "runs").glob(
            f"liger-layer-norm-forward-{provider}-{H100}-hidden{hidden}-rows4096-*.json"
        )
        run: dict[str, Any] = json.loads(source.read_text())
        run["metadata"]["name"] = run["metadata"]["name"].replace("-forward-", "-full-")
        run["metadata"]["title"] = f"LayerNorm · {provider} · full"
        run["spec"]["protocolDigest"] = protocol
        native = run["spec"]["sourceNative"]
        native["benchmark"] = "layer_norm/full"
        native["externalId"] = native["externalId"].replace("/forward/", "/full/")
        path = content / "runs" / f"full-{provider}-{hidden}.json"
        path.write_text(json.dumps(run))
        set_latency(path, median, median - 1_000, median + 1_000)
    return content


def test_full_pass_latency_and_memory_pair_by_shape_with_the_frontier(tmp_path: Path) -> None:
    # The fixture's memory: both providers 320 MiB at 4096, 1,280.5 MiB at 16384 (equal).
    content = with_full_latency(
        tmp_path,
        {
            ("liger", 4096): 100_000,
            ("huggingface", 4096): 300_000,
            ("liger", 16384): 400_000,
            ("huggingface", 16384): 400_000,
            ("liger", 1024): 50_000,  # no memory run at 1024: no pair there
        },
    )
    catalog = check_content(content).catalog
    kernel = next(k for k in analyse(catalog).kernels if k.title == "LayerNorm")
    full = next(p for p in passes_of(kernel) if p.name == "full")
    (gpu,) = full.gpus
    (chart,) = frontiers_of(gpu, "full")
    assert chart.latency.metric == "latency" and chart.memory.metric == "peak_memory_allocated"
    assert [s.x for s in chart.shapes] == [4096, 16384]
    at_4096, at_16384 = chart.shapes
    # Liger is as light and faster: Transformers is beaten on both.
    assert [
        (p.series.label, p.dominated_by.label if p.dominated_by else None) for p in at_4096.points
    ] == [
        ("Liger", None),
        ("Transformers", "Liger"),
    ]
    # Equal on both: neither beats the other.
    assert [p.series.label for p in at_16384.frontier] == ["Liger", "Transformers"]
    liger = at_4096.points[0]
    assert liger.latency.centre == 100_000 and liger.memory.centre == 320.15625
    assert liger.latency_run.protocol != liger.memory_run.protocol  # two runs, one point
    assert frontiers_of(gpu, "forward") == ()  # a full pass only


def point(
    label: str, latency: float, memory: float
) -> tuple[Series, Value, Value, RunFacts, RunFacts]:
    series = Series(label, label, label, label, False, False, None)
    run: Any = None  # pareto reads neither run
    return (
        series,
        Value("latency", "ns", "median", latency, None, None, None),
        Value("peak_memory_allocated", "mib", "median", memory, None, None, None),
        run,
        run,
    )


def test_pareto_keeps_what_nothing_beats_on_both() -> None:
    found = pareto(
        [
            point("slow and heavy", 3, 12),
            point("light", 2, 5),
            point("fast", 1, 10),
            point("as light, slower", 2.5, 5),
            point("same as light", 2, 5),
            point("fast's weight, slower", 2, 10),
        ]
    )
    standing = {p.series.label: p.dominated_by.label if p.dominated_by else None for p in found}
    assert standing == {
        "fast": None,
        "light": None,
        "same as light": None,  # equal on both is not beaten
        "fast's weight, slower": "fast",
        "as light, slower": "light",
        "slow and heavy": "fast",
    }
    assert [p.series.label for p in found][:1] == ["fast"]  # by latency
