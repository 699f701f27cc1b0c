"""The site-wide files that list pages: the Atom feed of the newest runs, the sitemap, and the
404 page."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sitegen.analysis.kernels import RunFacts
from sitegen.site.format import describe
from sitegen.site.lookup import SiteLookup
from sitegen.site.records import NotFoundContext, Page, Sitemap

FEED_SIZE = 50
NOT_FOUND = "No page at this address of kernelindex, the catalog of GPU kernel benchmark results."


class FeedEntry(NamedTuple):
    title: str
    url: str
    id: str
    updated: str
    summary: str


class Feed(NamedTuple):
    title: str
    url: str
    self_url: str
    updated: str
    entries: tuple[FeedEntry, ...]


def feed(lookup: SiteLookup, runs: Sequence[RunFacts]) -> Feed:
    """The newest runs (at most FEED_SIZE), newest first."""
    urls = lookup.urls
    entries = []
    for run in runs[:FEED_SIZE]:
        value = run.values[0] if run.values else None
        measured = describe(value.metric, value.unit, value) if value else run.status
        entries.append(
            FeedEntry(
                title=run.title,
                url=urls.absolute(urls.path_of(run.digest) or ""),
                id=f"urn:kernelindex:{run.digest}",
                updated=run.observed_at[:19] + "Z",
                summary=f"{measured} ({run.pass_name} pass) on "
                f"{lookup.gpu_label(run.environment)} at {run.shape.label()}.",
            )
        )
    return Feed(
        title="kernelindex: newest runs",
        url=urls.absolute(""),
        self_url=urls.absolute("feed.xml"),
        updated=entries[0].updated if entries else "1970-01-01T00:00:00Z",
        entries=tuple(entries),
    )


def sitemap(lookup: SiteLookup, paths: Iterable[str]) -> Sitemap:
    """The pages' absolute URLs, `paths` in path order (one prefix: the URLs are too)."""
    return Sitemap(lookup.urls.base, tuple(paths))


def not_found_page(lookup: SiteLookup) -> Page:
    meta = lookup.meta("Page not found", "404.html", NOT_FOUND, "")
    return Page("404.html", "404.html", NotFoundContext(meta), None)
