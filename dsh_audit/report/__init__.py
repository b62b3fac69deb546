"""Pure formatters: findings and requests in, text out. Only ``terminal`` imports rich."""

from ._check_json import REPORT_SCHEMA_VERSION, format_json, report_object
from ._html import build_report_data, format_html, iter_html
from ._json import dumps_line, dumps_pretty
from ._junit import format_junit
from ._markdown import format_markdown
from ._sarif import SARIF_SCHEMA, SarifRule, build_sarif, format_sarif, validation_sarif

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "SARIF_SCHEMA",
    "SarifRule",
    "build_report_data",
    "build_sarif",
    "dumps_line",
    "dumps_pretty",
    "format_html",
    "format_json",
    "format_junit",
    "format_markdown",
    "format_sarif",
    "iter_html",
    "report_object",
    "validation_sarif",
]
