"""Where a redaction manifest lies and how one is read, below both of its readers: the bundle
checks of :mod:`dsh_audit.redact` (:func:`dsh_audit.redact.read_manifest`) and the route hint of a
log that is a redacted bundle (:mod:`dsh_audit.session._home_routes`), so that both find the same
file, read at most as many bytes, and accept the same names of the files beside it.
"""

from __future__ import annotations

import os

from .log import open_regular, parse_json

__all__ = ["MANIFEST_SUFFIX", "file_name", "load_manifest", "manifest_of"]

MANIFEST_SUFFIX = ".manifest.json"
#: The largest manifest read: one holds a digest and a count per verdict category.
MANIFEST_LIMIT = 16 << 20


def manifest_of(log: str | os.PathLike[str]) -> str:
    """Where the manifest of the redacted log ``log`` lies: ``<log>.manifest.json``."""
    return os.fspath(log) + MANIFEST_SUFFIX


def load_manifest(path: str | os.PathLike[str]) -> object:
    """The JSON value of the manifest at ``path`` (read only when it is a regular file), as
    ``JSON.parse`` reads it (a lone surrogate's escape too).

    Raises:
        UnreadableError: it is not a regular file, or cannot be opened.
        ValueError: it is larger than :data:`MANIFEST_LIMIT`, or no JSON.
    """
    with open_regular(path, what="redaction manifest") as handle:  # never a FIFO or a device
        data = handle.read(MANIFEST_LIMIT + 1)
    if len(data) > MANIFEST_LIMIT:
        raise ValueError("too large")
    return parse_json(data)


def file_name(name: object) -> object:
    """``name``, a file name a manifest gives (its log, capture, route file), when a file system
    could hold it: no NUL, no part longer than 255 bytes, no lone surrogate but those that stand
    for a byte that is not UTF-8 (:func:`os.fsencode` gives that byte back), else ValueError (the
    manifest is not one redact wrote). A value that is not a string is left to its reader.

    Example:
        >>> file_name("x\\udcfe.jsonl") == os.fsdecode(b"x\\xfe.jsonl"), file_name(None)
        (True, None)
        >>> file_name("x\\ud800.jsonl")
        Traceback (most recent call last):
        ...
        UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800' in position 1: surrogates not allowed
    """
    if isinstance(name, str) and ("\x00" in name or any(len(os.fsencode(part)) > 255 for part in name.split("/"))):
        raise ValueError("name")
    return name
