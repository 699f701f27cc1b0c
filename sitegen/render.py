"""Turn the site model into bytes: a jinja2 environment (autoescape, StrictUndefined), its filters,
content-hashed assets, and the machine-readable files. Returns path → bytes; never writes.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markdown_it import MarkdownIt
from markupsafe import Markup

from sitegen.manifest import manifest_document
from sitegen.pages import Link, Page, Site, schema_documents
from sitegen.urls import SECTION_TITLES, SiteUrls, json_twin, output_path

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
ASSETS_DIR = TEMPLATES_DIR / "assets"
NAV_SECTIONS = ("kernels", "gpus", "implementations", "projects", "protocols", "workloads", "runs")
HASH_HEX = 12
# Characters that could end a <script> block or a JS string early, as JSON escapes.
_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


class RenderError(Exception):
    """Two outputs claim one path, or an asset is missing: our bug or a broken install."""


@dataclass(frozen=True)
class Asset:
    path: str  # site path, content-hashed: assets/site-0123456789ab.css
    data: bytes


@dataclass(frozen=True)
class SiteChrome:
    """What the layout needs besides the page: navigation, assets, the build date."""

    home: str
    nav: tuple[tuple[str, Link], ...]  # (section, link)
    css: str
    js: str
    plotly: str
    feed: str
    export: str
    schemas: str
    build_date: str | None
    banner: tuple[Link, ...] = ()  # a preview's banner; () in production
    noindex: bool = False  # every page says `<meta name="robots" content="noindex">`
    preview_css: str | None = None  # the banner's and the changes page's styles


def plotly_bundle() -> bytes:
    """plotly.js as shipped inside the plotly Python package (never fetched from a CDN)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise RenderError("the plotly package is not installed: it ships plotly.min.js")
    path = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    try:
        return path.read_bytes()
    except OSError as error:
        raise RenderError(f"cannot read plotly.min.js from the plotly package: {error}") from error


def hashed(stem: str, suffix: str, data: bytes) -> Asset:
    return Asset(f"assets/{stem}-{hashlib.sha256(data).hexdigest()[:HASH_HEX]}{suffix}", data)


def site_assets(preview: bool = False) -> dict[str, Asset]:
    """The assets every site has, and the preview styles when the site is a preview."""
    assets = {
        "css": hashed("site", ".css", (ASSETS_DIR / "site.css").read_bytes()),
        "js": hashed("site", ".js", (ASSETS_DIR / "site.js").read_bytes()),
        "plotly": hashed("plotly", ".min.js", plotly_bundle()),
    }
    if preview:
        assets["preview"] = hashed("preview", ".css", (ASSETS_DIR / "preview.css").read_bytes())
    return assets


# --- filters ------------------------------------------------------------------------------------


def script_json(value: Any) -> Markup:
    """JSON safe inside <script type="application/json">: nothing in it can close the block."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(text.translate(_SCRIPT_ESCAPES))


def _safe_link(url: str) -> bool:
    """Markdown links may go to http(s) or stay relative; never javascript:, data: and the like."""
    stripped = url.strip()
    if not stripped or stripped.startswith("//"):
        return False
    scheme = urlsplit(stripped).scheme.lower()
    if scheme:
        return scheme in ("http", "https")
    return ":" not in stripped.split("/", 1)[0]


def markdown_renderer() -> Callable[[str], Markup]:
    md = MarkdownIt("commonmark", {"html": False})
    md.disable("image")  # no third-party requests from content
    md.validateLink = _safe_link  # type: ignore[method-assign]

    def render(text: str) -> Markup:
        return Markup(md.render(text))

    return render


def make_environment(templates: Path = TEMPLATES_DIR) -> Environment:
    environment = Environment(
        loader=FileSystemLoader(str(templates)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    environment.filters["markdown"] = markdown_renderer()
    environment.filters["script_json"] = script_json
    # The protocol and environment blocks repeat on thousands of run pages: render each once.
    # Facts are frozen dataclasses, so the macro's argument is its own cache key.
    macro = environment.get_template("_macros.html").module.facts  # type: ignore[attr-defined]
    cached = functools.lru_cache(maxsize=4096)(macro)

    def facts(items: Any) -> Markup:
        return cached(items) if isinstance(items, tuple) else macro(items)  # type: ignore[no-any-return]

    environment.globals["facts"] = facts
    return environment


# --- the whole site -----------------------------------------------------------------------------


class Files:
    """path → bytes, refusing a second write to one path."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def add(self, path: str, data: bytes) -> None:
        if path in self.data:
            raise RenderError(f"two outputs would be written to {path}")
        self.data[path] = data


def render_site(
    site: Site,
    urls: SiteUrls,
    progress: Callable[[int, int], None] | None = None,
    environment: Environment | None = None,
) -> dict[str, bytes]:
    """Every output file in memory, sorted by path."""
    environment = environment or make_environment()
    preview = bool(site.banner) or any(p.template == "changes.html" for p in site.pages)
    assets = site_assets(preview)
    chrome = SiteChrome(
        home=urls.href(""),
        nav=tuple((s, Link(SECTION_TITLES[s], urls.href(f"{s}/"))) for s in NAV_SECTIONS),
        css=urls.href(assets["css"].path),
        js=urls.href(assets["js"].path),
        plotly=urls.href(assets["plotly"].path),
        feed=urls.href("feed.xml"),
        export=urls.href("export/resources.jsonl"),
        schemas=urls.href("schemas/"),
        build_date=site.build_date,
        banner=site.banner,
        noindex=not site.indexable,
        preview_css=urls.href(assets["preview"].path) if preview else None,
    )
    files = Files()
    for asset in assets.values():
        files.add(asset.path, asset.data)
    templates = {
        name: environment.get_template(name) for name in sorted({p.template for p in site.pages})
    }
    total = len(site.pages)
    for number, page in enumerate(site.pages, start=1):
        files.add(output_path(page.path), _html(templates[page.template], page, chrome))
        if page.twin is not None:
            files.add(json_twin(page.path), _json(page.twin))
        if progress is not None:
            progress(number, total)
    files.add("404.html", _html(environment.get_template("404.html"), site.not_found, chrome))
    files.add("feed.xml", environment.get_template("feed.xml").render(feed=site.feed).encode())
    files.add(
        "sitemap.xml", environment.get_template("sitemap.xml").render(urls=site.sitemap).encode()
    )
    if site.indexable:
        robots = f"User-agent: *\nAllow: /\n\nSitemap: {urls.absolute('sitemap.xml')}\n"
    else:
        # Previews: nothing may be indexed. Netlify reads `_headers` from the published folder.
        robots = "User-agent: *\nDisallow: /\n"
        files.add("_headers", b"/*\n  X-Robots-Tag: noindex\n")
    files.add("robots.txt", robots.encode())
    if site.manifest is not None:
        files.add("manifest.json", _json(manifest_document(site.manifest)))
    files.add("export/resources.jsonl", _jsonl(site.export))
    schemas = schema_documents()
    for kind, schema in schemas.items():
        files.add(f"schemas/{kind}.json", _json(schema))
    files.add(
        "schemas/index.json",
        _json({kind: urls.href(f"schemas/{kind}.json") for kind in schemas}),
    )
    return dict(sorted(files.data.items()))


def _html(template: Any, page: Page, chrome: SiteChrome) -> bytes:
    return template.render(page=page.context, site=chrome).encode()


def _json(value: Any) -> bytes:
    # Compact on purpose: `indent` switches json to its pure-Python encoder, 5× slower.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (text + "\n").encode()


def _jsonl(lines: tuple[dict[str, Any], ...]) -> bytes:
    return "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines
    ).encode()
