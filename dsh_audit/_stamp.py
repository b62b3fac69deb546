"""Has a file changed since it was read? The answer of the per-process caches keyed by a file
(the price files, the YAML route files, the nearest ``pyproject.toml``, a bundle's manifest).

A file's :func:`file_stamp` is its size, modification and change times, inode and device: an edit,
a rename over it or a copy in its place changes one of them. A file written too recently
(:data:`RACY_NS`, 2 s) has no stamp, as one that cannot be looked at: a cache then reads it again each
time rather than remember what a same-size edit could hide behind an unchanged time. A file that is
not there may say so (:data:`MISSING`): an answer that holds until a stat finds it, which its reader
need not try to open (review 41: a log with no manifest opened it once a row).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

__all__ = ["MISSING", "Stamp", "file_stamp", "file_stamps"]

#: How recently modified a file is never remembered (git's "racy" entries): a file system stamps a
#: write with a coarse clock (a few ms; 2 s on FAT), so a same-size edit just after a read could
#: keep its stamp.
RACY_NS = 2_000_000_000

#: A file's (size, mtime_ns, ctime_ns, inode, device): :func:`file_stamp`.
Stamp = tuple[int, int, int, int, int]
#: The stamp :func:`file_stamp` gives a file that is not there (no such file, or no such folder on its
#: path) when asked to say so: not one a file has, nor None (read it now, it cannot be remembered).
MISSING: Stamp = (-1, -1, -1, -1, -1)


def file_stamp(path: str | os.PathLike[str], *, missing: bool = False) -> Stamp | None:
    """What tells that the file at ``path`` is still the one that was read, or None when it cannot
    be looked at (reading it says why) or was written too recently to tell (:data:`RACY_NS`):
    then it is read again, never remembered; with ``missing``, :data:`MISSING` when it is not there.

    Example:
        >>> file_stamp("/nonexistent") is None, file_stamp("/nonexistent", missing=True) == MISSING
        (True, True)
    """
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING if missing else None
    except (OSError, ValueError):  # no permission, a loop, or a name no file system holds (a NUL)
        return None
    if time.time_ns() - info.st_mtime_ns < RACY_NS:
        return None
    return stat_stamp(info)


def stat_stamp(info: os.stat_result) -> Stamp:
    """A file's size, mtime, ctime, inode and device as ``stat`` gives them: the one "did it change"
    key of every reader (:func:`file_stamp` adds the rule that a file written in the last 2 s has
    none; a reader that compares at its next look takes this, also in those 2 s)."""
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev


def file_stamps(paths: Iterable[str | os.PathLike[str]]) -> tuple[Stamp, ...] | None:
    """The :func:`file_stamp` of each file of ``paths``, or None when one has none: the key of what
    is read from them all, which no longer matches once one of them changed."""
    stamps = []
    for path in paths:
        stamp = file_stamp(path)
        if stamp is None:
            return None
        stamps.append(stamp)
    return tuple(stamps)
