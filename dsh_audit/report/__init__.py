"""Pure formatters: findings and requests in, text out. Only ``terminal`` imports rich."""

from __future__ import annotations

import typing

from .._lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from ._check_json import REPORT_SCHEMA_VERSION, format_json, report_object
    from ._html import build_report_data, format_html, iter_html, verdict_words
    from ._html_page import SessionPage, SessionPages
    from ._json import ACTIVE_TEXT, dumps_line, dumps_line_with, dumps_pretty
    from ._junit import format_junit, iter_junit
    from ._markdown import format_markdown
    from ._sarif import SARIF_SCHEMA, SarifRule, build_sarif, format_sarif, validation_sarif

__all__ = [
    "ACTIVE_TEXT",
    "REPORT_SCHEMA_VERSION",
    "SARIF_SCHEMA",
    "SarifRule",
    "SessionPage",
    "SessionPages",
    "build_report_data",
    "build_sarif",
    "dumps_line",
    "dumps_line_with",
    "dumps_pretty",
    "format_html",
    "format_json",
    "format_junit",
    "format_markdown",
    "format_sarif",
    "iter_html",
    "iter_junit",
    "report_object",
    "validation_sarif",
    "verdict_words",
]

# Public name -> the module (relative to this package) that defines it: imported on first use.
_LAZY = {
    "ACTIVE_TEXT": "._json",
    "REPORT_SCHEMA_VERSION": "._check_json",
    "SARIF_SCHEMA": "._sarif",
    "SarifRule": "._sarif",
    "SessionPage": "._html_page",
    "SessionPages": "._html_page",
    "build_report_data": "._html",
    "build_sarif": "._sarif",
    "dumps_line": "._json",
    "dumps_line_with": "._json",
    "dumps_pretty": "._json",
    "format_html": "._html",
    "format_json": "._check_json",
    "format_junit": "._junit",
    "iter_junit": "._junit",
    "format_markdown": "._markdown",
    "format_sarif": "._sarif",
    "iter_html": "._html",
    "report_object": "._check_json",
    "validation_sarif": "._sarif",
    "verdict_words": "._html",
}

__getattr__, __dir__ = _lazy_names(__name__, _LAZY, __all__)
