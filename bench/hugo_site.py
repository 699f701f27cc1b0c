"""The Hugo twin of a synthetic catalog: one Markdown page per run, carrying the run page's text.

Each page holds what sitegen's run page says in words: title, value, spread, status, observed
time, labels, shape and tensors, the protocol and the environment spelled out, provenance, and
the digest with its canonical JSON. Links go to the same paths sitegen uses. The layout is one
plain HTML template with the same header, navigation and footer. Hugo's defaults are kept (home
and section pages, RSS and sitemap), with RSS cut to the 50 items sitegen's feed carries and
code-fence highlighting off (sitegen prints the canonical JSON plain). Tensors are a list, not a
table: of the two, the cheaper for Hugo, so the comparison errs in Hugo's favour.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONFIG = """baseURL = "https://kernelindex.dev/"
title = "kernelindex"
disableKinds = ["taxonomy", "term"]
[services.rss]
limit = 50
[markup.highlight]
codeFences = false
"""

SINGLE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ .Title }} · kernelindex</title>
<meta name="description" content="{{ .Summary | plainify | truncate 160 }}">
<link rel="canonical" href="{{ .Permalink }}">
<link rel="alternate" type="application/atom+xml" href="/index.xml" title="Newest runs">
</head>
<body>
<header class="site-header"><div class="wrap">
<a class="brand" href="/">kernel<span>index</span></a>
<nav aria-label="Sections"><a href="/kernels/">Kernels</a> <a href="/gpus/">GPUs</a>
<a href="/implementations/">Implementations</a>
<a href="/projects/">Projects</a>
<a href="/protocols/">Protocols</a> <a href="/workloads/">Workloads</a>
<a href="/runs/">Runs</a></nav>
</div></header>
<main class="wrap">
<p class="kicker"><a href="/runs/">Runs</a></p>
<h1>{{ .Title }}</h1>
{{ .Content }}
</main>
<footer class="site-footer"><div class="wrap">
<p class="attribution">Data: {{ .Params.credit }}</p>
<p><a href="/feed.xml">Atom feed</a></p>
</div></footer>
</body>
</html>
"""

LIST = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>
<body><h1>{{ .Title }}</h1><p>{{ len .Pages }} pages.</p></body></html>
"""

CREDIT = "Liger-Kernel, BSD-2-Clause, Copyright 2024 LinkedIn Corporation"


def write_skeleton(root: Path) -> None:
    (root / "layouts" / "_default").mkdir(parents=True, exist_ok=True)
    (root / "content" / "runs").mkdir(parents=True, exist_ok=True)
    (root / "hugo.toml").write_text(CONFIG)
    (root / "layouts" / "_default" / "single.html").write_text(SINGLE)
    (root / "layouts" / "_default" / "list.html").write_text(LIST)
    (root / "layouts" / "index.html").write_text(LIST)


def _ms(ns: float) -> str:
    return f"{ns / 1e6:,.3f} ms"


def _title(document: dict[str, Any] | None, fallback: str) -> str:
    if document is None:
        return fallback
    return str(document["metadata"].get("title") or document["metadata"]["name"])


def page(
    digest_value: str,
    document: dict[str, Any],
    canonical: bytes,
    resources: dict[str, dict[str, Any]],
    paths: dict[str, str],
) -> str:
    """The Markdown of one run page (front matter + body)."""
    spec, metadata = document["spec"], document["metadata"]
    short = digest_value.removeprefix("sha256:")[:16]
    title = metadata.get("title") or metadata["name"]
    lines = [
        "---",
        f"title: {json.dumps(title, ensure_ascii=False)}",
        f"date: {spec['observedAt']}",
        f'url: "/runs/{short}/"',
        f'credit: "{CREDIT}"',
        "---",
        "",
    ]
    if "timing" in spec:
        median = spec["timing"]["latencyNs"]["median"]
        stats = {m["statistic"]: m["value"] for m in spec.get("measurements", [])}
        lines.append(f"**Median latency:** {_ms(median)} (exactly {median:,} ns)")
        if "p20" in stats and "p80" in stats:
            lines.append(f"p20 {_ms(stats['p20'])} / p80 {_ms(stats['p80'])}")
    else:
        stats = {m["statistic"]: m["value"] for m in spec["measurements"]}
        metric = spec["measurements"][0]["metric"].replace("_", " ")
        lines.append(f"**Median {metric}:** {stats['median']:,.2f} MiB")
        lines.append(f"p20 {stats.get('p20', 0):,.2f} / p80 {stats.get('p80', 0):,.2f} MiB")
    observed = spec["observedAt"]
    lines += [
        "",
        f"**Status:** {spec['status']}, observed {observed[:10]} {observed[11:19]} UTC",
        "",
        "## What was measured",
        "",
    ]
    workload = resources.get(spec["workloadDigest"])
    protocol = resources.get(spec["protocolDigest"])
    environment = resources.get(spec["environmentDigest"])
    kernel_digest = workload["spec"]["operationSpecDigest"] if workload else None
    kernel = resources.get(kernel_digest or "")
    for label, value, target in (
        ("Kernel", _title(kernel, "unknown"), kernel_digest),
        (
            "Implementation",
            title.split(" · ")[1] if " · " in title else "",
            spec["implementationDigest"],
        ),
        ("Pass", title.split(" · ")[2] if title.count(" · ") >= 2 else "", None),
        (
            "GPU",
            environment["spec"]["hardware"]["product"] if environment else "",
            spec["environmentDigest"],
        ),
        ("Workload", _title(workload, ""), spec["workloadDigest"]),
        ("Protocol", _title(protocol, ""), spec["protocolDigest"]),
    ):
        href = paths.get(target or "")
        lines.append(f"- {label}: [{value}]({href})" if href else f"- {label}: {value}")
    if workload:
        lines.append("")
        for name, tensor in workload["spec"]["tensors"].items():
            shape = " × ".join(str(d) for d in tensor["shape"])
            lines.append(f"- Tensor `{name}`: `{shape}`, {tensor['dtype']}")
    if metadata.get("labels"):
        lines += ["", "### Labels", ""]
        lines += [f"- {key}: {value}" for key, value in sorted(metadata["labels"].items())]
    native = spec.get("sourceNative", {})
    lines += ["", "## Provenance", ""]
    if native:
        lines.append(f"- Source: `{native['source']}`")
        lines.append("- Upstream repository: <https://github.com/linkedin/Liger-Kernel>")
        for key in ("benchmark", "externalId"):
            if key in native:
                lines.append(f"- {key}: `{native[key]}`")
        for key, value in sorted(native.get("metrics", {}).items()):
            lines.append(f"- Raw {key}: `{value!r}`")
    lines.append(f"- Name: `{metadata['name']}`")
    if protocol:
        pspec = protocol["spec"]
        lines += ["", "## Protocol", "", f"- Protocol: {_title(protocol, '')}"]
        lines.append(f"- Harness: {pspec['harness']['name']}")
        if "repository" in pspec["harness"]:
            lines.append(f"- Harness repository: <{pspec['harness']['repository']}>")
        for key, value in pspec["measurement"].items():
            lines.append(f"- {key}: {value}")
        if "comparability" in pspec:
            lines.append(f"- Comparability family: `{pspec['comparability']['family']}`")
    if environment:
        hardware = environment["spec"]["hardware"]
        lines += ["", "## Environment", "", f"- Environment: {_title(environment, '')}"]
        lines += [f"- {key}: {value}" for key, value in hardware.items()]
        lines.append("- Software: not recorded")
    lines += [
        "",
        "## Identity",
        "",
        f"Digest `{digest_value}`: the sha256 of the canonical JSON (RFC 8785) of apiVersion, "
        "kind and spec:",
        "",
        "```json",
        canonical.decode(),
        "```",
        "",
    ]
    return "\n".join(lines)
