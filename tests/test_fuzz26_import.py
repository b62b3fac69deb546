"""Fuzz round 26: importer and session-id defects (REPRO D1, D5, D6, D7).

1. D1: a Codex ``session_meta`` id that is no string crashed ``sessions``/``index`` (a number) or
   ``sessions``/``usage``/``cache`` (a list) while ``requests``/``show`` listed it: the importer now
   refuses it at its line, as DSH refuses a header id that is no string, so every view says the same.
2. D6: a damaged ``token_count`` (``last_token_usage`` null, ``info`` a list, a total that goes down or
   is missing) merged model calls silently, and a Claude Code ``message.id`` that is no string split one
   response per record: each call is kept as the well-formed log counts it, with a warning naming a line.
3. D5: a Claude Code sidechain's requests carried ``<session>/agent-<id>`` while the session was
   listed by the file's id: every view now names the file's session id (the conversation is in extra).
4. D7: an id that a table escapes (``\\u001b``) or that looks like a path (``../../etc``) resolves.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke

from dsh_audit.errors import MalformedRecordError
from dsh_audit.importers import load_foreign
from dsh_audit.log import resolve_session
from dsh_audit.log._resolve import names_session, unescape_shown
from dsh_audit.report.terminal import terminal_text

DATA = Path(__file__).resolve().parent / "data" / "importers"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
CLAUDE_ID = "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11"


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize(("value", "shown"), [(99, "a number 99"), (True, "a boolean true"),
                                              ([1], "an array [1]"), ({"a": 1}, 'an object {"a":1}')])
def test_a_codex_id_that_is_no_string_is_refused_alike_by_every_view(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: Any,
        shown: str) -> None:
    records = _records(CODEX)
    records[0]["payload"]["id"] = value
    path = _write(tmp_path / "rollout-x.jsonl", records)
    with pytest.raises(MalformedRecordError) as caught:
        load_foreign(path)
    assert (caught.value.line, caught.value.message) == (1, f"session_meta id is {shown}, not a string")
    said = [f"error: {path}:1: session_meta id is {shown}, not a string (hint: Codex writes the session's uuid "
            "there as a string: the rollout is damaged; fix the id or move the file out of the folder read)"]
    db = str(tmp_path / "x.sqlite")
    for args in (["sessions"], ["sessions", "--json"], ["requests"], ["usage"], ["cache"], ["show"]):
        code, _, err = invoke(monkeypatch, capsys, *args, str(path), *(["0"] if args == ["show"] else []))
        assert (args, code, err) == (args, 2, said)
    code, _, err = invoke(monkeypatch, capsys, "index", str(path), "--db", db)
    assert code == 2 and err == said
    stored = sqlite3.connect(db).execute("select error_code, error from sessions").fetchall()
    assert stored == [("malformed", said[0].removeprefix("error: "))]


def _token_counts(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["payload"] for r in records if r["type"] == "event_msg" and r["payload"].get("type") == "token_count"
            and r["payload"].get("info") is not None]


def _null_last(records: list[dict[str, Any]]) -> None:
    for payload in _token_counts(records):
        payload["info"]["last_token_usage"] = None


def _info_list(records: list[dict[str, Any]]) -> None:
    for payload in _token_counts(records):
        payload["info"] = [1]


def _decreasing(records: list[dict[str, Any]]) -> None:
    for i, payload in enumerate(_token_counts(records)):
        payload["info"]["total_token_usage"]["input_tokens"] = 10000 - i * 1000


def _no_total(records: list[dict[str, Any]]) -> None:
    for payload in _token_counts(records):
        del payload["info"]["total_token_usage"]


_KINDS = ["loop", "loop", "compaction", "loop"]
_INPUTS = [3000, 156, 256, 588]  # the sample's, 4000 in all
_UNSURE = ("the open request ends here (the event resent whole right after gives it its usage); with none "
           "open it is a call unless it repeats the last last_token_usage or has none, or a compacted "
           "record follows it")


@pytest.mark.parametrize(("damage", "inputs", "warned"), [
    (None, _INPUTS, {}),
    (_null_last, [None] * 4, dict.fromkeys((10, 15, 16, 24), "token_count last_token_usage is null, not an "
                                                              "object: the call it ends is kept with no usage")),
    (_info_list, [None] * 4, dict.fromkeys((10, 15, 16, 24), f"token_count info is an array [1], not an "
                                                              f"object: {_UNSURE}")),  # 12: 10's, word for word
    (_decreasing, _INPUTS, dict.fromkeys((12, 15, 16, 24), "token_count total_token_usage went down (it only "
                                                           f"adds up): {_UNSURE}")),
    (_no_total, _INPUTS, {}),
], ids=["sound", "last-null", "info-list", "total-down", "total-missing"])
def test_a_damaged_codex_token_count_keeps_each_call(tmp_path: Path, damage: Any, inputs: list[int | None],
                                                     warned: dict[int, str]) -> None:
    records = _records(CODEX)
    if damage is not None:
        damage(records)
    path = _write(tmp_path / "rollout-x.jsonl", records)
    session = load_foreign(path)
    assert [r.kind for r in session.requests] == _KINDS
    assert [r.extra.get("token_count_seq") for r in session.requests] == [10, 15, 16, 24]
    assert [r.usage and r.usage["inputTokens"] for r in session.requests] == inputs
    assert session.warnings == tuple(f"{path}:{line}: {why}" for line, why in warned.items())


@pytest.mark.parametrize("value", [7, [1]])
def test_a_claude_code_message_id_that_is_no_string_groups_by_request_id(tmp_path: Path, value: Any) -> None:
    records = _records(CLAUDE)
    for record in records:
        if record.get("type") == "assistant":
            record["message"]["id"] = value
    path = _write(tmp_path / f"{CLAUDE_ID}.jsonl", records)
    session = load_foreign(path)
    assert [r.extra["response_seqs"] for r in session.requests] == [[3, 4, 5], [8], [10], [14, 15]]
    assert sum(r.usage["outputTokens"] for r in session.requests if r.usage) == 295
    kind = "a number 7" if value == 7 else "an array [1]"
    assert session.warnings == (f"{path}:3: message.id is {kind}, not a string: assistant records are grouped "
                                "into responses by requestId (else one per record)",)


def test_a_claude_code_sidechain_has_one_session_id_in_every_view(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    records = _records(CLAUDE)
    for record in records:
        if "uuid" in record:
            record.update(isSidechain=True, agentId="../..")
    path = _write(tmp_path / f"{CLAUDE_ID}.jsonl", records)
    views: dict[str, list[str]] = {}
    _, out, _ = invoke(monkeypatch, capsys, "sessions", "--json", str(path))
    views["sessions"] = [json.loads(line)["session_id"] for line in out.splitlines()]
    _, out, _ = invoke(monkeypatch, capsys, "requests", "--json", str(path))
    views["requests"] = sorted({json.loads(line)["session_id"] for line in out.splitlines()})
    _, out, _ = invoke(monkeypatch, capsys, "usage", "--json", str(path))
    views["usage"] = [row["session_id"] for row in json.loads(out)["rows"]]
    _, out, _ = invoke(monkeypatch, capsys, "cache", "--json", str(path))
    views["cache"] = [json.loads(line)["session_id"] for line in out.splitlines()]
    db = tmp_path / "x.sqlite"
    assert invoke(monkeypatch, capsys, "index", str(path), "--db", str(db))[0] == 0
    rows = sqlite3.connect(db).execute("select session_id from sessions union select session_id from requests")
    views["index"] = [row[0] for row in rows]
    assert views == dict.fromkeys(("sessions", "requests", "usage", "cache", "index"), [CLAUDE_ID])
    conversations = {r.extra.get("conversation") for r in load_foreign(path).requests}
    assert conversations == {f"{CLAUDE_ID}/agent-../.."}


_HOSTILE = ["session-ctl\x1b[31mred\x07", "session-bidi\u202eabc", "session-nl\nx", "../../etc", "session-a",
            "session-ab"]


def test_an_id_resolves_as_a_table_shows_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "home" / "sessions"
    for n, sid in enumerate(_HOSTILE):
        folder = root / "--p--" / f"s{n}"
        folder.mkdir(parents=True)
        header = {"type": "session", "version": 0, "id": sid, "createdAt": 0, "delegationDepth": 0}
        (folder / "session.jsonl").write_text(json.dumps(header) + "\n")
    monkeypatch.chdir(tmp_path)  # where no ../../etc is
    shown = [terminal_text(sid) for sid in _HOSTILE] + [terminal_text(_HOSTILE[0][:14]) + "…"]
    assert shown[:3] == ["session-ctl\\u001b[31mred\\u0007", "session-bidi\\u202eabc", "session-nl\\u000ax"]
    found = [resolve_session(ref, root=root).parent.name for ref in shown]
    assert found == ["s0", "s1", "s2", "s3", "s4", "s5", "s0"]
    assert [names_session(ref, root=root) for ref in [*shown, "../nowhere", "a/b.jsonl", "session-a…"]] == [
        True] * 7 + [False, False, True]
    assert [unescape_shown(terminal_text(sid)) for sid in _HOSTILE] == _HOSTILE
    assert unescape_shown("\\xff\\U0001f600\\U00110000") == "\udcff\U0001f600\\U00110000"


def test_show_takes_an_id_as_sessions_shows_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    for n, sid in enumerate(["session-ctl\x1b[31mred\x07", "../../etc"]):
        chat_log(home / "sessions" / "--p--" / f"s{n}" / "session.jsonl", sid)
    monkeypatch.setenv("DSH_HOME", str(home))
    monkeypatch.chdir(tmp_path)  # where no ../../etc is
    for ref, sid in [("session-ctl\\u001b[31m…", "session-ctl\x1b[31mred\x07"), ("../../etc", "../../etc")]:
        code, out, err = invoke(monkeypatch, capsys, "show", ref, "0")
        assert (code, err, json.loads(out)["session_id"]) == (0, [], sid)
    code, out, err = invoke(monkeypatch, capsys, "show", "../nowhere", "0")
    assert (code, err[0].split(" (hint")[0]) == (2, "error: ../nowhere: no such file or folder")


def test_an_id_shown_as_another_is_refused_and_looked_up_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``session-a\\u001b`` (a backslash typed in the id) and ``session-a`` + ESC are both shown
    ``session-a\\u001b`` (a backslash is shown as it is): typed so, which is meant cannot be told,
    so it is refused, naming both, not the literal one opened. A path-like id is looked up with
    one scan of the sessions folder (names_session's, reused by resolve_session)."""
    import dsh_audit.log._resolve as resolve

    home = tmp_path / "home"
    for n, sid in enumerate(["session-a\\u001b", "session-a\x1b", "../../etc"]):
        chat_log(home / "sessions" / "--p--" / f"s{n}" / "session.jsonl", sid)
    monkeypatch.setenv("DSH_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    scans: list[object] = []
    scan = resolve._header_ids
    monkeypatch.setattr(resolve, "_header_ids", lambda logs: scans.append(1) or scan(logs))
    code, out, err = invoke(monkeypatch, capsys, "show", "session-a\\u001b", "0")
    assert (code, out, err) == (2, "", [
        f"error: {home / 'sessions'}: session id 'session-a\\u001b' is ambiguous: it names session-a\\u001b as "
        "typed and session-a\\u001b with its escapes read back (hint: `dsh-audit sessions --json` gives each "
        "whole id: pass the log's path)"])
    scans.clear()
    code, out, err = invoke(monkeypatch, capsys, "show", "../../etc", "0")
    assert (code, err, json.loads(out)["session_id"], len(scans)) == (0, [], "../../etc", 1)
