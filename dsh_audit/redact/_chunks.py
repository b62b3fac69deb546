"""The log's own streamed deltas, redacted one stream at a time (as :mod:`._response` redacts an SSE
response): the deltas of one block of one attempt are handed to :meth:`Redactor.stream` together,
so a secret split across two or more deltas is found in their concatenation and counted once, and
no delta is kept verbatim, whatever it equals.

Where deltas live (spec, format versions): ``assistant/chunk`` events (``text-delta`` and
``reasoning-delta`` ``text``, ``tool-call-delta`` ``argumentsDelta``), packed ``*-chunks`` rows
(``texts``, ``args``), and from v2 the ``stream`` array of ``assistant/message`` and
``assistant/attempt`` (the same chunks and rows, without seqs). A stream is keyed by turn, step,
block index, delta kind and tool-call id; it ends at a ``block-start`` of its block, at a
``finish`` of its step, and at ``step/end``, ``turn/end`` and retries (where DSH closes an
attempt). An embedded ``stream`` array is a stream scope of its own.

A log is read twice: :meth:`ChunkStreams.collect` sees every record first, then
:meth:`ChunkStreams.record` rewrites each one with the placeholders of its deltas.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..jsjson import stringify
from ._redactor import Redactor

__all__ = ["ChunkStreams"]

_DELTA_FIELDS = {"text-delta": "text", "reasoning-delta": "text", "tool-call-delta": "argumentsDelta"}
_ROW_FIELDS = {"text-chunks": ("text-delta", "texts"), "reasoning-chunks": ("reasoning-delta", "texts"),
               "tool-call-chunks": ("tool-call-delta", "args")}
_CLOSING = frozenset({"step/end", "turn/end", "llm/retry", "llm/retry-started"})
_EMBEDDING = frozenset({"assistant/message", "assistant/attempt"})

#: Where a delta string sits in its record (keys and indexes from the top), and its stream.
_Slot = tuple[tuple[Any, ...], int]


class ChunkStreams:
    """The delta streams of one log, for one :class:`Redactor`.

    Example:
        >>> from dsh_audit.redact import Placeholders, Redactor
        >>> streams = ChunkStreams(Redactor(Placeholders(b"salt")))
        >>> rows = [{"type": "assistant/chunk", "seq": 3, "time": 1, "data": {"turn": 1, "step": 1,
        ...          "chunk": {"type": "text-delta", "index": 0, "text": t}}} for t in ("sk-ant-", "api03-" + "x" * 20)]
        >>> for row in rows:
        ...     streams.collect(row)
        >>> streams.seal()
        >>> [len(streams.record(row)["data"]["chunk"]["text"]) for row in rows], dict(streams.redactor.secrets)
        ([7, 26], {'anthropic_api_key': 1})
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._deltas: dict[int, list[str]] = {}
        self._placeholders: dict[int, Iterator[str]] = {}
        self._reset()

    def _reset(self) -> None:
        self._open: dict[tuple[str, str, str], int] = {}  # (turn and step, block, kind and id) -> stream
        self._streams = 0
        self._scopes = 0

    def _stream(self, where: str, block: Any, kind: str, call: Any) -> int:
        key = (where, stringify(block), stringify([kind, call]))
        found = self._open.get(key)
        if found is None:
            self._streams += 1
            found = self._open[key] = self._streams
        return found

    def _close(self, where: str, block: Any = None) -> None:
        """End the open streams of ``where`` (of its ``block`` only, when given)."""
        index = None if block is None else stringify(block)
        for key in [k for k in self._open if k[0] == where and (index is None or k[1] == index)]:
            del self._open[key]

    def _chunk(self, chunk: Any, where: str, path: tuple[Any, ...]) -> list[_Slot]:
        if not isinstance(chunk, dict):
            return []
        kind = chunk.get("type")
        if kind == "block-start":
            self._close(where, chunk.get("index"))
        elif kind == "finish":
            self._close(where)
        elif isinstance(kind, str) and kind in _DELTA_FIELDS:
            field = _DELTA_FIELDS[kind]
            if isinstance(chunk.get(field), str):
                return [((*path, field), self._stream(where, chunk.get("index"), kind, chunk.get("id")))]
        return []

    def _row(self, row: dict[str, Any], where: str, path: tuple[Any, ...]) -> list[_Slot]:
        kind, field = _ROW_FIELDS[row["type"]]
        members = row.get(field)
        if not isinstance(members, list):
            return []
        stream = self._stream(where, row.get("index"), kind, row.get("id"))
        return [((*path, field, i), stream) for i, member in enumerate(members) if isinstance(member, str)]

    def _slots(self, record: Any) -> list[_Slot]:
        """Every delta of ``record`` and its stream; call once per record, in log order."""
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            return []
        kind, data = record["type"], record.get("data")
        if kind in _CLOSING:
            self._open.clear()
        if not isinstance(data, dict):
            return []
        where = stringify([data.get("turn"), data.get("step")])
        if kind == "assistant/chunk":
            return self._chunk(data.get("chunk"), where, ("data", "chunk"))
        if kind in _ROW_FIELDS:
            return self._row({**data, "type": kind}, where, ("data",))
        stream = data.get("stream")
        if kind not in _EMBEDDING or not isinstance(stream, list):
            return []
        self._scopes += 1
        scope = f"embedded {self._scopes}"
        slots: list[_Slot] = []
        for i, item in enumerate(stream):
            if not isinstance(item, dict):
                continue
            if item.get("type") == "chunk":
                slots.extend(self._chunk(item.get("chunk"), scope, ("data", "stream", i, "chunk")))
            elif item.get("type") in _ROW_FIELDS:
                slots.extend(self._row(item, scope, ("data", "stream", i)))
        return slots

    def collect(self, record: Any) -> None:
        """First pass: note the deltas of ``record``."""
        for path, stream in self._slots(record):
            self._deltas.setdefault(stream, []).append(_get(record, path))

    def seal(self) -> None:
        """End the first pass: redact every stream (secrets looked for in its deltas joined)."""
        self._placeholders = {stream: iter(self.redactor.stream(deltas)) for stream, deltas in self._deltas.items()}
        self._deltas = {}
        self._reset()

    def record(self, record: Any) -> Any:
        """Second pass: ``record`` redacted (:meth:`Redactor.record`), its deltas by their streams'
        placeholders. Records must come in the order :meth:`collect` saw them."""
        slots = self._slots(record)
        if not slots:
            return self.redactor.record(record)
        for path, _ in slots:
            _set(record, path, "")  # not content: the stream's placeholders go here
        out = self.redactor.record(record)
        for path, stream in slots:
            _set(out, path, next(self._placeholders[stream]))
        return out


def _get(value: Any, path: tuple[Any, ...]) -> str:
    for step in path:
        value = value[step]
    return str(value)


def _set(value: Any, path: tuple[Any, ...], new: str) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new
