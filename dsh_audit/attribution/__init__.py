"""Attribution: why each request did or did not reuse the previous request's prefix cache.

For every request, the request whose cache it could reuse (the previous loop step, the failed
attempt it retries, the parent's request a fork child continues, the loop request a compaction
call summarises), the verdict (``first``, ``extension``, ``cache_safe_change``, ``break``), the
cause and the log events that prove it. See ``docs/attribution.md``.
"""

from ._attribute import attribute, attribute_sessions, captured_extends
from ._entry import attribute_paths, iter_attribute
from ..session import LogEvidence, collect_evidence
from ._header_diff import diff_headers
from ._model import (
    CAUSES,
    RELATIONS,
    VERDICTS,
    Break,
    Divergence,
    Evidence,
    FieldChange,
    SessionAttribution,
    Transition,
)
from ._prefix import MessageDigests, common_prefix
from ..session import find_parent, with_ancestors
from ._text import format_transition

__all__ = [
    "Break",
    "CAUSES",
    "Divergence",
    "Evidence",
    "FieldChange",
    "LogEvidence",
    "MessageDigests",
    "RELATIONS",
    "SessionAttribution",
    "Transition",
    "VERDICTS",
    "attribute",
    "attribute_paths",
    "attribute_sessions",
    "captured_extends",
    "collect_evidence",
    "common_prefix",
    "diff_headers",
    "find_parent",
    "format_transition",
    "iter_attribute",
    "with_ancestors",
]
