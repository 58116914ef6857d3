"""Reports of finished runs: the terminal card, JSON, JUnit, Markdown, expected-failure lists,
rule blame and the progress line."""

from tokasm.errors import XfailError
from tokasm.report._blame import render_blame
from tokasm.report._render import (
    NAME_LIMIT,
    Progress,
    ReportPlan,
    destination,
    destinations,
    json_report,
    json_text,
    junit_text,
    markdown_report,
    progress_wanted,
    refuse_case_file,
    render_card,
    render_failures,
    render_verdict,
    write_text_atomically,
)
from tokasm.report._xfail import (
    XfailList,
    apply_xfail,
    expected_failures,
    load_xfail,
    render_xfail,
)

__all__ = [
    "NAME_LIMIT", "Progress", "ReportPlan", "XfailError", "XfailList", "apply_xfail",
    "destination", "destinations", "expected_failures", "json_report", "json_text",
    "junit_text", "load_xfail", "markdown_report", "progress_wanted", "refuse_case_file",
    "render_blame", "render_card", "render_failures", "render_verdict", "render_xfail",
    "write_text_atomically",
]  # fmt: skip
