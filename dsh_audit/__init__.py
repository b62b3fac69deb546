"""dsh-audit: replay and audit DeepSeek Harness (DSH) session logs.

Example:
    >>> import dsh_audit
    >>> log = dsh_audit.load("sample_logs/chat/session.jsonl")
    >>> [r.kind for r in dsh_audit.requests(log)]
    ['title', 'loop', 'loop']
"""

from __future__ import annotations

import os

from .errors import DshAuditError
from .log import SessionLog, discover, read_log
from .log._versions import LATEST_VERSION as _LATEST_VERSION
from .replay import ReplayResult, Request, iter_requests, replay

__version__ = "0.1.0"


def load(path: str | os.PathLike[str], *, lenient: bool = False, max_version: int = _LATEST_VERSION) -> SessionLog:
    """Open one session log file (plain or zstd, v0-v4). See :func:`dsh_audit.log.read_log`."""
    return read_log(path, lenient=lenient, max_version=max_version)


def requests(log: SessionLog) -> list[Request]:
    """Every request the log implies, in order (loop attempts, compaction and title calls)."""
    return replay(log)[0]


__all__ = [
    "DshAuditError",
    "ReplayResult",
    "Request",
    "SessionLog",
    "__version__",
    "discover",
    "iter_requests",
    "load",
    "read_log",
    "replay",
    "requests",
]
