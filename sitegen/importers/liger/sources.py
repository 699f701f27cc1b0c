"""Where a CSV's rows come from, and so what their runs are named and credited as.

Upstream's files are told apart by name (`all_benchmark_data_cutile.csv` is the `cutile`
source); rows a contributor measured are told apart by the machine they describe with
`--environment`: its ExecutionEnvironment's name leads their externalIds, names and files, and
every row binds to it rather than to a GPU looked up by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.content.documents import load_resource_file
from sitegen.importers.liger.conventions import MEASURED_SOURCE, SOURCE
from sitegen.model.names import kebab
from sitegen.model.problems import Problem

if TYPE_CHECKING:
    from sitegen.importers.liger.resources import Built

MAIN_FILE = "all_benchmark_data.csv"


@dataclass(frozen=True)
class Origin:
    tag: str  # leads externalIds, run names and run files; "" for upstream's main CSV
    source: str  # sourceNative.source
    environment: Built | None = None  # the machine a contributor described; None: by gpu_name

    @property
    def measured(self) -> bool:
        return self.environment is not None


def upstream(file_name: str) -> Origin:
    """`""` for the main CSV, `cutile` for `…_cutile.csv`, and so on."""
    if file_name == MAIN_FILE:
        return Origin("", SOURCE)
    tag = kebab(file_name.removesuffix(".csv").removeprefix("all_benchmark_data_"))
    return Origin(tag, f"{SOURCE}-{tag}")


def measured(environment: Built) -> Origin:
    """Rows measured on the machine `environment` describes, named after it."""
    tag = kebab(environment.name)
    return Origin(tag, f"{MEASURED_SOURCE}-{tag}"[:100].rstrip("-"), environment)


def load_environment(path: Path, problems: list[Problem]) -> Built | None:
    """The ExecutionEnvironment a contributor wrote (or `sitegen environment` printed), checked
    as strictly as content: it comes from outside, like any pull request's files."""
    from sitegen.importers.liger.resources import Built  # resources imports Origin from here

    loaded = load_resource_file(path, str(path), "ExecutionEnvironment", problems)
    if loaded is None:
        return None
    name = loaded.name
    return Built(f"environments/{name}.json", loaded.document, loaded.digest)


def describes(environment: Built, gpu_name: str) -> bool:
    """Whether rows on `gpu_name` can have been measured in `environment`: its product is the
    name (nvidia-smi and torch spell it alike) or the name's start (`NVIDIA H100`, `… PCIe`)."""
    product = str(environment.document["spec"]["hardware"]["product"])
    return gpu_name == product or gpu_name.startswith((f"{product} ", f"{product}-"))
