"""The response headers Netlify would send: `[[headers]]` of netlify.toml plus a site's `_headers`.

Used to serve the built site in the real-browser test exactly as Netlify would (the CSP above
all) and to check the cache rules cover every published file once. Paths match as Netlify's
do: exactly, or with `*` standing for anything (a splat).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.conftest import REPOSITORY

NETLIFY_TOML = REPOSITORY / "netlify.toml"

Rules = list[tuple[str, dict[str, str]]]


def toml_rules(path: Path = NETLIFY_TOML) -> Rules:
    config = tomllib.loads(path.read_text(encoding="utf-8"))
    return [(rule["for"], dict(rule["values"])) for rule in config.get("headers", [])]


def headers_file_rules(path: Path) -> Rules:
    """Netlify's `_headers` format: a path line, then indented `Name: value` lines."""
    if not path.is_file():
        return []
    rules: Rules = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            rules.append((line.strip(), {}))
        else:
            name, _, value = line.strip().partition(":")
            rules[-1][1][name.strip()] = value.strip()
    return rules


def matches(pattern: str, url_path: str) -> bool:
    return re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), url_path) is not None


def matching(rules: Rules, url_path: str) -> Rules:
    return [(pattern, values) for pattern, values in rules if matches(pattern, url_path)]


def headers_for(rules: Rules, url_path: str) -> dict[str, str]:
    """Every matching rule's headers; a header set by two matching rules is an error here."""
    found: dict[str, str] = {}
    for pattern, values in matching(rules, url_path):
        for name, value in values.items():
            if name.lower() in (n.lower() for n in found):
                raise AssertionError(f"{url_path}: {name} is set twice (again by {pattern})")
            found[name] = value
    return found


def site_rules(site: Path) -> Rules:
    return toml_rules() + headers_file_rules(site / "_headers")


def url_paths(site: Path) -> list[str]:
    """The URLs a published site answers: each file, and each folder with its index.html."""
    paths = []
    for file in sorted(site.rglob("*")):
        relative = file.relative_to(site).as_posix()
        if not file.is_file() or relative.startswith(("_", ".")):
            continue  # `_headers` and the output marker are not pages
        paths.append("/" + relative)
        if file.name == "index.html":
            paths.append("/" + relative.removesuffix("index.html"))
    return paths
