"""What new-user tour 15 (session 39) found, fixed.

``usage`` shows the token buckets a request's usage holds no count of (a DeepSeek usage without
``cacheReadTokens``: its cache reads and misses) as unknown, ``?``, or a lower bound ``≥N``, never
as an exact sum made of a guessed 0, and ``--json`` counts such requests by bucket
(``tokens_unknown_requests``);
``stats --help`` says which requests "cache breaks" counts (every request the cache accounting
classifies as a break, whatever its reads: one served by an older cached prefix lost nothing);
``index`` says why it read unchanged logs again (dsh-audit changed since they were indexed);
``diff --capture`` with another run's capture says whose sends it holds and what to give, and its
table of captures no request explains has no "#" column a narrow terminal's caption would name;
a step summary that cannot be appended to names its path, escaped; ``watch``'s legend is wrapped
at spaces to the width; docs/redact.md's example runs as written.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke
from test_unknown_lost31 import _unknown_log
from test_watch import ZSTD, needs_corpus

ROOT = Path(__file__).resolve().parent.parent
LIVE = ROOT.parent / "shared" / "corpus" / "live"
LIVE_PI = ROOT.parent / "shared" / "corpus" / "live-pi"
A_CHAT = sorted((LIVE / "a-chat" / "home" / "sessions").glob("*/*/session.jsonl.zstd"))
C1 = sorted((LIVE_PI / "c1-anthropic-tools" / "home" / "sessions").glob("*/*/session.jsonl.zstd"))
A_ID = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b"
C_ID = "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"
C1_ID = "session-514c4bc2-e0ec-419e-84d4-2f666d536239"
needs_live = pytest.mark.skipif(not A_CHAT or not C1 or not (LIVE / "c-change" / "wire.jsonl").exists()
                                or not (LIVE_PI / "c3-openai-compat" / "wire.jsonl").exists(),
                                reason="the DSH corpus is not present")


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- 1. usage: a split into cache reads and misses not logged is unknown ----------------------------

_CAPTION = ["1 session(s); USD per 1,000,000 tokens from the price table (packaged); check",
            "your contract; ≥$: a lower bound (unpriced requests left out), $?: no request",
            "priced; cache miss, cache read: ≥N sums the requests that logged a count, ? when",
            "none did (1 request(s) logged none: unpriced); lost tokens: +?: 1 break(s) lost",
            "an unknown amount (cache reads not logged)"]


def test_usage_shows_buckets_a_request_did_not_log_as_unknown_never_0(tmp_path: Path, cli80: Any) -> None:
    """s-unknown: 3 DeepSeek requests, the third's usage without cacheReadTokens (its inputTokens
    then holds its cache reads too): its cache miss and cache read are unknown."""
    _unknown_log(tmp_path)
    code, out, _ = cli80("usage", "s-unknown/session.jsonl", "--by", "request")
    assert code == 0
    assert [line.rstrip() for line in out.splitlines()] == [
        "usage by request",
        "                               lost",
        "              cache            tokens",
        "request        miss  reusable  (cost)        cost  no cache   off-peak  unpriced",
        "─" * 80,
        "s-unknown #0   2000         0             $0.0006   $0.0006    $0.0003",
        "s-unknown #1    100      1920             $0.0001   $0.0006  $0.000027",
        "s-unknown #2      ?         ?  0+? ($?)        $?        $?         $?         1",
        "total         ≥2100      1920  0+? ($?)  ≥$0.0007  ≥$0.0012   ≥$0.0003         1",
        *_CAPTION,
        # session 40: the tokens that cost the least left out first (the reads, then the output); "reusable"
        # (unknown, "?", where the cache reads were not logged) stays beside the lost tokens (session 46)
        "narrow terminal: cache write, requests, cache read, output not shown (widen it,",
        "or use --json)"]
    code, out, _ = cli80("usage", "s-unknown/session.jsonl", "--by", "request", "--json")
    table = json.loads(out)
    assert code == 0
    assert [(r["key"], r["tokens"]["cache_miss"], r["tokens_unknown_requests"], r["usage_unknown_requests"])
            for r in [*table["rows"], table["totals"]]] == [
        ("s-unknown #0", 2000, {}, 0), ("s-unknown #1", 100, {}, 0),
        ("s-unknown #2", 0, {"cache_miss": 1, "cache_read": 1}, 0),
        ("total", 2100, {"cache_miss": 1, "cache_read": 1}, 0)]
    # CSV: the sum over the requests that logged a count (a lower bound), an unknown one empty
    code, out, _ = cli80("usage", "s-unknown/session.jsonl", "--by", "request", "--format", "csv")
    assert code == 0
    assert [row.split(",")[:10] for row in out.splitlines()[3:5]] == [  # "reusable" after "cache miss"
        ["usage by request", "s-unknown #2", "1", "", "", "0", "", "1", "", "0"],
        ["usage by request", "total", "3", "2100", "1920", "0", "", "1", "1920", "0"]]


# -- 2. stats --help: what "cache breaks" counts ----------------------------------------------------

def test_stats_help_says_cache_breaks_count_every_break_whatever_its_reads(monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "stats", "--help")
    assert (code, err) == (0, [])
    assert "fell short" not in out
    assert _one_line(
        '"cache breaks" the requests the cache accounting classifies as a break (the `cache` timeline\'s "break": '
        "a request at such a prefix change, or, with no attribution, one whose predicted cache read fell below its "
        "cached prefix), whatever their cache reads: one whose reads met the prediction (an older cached prefix "
        "still served it) counts and lost nothing, and one whose reads were not logged counts with an unknown "
        'loss; its "tokens lost" are what the breaks lost (a break that also went cold lost the rest under '
        '"cold_ttl", a row with no break of its own), as the HTML report\'s breaks by cause says them; "what cache '
        'losses cost, by cause" says what every request\'s tokens lost cost') in _one_line(out)  # session 46


# -- 3. index: why unchanged logs are read again ----------------------------------------------------

def test_index_says_it_re_read_unchanged_logs_because_dsh_audit_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import dsh_audit.fleet._audit as audit

    for name in ("a", "b"):
        chat_log(tmp_path / "logs" / f"{name}.jsonl", f"s-{name}")
    db = str(tmp_path / "i.sqlite")
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", db)
    assert (code, err) == (0, [])
    assert re.fullmatch(re.escape(f"{db}: indexed 2, skipped 0 unchanged, of 2 log(s) in ") + r"\d+\.\d s\n", out)
    monkeypatch.setattr(audit, "code_fingerprint", lambda: "another-build")
    code, out, err = invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", db)
    assert (code, err) == (0, [])
    assert re.fullmatch(re.escape(f"{db}: indexed 2 (2 log(s) re-read: dsh-audit changed since they were indexed), "
                                  "skipped 0 unchanged, of 2 log(s) in ") + r"\d+\.\d s\n", out), out
    monkeypatch.setattr(audit, "code_fingerprint", lambda: "a-third-build")
    code, out, err = invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", db, "--json")
    summary = json.loads(out)
    assert (code, err, summary["indexed"], summary["rebuilt"], summary["notes"]) == (
        0, [], 2, 2, ["2 log(s) re-read: dsh-audit changed since they were indexed"])
    # unchanged and indexed by this build: skipped, no note
    code, out, _ = invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", db, "--json")
    assert (code, json.loads(out)["skipped"], json.loads(out)["rebuilt"], json.loads(out)["notes"]) == (0, 2, 0, [])
    # a log that changed is read again for that reason: not counted as re-read for the upgrade
    changed = tmp_path / "logs" / "a.jsonl"
    changed.write_bytes(changed.read_bytes() + b"\n")  # another size: read again for that
    monkeypatch.setattr(audit, "code_fingerprint", lambda: "a-fourth-build")
    code, out, _ = invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", db, "--json")
    assert (code, json.loads(out)["indexed"], json.loads(out)["rebuilt"], json.loads(out)["notes"]) == (
        0, 2, 1, ["1 log(s) re-read: dsh-audit changed since they were indexed"])
    stored = {row[0] for row in sqlite3.connect(db).execute("SELECT options FROM sessions")}
    assert len(stored) == 1 and stored.pop().endswith(";code=a-fourth-build")
    # a log read again whose task failed is not stored: not counted as re-read (it is ``lost``)
    from dsh_audit.fleet import audit_session, index_logs

    def fails_for_a(path: str) -> Any:
        if path.endswith("a.jsonl"):
            raise RuntimeError("the task crashed")
        return audit_session(path)

    monkeypatch.setattr(audit, "code_fingerprint", lambda: "a-fifth-build")
    crashed = index_logs([tmp_path / "logs" / "a.jsonl", tmp_path / "logs" / "b.jsonl"], db, audit=fails_for_a)
    assert (crashed.indexed, crashed.lost, crashed.rebuilt, crashed.to_json()["notes"]) == (
        1, 1, 1, ["1 log(s) re-read: dsh-audit changed since they were indexed"])


# -- 4. diff --capture: another run's capture -------------------------------------------------------

@needs_live
def test_diff_with_another_sessions_capture_names_its_sessions_and_the_fix(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    wire = str(LIVE / "c-change" / "wire.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(A_CHAT[0]), "--capture", wire)
    assert out.splitlines()[-2:] == ["3 request(s): 0 identical, 3 unmatched; 0 capture(s) unexplained, 8 foreign:",
                                     "  FAILED"]  # wrapped at 80 columns, as a caption is
    assert (code, err) == (1, [
        f"note: no request matched: {wire} holds sends of session(s) {C_ID}, not {A_ID}: give the capture of its "
        f"run with --capture FILE (or diff the log of {C_ID})"])
    # --json: the same note on stderr
    code, _, err = invoke(monkeypatch, capsys, "diff", str(A_CHAT[0]), "--capture", wire, "--json")
    assert (code, len(err), err[0].startswith("note: no request matched: ")) == (1, 1, True)
    # its own capture: every request matched, no note
    code, _, err = invoke(monkeypatch, capsys, "diff", str(A_CHAT[0]), "--capture", str(LIVE / "a-chat" / "wire.jsonl"))
    assert [line for line in err if "no request matched" in line] == []


@needs_live
def test_diff_with_a_capture_of_sends_naming_no_session_says_so_and_names_no_table_column_ambiguously(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    wire = str(LIVE_PI / "c3-openai-compat" / "wire.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(C1[0]), "--capture", wire)
    assert (code, err) == (1, [
        f"note: no request matched: {wire} holds 6 send(s) naming no session (no x-deepseek-harness-session-id "
        f"header, no pi-ai session id), none of them paired by route and order with a request of {C1_ID}: is it this run's capture? "
        "give the right one with --capture FILE"])
    lines = [line.rstrip() for line in out.splitlines()]
    at = lines.index("captures no request explains")
    # a capture no request explains has no "#" nor turn/step/attempt: no caption says a "#" was left out
    assert lines[at + 1:at + 4] == [
        "kind   verdict    first offset  capture     note",
        "─" * 54,
        "loop   unmatched  -             0 (line 1)  see note 4"]  # each reason said once, under the table
    assert not [line for line in lines if line.startswith("narrow terminal: #")]
    assert lines[-2:] == ["11 request(s): 0 identical, 11 unmatched; 6 capture(s) unexplained, 0 foreign:",
                          "  FAILED"]  # wrapped at 80 columns, as a caption is


# -- 5. GITHUB_STEP_SUMMARY: the warning names the path ---------------------------------------------

def test_a_step_summary_that_cannot_be_appended_to_is_named_escaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    chat_log(tmp_path / "logs" / "a.jsonl", "s-a")
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "no\x1b[31m" / "such" / "x.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    code, _, err = invoke(monkeypatch, capsys, "check", "logs")
    shown = str(tmp_path) + "/no\\u001b[31m/such/x.md"
    assert (code, err) == (0, [f"warning: cannot append to GITHUB_STEP_SUMMARY ({shown}): No such file or directory"])


# -- 6. watch: the legend wrapped at spaces to the width --------------------------------------------

@needs_corpus
@pytest.mark.parametrize("columns", [80, 57])
def test_watch_legend_is_wrapped_at_spaces_to_the_width(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], columns: int) -> None:
    from dsh_audit.cli._watch import _LEGEND

    monkeypatch.setenv("COLUMNS", str(columns))
    code, _, err = invoke(monkeypatch, capsys, "watch", str(ZSTD[0]), "--idle-exit", "0.1", "--polling")
    assert code == 0
    legend = err[1:err.index(next(line for line in err[1:] if line.startswith("watched ")))]
    assert len(legend) > 1 and all(len(line) <= columns for line in legend)
    assert [line.startswith("  ") for line in legend] == [False] + [True] * (len(legend) - 1)
    # every word whole: the lines joined at spaces are the legend
    assert " ".join(line.strip() for line in legend) == _LEGEND


# -- 7. docs/redact.md ------------------------------------------------------------------------------

def test_redact_doc_example_makes_its_folder_and_no_sentence_starts_lowercase() -> None:
    text = (ROOT / "docs" / "redact.md").read_text("utf-8")
    block = text.split("```\n")[1].splitlines()
    assert block[:2] == ["mkdir -p shared",
                         "dsh-audit redact session.jsonl.zstd -o shared/session.jsonl.zstd --capture wire.jsonl"]
    assert "file). without" not in text and "). Without `--routes OUT.routes.yml`" in text
