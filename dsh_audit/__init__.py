"""dsh-audit: replay and audit DeepSeek Harness (DSH) session logs.

Example:
    >>> import dsh_audit
    >>> log = dsh_audit.load("sample_logs/chat/session.jsonl")
    >>> [r.kind for r in dsh_audit.requests(log)]
    ['title', 'loop', 'loop']

Importing the package is cheap: the names below are loaded on first use (PEP 562), so
``dsh-audit --version`` reads no log code. ``dsh_audit.replay`` is the replay subpackage
(:func:`dsh_audit.replay.replay` rebuilds a log's requests).
"""

from __future__ import annotations

import typing

from ._lazy import lazy_names as _lazy_names
from ._version import __version__

if typing.TYPE_CHECKING:
    from ._api import load, requests
    from .errors import DshAuditError
    from .log import SessionLog, discover, read_log
    from .replay import ReplayResult, Request, iter_requests

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
    "requests",
]

# Public name -> the module (relative to this package) that defines it.
_LAZY = {
    "DshAuditError": ".errors",
    "ReplayResult": ".replay",
    "Request": ".replay",
    "SessionLog": ".log",
    "discover": ".log",
    "iter_requests": ".replay",
    "load": "._api",
    "read_log": ".log",
    "requests": "._api",
}


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, __all__)
