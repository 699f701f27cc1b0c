"""/llms.txt (sitegen/site/llms.py): the llms.txt proposal's shape, the site's own URLs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sitegen.model.digest import digest
from sitegen.site.llms import llms_txt
from sitegen.site.lookup import SiteInputs, SiteLookup
from sitegen.site.urls import plan_urls
from tests.conftest import REPOSITORY
from tests.model.test_markdown import tags
from tests.site.planned import site_inputs

REFERENCE = REPOSITORY / "tests" / "reference"
LINK = re.compile(r"^- \[([^\]]+)\]\((\S+)\)(?:: (.+))?$")


def _lookup(base_url: str | None = None) -> SiteLookup:
    inputs = site_inputs()
    urls = plan_urls(inputs.catalog, inputs.analysis.kernels, base_url)
    return SiteLookup(SiteInputs(inputs.catalog, inputs.analysis, urls, inputs.reports, None))


def test_a_title_a_quoted_summary_then_sections_of_links() -> None:
    text = llms_txt(_lookup())
    lines = text.splitlines()
    assert lines[0] == "# kernelindex" and lines[1] == ""
    assert lines[2].startswith("> A public catalog of GPU kernel benchmark results: 28 runs of 3 ")
    sections = [line[3:] for line in lines if line.startswith("## ")]
    assert sections == ["Data", "JSON twins", "Compare", "Kernels", "Optional"]
    links = [LINK.match(line) for line in lines if line.startswith("- ")]
    assert all(links), [line for line in lines if line.startswith("- ") and not LINK.match(line)]
    named = {m.group(1): m.group(2) for m in links if m}
    assert named["All resources"] == "https://kernelindex.dev/export/resources.jsonl"
    assert named["Manifest"] == "https://kernelindex.dev/manifest.json"
    assert named["JSON Schemas"] == "https://kernelindex.dev/schemas/index.json"
    assert named["Runs"] == "https://kernelindex.dev/runs/index.json"
    assert named["LayerNorm"] == "https://kernelindex.dev/kernels/liger-layer-norm/index.json"
    assert named["Compare runs"] == "https://kernelindex.dev/compare/"
    assert named["Regressions"] == "https://kernelindex.dev/regressions/index.json"
    assert named["Data quality"] == "https://kernelindex.dev/data-quality/index.json"
    assert named["Methodology"] == "https://kernelindex.dev/methodology/index.json"
    assert "[Atom feed](https://kernelindex.dev/regressions.xml)" in text
    assert "?runs=<id>,<id>" in text and text.endswith("\n")


def test_every_url_is_under_the_base_url() -> None:
    text = llms_txt(_lookup("https://example.org/bench/"))
    urls = re.findall(r"https?://[^\s)<]+", text)
    assert urls and all(url.startswith("https://example.org/bench/") for url in urls), urls
    assert llms_txt(_lookup("https://example.org/bench/")) == text  # deterministic


def _hostile_export(content: Path) -> None:
    """One export bundle: its run's title names the kernel, its GPU product holds a link."""
    bundle = json.loads((REFERENCE / "layer-norm-backward-liger-h100.json").read_text())
    bundle["run"]["metadata"]["title"] = (
        "[[Evil](https://evil.example/llms) <img src=x onerror=alert(1)>](https://evil.example/k)"
        " · liger · backward"
    )
    environment = bundle["environment"]
    environment["spec"]["hardware"]["product"] = "H100 ](https://evil.example/gpu) `x`"
    bundle["run"]["spec"]["environmentDigest"] = digest("ExecutionEnvironment", environment["spec"])
    content.mkdir()
    (content / "run.json").write_text(json.dumps(bundle))


def test_content_cannot_put_links_images_or_html_into_llms_txt(tmp_path: Path) -> None:
    content = tmp_path / "content"
    _hostile_export(content)
    inputs = site_inputs(content)
    text = llms_txt(SiteLookup(inputs))
    (kernel,) = [line for line in text.splitlines() if "Evil" in line]
    assert kernel == (
        "- [\\[\\[Evil\\]\\(https\\://evil.example/llms\\) \\<img src=x onerror=alert\\(1\\)\\>\\]"
        "\\(https\\://evil.example/k\\)](https://kernelindex.dev/kernels/"
        + kernel.split("/kernels/")[1].split(")")[0]
        + "): 1 run of 1 implementation on "
        "H100 \\]\\(https\\://evil.example/gpu\\) \\`x\\` 80GB HBM3"
    )
    assert tags(kernel) == ["ul", "li", "a"]  # the link to the kernel's twin, nothing else
    assert "> A public catalog of GPU kernel benchmark results: 1 run of 1 kernel on 1 GPU " in (
        text
    )
