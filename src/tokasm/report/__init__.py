"""Reports of finished runs: the terminal card, JSON, JUnit, Markdown, expected-failure lists,
rule blame and the progress line."""

from tokasm.report._blame import Blame, blame, render_blame
from tokasm.report._progress import Progress, progress_wanted
from tokasm.report._render import (
    NAME_LIMIT,
    REPORT_VERSION,
    Destination,
    ReportPlan,
    json_report,
    json_text,
    junit_text,
    markdown_report,
    render_card,
    render_failures,
    render_verdict,
    sanitized,
    stable_name,
    write_text_atomically,
)
from tokasm.report._xfail import (
    XfailError,
    XfailList,
    apply_xfail,
    expected_failures,
    load_xfail,
    parse_xfail,
    render_xfail,
)

__all__ = [
    "NAME_LIMIT",
    "REPORT_VERSION",
    "Blame",
    "Destination",
    "Progress",
    "ReportPlan",
    "XfailError",
    "XfailList",
    "apply_xfail",
    "blame",
    "expected_failures",
    "json_report",
    "json_text",
    "junit_text",
    "load_xfail",
    "markdown_report",
    "parse_xfail",
    "progress_wanted",
    "render_blame",
    "render_card",
    "render_failures",
    "render_verdict",
    "render_xfail",
    "sanitized",
    "stable_name",
    "write_text_atomically",
]
