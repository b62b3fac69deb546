"""``dsh-audit watch``: --on-break's input and failures, logs that are links to nothing, a log
replaced by a copy of another (a user tour and fuzz round 16, session 35).

1. The --on-break command read the break as JSON with no newline after it (a `while read line`
   hook read nothing), and a run that failed (exit 3) was not said. Now each run reads one line
   ending in a newline, and a run that exits non-zero, cannot be started or is ended for taking too
   long is one ``error:`` line naming the command and the break, counted in the summary's errors
   (the watch goes on and ends 0, as the README says of watch's errors).
2. A ``session.jsonl`` that is a symlink loop or a link to nothing was passed over in silence (and,
   given as the PATH, waited for forever). Now it is an ``error`` item as a FIFO is (the message
   the other commands give), and as the PATH it is that error, exit 2.
3. A followed log replaced by a copy of another followed log was followed twice: its requests
   printed and counted twice. Now it is followed once, with the usual copy note.

Real file watching and real processes, as ``test_watch_fixes.py``.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke
from test_watch34 import _request, _turns
from test_watch_fixes import PLAIN, _append, _drive, _note, _target, needs_corpus

from dsh_audit.cli import _on_break as cli_on_break
from dsh_audit.cli import _watch as cli_watch
from dsh_audit.log import read_log
from dsh_audit.watch import WatchItem, WatchNote, WatchRequest

HOOK_TAIL = "(run for the break at request #{index} of session {sid}; the watch goes on)"


def _json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


@needs_corpus
def test_on_break_reads_one_line_per_break_and_a_failing_run_is_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The 5 history breaks of the c-change log: a `while read` hook gets each break whole, one
    line each (before: no newline, so nothing), and its exit 3 is 5 error lines and 5 errors."""
    _target(tmp_path).write_bytes(PLAIN[0].read_bytes())
    got = tmp_path / "got.jsonl"
    hook = f"sh -c 'while read -r line; do printf \"%s\\n\" \"$line\" >> {got}; done; exit 3'"
    code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path / "sessions"), "--json", "--since",
                            "100000d", "--idle-exit", "0.1", "--polling", "--on-break", hook)
    assert code == 0
    lines = _json_lines(out)
    breaks = [line for line in lines if line["type"] == "break"]
    assert len(breaks) == 5
    assert sorted(_json_lines(got.read_text()), key=lambda line: line["index"]) == breaks
    quoted = f"sh -c 'while read -r line; do printf \"%s\\n\" \"$line\" >> {got}; done; exit 3'"
    assert sorted(err) == sorted(
        f"error: --on-break {quoted}: exited with status 3 "
        + HOOK_TAIL.format(index=line["index"], sid=line["session_id"]) for line in breaks)
    assert {**lines[-1], "cost_usd": lines[-1]["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 8, "breaks": 5, "cost_usd": 0.01107667,
                         "errors": 5, "unpriced_requests": 1, "cost_complete": False}


@needs_corpus
def test_an_on_break_command_that_cannot_start_is_an_error_each_break(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Text mode: the command does not exist; each break says so once and the summary counts them."""
    monkeypatch.setenv("COLUMNS", "1000")
    _target(tmp_path).write_bytes(PLAIN[0].read_bytes())
    missing = tmp_path / "no such hook"
    code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path / "sessions"), "--since", "100000d",
                            "--idle-exit", "0.1", "--polling", "--on-break", f"'{missing}' --flag")
    assert code == 0
    breaks = [int(match[1]) for line in out.splitlines() if (match := re.search(r"  #(\d+) .*  BREAK ", line))]
    assert len(breaks) == 5
    sid = read_log(PLAIN[0]).header.id
    assert sorted(line for line in err if line.startswith("error: ")) == sorted(
        f"error: --on-break '{missing}' --flag: cannot be started: No such file or directory "
        + HOOK_TAIL.format(index=index, sid=sid) for index in breaks)
    assert err[-1] == ("watched 1 session(s): 8 request(s), 5 break(s), ≥$0.0111 (1 unpriced), "
                       "5 failed --on-break run(s)")


def test_a_run_ended_for_taking_too_long_or_by_a_signal_is_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The time limit (here 0.2 s, not 60) ends a run: an error; a run killed by a signal (not by
    the watch stopping) is one too, naming the signal; a run that exits 0 is none. The command is
    shown shell-quoted, its control characters escaped."""
    monkeypatch.setattr(cli_on_break, "_HOOK_TIMEOUT", 0.2)
    for command, index in ((["sleep", "5"], 1), (["sh", "-c", "kill -9 $$", "\x1b[2J"], 2), (["true"], 3)):
        hooks = cli_watch._Hooks(command)
        hooks.start(_request(index, 1e-7, verdict="break"))
        hooks.wait(threading.Event())
        hooks.end()
        assert hooks.failures == (index < 3)
    assert capsys.readouterr().err.splitlines() == [
        "error: --on-break sleep 5: still running after 0.2 s: ended " + HOOK_TAIL.format(index=1, sid="s"),
        "error: --on-break sh -c 'kill -9 $$' '\\u001b[2J': was ended by signal SIGKILL "
        + HOOK_TAIL.format(index=2, sid="s"),
    ]


def _links(root: Path) -> tuple[Path, Path]:
    """A session folder holding a symlink loop named session.jsonl, another a link to nothing."""
    loop = root / "--p--" / "c" / "session.jsonl"
    loop.parent.mkdir(parents=True)
    os.symlink("loop2", loop.parent / "loop1")
    os.symlink("loop1", loop.parent / "loop2")
    os.symlink("loop1", loop)
    dangling = root / "--p--" / "g" / "session.jsonl"
    dangling.parent.mkdir(parents=True)
    os.symlink(root / "nothing", dangling)
    return loop, dangling


def test_a_log_that_is_a_link_to_nothing_is_an_error_as_a_fifo_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Under the watched root: one error each (the message `sessions` gives), counted; the log
    beside them is followed. Before: "following 1 log(s)", no error, errors 0."""
    root = tmp_path / "sessions"
    chat_log(root / "--p--" / "ok" / "session.jsonl", "ok")
    loop, dangling = _links(root)
    code, out, err = invoke(monkeypatch, capsys, "watch", str(root), "--json", "--idle-exit", "0.1", "--polling")
    assert code == 0
    lines = _json_lines(out)
    errors = [{k: v for k, v in line.items() if k != "seen_at"} for line in lines if
              line["type"] == "error"]
    messages = [f"{loop}: cannot open: symlink loop", f"{dangling}: cannot open: No such file or directory"]
    assert sorted(errors, key=lambda line: line["path"]) == [
        {"type": "error", "path": str(path), "session_id": None, "message": message}
        for path, message in zip((loop, dangling), messages)]
    assert sorted(err) == [f"error: {message}" for message in messages]
    assert lines[0]["message"].startswith("following 3 log(s);")
    assert {**lines[-1], "cost_usd": lines[-1]["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 0, "breaks": 0, "cost_usd": 0,
                         "errors": 2, "unpriced_requests": 0, "cost_complete": True}


def test_a_path_that_is_a_link_to_nothing_is_an_error_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Given as the PATH, the same error as every command gives, exit 2 (before: "following 0
    log(s)", waited for forever)."""
    loop, dangling = _links(tmp_path / "sessions")
    for path, why in ((loop, "symlink loop"), (dangling, "No such file or directory")):
        assert invoke(monkeypatch, capsys, "watch", str(path), "--exit-after", "5") == (
            2, "", [f"error: {path}: cannot open: {why}"])
        assert invoke(monkeypatch, capsys, "sessions", str(path))[2] == [f"error: {path}: cannot open: {why}"]


def _replace(path: Path, data: bytes) -> None:
    staged = path.with_name("new.tmp")
    staged.write_bytes(data)
    os.replace(staged, path)


def _started(sid: str) -> Callable[[WatchItem], bool]:
    """The test of a step: the log of session ``sid`` is being read (its file opened)."""
    return lambda item: isinstance(item, WatchNote) and item.level == "started" and item.session_id == sid


def _all_started(*sids: str) -> Callable[[WatchItem], bool]:
    """The test of a step: the logs of every session of ``sids`` are being read (in any order)."""
    seen: set[str] = set()

    def test(item: WatchItem) -> bool:
        if isinstance(item, WatchNote) and item.level == "started" and item.session_id is not None:
            seen.add(item.session_id)
        return seen >= set(sids)
    return test


def _requests(items: list[WatchItem]) -> list[tuple[str, str, int]]:
    return [(Path(item.path).parent.name, item.session_id, item.index) for item in items
            if isinstance(item, WatchRequest)]


def test_a_log_replaced_by_a_copy_of_another_is_followed_once(tmp_path: Path) -> None:
    """a/ and b/ hold sessions wa and wb; a is replaced by a copy of b: a note says b is read, not
    a, and no request is shown (before: wb's request shown again from a, counted twice)."""
    root = tmp_path / "sessions" / "--p--"
    chat_log(root / "a" / "session.jsonl", "wa")
    copied = chat_log(root / "b" / "session.jsonl", "wb").read_bytes()
    # both followed first (under load b's reader may start after a is replaced: then neither is "the
    # one already followed" and the tie goes by name)
    items = _drive(tmp_path, [(_all_started("wa", "wb"), lambda: _replace(root / "a" / "session.jsonl", copied)),
                              (_note("note", "one session in two files"), lambda: None)])
    notes = [(item.level, item.message) for item in items if isinstance(item, WatchNote)
             and item.level in ("note", "replaced", "error")]
    assert notes[-1] == ("note", f"one session in two files under {root}{os.sep}: read b{os.sep}session.jsonl, "
                                 f"not a{os.sep}session.jsonl (the same lines)")
    assert _requests(items) == []


def test_a_log_replaced_by_a_longer_copy_takes_over_where_the_other_stopped(tmp_path: Path) -> None:
    """a is replaced by b's lines and one more turn: a is read from the request where b stopped,
    b no longer; the new request is shown once. Both are followed first (under load b's reader may
    start after a is replaced: then b showed nothing, and a rightly shows wb's requests from the first)."""
    root = tmp_path / "sessions" / "--p--"
    chat_log(root / "a" / "session.jsonl", "wa")
    first, second = _turns("wb", 2)
    (root / "b").mkdir()
    (root / "b" / "session.jsonl").write_bytes(first)
    items = _drive(tmp_path, [(_all_started("wa", "wb"), lambda: _replace(root / "a" / "session.jsonl", first + second)),
                              (lambda item: isinstance(item, WatchRequest), lambda: None)])
    notes = [item.message for item in items if isinstance(item, WatchNote) and item.level == "note"]
    assert notes == [f"one session in two files under {root}{os.sep}: read a{os.sep}session.jsonl, "
                     f"not b{os.sep}session.jsonl (the other's lines and more)"]
    assert _requests(items) == [("a", "wb", 1)]



def test_two_session_folders_holding_one_session_are_followed_once(tmp_path: Path) -> None:
    """Found at the start in a/ and b/ (the same lines): once their headers say so, one is followed
    (a note says which) and a request appended to it is shown once."""
    root = tmp_path / "sessions" / "--p--"
    first, second = _turns("wb", 2)
    for folder in ("a", "b"):
        (root / folder).mkdir(parents=True)
        (root / folder / "session.jsonl").write_bytes(first)
    grow = _append(root / "a" / "session.jsonl", second)
    items = _drive(tmp_path, [(_note("note", "one session in two files"), grow),
                              (lambda item: isinstance(item, WatchRequest), lambda: None)])
    notes = [item.message for item in items if isinstance(item, WatchNote) and item.level == "note"]
    assert notes == [f"one session in two files under {root}{os.sep}: read a{os.sep}session.jsonl, "
                     f"not b{os.sep}session.jsonl (the same lines)"]
    assert _requests(items) == [("a", "wb", 1)]


def test_the_history_of_one_session_in_two_folders_is_shown_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """--since: b holds a's lines and one more request; the history is b's, shown once (before:
    a's request shown and counted twice)."""
    root = tmp_path / "sessions" / "--p--"
    first, second = _turns("wb", 2)
    for folder, data in (("a", first), ("b", first + second)):
        (root / folder).mkdir(parents=True)
        (root / folder / "session.jsonl").write_bytes(data)
    code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path / "sessions"), "--json", "--since",
                            "100000d", "--idle-exit", "0.3", "--polling")
    assert code == 0 and err == []
    lines = _json_lines(out)
    assert [(Path(line["path"]).parent.name, line["index"]) for line in lines if line["type"] == "request"] == [
        ("b", 0), ("b", 1)]
    assert [line["message"] for line in lines if line["type"] == "note"] == [
        f"one session in two files under {root}{os.sep}: read b{os.sep}session.jsonl, "
        f"not a{os.sep}session.jsonl (the other's lines and more)"]
    assert lines[-1]["requests"] == 2
