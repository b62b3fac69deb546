"""Tour 37 items 3, 6, 7 and 9 (issue 17): ``index --db -`` and ``stats --db -`` made a SQLite
file named ``-``; ``breaks`` of one log with no break did not name it, and over many logs left the
ones with no break out silently; ``breaks --format csv`` put the log in the ``table`` cell; the
report showed the project of ``G:\\work\\proj`` as ``work/proj``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.gate import Policy, run_check
from dsh_audit.report import build_report_data
from dsh_audit.testing import LogBuilder


def _log(path: Path, session_id: str, *, changed: bool, cwd: str = "/home/dev/project") -> None:
    """A two-turn chat at ``path``; ``changed``: its system prompt changes before the second turn
    (a header_change break at request 1)."""
    b = LogBuilder(session_id=session_id, cwd=cwd, system="S" * 400)
    with b.turn("one"), b.step():
        b.assistant("one")
    if changed:
        b.configure(system="T" * 400)
    with b.turn("two"), b.step():
        b.assistant("two")
    b.write_jsonl(path, packed=False)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``root/a`` a log with no break, ``root/b`` one with a break; the current folder."""
    _log(tmp_path / "root" / "a" / "session.jsonl", "s-a", changed=False)
    _log(tmp_path / "root" / "b" / "session.jsonl", "s-b", changed=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


@pytest.mark.parametrize(("command", "said"), [
    (["index", "root"], "the index cannot be written to stdout (hint: give --db a path instead)"),
    (["stats"], "the index is read from a SQLite file, not from stdin (hint: give --db the file "
                "`dsh-audit index PATH --db FILE` wrote)")])
def test_db_dash_is_refused(command: list[str], said: str, root: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, *command, "--db", "-")
    assert (code, out, err) == (2, "", [f"error: --db -: {said}"])
    assert not (root / "-").exists()


def test_breaks_of_one_log_with_no_break_names_it(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "breaks", "root/a")
    assert (code, out, err) == (0, "root/a/session.jsonl  session s-a\nno prefix-cache breaks\n", [])


def test_breaks_of_many_logs_counts_those_with_no_break(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "breaks", "root")
    assert (code, err) == (0, [])
    lines = out.splitlines()
    assert lines[0] == "root/b/session.jsonl  session s-b"
    assert lines[-1] == "2 sessions read; 1 with no prefix-cache break, not listed (--all lists them)"
    assert not [line for line in lines if "s-a" in line]
    code, out, err = invoke(monkeypatch, capsys, "breaks", "root", "--all")  # each log's table: no count
    assert (code, err) == (0, [])
    assert out.splitlines()[0] == "root/a/session.jsonl  session s-a"
    assert "sessions read" not in out
    _log(root / "root" / "b" / "session.jsonl", "s-b", changed=False)
    code, out, err = invoke(monkeypatch, capsys, "breaks", "root")
    assert (code, out, err) == (0, "no prefix-cache breaks in the 2 sessions read\n", [])


def test_breaks_csv_names_each_rows_log_and_session(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "breaks", "root", "--format", "csv")
    assert code == 0
    assert out.splitlines() == [
        "table,log,session,#,vs,relation,verdict,cause,fields,evidence seqs,first divergence",
        "breaks,root/b/session.jsonl,s-b,1,0,step,break,header_change,system,20,system @0 body@69"]
    assert err == ["2 sessions read; 1 with no prefix-cache break, not listed (--all lists them)"]


@pytest.mark.parametrize("cwd", ["G:\\work\\proj", "\\\\srv\\share\\proj", "/home/dev/work/proj"])
def test_report_project_is_the_cwd_as_sessions_shows_it(cwd: str, tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    _log(log, "s-win", changed=False, cwd=cwd)
    data = build_report_data(run_check([log], policy=Policy()))
    assert [s["project"] for s in data["sessions"]] == [cwd]


_A_CHAT = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live" / "a-chat"


@pytest.mark.skipif(not _A_CHAT.is_dir(), reason="the shared corpus is absent")
def test_diff_json_rows_start_with_their_logs_path(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Tour 37: every per-request JSON stream starts with the log's path; diff's rows had none."""
    log = _A_CHAT / "session-logs" / "session-2b096b61-0a34-4da6-abec-4e87161c2c0b.jsonl"
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 3
    assert [(list(row)[:3], row["path"]) for row in rows] == [(["path", "session_id", "index"], str(log))] * 3
