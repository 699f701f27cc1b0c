"""What the import leaves for the site beside the manifests (docs/kernelindex-import.md):

- `_sources/<slug>.json`, one per source: its name, its policy (licence, terms, attribution, the
  page it points to, when kernelindex.dev verified it and how fresh it promises to be), what was
  imported of it and its newest run; content/reports.py reads it, and every page showing the
  source's numbers credits it.
- `_records/<slug>.json`: kernelindex.dev's record history of the source's runs, who held the
  record of each comparison and since when (`record_events`); content/records.py reads it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from sitegen.importers.kernelindex.manifests import PROJECT_LABEL, Document, Linked, Source

Json = dict[str, Any]
RECORDS_FORMAT = "kernelindex-record-history/1"
# Kinds in the order a report lists them.
KINDS = (
    "OperationSpec",
    "WorkloadCase",
    "WorkloadSuite",
    "SoftwareProject",
    "ImplementationRevision",
    "BenchmarkProtocol",
    "ExecutionEnvironment",
    "BenchmarkRun",
)


def build_reports(linked: Linked, export_name: str, export_sha256: str) -> dict[str, Json]:
    """Each source's report and record history, by path in the content tree."""
    kinds_by_source = _kinds_by_source(linked)
    observed: dict[str, list[str]] = defaultdict(list)
    metrics: dict[str, set[str]] = defaultdict(set)
    for document in linked.documents:
        if document.kind == "BenchmarkRun":
            spec = document.value["run"]["spec"]
            observed[document.source].append(str(spec.get("observedAt", "")))
            metrics[document.source].update(spec.get("sourceNative", {}).get("metrics", {}))
    files: dict[str, Json] = {}
    for source in linked.sources:
        if source.slug not in linked.runs_by_source:
            continue  # a source of serving runs only: nothing of it is imported
        times = sorted(observed[source.slug])
        report: Json = {
            "title": source.name,
            "source": source.slug,
            "kind": source.kind,
            **_policy(source),
            "export": {"file": export_name, "sha256": export_sha256},
            "resources": {kind: kinds_by_source[source.slug][kind] for kind in KINDS},
            "runs": dict(sorted(linked.runs_by_source.get(source.slug, Counter()).items())),
            "sourceNativeMetrics": sorted(metrics[source.slug]),
        }
        if times:
            report["oldestRun"], report["newestRun"] = times[0], times[-1]
        files[f"_sources/{source.slug}.json"] = report
        events = [event for slug, event in linked.records if slug == source.slug]
        if events:
            comparisons: dict[str, list[Json]] = defaultdict(list)
            for event in events:
                comparisons[event.comparison].append(
                    {
                        "at": event.at,
                        "cause": event.cause,
                        "policy": event.policy,
                        "run": event.run,
                        **({"previous": event.previous} if event.previous else {}),
                    }
                )
            files[f"_records/{source.slug}.json"] = {
                "format": RECORDS_FORMAT,
                "source": source.slug,
                "comparisons": [
                    {"key": key, "events": comparisons[key]} for key in sorted(comparisons)
                ],
            }
    return files


def _policy(source: Source) -> Json:
    """The policy as the site reads a report: licence and attribution (the credit line), the
    terms, the page they are on, when verified and the freshness promised."""
    policy = source.policy
    if policy is None:
        return {"policy": None}
    found: Json = {}
    for key, field in (
        ("licence", "license"),
        ("copyright", "attribution"),
        ("terms", "terms"),
        ("url", "url"),
        ("verified", "verified"),
        ("freshnessDays", "freshnessDays"),
    ):
        if policy.get(field) is not None:
            found[key] = policy[field]
    return found


def _kinds_by_source(linked: Linked) -> dict[str, Counter[str]]:
    """What each source's runs point at, each identity once (a shared one counts for each)."""
    owners: dict[str, set[str]] = defaultdict(set)  # digest → sources whose runs name it
    for document in linked.documents:
        if document.kind != "BenchmarkRun":
            continue
        spec = document.value["run"]["spec"]
        for key in (
            "implementationDigest",
            "workloadDigest",
            "protocolDigest",
            "environmentDigest",
        ):
            owners[str(spec.get(key))].add(document.source)
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    seen: set[tuple[str, str]] = set()
    by_digest = {d.digest: d for d in linked.documents if d.kind != "BenchmarkRun"}
    by_digest |= {f"project:{d.name}": d for d in linked.documents if d.kind == "SoftwareProject"}
    for document in linked.documents:
        if document.kind == "BenchmarkRun":
            kinds[document.source]["BenchmarkRun"] += 1
            for part, kind in (
                ("protocol", "BenchmarkProtocol"),
                ("environment", "ExecutionEnvironment"),
            ):
                digest = document.value["run"]["spec"][f"{part}Digest"]
                if (document.source, digest) not in seen:
                    seen.add((document.source, digest))
                    kinds[document.source][kind] += 1
    for digest, sources in owners.items():
        named = by_digest.get(digest)
        if named is None:
            continue
        for slug in sorted(sources):
            if (slug, digest) not in seen:
                seen.add((slug, digest))
                kinds[slug][named.kind] += 1
                _count_behind(named, by_digest, slug, kinds, seen)
    return kinds


def _count_behind(
    document: Document,
    by_key: dict[str, Document],
    slug: str,
    kinds: dict[str, Counter[str]],
    seen: set[tuple[str, str]],
) -> None:
    """The operation behind a workload or implementation, and an implementation's project,
    count for the source too."""
    spec = document.value["spec"]
    operation = spec.get("operationSpecDigest") or spec.get("operation", {}).get("specDigest")
    project = (document.value["metadata"].get("labels") or {}).get(PROJECT_LABEL)
    for key in (str(operation), f"project:{project}"):
        behind = by_key.get(key)
        if behind is not None and (slug, key) not in seen:
            seen.add((slug, key))
            kinds[slug][behind.kind] += 1
