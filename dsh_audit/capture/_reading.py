"""What every capture reader shares: a raw request, what a reader says of what it drops, and the
one-line :class:`CaptureError` of a capture file that cannot be read or parsed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import CaptureError, UnreadableError
from ..log import TornTail, open_regular, parse_json

__all__ = ["Said"]

#: One raw request before numbering: method, path, headers, body, time, source file, locator.
_Raw = tuple[str, str, dict[str, str], bytes, str | None, str, str]


@dataclass(frozen=True, slots=True)
class Said:
    """What a reader says of the capture it reads, and drops: what a writer killed mid-write left
    incomplete at the end (``torn``), and the records that are no capture records (``skipped``,
    ``file:line: why``)."""

    torn: list[TornTail] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _error(path: Path, where: str | None, message: str, hint: str) -> CaptureError:
    text = f"{where}: {message}" if where else message
    return CaptureError(text, path=str(path), hint=hint)


def _parse(raw: bytes, path: Path, where: str | None, *, invalid: str, hint: str) -> Any:
    """``raw`` as JSON, or a CaptureError saying ``invalid`` and why."""
    try:
        return parse_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _error(path, where, f"{invalid} ({exc})", hint) from None


def _parse_object(raw: bytes, path: Path, where: str | None, *, invalid: str, not_object: str,
                  hint: str) -> dict[str, Any]:
    """``raw`` as a JSON object, or a CaptureError saying ``invalid`` or ``not_object``."""
    value = _parse(raw, path, where, invalid=invalid, hint=hint)
    if not isinstance(value, dict):
        raise _error(path, where, not_object, hint)
    return value


def _open(path: Path, what: str) -> Any:
    """``path`` opened for reading (a regular file only), or a CaptureError naming why not."""
    try:
        return open_regular(path, what=what)
    except UnreadableError as exc:
        raise CaptureError(exc.message, path=str(path), hint=exc.hint or "check the file's permissions") from None


def _read_bytes(path: Path, what: str) -> bytes:
    """Every byte of the file ``path``, or a CaptureError (unreadable). A file too large for
    memory raises MemoryError, which :func:`load_capture` says of the capture the user named (a body
    folder, not its body file)."""
    with _open(path, what) as handle:
        try:
            data: bytes = handle.read()
        except OSError as exc:
            raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    return data


def _too_large(path: Path) -> CaptureError:
    """The error of a capture that does not fit in memory; ``path`` is the capture as the user gave
    it (a file, or a body folder)."""
    return CaptureError("the capture does not fit in memory", path=str(path),
                        hint="compare a smaller capture, e.g. one session's requests")


def _read_all(path: Path, handle: BinaryIO) -> bytes:
    """The rest of the open capture file ``handle``, or a CaptureError (unreadable)."""
    try:
        return handle.read()
    except OSError as exc:
        raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None


def _handle(stack: ExitStack, path: Path, handle: BinaryIO | None) -> BinaryIO:
    """``handle``, or ``path`` opened (and closed with ``stack``) when none is given."""
    if handle is not None:
        return handle
    opened: BinaryIO = stack.enter_context(_open(path, "capture file"))
    return opened


def _text_value(value: Any) -> str | None:
    return None if value is None else str(value)


def _header_values(path: Path, where: str, pairs: Iterable[tuple[Any, Any]], hint: str) -> dict[str, str]:
    """Header ``pairs`` as lower-cased names to text values: a null value is no header, a number is
    its JSON digits; any other value that is no string (a list, an object, true) is a CaptureError
    naming the header, never a Python repr taken for its value."""
    headers: dict[str, str] = {}
    for name, value in pairs:
        if value is None:
            continue
        if not isinstance(name, str):
            raise _error(path, where, "a header name is not a string", hint)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            shown = json.dumps(name[:80], ensure_ascii=True)
            raise _error(path, where, f"header {shown} has a value that is not a string", hint)
        headers[name.lower()] = value if isinstance(value, str) else json.dumps(value)
    return headers
