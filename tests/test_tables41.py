"""Tables of session 41: one piece of code per job.

1. The room an id needs (print_table's ``least``) is measured one way, on the cell as the table
   shows it: a hostile id's escapes count (``sessions`` and ``usage`` measured the raw id), and
   the id itself, a space in it its own (they measured it to its first " (" or " ").
2. A missing id is ``-`` and the caption says the ids are prefixes, in every table alike
   (``usage``'s keys, ``stats``' rankings: their empty id was a blank cell).
3. ``check``'s last layout takes the prefixes its narrower layouts computed, not its own again.
4. ``stats`` asks the index for every session id only when an id must be cut.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _cli import invoke

from dsh_audit.cli import _check_table, _stats_tables
from dsh_audit.cli._sessions_fit import id_room
from dsh_audit.cli._table_ids import NO_ID, id_caption, id_cell, id_names, widest
from dsh_audit.cli._usage_table import _short_key
from dsh_audit.report.terminal import Amount, id_prefixes
from dsh_audit.testing import LogBuilder

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs" / "sessions"


def test_an_ids_room_is_its_cell_as_the_table_shows_it() -> None:
    # an ESC is its six-character escape in the cell, a wide character two cells, a missing id "-"
    assert [widest([cell]) for cell in ("s-1", "s\x1b", "s-漢", None)] == [3, 7, 4, 1]
    assert widest(["s-1", "session-a"]) == 9 and widest([]) == 0


def test_a_missing_id_and_the_caption_are_said_one_way() -> None:
    names = id_names(["session-sample-compaction", None, "", "session-sample-change"], id_prefixes)
    assert names == {"session-sample-compaction": "session-sample-co…", "session-sample-change": "session-sample-ch…"}
    assert [id_cell(i, names) for i in ("session-sample-change", None, "")] == ["session-sample-ch…", NO_ID, NO_ID]
    assert [id_caption("id"), id_caption("session ids"), id_caption("session", whose="its id"),
            id_caption("id", cut="title"), id_caption("vs", whose="a parent's session id")] == [
        "id: shortest unique prefix (--json for whole ids)",
        "session ids: shortest unique prefix (--json for whole ids)",
        "session: shortest unique prefix of its id (--json for whole ids)",
        "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)",
        "vs: shortest unique prefix of a parent's session id (--json for whole ids)"]
    # stats' rankings: a missing or empty id is "-" there too
    rows, caption = _stats_tables._short_sessions(("session", "path"), [("", "a"), (None, "b"), ("s-1", "c")], (),
                                                  lambda: [])
    assert (rows, caption) == ([("-", "a"), ("-", "b"), ("s-1", "c")], None)


def _log(path: Path, session_id: str) -> None:
    b = LogBuilder(session_id=session_id, model="deepseek-v4-flash")
    with b.turn("Hi"), b.step():
        b.assistant("Hello")
    b.write_jsonl(path)


# "reusable" unknown ("?", CSV empty) beside the lost tokens: the request logged no cache reads (session 46)
_MD_CELLS = " | 1 | ? | ? |  | ? | 0 | 8 | \\$? | \\$? | \\$? | \\$? | \\$? | \\$? | \\$? | 1 |"


@pytest.mark.parametrize("form, lines", [
    ("csv", ["usage by turn,'- turn 1,1,,,0,0,,0,8,,,,,,,,1",  # "-" then text: led by "'", as any such cell
             "usage by turn,s x (y) turn 1,1,,,0,0,,0,8,,,,,,,,1"]),
    ("markdown", ["| - turn 1" + _MD_CELLS, "| s x (y) turn 1" + _MD_CELLS])])
def test_usage_keys_a_missing_id_as_every_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], form: str, lines: list[str]) -> None:
    for name, session_id in (("a", ""), ("b", "s x (y)")):
        _log(tmp_path / f"{name}.jsonl", session_id)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(tmp_path), "--by", "turn", "--format", form)
    assert code == 0 and [line for line in out.splitlines() if " turn 1" in line] == lines


def test_an_id_holding_a_space_is_measured_whole() -> None:
    # usage cuts the id a key starts with, not its first word; sessions measures a copy's id, not to its " ("
    assert [_short_key(key, found, {"s x (y)": "s x…"}) for key, found in (
        ("s x (y) turn 1", "s x (y)"), ("- #0", ""), ("total", None))] == ["s x… turn 1", "- #0", "total"]
    listed = [SimpleNamespace(session_id="s x (y)", path="p.jsonl"), SimpleNamespace(session_id="a (b", path="q")]
    rows = [("s x (y) (p.jsonl)",), ("a (b",)]
    assert id_room(rows, listed, {"s x (y)"}) == 7  # type: ignore[arg-type]


def test_checks_last_layout_reuses_the_prefixes(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def counted(ids: Any) -> dict[str, str]:
        calls.append(list(ids))
        return id_prefixes(ids)

    monkeypatch.setattr(_check_table, "id_prefixes", counted)
    monkeypatch.setenv("COLUMNS", "40")  # too narrow for any layout but the last
    shown = [SimpleNamespace(session_id=f"session-sample-{n}", path=f"/far/away/{n}/session.jsonl") for n in "ab"]
    rows = [("ok", s.path, s.session_id, 1, "none", 0, Amount(None, "n/a"), Amount(None, "-"), 0) for s in shown]
    columns, cut, captions, paths, short = _check_table._narrowed(rows, shown)  # type: ignore[arg-type]
    assert len(calls) == 1
    assert [row[1:3] for row in cut] == [("1", "session-sample-a"), ("2", "session-sample-b")]
    assert (captions, paths, short) == ([], [("log 1:", shown[0].path), ("log 2:", shown[1].path)], _check_table._SHORT)


@pytest.mark.parametrize("columns, asked", [("200", 0), ("60", 1)])
def test_stats_asks_the_index_for_its_ids_only_to_cut_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], columns: str,
                                                          asked: int) -> None:
    db = str(tmp_path / "a.sqlite")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    assert invoke(monkeypatch, capsys, "index", str(SAMPLES), "--db", db)[0] == 0
    real, calls = _stats_tables._index_ids, []
    monkeypatch.setattr(_stats_tables, "_index_ids", lambda path: calls.append(path) or real(path))
    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", db)
    assert code == 0 and calls == [db] * asked  # both rankings: one query at most
    assert ("session: shortest unique prefix (--json for whole ids)" in " ".join(out.split())) is bool(asked)


@pytest.mark.parametrize("columns", ["80", "160"])
def test_an_id_longer_than_a_word_is_never_cut_in_its_middle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str], columns: str) -> None:
    # two ids sharing 88 characters: their shortest unique prefixes are all of them, 89 characters
    for end in "ab":
        _log(tmp_path / f"{end}.jsonl", "session-" + "x" * 80 + end)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = invoke(monkeypatch, capsys, "sessions", str(tmp_path))
    joined = "".join(out.split())  # an id wrapped whole in a block of lines a row is whole again
    assert code == 0 and "…" not in out and all(f"session-{'x' * 80}{end}" in joined for end in "ab")
