"""The fixture site as planned, for the site model's tests."""

from __future__ import annotations

from pathlib import Path

from sitegen.analysis.kernels import Analysis, analyse
from sitegen.content.records import load_records
from sitegen.content.reports import load_reports
from sitegen.pipeline import check_content
from sitegen.site.lookup import SiteInputs
from sitegen.site.plan import plan_site
from sitegen.site.records import Site
from sitegen.site.urls import plan_urls
from tests.conftest import FIXTURES

CONTENT = FIXTURES / "site" / "content"


def site_inputs(content: Path = CONTENT, keyed: bool = False) -> SiteInputs:
    catalog = check_content(content).catalog
    analysis = analyse(catalog)
    urls = plan_urls(catalog, analysis.kernels, None)
    reports, _ = load_reports(content)
    records, _ = load_records(content)
    return SiteInputs(catalog, analysis, urls, reports, None, keyed=keyed, records=records)


def fixture_site(content: Path = CONTENT) -> tuple[Analysis, Site]:
    inputs = site_inputs(content)
    return inputs.analysis, plan_site(inputs)
