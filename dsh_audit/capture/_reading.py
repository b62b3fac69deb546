"""What every capture reader shares: a raw request, what a reader says of what it drops, and the
one-line :class:`CaptureError` of a capture file that cannot be read or parsed."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from ..errors import CaptureError, UnreadableError
from ..log import TornTail, open_regular, parse_json

__all__ = ["Said", "UndoneBody"]

class UndoneBody(bytes):
    """A body its reader read as captured, its ``coding`` not undone: the loader's :func:`_request`
    keeps the coding on the captured request (:attr:`CapturedRequest.undone`), as the reader knew it."""

    coding: str

    def __new__(cls, data: bytes, coding: str) -> UndoneBody:
        made = super().__new__(cls, data)
        made.coding = coding
        return made


#: One raw request before numbering: method, path, headers, body, time, source file, locator, and
#: what reads the body again from the capture (None: it is held, :class:`._types.CapturedRequest`).
_Raw = tuple[str, str, dict[str, str], bytes, str | None, str, str, "Callable[[], bytes] | None"]


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
    """``raw`` as JSON, or a CaptureError saying ``invalid`` and why (bytes that are no UTF-8 text
    by where they are, as the log reader says such a line, never in Python's codec words)."""
    try:
        return parse_json(raw)
    except UnicodeDecodeError as exc:
        raise _error(path, where, f"not valid UTF-8 (byte {exc.start})",
                     "a capture is UTF-8 text: the file is damaged, or was saved in another encoding") from None
    except ValueError as exc:
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


#: How many capture files keep a descriptor open for their bodies to be read again (a run comparing
#: thousands of logs, each with its own wire.jsonl, holds their rows together): the least recently
#: read is closed, and opened again if it is read again.
_OPEN_CAPTURES = 16


class _CaptureFile:
    """A capture file its bodies are read again from, by offset: through a duplicate of the
    loader's own descriptor (:meth:`keep`: the file is opened once), else opened at the first read
    (a capture read without one, one closed for others, or one handed to another process: a
    descriptor does not go along). At most :data:`_OPEN_CAPTURES` are open at once."""

    __slots__ = ("fd", "path")
    _kept: ClassVar[OrderedDict[int, _CaptureFile]] = OrderedDict()  # by id: the open ones, least recently read first

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def keep(self, handle: BinaryIO) -> None:
        """Read through a duplicate of ``handle``'s descriptor from now on (``handle`` may be closed)."""
        self.fd = os.dup(handle.fileno())
        opened = _CaptureFile._kept
        opened[id(self)] = self
        while len(opened) > _OPEN_CAPTURES:
            _, oldest = opened.popitem(last=False)
            if oldest.fd is not None:
                os.close(oldest.fd)
                oldest.fd = None

    def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes from ``offset`` (fewer at the end of the file), or a CaptureError (unreadable)."""
        if self.fd is None:
            with _open(Path(self.path), "capture file") as handle:
                self.keep(handle)
        _CaptureFile._kept.move_to_end(id(self))
        assert self.fd is not None
        pieces: list[bytes] = []
        try:
            while length > 0 and (piece := os.pread(self.fd, length, offset)):
                pieces.append(piece)
                offset, length = offset + len(piece), length - len(piece)
        except OSError as exc:
            raise CaptureError(f"cannot read: {exc.strerror or exc}", path=self.path) from None
        return b"".join(pieces)

    def __getstate__(self) -> str:
        return self.path

    def __setstate__(self, path: str) -> None:
        self.path, self.fd = path, None


@dataclass(frozen=True, slots=True)
class _RecordBody:
    """Reads a body again from its record in a capture file (a ``wire.jsonl`` line, a HAR entry): the
    record is ``length`` bytes from ``offset`` of ``file``, and its body is what ``body``, the format's
    reader of one record, takes from those bytes (given the file's path and the record's locator
    ``where``, for its errors) (:attr:`._types.CapturedRequest.reread`)."""

    file: _CaptureFile
    offset: int
    length: int
    where: str
    body: Callable[[Path, str, bytes], bytes]

    def __call__(self) -> bytes:
        return self.body(Path(self.file.path), self.where, self.file.read(self.offset, self.length))


@dataclass(frozen=True, slots=True)
class _FileBody:
    """Reads a body folder's body file again (:attr:`._types.CapturedRequest.reread`)."""

    path: str

    def __call__(self) -> bytes:
        return _read_bytes(Path(self.path), "body file")


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


def _headers_object(path: Path, where: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _error(path, where, "headers must be an object of name to value",
                     'write headers as {"content-type": "application/json", ...}')
    return _header_values(path, where, value.items(), 'write headers as {"content-type": "application/json", ...}')


class _Kept(list[Any]):
    """The records of a capture as they are read, each kept as ``keep`` makes it (what a reader needs
    of it, so a large record is not held: :func:`read_capture`)."""

    def __init__(self, keep: Callable[[Any], Any]) -> None:
        super().__init__()
        self._keep = keep

    def append(self, record: Any) -> None:
        super().append(self._keep(record))
