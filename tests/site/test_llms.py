"""/llms.txt (sitegen/site/llms.py): the llms.txt proposal's shape, the site's own URLs."""

from __future__ import annotations

import re

from sitegen.site.llms import llms_txt
from sitegen.site.lookup import SiteInputs, SiteLookup
from sitegen.site.urls import plan_urls
from tests.site.planned import site_inputs

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
    assert "?runs=<id>,<id>" in text and text.endswith("\n")


def test_every_url_is_under_the_base_url() -> None:
    text = llms_txt(_lookup("https://example.org/bench/"))
    urls = re.findall(r"https?://[^\s)<]+", text)
    assert urls and all(url.startswith("https://example.org/bench/") for url in urls), urls
    assert llms_txt(_lookup("https://example.org/bench/")) == text  # deterministic
