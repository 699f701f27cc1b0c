"""urls.py: base URLs, resource paths, name collisions, run paths from digests."""

from __future__ import annotations

from typing import Any

import pytest

from sitegen.analysis.kernels import HeldAnalysis, Kernel, analyse
from sitegen.content.catalog import Catalog, resolve
from sitegen.content.load import LoadedResource
from sitegen.pipeline import check_content
from sitegen.site.urls import UrlError, output_path, parse_base_url, plan_urls, portable_name
from tests.conftest import FIXTURES


@pytest.mark.parametrize(
    ("given", "prefix", "base"),
    [
        (None, "/", "https://kernelindex.dev/"),
        ("https://example.org", "/", "https://example.org/"),
        ("https://example.org/a/b", "/a/b/", "https://example.org/a/b/"),
        ("/preview/", "/preview/", "https://kernelindex.dev/preview/"),
        ("/", "/", "https://kernelindex.dev/"),
    ],
)
def test_parse_base_url(given: str | None, prefix: str, base: str) -> None:
    assert parse_base_url(given) == (prefix, base)


@pytest.mark.parametrize("bad", ["example.org", "//example.org/", "ftp://x/", "https://x/?q=1"])
def test_bad_base_url(bad: str) -> None:
    with pytest.raises(UrlError):
        parse_base_url(bad)


HINT = "hint: give an http(s) URL such as https://example.org/sub/, or a path such as /sub/"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            "https://ex ample.org/",
            "--base-url: not a URL: 'https://ex ample.org/' holds a space, a control or "
            f'non-ASCII character or one of <>"\\^`{{|}}; {HINT}',
        ),
        (
            "https://x.org:99999/",
            f"--base-url: a port is a number from 1 to 65535: 'https://x.org:99999/'; {HINT}",
        ),
        (
            "/a b/<x>/",
            "--base-url: a path is letters, digits, -._~ and %-escapes, with no . or .. "
            f"segment: '/a b/<x>/'; {HINT}",
        ),
        (
            "https://x.org/a/../b/",
            "--base-url: a path is letters, digits, -._~ and %-escapes, with no . or .. "
            f"segment: 'https://x.org/a/../b/'; {HINT}",
        ),
    ],
)
def test_a_base_url_not_fit_to_publish_is_refused_in_one_line(bad: str, message: str) -> None:
    with pytest.raises(UrlError) as refused:
        parse_base_url(bad)
    assert str(refused.value) == message


def test_output_paths() -> None:
    assert output_path("") == "index.html"
    assert output_path("runs/abc/") == "runs/abc/index.html"
    assert output_path("feed.xml") == "feed.xml"


def test_fixture_paths() -> None:
    catalog = check_content(FIXTURES / "site" / "content").catalog
    urls = plan_urls(catalog, analyse(catalog).kernels, None)
    seed = "sha256:f0cf6dd69e048a9b8a36f49fe2ac18abee9a512e48d2f92dd7cfd4d03a280b86"
    assert urls.path_of(seed) == "runs/f0cf6dd69e048a9b/"
    operation = next(e for e in catalog.of_kind("OperationSpec") if e.name == "liger-layer-norm")
    assert urls.link(operation.digest) == "/kernels/liger-layer-norm/"
    environment = catalog.of_kind("ExecutionEnvironment")[0]
    assert urls.path_of(environment.digest) == f"gpus/{environment.name}/"


def _renamed(entry: LoadedResource, name: str) -> LoadedResource:
    metadata = entry.resource.metadata.model_copy(update={"name": name})
    resource = entry.resource.model_copy(update={"metadata": metadata})
    return LoadedResource(entry.path + "-copy", entry.where, resource, entry.digest)


def test_repeated_names_get_digest_suffixes() -> None:
    catalog = check_content(FIXTURES / "site" / "content").catalog
    protocols = list(catalog.of_kind("BenchmarkProtocol"))
    # Two different protocols that share a name (names are not unique in the format).
    entries = [e for e in catalog.by_digest.values() if e.kind != "BenchmarkProtocol"]
    entries += [protocols[0], _renamed(protocols[1], protocols[0].name)]
    shared, _ = resolve(entries)
    urls = plan_urls(shared, analyse(shared).kernels, None)
    paths = {urls.path_of(p.digest) for p in protocols[:2]}
    assert paths == {f"protocols/{protocols[0].name}-{p.digest[7:19]}/" for p in protocols[:2]}


def test_clashing_paths_are_an_error() -> None:
    catalog = check_content(FIXTURES / "site" / "content").catalog
    protocols = list(catalog.of_kind("BenchmarkProtocol"))
    entries = [e for e in catalog.by_digest.values() if e.kind != "BenchmarkProtocol"]
    # `x` twice gets `x-<hex>`; a third resource literally named `x-<hex>` would clash.
    first, second, third = protocols[:3]
    entries += [
        _renamed(first, "x"),
        _renamed(second, "x"),
        _renamed(third, f"x-{first.digest[7:19]}"),
    ]
    shared, _ = resolve(entries)
    with pytest.raises(UrlError, match="is also the page of"):
        plan_urls(shared, analyse(shared).kernels, None)


@pytest.mark.parametrize("name", ["index.json", "index.html"])
def test_a_page_named_as_a_pages_file_is_an_error(name: str) -> None:
    """`gpus/index.json/` would be a folder where the GPUs' list page writes its JSON twin."""
    catalog = check_content(FIXTURES / "site" / "content").catalog
    environment = catalog.of_kind("ExecutionEnvironment")[0]
    entries = [e for e in catalog.by_digest.values() if e.digest != environment.digest]
    shared, _ = resolve([*entries, _renamed(environment, name)])
    with pytest.raises(UrlError, match=f"would be a folder where a page writes its {name}"):
        plan_urls(shared, analyse(shared).kernels, None)


@pytest.mark.parametrize("name", ["con", "nul", "aux", "com1", "lpt9", "prn", "nul.json", "x."])
def test_names_windows_cannot_check_out_get_their_tag(name: str) -> None:
    catalog = check_content(FIXTURES / "site" / "content").catalog
    environment = catalog.of_kind("ExecutionEnvironment")[0]
    entries = [e for e in catalog.by_digest.values() if e.digest != environment.digest]
    shared, _ = resolve([*entries, _renamed(environment, name)])
    urls = plan_urls(shared, analyse(shared).kernels, None)
    assert urls.path_of(environment.digest) == f"gpus/{name}-{environment.digest[7:19]}/"


@pytest.mark.parametrize("name", ["console", "com", "com10", "nullable", "auxiliary.v2", "x.y"])
def test_names_like_windows_devices_but_not_one_are_kept(name: str) -> None:
    assert portable_name(name)


def test_a_held_analysis_looks_up_the_paths_of_the_runs_it_has_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With `sitegen serve`'s held analysis, a run's path is made once and looked up after:
    the same paths and problems as made afresh, a new run's path made, a gone run's dropped."""
    import sitegen.site.urls
    from sitegen.analysis.kernels import HeldAnalysis
    from sitegen.site.urls import plan_paths, run_path

    made: list[str] = []
    monkeypatch.setattr(sitegen.site.urls, "run_path", lambda d: made.append(d) or run_path(d))

    catalog = check_content(FIXTURES / "site" / "content").catalog
    kernels = analyse(catalog).kernels
    runs = list(catalog.of_kind("BenchmarkRun"))
    others = [e for e in catalog.by_digest.values() if e.kind != "BenchmarkRun"]
    held = HeldAnalysis()
    for present, new in ((runs, len(runs)), (runs, 0), (runs[1:], 0), (runs, 1)):
        shown, _ = resolve([*others, *present])
        fresh = plan_paths(shown, kernels)
        made.clear()
        assert plan_paths(shown, kernels, held) == fresh
        assert len(made) == new
        assert held.run_paths.paths == {r.digest: fresh[0][r.digest] for r in present}
    assert plan_paths(shown, kernels, held) == plan_paths(shown, kernels)


def test_held_run_paths_that_clash_are_found_as_made_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two runs whose short digests were one path (`RUN_ID_HEX`: checked, not assumed away)
    clash with a held analysis too, as runs come and go: the held paths are counted."""
    import sitegen.site.urls
    from sitegen.analysis.kernels import HeldAnalysis

    catalog = check_content(FIXTURES / "site" / "content").catalog
    kernels = analyse(catalog).kernels
    runs = list(catalog.of_kind("BenchmarkRun"))
    # Made to clash: two runs' one path, while both are there.
    twins, real = {runs[0].digest, runs[1].digest}, sitegen.site.urls.run_path
    monkeypatch.setattr(
        sitegen.site.urls, "run_path", lambda d: "runs/twins/" if d in twins else real(d)
    )
    others = [e for e in catalog.by_digest.values() if e.kind != "BenchmarkRun"]
    held = HeldAnalysis()
    seen = []
    for gone in ((), (0,), (), (1,), (1, 5), (5,), (0, 1, 7), ()):
        present = [run for number, run in enumerate(runs) if number not in gone]
        shown, _ = resolve([*others, *present])
        held_outcome, fresh = planned(shown, kernels, held), planned(shown, kernels, None)
        assert held_outcome == fresh, gone
        seen.append(fresh[0])
    assert seen == ["clash", "clean", "clash", "clean", "clean", "clash", "clean", "clash"]


def planned(catalog: Catalog, kernels: tuple[Kernel, ...], held: HeldAnalysis | None) -> Any:
    """`plan_paths`' paths and problems, or the first path that clashes where it raises."""
    from sitegen.site.urls import PathClash, plan_paths

    try:
        paths, problems = plan_paths(catalog, kernels, held)
    except PathClash as clash:
        return "clash", str(clash).split(":")[0]
    return "clean", paths, sorted(problems)
