"""Attribution: why each request did or did not reuse the previous request's prefix cache.

For every request, the request whose cache it could reuse (the previous loop step, the failed
attempt it retries, the parent's request a fork child continues, the loop request a compaction
call summarises), the verdict (``first``, ``extension``, ``cache_safe_change``, ``break``), the
cause and the log events that prove it (:class:`dsh_audit.session.Evidence`). See
``docs/attribution.md``.
"""

from ._attribute import attribute, attribute_sessions, captured_extends
from ._entry import attribute_group, attribute_log, attribute_opened, attribute_paths, iter_attribute, refuse_imported
from ._header_diff import diff_headers
from ._model import (
    CAUSES,
    RELATIONS,
    UNEXPLAINED_CAUSES,
    VERDICTS,
    Break,
    Divergence,
    FieldChange,
    SessionAttribution,
    Transition,
)
from ._prefix import MessageDigests, common_prefix, lcp_bytes, pieces_offset
from ._text import format_transition

__all__ = [
    "Break",
    "CAUSES",
    "Divergence",
    "FieldChange",
    "MessageDigests",
    "RELATIONS",
    "SessionAttribution",
    "Transition",
    "UNEXPLAINED_CAUSES",
    "VERDICTS",
    "attribute",
    "attribute_group",
    "attribute_log",
    "attribute_opened",
    "attribute_paths",
    "attribute_sessions",
    "captured_extends",
    "common_prefix",
    "diff_headers",
    "format_transition",
    "iter_attribute",
    "lcp_bytes",
    "pieces_offset",
    "refuse_imported",
]
