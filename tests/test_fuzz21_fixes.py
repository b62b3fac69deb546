"""Fuzz round 21, defects 4, 7 and 11.

D4: a followed log moved to another folder of the watched tree was an ``error`` ("the log was
deleted while it was watched"), counted in the summary, though the watch went on in the moved
file: a log whose session goes on in another file is now a ``note`` naming where; a log deleted
for good stays an error, with a hint. Real file watching, in process, polling and notifications
(as ``test_watch_copies38.py``). D7: ``usage --json`` warns on stderr of requests the capture left unpriced, as
``cache --json`` and ``sessions --json`` do. D11: a ``billed_as`` naming another provider's model says so.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from _cli import chat_log, invoke
from test_watch_copies import _notes, _requests, _summary
from test_watch_copies38 import ONCE, _errors, _files, _turns
from test_fuzz_round19 import LOG, TITLE, _unpriced, _wire, needs_corpus
from test_watch_fixes import _append, _drive, _note, _request, _watching

from dsh_audit.testing import LogBuilder

MODES = pytest.mark.parametrize("notifications", [False, True], ids=["polling", "notifications"])
DELETED_HINT = ("its requests shown stay counted; a file written at its path is read from its first byte, and its "
                "session written again elsewhere under the watched paths goes on where it stopped; with "
                "--polling, --rescan sets how often it is looked for")


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("DSH_AUDIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "120")


@MODES
def test_a_log_moved_in_the_tree_is_a_note_not_an_error(tmp_path: Path, notifications: bool) -> None:
    """The repro: the followed log is renamed into another session folder once it has shown two
    requests, then grows there: one note naming both files, no error, each request once."""
    pieces, (log, moved) = _turns(4), _files(tmp_path)
    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces[:2]))),
                              (_request(1), lambda: os.rename(log, moved)),
                              (_note("note", "moved"), _append(moved, b"".join(pieces[2:]))),
                              (_request(3), lambda: None)],
                   rescan=0.1, notifications=notifications)
    assert _errors(items) == []
    assert _notes(items) == [f"{log}: moved: now read from {moved}, from where this file stopped"]
    assert _requests(items) == [(0, str(log)), (1, str(log)), (2, str(moved)), (3, str(moved))]
    assert _summary(items) == ONCE


@MODES
def test_a_log_moved_while_idle_is_a_note_whichever_reader_is_first(tmp_path: Path, notifications: bool) -> None:
    """The fuzz repro's timing: the log has been idle a while and is moved into a new folder; the
    moved file's header may be read before the old reader finds its file gone: a note either way."""
    pieces, (log, _) = _turns(2), _files(tmp_path)
    moved = log.parent.parent / "c" / "session.jsonl"

    def move() -> None:
        time.sleep(0.5)  # the old reader waits at a record boundary, its file closed after a look
        moved.parent.mkdir()
        os.rename(log, moved)

    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces))),
                              (_request(1), move),
                              (_note("note", "moved"), lambda: None)],
                   rescan=0.5, notifications=notifications)
    assert _errors(items) == []
    assert _notes(items) == [f"{log}: moved: now read from {moved}, from where this file stopped"]
    assert _requests(items) == [(0, str(log)), (1, str(log))]


@MODES
def test_a_log_deleted_for_good_is_an_error_with_a_hint(tmp_path: Path, notifications: bool) -> None:
    pieces, (log, _) = _turns(2), _files(tmp_path)
    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces))),
                              (_request(1), log.unlink),
                              (_note("error"), lambda: None)],
                   rescan=0.1, notifications=notifications)
    assert _errors(items) == [f"{log}:30: the log was deleted while it was watched (hint: {DELETED_HINT})"]
    assert _notes(items) == []
    assert _summary(items) == {**ONCE, "requests": 2, "errors": 1}


@pytest.mark.parametrize("pause", [0.0, 0.2], ids=["at-once", "looked-at-between"])
def test_a_copy_outliving_the_deleted_log_is_a_note(tmp_path: Path, pause: float) -> None:
    """A copy of the followed log (left out, with a note) outlives it and grows: it goes on from
    where the log stopped, said as a note, not as an error. With a ``pause`` longer than
    ``--rescan`` the watch looks at the folders before it takes the end of the copy's reader
    (the items are handed over in this thread): session 41, the copy was then never followed."""
    pieces, (log, copy) = _turns(4), _files(tmp_path)

    def delete() -> None:
        log.unlink()
        time.sleep(pause)
        _append(copy, b"".join(pieces[2:]))()

    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces[:2]))),
                              (_request(1), lambda: copy.write_bytes(b"".join(pieces[:2]))),
                              (_note("note"), delete),
                              (_request(3), lambda: None)],
                   rescan=0.1, notifications=False)
    assert _errors(items) == []
    assert _notes(items) == [
        f"one session in two files under {log.parent.parent}/: read x/session.jsonl, not a/session.jsonl "
        "(the same lines)",
        f"{log}: deleted; its session is now read from {copy}, a copy of it, from where this file stopped"]
    assert _requests(items) == [(0, str(log)), (1, str(log)), (2, str(copy)), (3, str(copy))]
    assert _summary(items) == ONCE


# -- D7 ------------------------------------------------------------------------------------------

@needs_corpus
def test_usage_json_warns_of_the_captures_unpriced_requests_as_cache_and_sessions_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The repro: a capture whose usage is damaged leaves a request unpriced; ``usage --json`` says
    so on stderr, in the words of ``cache --json``, ``sessions --json`` and the usage table."""
    capture = _wire(tmp_path, {"usage": {**TITLE, "prompt_cache_hit_tokens": -5}})
    warning = _unpriced("prompt_cache_hit_tokens -5")
    for command in (["usage", "--json"], ["usage"], ["cache", "--json"], ["sessions", "--json"]):
        code, out, err = invoke(monkeypatch, capsys, *command, str(LOG), "--capture", str(capture))
        assert (command, code, err) == (command, 0, warning)
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", str(LOG), "--capture", str(capture))
    assert json.loads(out)["unpriced"] == {warning[0].split(": ", 2)[2]: 1}


def test_usage_json_leaves_the_logs_unpriced_reasons_to_the_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A model the price table does not know: the table warns, --json holds it (as cache --json)."""
    b = LogBuilder(session_id="s-unpriced", created_at=1_800_000_000_000, provider="local-openai", model="m-nowhere")
    with b.turn("hi"), b.step():
        b.assistant("hello", usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / "s" / "session.jsonl", packed=False)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log))
    assert code == 0 and len(err) == 1 and err[0].startswith(
        "warning: 1 request(s) unpriced: no price for model 'm-nowhere' (provider local-openai: ")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--json")
    assert (code, err) == (0, [])
    assert json.loads(out)["unpriced"] == {"no price for model 'm-nowhere'": 1}


# -- D11 -----------------------------------------------------------------------------------------

def test_billed_as_another_providers_model_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "p.toml"
    prices.write_text('[providers.deepseek.models.deepseek-flash]\nbilled_as = "claude-opus-4-1"\n')
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-cross")
    assert invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices)) == (2, "", [
        f"error: {prices}: price table key providers.deepseek.models.deepseek-flash.billed_as: \"claude-opus-4-1\" "
        "is a model of provider anthropic, not of deepseek: billed_as names a model of the same provider "
        "(deepseek) (hint: fix this key in the --prices file; the Price files section of "
        "docs/cache-accounting.md gives the shape)"])
