"""Captured wire requests: loading them (wire.jsonl, HAR 1.2, a folder of bodies) and aligning
them with the requests rebuilt from logs. What a difference means is :mod:`dsh_audit.diff`'s job.

Example:
    >>> from dsh_audit.capture import align, load_capture
    >>> captures = load_capture("wire.jsonl")  # doctest: +SKIP
    >>> pairs = align(dsh_audit.requests(dsh_audit.load("session.jsonl")), captures)  # doctest: +SKIP
"""

from ._align import Pairing, align
from ._compare import RequestDiff, compare_capture, gate_ok
from ._loaders import LOADERS, CaptureLoader, load_capture
from ._types import CAPTURE_KINDS, COMPACTION_PREFIX, TITLE_PREFIX, CapturedRequest, classify, last_user_text

__all__ = [
    "CAPTURE_KINDS",
    "COMPACTION_PREFIX",
    "CaptureLoader",
    "CapturedRequest",
    "LOADERS",
    "Pairing",
    "RequestDiff",
    "TITLE_PREFIX",
    "align",
    "classify",
    "compare_capture",
    "gate_ok",
    "last_user_text",
    "load_capture",
]
