"""`/llms.txt`: the site's machine-readable surfaces, for agents, in the shape the llms.txt
proposal gives (llmstxt.org): a title, a one-paragraph summary as a quote, then sections of
links, each with what is behind it. Every URL is the site's own (`--base-url` aware)."""

from __future__ import annotations

from sitegen.model.markdown import markdown_link, markdown_text
from sitegen.model.resources import KINDS
from sitegen.model.wording import counted
from sitegen.site.compare import MAX_RUNS, MIN_RUNS
from sitegen.site.compare import PATH as COMPARE_PATH
from sitegen.site.lookup import SiteLookup
from sitegen.site.search import PATH as SEARCH_PATH
from sitegen.site.urls import (
    DATA_QUALITY,
    METHODOLOGY,
    REGRESSIONS,
    REGRESSIONS_FEED,
    RUN_ID_HEX,
    SECTION_TITLES,
    json_twin,
)

_SECTIONS = (
    (
        "kernels",
        "every kernel; a kernel's twin holds its charts and rankings per pass and GPU, or, for "
        "an operation ranked as leaderboards, each board (protocol, GPU, statistic) with every "
        "implementation ranked per workload, the runs that did not pass and the record history",
    ),
    (
        "runs",
        f"every run, newest first; a run's twin is at runs/<first {RUN_ID_HEX} hex of its "
        "digest>/index.json: its whole document, its kernel, pass, implementation, GPU, shape, "
        "values and the links to what it references",
    ),
    ("gpus", "the execution environments: hardware and software"),
    ("implementations", "the implementations, each with its runs"),
    ("projects", "the software projects implementations come from"),
    ("protocols", "how runs were timed: only runs of one protocol are compared"),
    ("workloads", "the concrete shapes and dtypes kernels ran at"),
    (
        "sources",
        "where the numbers come from: each source's licence, attribution, terms, counts and "
        "freshness",
    ),
)


def llms_txt(lookup: SiteLookup) -> str:
    urls = lookup.urls
    at = urls.absolute
    kernels = lookup.analysis.kernels
    gpus = len(lookup.catalog.of_kind("ExecutionEnvironment"))
    lines = [
        "# kernelindex",
        "",
        "> A public catalog of GPU kernel benchmark results: "
        f"{counted(len(lookup.runs), 'run')} of {counted(len(kernels), 'kernel')} on "
        f"{counted(gpus, 'GPU environment')}, each with how and where it "
        "was measured. Every page has a JSON twin beside it, and the whole catalog is one "
        "JSON Lines file.",
        "",
        "The catalog is made of kernelindex.dev/v1alpha1 resources (BenchmarkRun, "
        "BenchmarkProtocol, ExecutionEnvironment, WorkloadCase, WorkloadSuite, "
        "ImplementationRevision, OperationSpec, SoftwareProject), each identified by the "
        "sha256 digest of the canonical JSON (RFC 8785) of its apiVersion, kind and spec; a "
        "run names its implementation, workload, protocol and environment by digest. Runs are"
        " ranked against each other only within one cohort: the same workload, protocol and "
        "environment. Latency is in nanoseconds, lower is better; each value is the statistic"
        " its protocol reports (median, mean, geomean score).",
        "",
        "## Data",
        "",
        f"- [All resources]({at('export/resources.jsonl')}): JSON Lines, one "
        '`{"digest", "resource"}` per line, sorted by digest',
        f"- [Manifest]({at('manifest.json')}): every resource's digest, page and kernel, and "
        "each run's value and identity key (what previews compare)",
        f"- [JSON Schemas]({at('schemas/index.json')}): the schema of each kind, draft 2020-12",
        *(f"- [{kind} schema]({at(urls.schema(kind))})" for kind in sorted(KINDS)),
        f"- [Newest runs]({at('feed.xml')}): Atom feed of the 50 newest runs",
        f"- [Sitemap]({at('sitemap.xml')}): every page",
        "",
        "## JSON twins",
        "",
        f"Every page at {at('<path>/')} has its data at {at('<path>/index.json')}, linked "
        'from the page as `<link rel="alternate" type="application/json">`.',
        "",
        f"- [Home]({at(json_twin(''))}): what the catalog holds, the newest runs",
        *(
            f"- [{SECTION_TITLES[section]}]({at(json_twin(section + '/'))}): {what}"
            for section, what in _SECTIONS
        ),
        f"- [Regressions]({at(json_twin(REGRESSIONS))}): every step found in a series' "
        "history (regression or improvement, of the code or of the environment), newest first;"
        f" also an [Atom feed]({at(REGRESSIONS_FEED)})",
        f"- [Data quality]({at(json_twin(DATA_QUALITY))}): the data-quality marks (over the "
        "physical limit, no spread, host-bound sweep, disagrees, after a regression) counted by"
        " source, GPU and kernel, with every marked run and its one-line reason",
        f"- [Methodology]({at(json_twin(METHODOLOGY))}): how achieved bandwidth and throughput"
        " (% of the GPU's peak) are computed, each mark's rule and threshold, and the reviewed "
        "table of GPU peaks",
        "",
        "## Compare",
        "",
        f"- [Compare runs]({at(COMPARE_PATH)}): {at(COMPARE_PATH)}?runs=<id>,<id> with "
        f"{MIN_RUNS} to {MAX_RUNS} run ids (the first {RUN_ID_HEX} hex digits of a run's "
        "digest) or digests: their identity aligned field by field, each field that differs "
        "marked, and each run's ratio to the first where they are comparable (a page for "
        "browsers: it reads the runs' JSON twins)",
        "",
        "## Kernels",
        "",
        # Kernel titles and GPU names come from content (a run's title, where no
        # OperationSpec names the kernel): escaped, as nothing else here is.
        *(
            f"- {markdown_link(kernel.title, at(json_twin(urls.path_of(kernel.key) or '')))}: "
            f"{counted(len(kernel.runs), 'run')} of "
            f"{counted(len(kernel.series), 'implementation')}"
            + (
                f" on {markdown_text(lookup.gpu_labels(kernel.environments))}"
                if kernel.environments
                else ""
            )
            for kernel in kernels
        ),
        "",
        "## Optional",
        "",
        f"- [Search]({at(SEARCH_PATH)}): full-text search for browsers "
        f"({at(SEARCH_PATH)}?q=<words>), from Pagefind's index in the site",
        "",
    ]
    return "\n".join(lines)
