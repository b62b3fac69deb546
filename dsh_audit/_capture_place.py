"""Where a log's capture is looked for: one rule below both the capture reader (which finds it) and
the log package's guard of outputs (which keeps every output off it, read by the run or not), so
neither imports the other for it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["CAPTURE_NAME", "CAPTURE_SEARCH_LEVELS", "capture_folders"]

CAPTURE_NAME = "wire.jsonl"
CAPTURE_SEARCH_LEVELS = 4


def capture_folders(log_path: str | os.PathLike[str]) -> Iterator[Path]:
    """The folders :func:`~dsh_audit.capture.find_capture` looks in for ``log_path``'s capture, nearest
    first: the folder of the log's resolved path and up to :data:`CAPTURE_SEARCH_LEVELS` above it, never
    past the root (one rule, which ``redact`` reads too: where it may write a ``wire.jsonl`` that the
    original log's views would take, and every output guard: where no output may land).

    Example:
        >>> [os.fspath(folder) for folder in capture_folders("/a/b/log.jsonl")]
        ['/a/b', '/a', '/']
    """
    folder = Path(os.path.realpath(log_path)).parent  # resolve() raises on a symlink loop; this does not
    for _ in range(CAPTURE_SEARCH_LEVELS + 1):
        yield folder
        if folder.parent == folder:
            return
        folder = folder.parent
