"""The one spool every view writes a long log's output to (dsh_audit._spool): rows and lines come
back exactly, in order, past the in-memory limit and across a pickle (a worker's record)."""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import pytest

from dsh_audit import _spool
from dsh_audit._spool import LineSpool, RowSpool


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    count: int | None
    cost: float | None
    flag: bool


def _rows(n: int) -> list[Row]:
    return [Row(f"r{i}\ud800\n", None if i % 5 == 0 else i * 7, 0.1 * i if i % 3 else None, i % 2 == 0)
            for i in range(n)]


def test_rows_come_back_exactly_from_memory_and_from_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_spool, "MEMORY_BYTES", 1024)  # past it after a few batches: a real file
    rows = _rows(2000)
    spool = RowSpool(Row, batch=64)
    for row in rows:
        spool.append(row)
    assert len(spool) == 2000
    assert list(spool) == rows and list(spool) == rows  # read as often as asked
    assert spool == tuple(rows) and tuple(rows) == spool and spool != rows[:-1]
    assert spool[1999] == rows[1999] and list(spool[3:6]) == rows[3:6]
    copy = pickle.loads(pickle.dumps(spool))
    assert isinstance(copy, RowSpool) and list(copy) == rows
    spool.close()
    assert len(spool) == 0 and list(spool) == []


def test_lines_come_back_once_in_order_and_a_line_break_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_spool, "MEMORY_BYTES", 64)
    spool = LineSpool()
    lines = [f'{{"i":{i},"t":"\\u00e9\ud800"}}' for i in range(500)]
    for line in lines:
        spool.append(line)
    with pytest.raises(ValueError):
        spool.append("two\nlines")
    assert list(spool) == lines
