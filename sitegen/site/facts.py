"""Each kind of resource as the fact lists its pages show: a protocol's measurement, an
environment's hardware and software, a workload's shape, an implementation's build, a project."""

from __future__ import annotations

import json
from typing import Any

from sitegen.content.loaded import LoadedResource
from sitegen.site.format import title_of
from sitegen.site.records import Fact, FactGroup, Link
from sitegen.site.urls import SiteUrls

_MEASUREMENT_LABELS = (
    ("synchronization", "Synchronization"),
    ("warmupIterations", "Warm-up iterations"),
    ("warmupDuration", "Warm-up (ns)"),
    ("measuredIterations", "Measured iterations"),
    ("samples", "Samples"),
    ("compileIncluded", "Compile time included"),
    ("setupIncluded", "Setup included"),
    ("inputRegeneration", "Input regeneration"),
    ("outlierPolicy", "Outlier policy"),
)
_SOFTWARE_LABELS = (
    ("operatingSystem", "Operating system"),
    ("kernel", "OS kernel"),
    ("driver", "Driver"),
    ("cudaToolkit", "CUDA toolkit"),
    ("compiler", "Compiler"),
)


def protocol_facts(entry: LoadedResource, urls: SiteUrls) -> tuple[Fact, ...]:
    """How a protocol times: its link first (a run page shows it; the protocol's own page
    drops it)."""
    spec = entry.spec
    harness, measurement = spec["harness"], spec["measurement"]
    facts = [Fact("Protocol", title_of(entry), urls.link(entry.digest))]
    facts.append(
        Fact("Harness", " ".join(p for p in (harness["name"], harness.get("version", "")) if p))
    )
    if "repository" in harness:
        facts.append(Fact("Harness repository", harness["repository"], harness["repository"]))
    if "commit" in harness:
        facts.append(Fact("Harness commit", harness["commit"], code=True))
    facts.append(Fact("Timer", measurement["timer"].replace("_", " ")))
    facts.append(Fact("Primary statistic", measurement["primaryStatistic"]))
    for key, label in _MEASUREMENT_LABELS:
        if key in measurement:
            value = measurement[key]
            text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
            facts.append(Fact(label, text))
    if "comparability" in spec:
        facts.append(Fact("Comparability family", spec["comparability"]["family"], code=True))
    return tuple(facts)


def environment_facts(entry: LoadedResource, urls: SiteUrls) -> tuple[Fact, ...]:
    """Where a run was measured: its link first, then hardware, software and settings."""
    spec = entry.spec
    hardware, software = spec["hardware"], spec["software"]
    facts = [Fact("Environment", title_of(entry), urls.link(entry.digest))]
    product, vendor = hardware["product"], hardware["vendor"]
    shown = product if product.lower().startswith(vendor) else f"{vendor.upper()} {product}"
    facts.append(Fact("GPU", shown))
    facts.append(Fact("Architecture", hardware["architecture"], code=True))
    for key, label in (
        ("formFactor", "Form factor"),
        ("count", "Count"),
        ("interconnect", "Interconnect"),
    ):
        if key in hardware:
            facts.append(Fact(label, str(hardware[key])))
    if "memoryBytes" in hardware:
        facts.append(Fact("Memory", f"{hardware['memoryBytes'] / 2**30:,.0f} GiB"))
    for key, label in _SOFTWARE_LABELS:
        if key in software:
            facts.append(Fact(label, software[key]))
    if "framework" in software:
        framework = software["framework"]
        facts.append(Fact("Framework", f"{framework['name']} {framework['version']}"))
    for library, version in sorted(software.get("libraries", {}).items()):
        facts.append(Fact("Library", f"{library} {version}"))
    if not software:
        facts.append(Fact("Software", "not recorded"))
    for key, value in sorted(spec.get("settings", {}).items()):
        facts.append(Fact(f"Setting {key}", json.dumps(value)))
    if "imageDigest" in spec:
        facts.append(Fact("Image digest", spec["imageDigest"], code=True))
    return tuple(facts)


def scalar_facts(spec: dict[str, Any], prefix: str = "") -> tuple[Fact, ...]:
    """A workload's scalars: `eps: 1e-06 (fp32)`."""
    return tuple(
        Fact(f"{prefix}{name}", f"{json.dumps(s['value'])} ({s['dtype']})")
        for name, s in spec.get("scalars", {}).items()
    )


def workload_groups(spec: dict[str, Any], kernel: Link, known: bool) -> list[FactGroup]:
    """`kernel`: the workload's operation; `known`: whether the catalog has its kernel."""
    facts = [Fact("Kernel", kernel.text, kernel.href, code=not known)]
    facts += [Fact(f"Axis {name}", f"{value:,}") for name, value in spec["axes"].items()]
    tensors = tuple(
        Fact(
            f"Tensor {name}",
            f"{' × '.join(str(d) for d in t['shape']) or 'scalar'} · {t['dtype']}",
        )
        for name, t in spec["tensors"].items()
    )
    correctness = tuple(Fact(k, str(v)) for k, v in spec["correctness"].items())
    return [
        FactGroup("Shape", tuple(facts)),
        FactGroup("Tensors", tensors + scalar_facts(spec, "Scalar ")),
        FactGroup("Correctness", correctness),
    ]


def suite_groups(spec: dict[str, Any], kernel: Link, known: bool) -> list[FactGroup]:
    """A WorkloadSuite: the cases measured as one workload, and how they are aggregated."""
    aggregation = spec["aggregation"]
    facts = (
        Fact("Kernel", kernel.text, kernel.href, code=not known),
        Fact("Cases", f"{len(spec['cases']):,}"),
        Fact("Aggregated as", f"{aggregation['statistic']} {aggregation['metric']}"),
    )
    cases = tuple(
        Fact(
            f"Case {case['externalId']}",
            ", ".join(f"{name}={value:,}" for name, value in case["axes"].items()) or "no axes",
        )
        for case in spec["cases"]
    )
    correctness = tuple(Fact(k, str(v)) for k, v in spec["correctness"].items())
    return [
        FactGroup("Suite", facts),
        FactGroup("Cases", cases),
        FactGroup("Correctness", correctness),
    ]


def implementation_groups(
    entry: LoadedResource, kernel: Link, known: bool, project: Link | None
) -> list[FactGroup]:
    """`kernel`: the implementation's operation; `known`: whether the catalog has its kernel."""
    spec = entry.spec
    facts = [Fact("Kernel", kernel.text, kernel.href, code=not known)]
    if project is not None:
        facts.append(Fact("Project", project.text, project.href))
    labels = entry.metadata.get("labels") or {}
    if labels.get("role") == "baseline":
        facts.append(Fact("Role", "baseline: ratios on kernel pages are relative to it"))
    callable_ = spec["callable"]
    facts.append(Fact("Language", callable_["language"]))
    for key in ("path", "symbol", "interface"):
        if key in callable_:
            facts.append(Fact(key.capitalize(), callable_[key], code=True))
    revision = spec["projectRevision"]
    for key, label in (
        ("repository", "Repository"),
        ("commit", "Commit"),
        ("version", "Version"),
        ("treeDigest", "Tree digest"),
    ):
        if key in revision:
            link = revision[key] if key == "repository" else None
            facts.append(Fact(label, revision[key], link, code=key != "repository"))
    support = spec["support"]
    support_facts = [
        Fact("Architectures", ", ".join(support["hardwareArchitectures"]) or "not declared"),
        Fact("Dtypes", ", ".join(support["dtypes"]) or "not declared"),
    ]
    for key, label in (
        ("productsTested", "Products tested"),
        ("axes", "Axes"),
        ("layouts", "Layouts"),
    ):
        if key in support:
            support_facts.append(Fact(label, ", ".join(support[key])))
    build = []
    for variant in spec.get("buildVariants", []):
        install = variant["install"]
        text = " ".join(
            str(install[k])
            for k in ("kind", "package", "version", "repository", "commit", "command")
            if k in install
        )
        build.append(Fact(variant["name"], text, code=True))
    licensing = tuple(
        Fact(k.capitalize(), " ".join(v.values()) if isinstance(v, dict) else v)
        for k, v in spec["licensing"].items()
    )
    for author in entry.metadata.get("authors") or ():
        name = author.get("name") or author.get("github") or ""
        github = author.get("github")
        facts.append(Fact("Author", name, f"https://github.com/{github}" if github else None))
    source_facts = list(_source_facts(spec.get("source") or {}))
    return [
        FactGroup("Implementation", tuple(facts)),
        FactGroup("Source file", tuple(source_facts)),
        FactGroup("Support", tuple(support_facts)),
        FactGroup("Build variants", tuple(build)),
        FactGroup("Licensing", licensing or (Fact("Licence", "not declared"),)),
    ]


def _source_facts(source: dict[str, Any]) -> list[Fact]:
    """The implementation's source: its file (name, size, content digest), or where it is."""
    facts = []
    if "fileName" in source:
        facts.append(Fact("File", source["fileName"], code=True))
    if "sizeBytes" in source:
        facts.append(Fact("Size", f"{source['sizeBytes']:,} bytes"))
    if "contentDigest" in source:
        facts.append(Fact("Content digest", source["contentDigest"], code=True))
    if "repository" in source:
        text = " ".join(str(source[k]) for k in ("repository", "commit", "path") if k in source)
        facts.append(Fact("Repository", text, source["repository"]))
    return facts


def project_facts(spec: dict[str, Any]) -> tuple[Fact, ...]:
    facts = [Fact("Name", spec["name"])]
    if "kind" in spec:
        facts.append(Fact("Kind", spec["kind"]))
    for key, label in (("repository", "Repository"), ("homepage", "Homepage")):
        if key in spec:
            facts.append(Fact(label, spec[key], spec[key]))
    if "host" in spec:
        facts.append(Fact("Host", f"{spec['host']['kind']}: {spec['host']['id']}"))
    for package in spec.get("packages", []):
        facts.append(Fact("Package", f"{package['ecosystem']}: {package['name']}", code=True))
    return tuple(facts)
