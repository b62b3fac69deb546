"""Captured wire requests: loading them (wire.jsonl, HAR 1.2, a folder of bodies), finding the one
beside a log, reading a growing ``wire.jsonl`` on from where a reading stopped
(:func:`read_capture_tail`), and aligning them with the requests rebuilt from logs. What a difference means is
:mod:`dsh_audit.diff`'s job.

Names are resolved on first use (:mod:`dsh_audit._lazy`): a view that only looks for a capture
beside a log loads neither the diff nor the comparison.

Example:
    >>> from dsh_audit.capture import align, load_capture
    >>> captures = load_capture("wire.jsonl")  # doctest: +SKIP
    >>> pairs = align(dsh_audit.requests(dsh_audit.load("session.jsonl")), captures)  # doctest: +SKIP
"""

from __future__ import annotations

import typing

from .._lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from ._align import Pairing, align
    from ._bodies import (AlignedCapture, align_capture, captured_bodies, session_captures, sessions_by_capture,
                          unreadable_capture, usage_capture)
    from ._compare import RequestDiff, compare_capture, gate_ok
    from ._evidence import PIAI_SESSION_HEADERS
    from ._find import (CAPTURE_NAME, CAPTURE_SEARCH_LEVELS, NO_CAPTURE_ENV, capture_folders, capture_for,
                        capture_state, captures_ignored, find_capture, held_sessions)
    from ._jsonl import CaptureOffset
    from ._loaders import (LOADERS, CaptureLoader, CaptureRead, load_capture, read_capture, read_capture_tail,
                           sniff_capture)
    from ._types import CAPTURE_KINDS, COMPACTION_PREFIX, TITLE_PREFIX, CapturedRequest, classify, last_user_text

__all__ = [
    "AlignedCapture",
    "CAPTURE_KINDS",
    "CAPTURE_NAME",
    "CAPTURE_SEARCH_LEVELS",
    "COMPACTION_PREFIX",
    "CaptureLoader",
    "CaptureOffset",
    "CaptureRead",
    "CapturedRequest",
    "LOADERS",
    "NO_CAPTURE_ENV",
    "PIAI_SESSION_HEADERS",
    "Pairing",
    "RequestDiff",
    "TITLE_PREFIX",
    "align",
    "align_capture",
    "capture_folders",
    "capture_for",
    "capture_state",
    "captured_bodies",
    "captures_ignored",
    "classify",
    "compare_capture",
    "find_capture",
    "gate_ok",
    "held_sessions",
    "last_user_text",
    "load_capture",
    "read_capture",
    "read_capture_tail",
    "session_captures",
    "sessions_by_capture",
    "sniff_capture",
    "unreadable_capture",
    "usage_capture",
]

_LAZY = {
    "AlignedCapture": "._bodies",
    "CAPTURE_KINDS": "._types",
    "CAPTURE_NAME": "._find",
    "CAPTURE_SEARCH_LEVELS": "._find",
    "COMPACTION_PREFIX": "._types",
    "CaptureLoader": "._loaders",
    "CaptureOffset": "._jsonl",
    "CaptureRead": "._loaders",
    "CapturedRequest": "._types",
    "LOADERS": "._loaders",
    "NO_CAPTURE_ENV": "._find",
    "PIAI_SESSION_HEADERS": "._evidence",
    "Pairing": "._align",
    "RequestDiff": "._compare",
    "TITLE_PREFIX": "._types",
    "align": "._align",
    "align_capture": "._bodies",
    "capture_folders": "._find",
    "capture_for": "._find",
    "capture_state": "._find",
    "captured_bodies": "._bodies",
    "captures_ignored": "._find",
    "classify": "._types",
    "compare_capture": "._compare",
    "find_capture": "._find",
    "gate_ok": "._compare",
    "held_sessions": "._find",
    "last_user_text": "._types",
    "load_capture": "._loaders",
    "read_capture": "._loaders",
    "read_capture_tail": "._loaders",
    "session_captures": "._bodies",
    "sessions_by_capture": "._bodies",
    "sniff_capture": "._loaders",
    "unreadable_capture": "._bodies",
    "usage_capture": "._bodies",
}

__getattr__, __dir__ = _lazy_names(__name__, _LAZY, __all__)
