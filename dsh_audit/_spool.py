"""Output kept out of memory while a long log is replayed: the one spool every view writes to.

A view that turns each request into a line or a row as it is judged (``requests --json``,
``cache --json``, the index's rows) writes it here instead of holding the session's output: in
memory up to a few megabytes, then in an anonymous temporary file, gone when the spool is.

- :class:`LineSpool`: text lines, read back once, in order.
- :class:`RowSpool`: rows of one frozen dataclass, read back as often as asked; a sequence that
  equals the tuple of the same rows, and pickles as those rows (a worker's record crosses
  processes whole).

Example:
    >>> spool = LineSpool()
    >>> spool.append("a"); spool.append("é\\ud800")
    >>> list(spool)
    ['a', 'é\\ud800']
"""

from __future__ import annotations

import io
import operator
import pickle
import struct
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import fields
from typing import IO, Any, Generic, TypeVar, overload

__all__ = ["LineSpool", "RowSpool"]

#: Past this many bytes a spool moves from memory to a temporary file.
MEMORY_BYTES = 8 << 20

T = TypeVar("T")
_LENGTH = struct.Struct("<I")


class _Spill:
    """Bytes in memory up to :data:`MEMORY_BYTES`, then in an anonymous temporary file; ``file``
    is where they are now (read and seek through it, write through :meth:`write`)."""

    __slots__ = ("file", "_memory")

    def __init__(self) -> None:
        self._memory: io.BytesIO | None = io.BytesIO()
        self.file: IO[bytes] = self._memory

    def write(self, data: bytes) -> None:
        self.file.write(data)
        memory = self._memory
        if memory is not None and memory.tell() > MEMORY_BYTES:
            import tempfile  # only here: most spools stay in memory, and start-up need not load it

            disk = tempfile.TemporaryFile()
            disk.write(memory.getbuffer())
            self.file, self._memory = disk, None  # (a reader part-way through the memory keeps it)

    def close(self) -> None:
        self.file.close()


def _file(owner: object) -> _Spill:
    """A spill file, closed when ``owner`` goes (a spool dropped unread leaves nothing)."""
    spill = _Spill()
    weakref.finalize(owner, spill.close)
    return spill


class LineSpool:
    """Text lines holding no line break (JSON lines; lone surrogates too), written as they are made
    and read back once."""

    def __init__(self) -> None:
        self._file = _file(self)

    def append(self, line: str) -> None:
        if "\n" in line:
            raise ValueError("a spooled line holds no line break")
        self._file.write(line.encode("utf-8", "surrogatepass") + b"\n")

    def __iter__(self) -> Iterator[str]:
        """The lines in the order written; the spool is closed after (read it once)."""
        self._file.file.seek(0)
        try:
            for raw in self._file.file:
                yield raw[:-1].decode("utf-8", "surrogatepass")
        finally:
            self.close()

    def close(self) -> None:
        self._file.close()


class RowSpool(Sequence[T], Generic[T]):
    """Rows of the frozen dataclass ``cls``, pickled a batch at a time as they are appended.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Row:
        ...     name: str
        ...     count: int | None
        >>> rows = RowSpool(Row, [Row("a", 1)])
        >>> rows.append(Row("b", None))
        >>> len(rows), rows[1], rows == (Row("a", 1), Row("b", None))
        (2, Row(name='b', count=None), True)
    """

    __hash__ = None  # type: ignore[assignment]  # appendable: unhashable, like a list

    def __init__(self, cls: type[T], rows: Iterable[T] = (), *, batch: int = 512) -> None:
        self._cls = cls
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        getter = operator.attrgetter(*names)
        # one name's getter gives the value itself, not a tuple of one
        self._values: Callable[[T], Any] = getter if len(names) > 1 else lambda row: (getter(row),)
        self._batch = batch
        self._pending: list[Any] = []
        self._file: _Spill | None = None
        self._count = 0
        for row in rows:
            self.append(row)

    def append(self, row: T) -> None:
        self._pending.append(self._values(row))
        self._count += 1
        if len(self._pending) >= self._batch:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        if self._file is None:
            self._file = _file(self)
        self._file.file.seek(0, 2)
        data = pickle.dumps(self._pending, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.write(_LENGTH.pack(len(data)) + data)
        self._pending = []

    def __len__(self) -> int:
        return self._count

    @property
    def row_type(self) -> type[T]:
        """The frozen dataclass of the rows."""
        return self._cls

    def __iter__(self) -> Iterator[T]:
        make = self._cls
        for values in self.values():
            yield make(*values)

    def values(self) -> Iterator[tuple[Any, ...]]:
        """Each row's field values, in the order of ``dataclasses.fields`` (what a table row
        stores), without making the rows.

        Example:
            >>> from dataclasses import dataclass
            >>> @dataclass(frozen=True)
            ... class Row:
            ...     name: str
            ...     count: int | None
            >>> list(RowSpool(Row, [Row("a", 1), Row("b", None)]).values())
            [('a', 1), ('b', None)]
        """
        pending, file = list(self._pending), None if self._file is None else self._file.file
        size = 0 if file is None else file.seek(0, 2)
        at = 0
        while at < size:
            assert file is not None
            file.seek(at)
            length = _LENGTH.unpack(file.read(_LENGTH.size))[0]
            batch = pickle.loads(file.read(length))
            at += _LENGTH.size + length
            yield from batch
        yield from pending

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        return tuple(self)[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __repr__(self) -> str:
        return f"RowSpool({self._cls.__name__}, {len(self)} rows)"

    def __reduce__(self) -> tuple[Any, ...]:
        return RowSpool, (self._cls, tuple(self))

    def close(self) -> None:
        """Forget the rows (the temporary file goes)."""
        if self._file is not None:
            self._file.close()
        self._file, self._pending, self._count = None, [], 0
