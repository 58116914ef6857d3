"""Reports of finished runs: the terminal card, JSON, JUnit, Markdown, expected-failure lists,
rule blame and the progress line."""

from tokasm.errors import XfailError as XfailError
from tokasm.report._blame import render_blame as render_blame
from tokasm.report._render import *  # noqa: F403
from tokasm.report._xfail import *  # noqa: F403
