"""``stats --db FILE`` is an input: refused in one line naming the path, exit 2, with a hint naming
``--db`` and ``dsh-audit index --db``, before SQLite opens it (not in click's words: "Invalid value
for '--db': File 'x' is a directory."), whether it is a folder, a missing file, a FIFO, a file
this user cannot read, or a file that is not a dsh-audit index; and nothing is written beside it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from _cli import invoke

READ_HINT = "(hint: give --db the file `dsh-audit index PATH --db FILE` wrote)"


def _stats(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], db: Path) -> tuple[int, str, list[str]]:
    return invoke(monkeypatch, capsys, "stats", "--db", str(db))


def test_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "audit.sqlite"
    db.mkdir()
    assert _stats(monkeypatch, capsys, db) == (2, "", [f"error: {db}: the index is a folder, not a file {READ_HINT}"])
    assert list(db.iterdir()) == []


def test_a_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "none.sqlite"
    assert _stats(monkeypatch, capsys, db) == (2, "", [
        f"error: {db}: no such index (hint: build one with `dsh-audit index PATH --db FILE`)"])
    assert list(tmp_path.iterdir()) == []


def test_a_fifo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "audit.sqlite"
    os.mkfifo(db)
    assert _stats(monkeypatch, capsys, db) == (2, "", [f"error: {db}: the index is a FIFO, not a file {READ_HINT}"])
    assert [p.name for p in tmp_path.iterdir()] == ["audit.sqlite"]


def test_a_symlink_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "audit.sqlite"
    db.symlink_to(db)
    assert _stats(monkeypatch, capsys, db) == (2, "", [f"error: {db}: cannot read the index: symlink loop {READ_HINT}"])


def test_a_file_this_user_cannot_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "audit.sqlite"
    db.write_bytes(b"")
    real_open = os.open

    def denied(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if os.fspath(path) == str(db):  # type: ignore[arg-type]
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(db))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", denied)  # chmod 000 does not stop root
    assert _stats(monkeypatch, capsys, db) == (2, "", [
        f"error: {db}: cannot read the index: {os.strerror(errno.EACCES)} {READ_HINT}"])


@pytest.mark.parametrize(("content", "said"), [
    (b"", "not a dsh-audit index: it is empty (hint: give another --db file, or build one with "
          "`dsh-audit index PATH --db FILE`)"),
    (b"hello, not SQLite\n", "not a dsh-audit index: file is not a database (hint: give another --db file (keep "
                             "this one: it may hold data), and build it with `dsh-audit index PATH --db FILE`)")])
def test_a_file_that_is_not_an_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], content: bytes, said: str) -> None:
    db = tmp_path / "audit.sqlite"
    db.write_bytes(content)
    assert _stats(monkeypatch, capsys, db) == (2, "", [f"error: {db}: {said}"])
    assert db.read_bytes() == content and [p.name for p in tmp_path.iterdir()] == ["audit.sqlite"]


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(monkeypatch, capsys, "stats", "--db", "-") == (2, "", [
        f"error: --db -: the index is read from a SQLite file, not from stdin {READ_HINT}"])
