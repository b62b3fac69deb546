"""Fuzz round 8 (issue 15): hostile numbers in usage records flowing into cost arithmetic and the
index, hostile attachment stores and references, route, price and pyproject files, ``DSH_HOME``
kinds, session references with glob characters, ``--since``/``--until`` edges and importer fields
(docs/hostile-inputs.md, "Round 8").

The defects it found in files this round could change, each with a test below that failed before
its fix:

- a token count written as an integer of 309 digits or more (``1`` and 400 zeros: valid JSON,
  which ``JSON.parse`` reads as Infinity) was kept as a Python int by the reader's fallback
  parser: the cache accounting raised OverflowError (``int too large to convert to float``), a
  "dsh-audit bug" line in ``usage``, ``sessions``, ``cache``, ``check``, ``report`` and ``index``,
  and ``usage`` printed ``$inf``. The fallback now reads an integer as orjson does (an int from
  -2**63 to 2**64 - 1, else the nearest double: infinity past the largest), so such a count is no
  count, as a float is;
- ``index`` of a log whose count lies between 2**63 and 2**64 - 1 (orjson reads it as an int)
  exited 3, ``Python int too large to convert to SQLite INTEGER``: now stored as the nearest double;
- ``stats`` over an index whose counts add up past 2**63 said "not a dsh-audit index: integer
  overflow" with the hint to delete the file and index again (which gives the same file): now a
  line that says what the sums hit;
- ``sessions`` and ``check`` with ``--until`` (or ``--since``) an age of 400 digits of weeks exited 3
  (OverflowError: the age made the moment -infinity, and its note floored it). Now refused where
  it is read, like any other unreadable ``--until``;
- a Claude Code or Codex count of ``1e400`` (infinity) made the importer raise OverflowError: the
  session was lost with a "dsh-audit bug" line (``usage`` showed 0 sessions). Such a count is 0,
  as a count that is not a number already was.

Behaviour that already held and is kept here: a CSV cell from log text that a spreadsheet reads as
a formula starts with ``'``; an attachment reference is never a path (``sha256:../../etc/passwd``
is a missing object); an attachment object that is a FIFO, ``/dev/zero`` or too large is never
read whole; a route file's ``!!python`` tags are refused, never run; a session reference with
glob characters is no pattern.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from _cli import chat_log, invoke

from dsh_audit.log import parse_json
from dsh_audit.testing import LogBuilder

HUGE = "1" + "0" * 400  # an integer literal past the largest double: Infinity to JSON.parse


def _with_usage(path: Path, field: str, literal: str) -> Path:
    """The one-turn chat of :func:`chat_log` with ``field`` of its usage records written as ``literal``."""
    log = chat_log(path, "round-8")
    text = log.read_text("utf-8")
    old = {"inputTokens": '"inputTokens":131', "outputTokens": '"outputTokens":8'}[field]
    assert text.count(old) == 2  # the usage chunk and the assistant message
    log.write_text(text.replace(old, f'"{field}":{literal}'), "utf-8")
    return log


# -- numbers past what a double holds -------------------------------------------------------------

def test_an_integer_literal_is_read_as_orjson_and_json_parse_read_it():
    # a lone surrogate sends the line to the fallback parser, which must read numbers alike
    assert parse_json(b'{"a": 18446744073709551615, "s": "\\ud800"}') == {"a": 2**64 - 1, "s": "\ud800"}
    assert parse_json(b'{"a": 18446744073709551616, "s": "\\ud800"}') == {"a": 2.0**64, "s": "\ud800"}
    assert parse_json(b'{"a": -9223372036854775809, "s": "\\ud800"}') == {"a": -(2.0**63), "s": "\ud800"}
    assert parse_json(f'{{"a": {HUGE}}}'.encode()) == {"a": float("inf")}
    assert parse_json(f'{{"a": -{"9" * 5000}}}'.encode()) == {"a": float("-inf")}  # no digit limit


@pytest.mark.parametrize("command", [["usage", "--json"], ["sessions", "--json"], ["cache", "--json"],
                                     ["check", "--json"]])
def test_a_count_past_the_double_range_is_no_count(tmp_path, monkeypatch, capsys, command):
    log = _with_usage(tmp_path / "s" / "session.jsonl", "inputTokens", HUGE)
    code, out, err = invoke(monkeypatch, capsys, command[0], str(log), *command[1:])
    assert (code, [line for line in err if "bug" in line or "inf" in line]) == (0, [])
    if command[0] == "usage":
        total = json.loads(out)["totals"]
        # no input count logged: the request is unpriced, its cost unknown (null), never 0; the buckets
        # it did log are counted, as cache counts them (docs/cache-accounting.md, "Unpriced requests":
        # one rule for a malformed usage; deepseek-official without cacheReadTokens: hits unknown too)
        assert (total["requests"], total["tokens"], total["cost_usd"], total["unpriced_requests"],
                total["usage_unknown_requests"]) == (1, {"cache_miss": 0, "cache_read": 0, "cache_write": 0,
                                                         "output": 8, "reasoning": 0, "total": 8}, None, 1, 0)


def test_index_stores_a_count_past_64_bits_and_stats_reads_it(tmp_path, monkeypatch, capsys):
    log = _with_usage(tmp_path / "s" / "session.jsonl", "outputTokens", str(2**64 - 1))
    db = tmp_path / "i.sqlite"
    code, out, err = invoke(monkeypatch, capsys, "index", str(log), "--db", str(db))  # before: exit 3
    assert (code, err) == (0, [])
    assert out.startswith(f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in ")
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--json")
    assert (code, err) == (0, [])
    # a count past what any model reports is no count (fuzz 23): its usage is unknown, as usage
    # --json says it (tokens null there, usage_unknown_requests 1), never summed
    totals = json.loads(out.splitlines()[0])["totals"]
    assert (totals["tokens"], totals["usage_unknown_requests"], totals["tokens_unknown_requests"]) == (None, 1, {})
    usage = json.loads(invoke(monkeypatch, capsys, "usage", "--json", str(log))[1])["totals"]
    assert (usage["tokens"], usage["usage_unknown_requests"]) == (None, 1)


def test_stats_names_sums_past_64_bits(tmp_path, monkeypatch, capsys):
    for name in ("a", "b"):  # each count fits SQLite's integers, their sum does not
        _with_usage(tmp_path / "logs" / name / "session.jsonl", "outputTokens", str(2**63 - 1))
        text = (tmp_path / "logs" / name / "session.jsonl").read_text("utf-8")
        (tmp_path / "logs" / name / "session.jsonl").write_text(text.replace("round-8", f"round-8-{name}"), "utf-8")
    db = tmp_path / "i.sqlite"
    assert invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", str(db))[0] == 0
    # each count is past what any model reports: no count (fuzz 23), stored NULL, so never summed
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--json")
    totals = json.loads(out)["totals"]
    assert (code, err, totals["tokens"], totals["usage_unknown_requests"]) == (0, [], None, 2)  # null, as usage --json


def test_an_infinite_imported_count_is_not_logged(tmp_path, monkeypatch, capsys):
    """Session 35 (fuzz round 16 D4): a damaged count is not logged, said once, no more a 0."""
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "2026-01-05T10:00:00Z",
         "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "timestamp": "2026-01-05T10:00:01Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "text", "text": "yo"}], "usage": {"input_tokens": "@", "output_tokens": 1}}},
    ]
    log = tmp_path / "claude.jsonl"
    log.write_text("".join(json.dumps(r).replace('"@"', "1e400") + "\n" for r in records), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--json")
    assert (code, [line for line in err if not line.startswith("note: ")]) == (0, [  # said once, as by `requests`
        f"warning: {log}:2: token count input_tokens is negative, not an integer or above 2**53 - 1: this response's "
        "usage is treated as not logged"])
    total = json.loads(out)["totals"]
    assert (json.loads(out)["sessions"], total["requests"], total["tokens"], total["usage_unknown_requests"]) \
        == (1, 1, None, 1)


@pytest.mark.parametrize("command", ["sessions", "check", "usage"])
def test_an_age_past_any_date_is_refused(tmp_path, monkeypatch, capsys, command):
    log = chat_log(tmp_path / "s" / "session.jsonl", "old")
    age = "9" * 400 + "w"
    code, out, err = invoke(monkeypatch, capsys, command, str(log), "--until", age)
    assert (code, out) == (2, "")
    shown = f"{age[:60]!r}... ({len(age)} characters)"  # a long value is shown cut, with its length
    assert err == [f"error: Invalid value for '--until': cannot read --until {shown} (give a date (2026-11-01), today "
                   "or yesterday (UTC days), a date-time (2026-11-01T08:30, or with an offset such as +01:00 or Z; UTC when none) or an age such "
                   f"as 90s, 30m, 12h, 7d or 2w) (hint: see `dsh-audit {command} --help`)"]


# -- behaviours that held ------------------------------------------------------------------------

def test_csv_cells_from_log_text_are_no_formulas(tmp_path, monkeypatch, capsys):
    for at, sid in enumerate(["=HYPERLINK(\"http://x\")", "+1+cmd", "-2+3", "@SUM(A1)", "\t=1", "-5"]):
        chat_log(tmp_path / "logs" / f"s{at}" / "session.jsonl", sid)
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(tmp_path / "logs"), "--format", "csv", "--no-cost")
    assert (code, err) == (0, [])
    rows = list(csv.reader(io.StringIO(out)))
    ids = sorted(row[rows[0].index("id")] for row in rows[1:] if row)
    # a tab is shown as its escape, which no spreadsheet reads as a formula; -5 stays a number
    assert ids == sorted(["'=HYPERLINK(\"http://x\")", "'+1+cmd", "'-2+3", "'@SUM(A1)", "\\u0009=1", "-5"])


def test_json_lines_escape_a_lone_surrogate_in_a_session_id(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "SID")
    log.write_text(log.read_text("utf-8").replace('"SID"', '"a\\ud800\\u202e"'), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(log), "--json", "--no-cost")
    assert (code, err) == (0, [])
    assert '"session_id":"a\\ud800\\u202e"' in out and json.loads(out)["session_id"] == "a\ud800\u202e"


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(8))
HEX = hashlib.sha256(PNG).hexdigest()


def _picture_home(tmp_path: Path, attachment_id: str) -> tuple[Path, Path]:
    """A DSH home holding a log whose second request carries an image, and the object's path."""
    b = LogBuilder(session_id="pics")
    with b.turn("Hi."):
        with b.step():
            b.assistant("Hello.")
    block = {"type": "image", "attachment": {"attachmentId": attachment_id, "mediaType": "image/png",
                                             "bytes": len(PNG), "width": 1, "height": 1}}
    with b.turn([{"type": "text", "text": "Look:"}, block]):
        with b.step():
            b.assistant("Seen.")
    home = tmp_path / "home"
    log = b.write_jsonl(home / "sessions" / "--p--" / "pics" / "session.jsonl")
    obj = home / "attachments" / "v1" / "objects" / HEX[:2] / HEX
    obj.parent.mkdir(parents=True)
    return log, obj


def test_an_attachment_reference_is_never_a_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "empty-home"))
    log, obj = _picture_home(tmp_path, "sha256:../../../../etc/passwd")
    obj.write_bytes(PNG)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out) == (2, "")
    assert err == [f"error: {log}:21 seq 19: no bytes supplied for image attachment 'sha256:../../../../etc/passwd' "
                   f"(hint: DSH's attachment store {obj.parents[2]} has no such object: point --attachments DIR at "
                   "the store that has it)"]  # render has no --capture: its hint does not name it


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_an_attachment_object_that_is_no_image_file_is_never_read_whole(tmp_path, monkeypatch, capsys, kind):
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "empty-home"))
    log, obj = _picture_home(tmp_path, "sha256:" + HEX)
    if kind == "fifo":
        os.mkfifo(obj)
    elif kind == "dev-zero":
        obj.symlink_to("/dev/zero")
    else:
        with obj.open("wb") as handle:  # 33 MiB that take no disk
            handle.truncate(33 << 20)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out, len(err)) == (2, "", 1)
    what = {"fifo": "is a FIFO, not a file", "dev-zero": "is a character device, not a file",
            "sparse": f"holds {33 << 20} bytes, more than the {32 << 20}-byte bound of an image"}[kind]
    assert err[0].startswith(f"error: {log}:21 seq 19: attachment object {obj} {what}")
    code, _, err = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    assert code == 0


def test_a_route_file_tag_is_refused_not_run(tmp_path, monkeypatch, capsys):
    marker = tmp_path / "ran"
    routes = tmp_path / "routes.yml"
    routes.write_text(f"providers: !!python/object/apply:os.system ['touch {marker}']\n", "utf-8")
    log = chat_log(tmp_path / "s" / "session.jsonl", "tagged")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--routes", str(routes))
    assert (code, out, marker.exists()) == (2, "", False)
    assert err == [f"error: {routes}: route file is not valid YAML at line 1: could not determine a constructor for "
                   "the tag 'tag:yaml.org,2002:python/object/apply:os.system' (hint: give --routes a YAML file with "
                   "DSH's llm-pi-ai route configuration)"]


@pytest.mark.parametrize("ref", ["*", "alpha*", "alpha-?", "[a-z]*"])
def test_a_session_reference_is_no_glob(tmp_path, monkeypatch, capsys, ref):
    home = tmp_path / "home"
    for sid in ("alpha-1", "alpha-2"):
        chat_log(home / "sessions" / "--p--" / sid / "session.jsonl", sid)
    monkeypatch.setenv("DSH_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "show", ref, "-1")
    assert (code, out) == (2, "")
    assert err == [f"error: {home}/sessions: no session log, session id or id prefix {ref!r} here (hint: run "
                   "`dsh-audit sessions` to see the ids, or pass a path)"]


@pytest.mark.parametrize("attachment", [None, "sha256:ab", {}, {"attachmentId": 7}])
def test_an_image_block_without_an_attachment_id_says_so(attachment) -> None:
    """Round 8: the message read 'no bytes supplied for image attachment None' with a hint about
    the attachment store, which cannot hold what the block does not name."""
    from dsh_audit.errors import RenderError
    from dsh_audit.wire._images import attachment_bytes

    with pytest.raises(RenderError) as caught:
        attachment_bytes({"type": "image", "attachment": attachment}, {"sha256:ab": b"x"})
    assert (caught.value.message, caught.value.hint) == (
        "an image block names no attachment (no string attachmentId in its attachment)",
        "the log is damaged here: DSH writes attachment: {attachmentId: 'sha256:<hex>'}")
