"""The one bounded reader of every TOML or JSON file a user configures or dsh-audit finds: the
nearest ``pyproject.toml`` (:mod:`dsh_audit._pyproject`), ``--policy``, ``--prices``, a baseline.

Each is a regular file (a FIFO or a device refused before a byte is read) of at most
:data:`MAX_CONFIG_FILE` bytes, and each failure is one :class:`ConfigFileError` line naming the
file, why (:attr:`ConfigFileError.reason`) and, when the parser says, where.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from .errors import UnreadableError, UsageError
from .log import open_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["ConfigFileError", "read_bytes", "read_json", "read_toml"]

#: The largest configuration file read (a ``pyproject.toml`` is found, not chosen: a huge one is refused).
MAX_CONFIG_FILE = 16 << 20
# tomllib before Python 3.14 gives the position only in its message: "... (at line 3, column 7)"
_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)$")


class ConfigFileError(UsageError):
    """A configuration file that cannot be read or parsed, in one line.

    ``path`` names the file, ``reason`` says why (``open``: missing, not a regular
    file, a symlink loop, no permission; ``read``: the read failed; ``size``: over the limit;
    ``encoding``: not UTF-8; ``syntax``: not valid TOML or JSON; ``nesting``: nested past Python's
    recursion limit); ``line`` and ``column`` (1-based) locate a syntax error when the parser says
    where it is (``line`` a TOML file's byte that is not UTF-8 too, at offset ``byte``).
    ``message`` is worded with the caller's name for the file (``what``); ``detail`` holds the
    system's words of a failed read (reason ``read``), so a caller that names the file otherwise
    builds its own message from them.
    """

    def __init__(self, message: str, *, path: str, reason: str, line: int | None = None,
                 column: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, path=path, line=line, hint=hint)
        self.reason = reason
        self.column = column
        self.byte = 0  # the offset of the first byte that is not UTF-8 (reason ``encoding``)
        self.detail = ""  # the system's words of a failed read (reason ``read``)


def read_bytes(path: str | os.PathLike[str], *, what: str, limit: int = MAX_CONFIG_FILE) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; ``what`` names the file
    in messages (``"policy file"``). A FIFO or device is refused before a byte is read.

    Raises:
        ConfigFileError: reason ``open``, ``read`` or ``size``.
    """
    name = os.fspath(path)
    try:
        with open_regular(name, what=what) as handle:  # a FIFO would hang: refused
            raw = handle.read(limit + 1)
    except UnreadableError as exc:
        raise ConfigFileError(exc.message, path=name, reason="open", hint=exc.hint) from None
    except OSError as exc:
        error = ConfigFileError(f"cannot read {what}: {exc.strerror or exc}", path=name, reason="read")
        error.detail = exc.strerror or str(exc)
        raise error from None
    if len(raw) > limit:
        size = f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit} bytes"
        raise ConfigFileError(f"{what} is larger than {size}", path=name, reason="size")
    return raw


def read_toml(path: str | os.PathLike[str], *, what: str = "pyproject.toml", limit: int = MAX_CONFIG_FILE
              ) -> dict[str, Any]:
    """The TOML document at ``path``, read by :func:`read_bytes`.

    Raises:
        ConfigFileError: one line naming the file and the reason (:attr:`ConfigFileError.reason`), e.g.
            ``pyproject.toml is not valid TOML: Invalid value (at line 1, column 7)``.

    Example:
        >>> try:
        ...     read_toml("/dev/null")
        ... except ConfigFileError as exc:
        ...     (exc.reason, str(exc))
        ('open', '/dev/null: is a character device, not a pyproject.toml (hint: only regular files are read)')
    """
    raw = read_bytes(path, what=what, limit=limit)
    _refuse_bom(raw, os.fspath(path), what)
    try:
        document: dict[str, Any] = _parsed(lambda: tomllib.loads(raw.decode("utf-8")), os.fspath(path), what, "TOML")
    except ConfigFileError as exc:
        if exc.reason == "encoding":  # the line of the byte that is not UTF-8, as a syntax error's
            exc.line = raw[:exc.byte].count(b"\n") + 1
        raise
    return document


def read_json(path: str | os.PathLike[str], *, what: str, limit: int = MAX_CONFIG_FILE,
              loads: Callable[[bytes], Any] = json.loads, bom: bool = True) -> Any:
    """The JSON document at ``path`` (UTF-8, or UTF-16/32 as :func:`json.loads` detects it: a baseline), read
    by :func:`read_bytes` and parsed by ``loads``; raises :class:`ConfigFileError` as
    :func:`read_toml` does. A file read as its TOML twin would be (a price table) refuses what TOML
    refuses and Python's parser reads past: an object's key written twice (``loads``
    :func:`dsh_audit._json_keys.loads_unique`; :func:`json.loads` keeps the last one, as
    ``JSON.parse`` does) and text that is not UTF-8 by its first bytes, a byte order mark or UTF-16/32
    (``bom`` False: :func:`_refuse_bom`)."""
    raw = read_bytes(path, what=what, limit=limit)
    if not bom:
        _refuse_bom(raw, os.fspath(path), what, wide=True)
    return _parsed(lambda: loads(raw), os.fspath(path), what, "JSON")


def _refuse_bom(raw: bytes, name: str, what: str, *, wide: bool = False) -> None:
    """Refuse a file that starts with a UTF-8 byte order mark, by its name: tomllib refuses one as
    an ``Invalid statement`` at line 1, which does not say what is there (nothing a user sees).
    ``wide``: a JSON file read as its TOML twin would be (a price table) refuses UTF-16 or UTF-32
    text too, which :func:`json.loads` reads (by its first bytes, a byte order mark or none) and
    TOML never is (tomllib: ``not UTF-8 text (byte 0)``), nor JSON exchanged (RFC 8259 8.1).

    Raises:
        ConfigFileError: reason ``encoding``, at line 1, column 1.

    Example:
        >>> try:
        ...     _refuse_bom('{"a": 1}'.encode("utf-16-le"), "p.json", "price table", wide=True)
        ... except ConfigFileError as exc:
        ...     str(exc)
        'p.json:1: price table is not UTF-8 text (UTF-16-LE, by its first bytes): save it as UTF-8'
    """
    if raw.startswith(codecs.BOM_UTF8):
        raise ConfigFileError(f"{what} starts with a UTF-8 byte order mark (BOM): save it without one", path=name,
                              reason="encoding", line=1, column=1)
    encoding = json.detect_encoding(raw) if wide else "utf-8"
    if encoding != "utf-8":
        raise ConfigFileError(f"{what} is not UTF-8 text ({encoding.upper()}, by its first bytes): save it as UTF-8",
                              path=name, reason="encoding", line=1, column=1)


def _parsed(parse: Callable[[], Any], name: str, what: str, language: str) -> Any:
    """``parse()``, its failures as :class:`ConfigFileError`."""
    try:
        return parse()
    except UnicodeDecodeError as exc:
        error = ConfigFileError(f"{what} is not UTF-8 text (byte {exc.start})", path=name, reason="encoding")
        error.byte = exc.start
        raise error from None
    except ValueError as exc:  # TOML and JSON decode errors, integers past Python's digit limit
        problem = str(exc).splitlines()[0].split("; use ")[0]
        line, column = _position(exc, problem)
        raise ConfigFileError(f"{what} is not valid {language}: {problem}", path=name, reason="syntax",
                              line=line, column=column) from None
    except RecursionError:
        raise ConfigFileError(f"{what} nests arrays or tables too deeply", path=name, reason="nesting") from None


def _position(exc: ValueError, problem: str) -> tuple[int | None, int | None]:
    """The 1-based line and column of a decode error, when the parser gives them."""
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    if isinstance(line, int) and isinstance(column, int):
        return line, column
    found = _POSITION.search(problem)
    return (int(found.group(1)), int(found.group(2))) if found else (None, None)
