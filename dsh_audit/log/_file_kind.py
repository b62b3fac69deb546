"""What a path is, in words, when it is neither a regular file nor a folder (a FIFO, a device, a socket).

Outputs written through to such a file instead of replacing it (:func:`~dsh_audit.log.write_atomic`),
the guard that refuses renaming an output over one (:class:`~dsh_audit.log.ProtectedInputs`) and
the opening of inputs (:func:`~dsh_audit.log.open_regular`) all name it the same way.
"""

from __future__ import annotations

import os
import stat

__all__ = ["special_kind"]

_FIFO = "a FIFO"
_KINDS = ((stat.S_ISFIFO, _FIFO), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    """What a file of ``mode`` that is neither a regular file nor a folder is, in words."""
    return next((label for test, label in _KINDS if test(mode)), "not a regular file")


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What an existing ``path`` is when it is neither a regular file nor a folder (``a FIFO``, ``a
    character device``...), following symlinks; None for a file, a folder or nothing there.

    Example:
        >>> special_kind("/dev/null"), special_kind("README.md"), special_kind("no/such/file")
        ('a character device', None, None)
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else _kind(mode)
