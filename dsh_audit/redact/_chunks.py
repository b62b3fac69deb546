"""The log's own streamed deltas, redacted one stream at a time (as :mod:`._response` redacts an SSE
response): the deltas of one block of one attempt form one stream, whose secrets are looked for in
its deltas joined (:meth:`Redactor.stream_secrets`), so a secret split across two or more deltas is
found and counted once, and every delta gets its placeholder (:meth:`Redactor.delta`): none is kept
verbatim, whatever it equals.

Where deltas live (spec, format versions): ``assistant/chunk`` events (``text-delta`` and
``reasoning-delta`` ``text``, ``tool-call-delta`` ``argumentsDelta``), packed ``*-chunks`` rows
(``texts``, ``args``), and from v2 the ``stream`` array of ``assistant/message`` and
``assistant/attempt`` (the same chunks and rows, without seqs). A stream is keyed by turn, step,
block index, delta kind and tool-call id; it ends at a ``block-start`` of its block, at a
``finish`` of its step, and at ``step/end``, ``turn/end`` and retries (where DSH closes an
attempt). An embedded ``stream`` array is a stream scope of its own.

The log is read once: :meth:`ChunkStreams.record` rewrites each record as it comes, each delta by
its own placeholder (which does not depend on the other deltas), and keeps only the deltas of the
streams still open; a stream's secrets are counted when it ends (or at :meth:`ChunkStreams.end`),
so memory is bounded by the open streams, not by the log.
"""

from __future__ import annotations

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
        >>> [len(streams.record(row)["data"]["chunk"]["text"]) for row in rows]
        [7, 26]
        >>> streams.end()
        >>> dict(streams.redactor.secrets)
        {'anthropic_api_key': 1}
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._open: dict[tuple[str, str, str], int] = {}  # (turn and step, block, kind and id) -> stream
        self._deltas: dict[int, list[str]] = {}  # the deltas of each open stream, for its secret scan
        self._streams = 0
        self._scopes = 0

    def _stream(self, where: str, block: Any, kind: str, call: Any, delta: str) -> int:
        """The stream ``delta`` belongs to (it is noted for the stream's secret scan)."""
        key = (where, stringify(block), stringify([kind, call]))
        found = self._open.get(key)
        if found is None:
            self._streams += 1
            found = self._open[key] = self._streams
        self._deltas.setdefault(found, []).append(delta)
        return found

    def _close(self, where: str | None, block: Any = None) -> None:
        """End the open streams of ``where`` (every open stream when None; of its ``block`` only, when
        given): their secrets are counted."""
        index = None if block is None else stringify(block)
        for key in [k for k in self._open if where is None or (k[0] == where and (index is None or k[1] == index))]:
            deltas = self._deltas.pop(self._open.pop(key), None)
            if deltas is not None:
                self.redactor.stream_secrets(deltas)

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
            delta = chunk.get(field)
            if isinstance(delta, str):
                return [((*path, field), self._stream(where, chunk.get("index"), kind, chunk.get("id"), delta))]
        return []

    def _row(self, row: dict[str, Any], where: str, path: tuple[Any, ...]) -> list[_Slot]:
        kind, field = _ROW_FIELDS[row["type"]]
        members = row.get(field)
        if not isinstance(members, list):
            return []
        return [((*path, field, i), self._stream(where, row.get("index"), kind, row.get("id"), member))
                for i, member in enumerate(members) if isinstance(member, str)]

    def _slots(self, record: Any) -> list[_Slot]:
        """Every delta of ``record`` and its stream; call once per record, in log order."""
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            return []
        kind, data = record["type"], record.get("data")
        if kind in _CLOSING:
            self._close(None)
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
        self._close(scope)  # an embedded stream is whole in its record
        return slots

    def record(self, record: Any) -> Any:
        """``record`` redacted (:meth:`Redactor.record`), each of its deltas by its placeholder.
        Records must come in log order."""
        slots = self._slots(record)
        if not slots:
            return self.redactor.record(record)
        deltas = [_get(record, path) for path, _ in slots]
        for path, _ in slots:
            _set(record, path, "")  # not content: the deltas' placeholders go here
        out = self.redactor.record(record)
        for (path, _), delta in zip(slots, deltas):
            _set(out, path, self.redactor.delta(delta))
        return out

    def end(self) -> None:
        """The end of the log: count the secrets of the streams still open."""
        self._close(None)


def _get(value: Any, path: tuple[Any, ...]) -> str:
    for step in path:
        value = value[step]
    return str(value)


def _set(value: Any, path: tuple[Any, ...], new: str) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new
