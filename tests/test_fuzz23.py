"""Fuzz round 23: ``stats`` sums tokens by ``usage``'s rule (a count a usage does not hold is
unknown, never 0 nor negative); a policy file that is not TOML, and an unknown policy key or
table, is one error at its PATH:LINE with a hint; ``diff`` says a capture holds no LLM call; a
price table's keys are quoted one way in errors and warnings; ``index`` stores no FIFO.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest

from _cli import invoke

LIVE = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"
CHAT = LIVE / "a-chat" / "session-logs" / "session-2b096b61-0a34-4da6-abec-4e87161c2c0b.jsonl"
needs_corpus = pytest.mark.skipif(not CHAT.is_file(), reason="../shared/corpus is absent")
POLICY_HINT = "see the Policy section of docs/ci.md"
FOUND_HINT = ("(hint: fix or move this pyproject.toml (the nearest to the current folder): dsh-audit reads its "
              "[tool.dsh-audit] table)")
GIVEN_HINT = f"(hint: fix this file, or give another --policy FILE; {POLICY_HINT})"


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    """The a-chat log with ``old`` (twice in it: the attempt's usage and its message's) written ``new``."""
    text = CHAT.read_text("utf-8")
    assert text.count(old) == 2
    log = tmp_path / "logs" / "s.jsonl"
    log.parent.mkdir()
    log.write_text(text.replace(old, new), "utf-8")
    return log


# -- 1: stats and usage sum the same tokens ----------------------------------------------------------

@needs_corpus
@pytest.mark.parametrize(("old", "new", "tokens", "rows"), [
    # DeepSeek's usage without cacheReadTokens: neither its reads nor its misses are known
    (',"cacheReadTokens":0', "", {"cache_miss": 91, "cache_read": 7936, "cache_write": 0, "output": 47, "total": 8074},
     [(0, None, None, None, None), (1, None, None, 0, 29), (2, 91, 7936, 0, 18)]),
    # a negative count is no count: unknown, as usage, sessions and cache read it
    ('"cacheReadTokens":7936', '"cacheReadTokens":-5',
     {"cache_miss": 7969, "cache_read": 0, "cache_write": 0, "output": 47, "total": 8016},
     [(0, None, None, None, None), (1, 7969, 0, 0, 29), (2, None, None, 0, 18)]),
], ids=["no-cache-read", "negative-cache-read"])
def test_stats_sums_the_tokens_usage_sums(tmp_path, monkeypatch, capsys, old, new, tokens, rows):
    log, db = _edited(tmp_path, old, new), tmp_path / "i.db"
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json", "--no-capture", str(log))
    usage = json.loads(out)["totals"]
    assert (code, usage["tokens"]) == (0, {**tokens, "reasoning": 24, "total": tokens["total"]})
    assert invoke(monkeypatch, capsys, "index", "--no-capture", "--db", str(db), str(log))[0] == 0
    with sqlite3.connect(db) as connection:
        stored = connection.execute("SELECT idx, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens "
                                    "FROM requests ORDER BY idx").fetchall()
    connection.close()
    assert stored == rows
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--json", "--db", str(db))
    totals = json.loads(out)["totals"]
    assert (code, totals["tokens"], totals["usage_unknown_requests"], totals["tokens_unknown_requests"]) == (
        0, tokens, 1, {"cache_miss": 1, "cache_read": 1})
    assert (usage["usage_unknown_requests"], usage["tokens_unknown_requests"]) == (1, {"cache_miss": 1, "cache_read": 1})


# -- 2, 3: policy files ------------------------------------------------------------------------------

@needs_corpus
@pytest.mark.parametrize(("data", "message"), [
    (b"[tool.dsh-audit]\nignore = []\n[tool.dsh-audit]\n",
     ":3: policy file is not valid TOML: Cannot declare ('tool', 'dsh-audit') twice (at line 3, column 16)"),
    (b'[tool.dsh-audit]\nignore = ["\xff"]\n', ":2: policy file is not UTF-8 text (byte 28)"),
    (b'[tool.dsh-audit]\nadapter = "auto"\nignor = []\n',
     ":3: unknown policy key 'ignor' (did you mean 'ignore'?) (hint: see the Policy section of docs/ci.md)"),
    (b'[tool.dsh-audit]\nadapter = "auto"\n\n[tool.dsh-audit.pricess]\nx = 1\n',
     ":4: [tool.dsh-audit.pricess] is not a table dsh-audit reads (did you mean [tool.dsh-audit.prices]?) (hint: "
     "dsh-audit reads [tool.dsh-audit.cache], [tool.dsh-audit.check] and [tool.dsh-audit.prices]; the policy keys "
     f"go in [tool.dsh-audit] itself: {POLICY_HINT})"),
], ids=["twice", "not-utf8", "unknown-key", "unknown-table"])
@pytest.mark.parametrize("command", ["check", "report"])
def test_a_bad_policy_file_is_one_error_at_its_line_with_a_hint(tmp_path, monkeypatch, capsys, data, message,
                                                                 command):
    (tmp_path / "pyproject.toml").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    extra = ["-o", "r.html"] if command == "report" else []
    syntax = "policy file" in message
    found = f" {FOUND_HINT}" if syntax else ""
    found_message = message.replace("policy file", "pyproject.toml")  # found, not given: it need hold no policy
    assert invoke(monkeypatch, capsys, command, str(CHAT), *extra) == (
        2, "", [f"error: {tmp_path.resolve() / 'pyproject.toml'}{found_message}{found}"])
    given = f" {GIVEN_HINT}" if syntax else ""
    assert invoke(monkeypatch, capsys, command, str(CHAT), "--policy", "pyproject.toml", *extra) == (
        2, "", [f"error: pyproject.toml{message}{given}"])
    assert not (tmp_path / "r.html").exists()


# -- 4: diff of a capture that holds no LLM call -----------------------------------------------------

@needs_corpus
def test_diff_of_an_empty_capture_says_it_holds_no_llm_call(tmp_path, monkeypatch, capsys):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "diff", "--capture", "empty.jsonl", str(CHAT))
    assert (code, out.count("│ unmatched │"), err) == (1, 3, [
        "note: no request matched: empty.jsonl holds no LLM call (nothing a request could be paired with): give the "
        "capture of session-2b096b61-0a34-4da6-abec-4e87161c2c0b's run with --capture FILE"])


def test_a_capture_of_other_calls_alone_gets_the_note_too():
    from types import SimpleNamespace as R

    from dsh_audit.cli._diff_captures import _nothing_matched
    rows = [R(request=0, capture=None), R(request=None, capture=R(session_id="s-a", kind="other",
                                                                   undecoded_note=lambda: None))]
    assert _nothing_matched("w.jsonl", rows, ["s-a", "s-b", "s-c", "s-d"]) == (
        "no request matched: w.jsonl holds no LLM call (nothing a request could be paired with): give the capture "
        "of s-a, s-b, s-c and 1 more's run with --capture FILE")
    # a body whose coding could not be undone may be this run's call: named, not "give the capture of"
    rows[1].capture.undecoded_note = lambda: "its body's coding br could not be undone"
    assert _nothing_matched("w.jsonl", rows, ["s-a"]) == (
        "no request matched: w.jsonl holds no LLM call it could read: its body's coding br could not be undone "
        "(read as captured; the warning at its line says what to store instead)")
    assert _nothing_matched("w.jsonl", [R(request=0, capture=R(session_id="s-a", kind="loop"))], ["s-a"]) is None
    assert _nothing_matched("w.jsonl", [R(request=None, capture=R(session_id="s-a", kind="loop"))], ["s-a"]) is None


# -- 5: price table keys, quoted as TOML writes them ---------------------------------------------------

@needs_corpus
@pytest.mark.parametrize(("table", "key"), [
    ({"providers": {"DEEPSEEK\u001b": {"models": {"m x": {"cache_miss": 1}}}}},
     'providers."DEEPSEEK\\u001b".models."m x".cache_read: missing rate'),
    ({"providers": {"DEEPSEEK\u001b": {"modls": {}}}},
     "providers.\"DEEPSEEK\\u001b\".modls: unknown key (did you mean 'models'?); known: models, windows"),
    ({"providers": {"deepseek": {"models": {"m\u202e": {"cache_miss": 1, "cache_read": 1, "output": 1},
                                            "n": {"cache_miss": 1, "cache_read": 1, "output": 1, "bogus\u0007": 1}}}}},
     "providers.deepseek.models.n.\"bogus\\u0007\": unknown key; known: billed_as, cache_miss, cache_read, "
     "cache_write_1h, cache_write_5m, corroborated, from, off_peak, output, retrieved, source, tiers, verified"),
], ids=["control-provider", "unknown-key", "unknown-rate"])
def test_price_table_errors_quote_keys_as_its_warnings_do(tmp_path, monkeypatch, capsys, table, key):
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps(table), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", "--prices", str(prices), str(CHAT))
    assert (code, out, err) == (2, "", [
        f"error: {prices}: price table key {key} (hint: fix this key in the --prices file; the Price files section "
        "of docs/cache-accounting.md gives the shape)"])


# -- 6: index of a FIFO ------------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_index_stores_no_fifo(tmp_path, monkeypatch, capsys):
    fifo, db = tmp_path / "f.jsonl", tmp_path / "i.db"
    os.mkfifo(fifo)
    error = f"error: {fifo}: is a FIFO, not a log file (hint: only regular files are read)"
    code, out, err = invoke(monkeypatch, capsys, "index", "--json", "--db", str(db), str(fifo))
    summary = json.loads(out)
    assert (code, err, summary["indexed"], summary["refused"], summary["lost"]) == (2, [error], 0, 0, 1)
    assert summary["failure_details"] == [{"path": str(fifo), "error": error.removeprefix("error: ")}]
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT COUNT(*) FROM sessions").fetchone() == (0,)
    connection.close()
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--json", "--db", str(db))
    totals = json.loads(out)["totals"]
    assert (code, totals["sessions"], totals["sessions_refused"]) == (0, 0, 0)


@needs_corpus
def test_stats_csv_writes_a_lower_bound_of_tokens_as_its_number(tmp_path, monkeypatch, capsys):
    # stats wrote "≥18" as CSV text where usage writes the number (one rule: report.Amount.tokens)
    log, db = _edited(tmp_path, ',"outputTokens":29', ""), tmp_path / "i.db"
    assert invoke(monkeypatch, capsys, "index", "--no-capture", "--db", str(db), str(log))[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--format", "csv")
    assert code == 0 and [line for line in out.splitlines() if "output tokens" in line] == [
        f"{db}: fleet totals,output tokens,18"]


@needs_corpus
def test_stats_shows_an_unknown_output_sum_when_no_request_logged_usage(tmp_path, monkeypatch, capsys):
    # a sum of no count is unknown ("?", an empty CSV cell), as usage shows it; stats said 0
    log, db = tmp_path / "s.jsonl", tmp_path / "i.db"
    log.write_text(re.sub(r',"usage":\{[^{}]*\}', "", CHAT.read_text("utf-8")), "utf-8")
    assert invoke(monkeypatch, capsys, "index", "--no-capture", "--db", str(db), str(log))[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--format", "csv")
    assert code == 0 and [line for line in out.splitlines() if "output tokens" in line] == [
        f"{db}: fleet totals,output tokens,"]
