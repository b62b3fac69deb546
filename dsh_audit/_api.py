"""The top-level conveniences :func:`dsh_audit.load` and :func:`dsh_audit.requests`.

They live here, not in ``dsh_audit/__init__.py``, so that importing the package (the CLI does,
for ``--version``) reads no log code; the package loads this module on first use.
"""

from __future__ import annotations

import os

from .log import LATEST_VERSION, SessionLog, read_log
from .replay import Request, replay

__all__ = ["load", "requests"]


def load(path: str | os.PathLike[str], *, lenient: bool = False, max_version: int = LATEST_VERSION) -> SessionLog:
    """Open one session log file (plain or zstd, v0-v4). See :func:`dsh_audit.log.read_log`."""
    return read_log(path, lenient=lenient, max_version=max_version)


def requests(log: SessionLog) -> list[Request]:
    """Every request the log implies, in order (loop attempts, compaction and title calls)."""
    return replay(log)[0]
