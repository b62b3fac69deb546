"""Fuzz round 16, session 35: imported token counts that are damaged (D4), a ``--capture`` of JSON
objects that are no capture records (D5), ``stats`` on an index it may only read (D6), and the
price files an index records, by absolute path."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_audit.cache import load_prices
from dsh_audit.capture import _reading, load_capture, sniff_capture
from dsh_audit.errors import CaptureError
from dsh_audit.fleet import index_logs
from dsh_audit.fleet._price_meta import price_sources
from dsh_audit.importers import load_foreign
from dsh_audit.importers._model import token_count
from _cli import chat_log, invoke

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "live" / "c-change"
WIRE = CORPUS / "wire.jsonl"
DAMAGED = "are negative, not an integer or above 2**53 - 1: this response's usage is treated as not logged"

# -- D4: damaged token counts of an imported log ------------------------------------------------


def _claude(path: Path, usage: dict[str, object]) -> Path:
    base = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": "neg",
            "version": "2.0.29"}
    user = {**base, "type": "user", "uuid": "u0", "timestamp": "2026-01-05T10:00:00.000Z",
            "message": {"role": "user", "content": "q"}}
    answer = {**base, "parentUuid": "u0", "type": "assistant", "uuid": "u1", "timestamp": "2026-01-05T10:00:01.000Z",
              "message": {"model": "claude-sonnet-4-5-20250929", "id": "m1", "type": "message", "role": "assistant",
                          "content": [{"type": "text", "text": "a"}], "stop_reason": "end_turn", "usage": usage}}
    path.write_text(json.dumps(user) + "\n" + json.dumps(answer) + "\n", encoding="utf-8")
    return path


def _codex(path: Path, last: dict[str, object]) -> Path:
    def record(kind: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": "2026-01-05T10:00:00.000Z", "type": kind, "payload": payload})

    lines = [record("session_meta", {"id": "negcx", "timestamp": "2026-01-05T10:00:00.000Z", "cwd": "/w",
                                     "originator": "codex_cli_rs", "cli_version": "0.46.0", "model_provider": "openai"}),
             record("turn_context", {"cwd": "/w", "model": "gpt-5", "effort": "medium"}),
             record("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
             record("response_item", {"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": "yo"}]}),
             record("event_msg", {"type": "token_count", "info": {"total_token_usage": last, "last_token_usage": last}})]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


#: Session 44: the bound is the project's one safe integer (``Number.MAX_SAFE_INTEGER``, ``MAX_SAFE``), the one
#: the Codex importer judges a total by and validate a count by (DSH701); 2**53 was a count here and none there.
@pytest.mark.parametrize(("value", "count"), [
    (0, 0), (12, 12), (1e3, 1000), (-0.0, 0), (2**53 - 1, 9007199254740991), (2**53, None), (2.0**53, None),
    (2**53 + 1, None), (-1, None), (7.9, None), (True, None), ("5", None), (None, None), (float("inf"), None),
    (float("nan"), None)])
def test_a_token_count_is_a_whole_number_from_0_to_2_53_less_1(value: object, count: int | None) -> None:
    assert token_count(value) == count


def test_claude_code_negative_counts_are_not_logged_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _claude(tmp_path / "cc.jsonl", {"input_tokens": 100, "cache_creation_input_tokens": -1000000,
                                           "cache_read_input_tokens": -500, "output_tokens": -7})
    session = load_foreign(path)
    warning = (f"{path}:2: token counts output_tokens, cache_read_input_tokens, cache_creation_input_tokens "
               + DAMAGED)
    assert (session.requests[0].usage, session.warnings) == (None, (warning,))
    code, out, err = invoke(monkeypatch, capsys, "show", str(path), "0")
    assert (code, json.loads(out)["usage"]) == (0, None)
    code, out, err = invoke(monkeypatch, capsys, "requests", "--json", str(path))
    assert (code, json.loads(out.splitlines()[0])["usage"], err) == (0, None, [f"warning: {warning}"])


def test_claude_code_sound_counts_are_kept(tmp_path: Path) -> None:
    path = _claude(tmp_path / "cc.jsonl", {"input_tokens": 100, "cache_read_input_tokens": 1e3, "output_tokens": 7})
    session = load_foreign(path)
    assert (session.requests[0].usage, session.warnings) == (
        {"inputTokens": 100, "outputTokens": 7, "cacheReadTokens": 1000}, ())


#: What a damaged total's warning says is done (importers/_codex.py ``_UNSURE``).
_UNSURE = ("the open request ends here (the event resent whole right after gives it its usage); with none open it "
           "is a call unless it repeats the last last_token_usage or has none, or a compacted record follows it")


@pytest.mark.parametrize(("last", "fields", "total"), [
    ({"input_tokens": 100, "cached_input_tokens": -5000, "output_tokens": -3}, "counts cached_input_tokens, output_tokens",
     "cached_input_tokens is a number -5000"),
    ({"input_tokens": 100, "cached_input_tokens": 500, "output_tokens": 3}, "count cached_input_tokens", None),
    ({"input_tokens": 2**60, "cached_input_tokens": 0, "output_tokens": 3}, "count input_tokens",
     "input_tokens is a number 1152921504606846976"),
    ({"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": True}, "count output_tokens",
     "output_tokens is a boolean true"),
])
def test_codex_damaged_counts_are_not_logged_and_said(tmp_path: Path, last: dict[str, object], fields: str,
                                                      total: str | None) -> None:
    """The first total is the same counts: a damaged one is refused too, said, never a base (session 44)."""
    path = _codex(tmp_path / "rollout-neg.jsonl", last)
    session = load_foreign(path)
    request = session.requests[0]
    said = [f"{path}:5: token_count total_token_usage {total}, not a count: {_UNSURE}"] if total else []
    damaged = DAMAGED.replace("are", "is", 1) if "counts" not in fields else DAMAGED
    assert (request.usage, "unanswered" in request.extra, session.warnings) == (
        None, False, (*said, f"{path}:5: token {fields} {damaged}"))


def test_codex_sound_counts_are_kept(tmp_path: Path) -> None:
    path = _codex(tmp_path / "rollout-ok.jsonl", {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 3})
    session = load_foreign(path)
    assert (session.requests[0].usage, session.warnings) == (
        {"inputTokens": 40, "outputTokens": 3, "cacheReadTokens": 60, "reasoningTokens": 0}, ())


# -- D5: a --capture file that is no capture -----------------------------------------------------

NOT_A_CAPTURE = ("not a capture: no line is a capture record (no method, path, body or body_base64) (hint: pass "
                 "--capture a wire.jsonl of request records (method, path, headers, body), a HAR 1.2 file or a "
                 "folder of *.json bodies)")


@pytest.mark.parametrize("warnings", [None, []])
def test_a_file_of_objects_that_are_no_records_is_not_a_capture(tmp_path: Path, warnings: list[str] | None) -> None:
    objects = tmp_path / "objs.jsonl"
    objects.write_text('\n{"x":1}\n{"y":[2]}\n', encoding="utf-8")
    with pytest.raises(CaptureError) as caught:
        load_capture(objects, warnings=warnings)
    assert str(caught.value) == f"{objects}: line 2: {NOT_A_CAPTURE}"
    assert warnings in (None, [])


def test_a_session_log_given_as_the_capture_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "session.jsonl", "s35")
    for command in ("diff", "usage", "breaks", "check"):
        code, out, err = invoke(monkeypatch, capsys, command, str(log), "--capture", str(log))
        assert (code, err[-1:]) == (2, [f"error: {log}: line 1: {NOT_A_CAPTURE}"]), command


def test_a_capture_with_some_records_that_are_none_says_them(tmp_path: Path) -> None:
    lines = WIRE.read_text("utf-8").splitlines()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([*lines[:2], '{"x":1}', *lines[2:], '{"seq": 9}']) + "\n", encoding="utf-8")
    warnings: list[str] = []
    captures = load_capture(mixed, warnings=warnings)
    said = "not a capture record (no method, path, body or body_base64), skipped"
    assert (len(captures), warnings) == (len(lines), [f"{mixed}:3: {said}", f"{mixed}:{len(lines) + 2}: {said}"])
    assert [c.locator for c in captures[1:3]] == ["line 2", "line 4"]
    with pytest.raises(CaptureError) as caught:  # a caller that cannot say it: the first one is the error
        load_capture(mixed)
    assert str(caught.value) == (f"{mixed}: line 3: not a capture record (no method, path, body or body_base64) "
                                 "(hint: pass --capture a wire.jsonl of request records (method, path, headers, "
                                 "body), a HAR 1.2 file or a folder of *.json bodies)")


def test_sniff_capture_names_each_format(tmp_path: Path) -> None:
    har, folder, garbage, empty = tmp_path / "c.har", tmp_path / "bodies", tmp_path / "g.txt", tmp_path / "e.jsonl"
    har.write_text('{"log": {"entries": []}}', encoding="utf-8")
    folder.mkdir()
    (folder / "1.json").write_text("{}", encoding="utf-8")
    garbage.write_text("hello", encoding="utf-8")
    empty.write_text("", encoding="utf-8")
    assert [sniff_capture(WIRE, WIRE.read_bytes()[:4096]), sniff_capture(har, har.read_bytes()),
            sniff_capture(str(folder), b""), sniff_capture(garbage, b"hello"), sniff_capture(empty, b"")] == [
        "wire-jsonl", "har", "body-folder", None, "wire-jsonl"]


def test_load_capture_opens_the_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real = _reading.open_regular

    def counting(path: object, **kwargs: object) -> object:
        opened.append(str(path))
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_reading, "open_regular", counting)
    assert len(load_capture(WIRE)) == len(WIRE.read_text("utf-8").splitlines())
    assert opened == [str(WIRE)]


# -- D6: stats reads an index it cannot write ----------------------------------------------------


def _index(tmp_path: Path) -> Path:
    db = tmp_path / "idx" / "i.db"
    db.parent.mkdir()
    index_logs([chat_log(tmp_path / "session.jsonl", "s35")], db)
    return db


def test_stats_writes_nothing_to_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = _index(tmp_path)
    before = db.read_bytes()
    code, out, err = invoke(monkeypatch, capsys, "stats", "--json", "--db", str(db))
    assert (code, err, json.loads(out)["totals"]["sessions"]) == (0, [], 1)
    assert db.read_bytes() == before  # (SQLite may leave its empty -wal and -shm files beside it)


_CAPSH = shutil.which("capsh")


@pytest.mark.skipif(_CAPSH is None or os.geteuid() != 0, reason="needs root and capsh to drop the rights to write")
@pytest.mark.parametrize("where", ["file", "folder"])
def test_stats_answers_from_a_read_only_index_and_index_refuses_it(tmp_path: Path, where: str) -> None:
    db = _index(tmp_path)
    (db if where == "file" else db.parent).chmod(0o444 if where == "file" else 0o555)
    try:
        def run(*args: str) -> tuple[int, str]:
            done = subprocess.run([str(_CAPSH), "--drop=cap_dac_override,cap_dac_read_search,cap_fowner", "--",
                                   "-c", 'exec "$@"', "x", sys.executable, "-m", "dsh_audit", *args],
                                  capture_output=True, text=True, check=False, cwd=tmp_path)
            return done.returncode, done.stderr

        code, err = run("stats", "--json", "--db", str(db))
        assert (code, err) == (0, "")
        # a folder that takes no new file is refused before any log is read (issue 15: every output's guard)
        said = (f"cannot write the index: its folder {db.parent} is not writable (hint: name a file in a folder you "
                "can write to)" if where == "folder" else "the index is read-only: attempt to write a readonly "
                "database (hint: give a --db file this user can write)")
        assert run("index", "--db", str(db), str(tmp_path / "session.jsonl")) == (2, f"error: {db}: {said}\n")
    finally:
        db.parent.chmod(0o755)


# -- the price files an index records ------------------------------------------------------------


def test_index_records_a_relative_prices_file_by_its_absolute_path(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    Path("mine.json").write_text('{"providers": {}}', encoding="utf-8")
    Path("pyproject.toml").write_text("[tool.dsh-audit.prices]\n[tool.dsh-audit.prices.providers]\n",
                                      encoding="utf-8")
    db = tmp_path / "idx.db"
    index_logs([chat_log(tmp_path / "session.jsonl", "s35")], db, prices=load_prices("mine.json", search_from="."))
    with sqlite3.connect(db) as connection:
        recorded = price_sources(connection)
    here = tmp_path / "a"
    assert recorded == (("packaged", f"{here}/pyproject.toml [tool.dsh-audit.prices]", f"{here}/mine.json"),)
