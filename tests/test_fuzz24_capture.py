"""Fuzz round 24: a ``wire.jsonl`` request body sent gzip (``body_base64`` under ``Content-Encoding:
gzip``) is inflated as a recorded response's is, within the same decode limits, so it pairs by its
JSON (``diff`` showed Python's codec text and paired nothing); corrupt or bomb gzip data is one
error at its line. A HAR ``postData`` under gzip reaches ``diff`` decoded too.
Round 25: a gzip body of many members is inflated whole (the first was read alone), bytes after
the last member refused, a request's and a recorded response's body alike.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke
from dsh_audit.cache import Tokens, response_tokens
from dsh_audit.cache._captured_usage import UnusableUsage
from dsh_audit.capture import load_capture
from dsh_audit.errors import CaptureError

LIVE = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "a-chat"
WIRE = LIVE / "wire.jsonl"
CHAT = LIVE / "session-logs" / "session-2b096b61-0a34-4da6-abec-4e87161c2c0b.jsonl"
needs_corpus = pytest.mark.skipif(not WIRE.is_file(), reason="../shared/corpus is absent")
USAGE_BODY = (b'{"id": "chatcmpl-1", "usage": {"prompt_tokens": 40, "completion_tokens": 2, '
              b'"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 40}}')
BODY = b'{"model":"deepseek-chat","messages":[{"role":"user","content":"hi \xc3\xa9"}]}'


def _gzip_record(record: dict[str, object], sent: bytes) -> dict[str, object]:
    """``record`` holding ``sent`` as the bytes on the wire, under ``Content-Encoding: gzip``, its
    digest and size those of ``sent`` (what a capture writer records)."""
    out = {key: value for key, value in record.items() if key != "body"}
    out["headers"] = {**dict(record.get("headers") or {}), "content-encoding": "gzip"}  # type: ignore[arg-type]
    out.update(body_base64=base64.b64encode(sent).decode(), body_sha256=hashlib.sha256(sent).hexdigest(),
               body_bytes=len(sent))
    return out


def _wire(tmp_path: Path, sent: bytes) -> Path:
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps(_gzip_record({"method": "POST", "path": "/chat/completions"}, sent)) + "\n", "utf-8")
    return wire


@needs_corpus
def test_a_gzip_request_capture_pairs_as_its_plain_twin(tmp_path, monkeypatch, capsys):
    records = [json.loads(line) for line in WIRE.read_text("utf-8").splitlines()]
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(_gzip_record(r, gzip.compress(r["body"].encode(), mtime=0))) + "\n"
                            for r in records), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(CHAT), "--capture", str(wire))
    assert (code, err, out.splitlines()[-1]) == (
        0, [], "3 request(s): 3 identical; 0 capture(s) unexplained, 0 foreign: OK")
    assert "codec" not in out

    # redacted, each body is written back as gzip (its kept Content-Encoding true, its digest and size
    # those of the bytes sent), and the redacted pair diffs as the original did
    out_log = tmp_path / "red" / "chat.jsonl"
    out_log.parent.mkdir()
    code, _out, _err = invoke(monkeypatch, capsys, "redact", str(CHAT), "-o", str(out_log), "--capture", str(wire),
                              "--salt", "fuzz24")
    assert code == 0
    redacted = [json.loads(line) for line in (tmp_path / "red" / "wire.jsonl").read_text("utf-8").splitlines()]
    sent = [base64.b64decode(r["body_base64"]) for r in redacted]
    assert [(r["headers"]["content-encoding"], r["body_bytes"], r["body_sha256"]) for r in redacted] == [
        ("gzip", len(b), hashlib.sha256(b).hexdigest()) for b in sent]
    assert all(json.loads(gzip.decompress(b))["model"] == "deepseek-v4-flash" for b in sent)
    code, out, _err = invoke(monkeypatch, capsys, "diff", str(out_log), "--capture",
                             str(tmp_path / "red" / "wire.jsonl"))
    assert (code, out.splitlines()[-1]) == (0, "3 request(s): 3 identical; 0 capture(s) unexplained, 0 foreign: OK")


def test_a_gzip_har_post_is_read_decoded_as_diff_reads_it(tmp_path):
    har = tmp_path / "c.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [{"request": {
        "method": "POST", "url": "https://api.deepseek.com/chat/completions",
        "headers": [{"name": "Content-Encoding", "value": "gzip"}],
        "postData": {"mimeType": "application/json", "encoding": "base64",
                     "text": base64.b64encode(gzip.compress(BODY, mtime=0)).decode()}}}]}}), "utf-8")
    assert [(c.kind, c.body) for c in load_capture(har)] == [("loop", BODY)]


@pytest.mark.parametrize(("sent", "body"), [
    (gzip.compress(BODY, mtime=0), BODY),
    (BODY, BODY),  # stored already inflated, its header kept: the bytes are the body
    # fuzz 25 cap_gz_2m: a gzip body is a series of members (RFC 1952), each inflated (the first was read alone)
    (gzip.compress(BODY[:30], mtime=0) + gzip.compress(BODY[30:], mtime=0) + gzip.compress(b"", mtime=0), BODY),
], ids=["gzip", "stored-inflated", "members"])
def test_a_gzip_wire_body_is_inflated_and_read_again_inflated(tmp_path, sent, body):
    loaded = load_capture(_wire(tmp_path, sent))
    assert [(c.kind, c.size, c.body) for c in loaded] == [("loop", len(body), body)]


def test_corrupt_gzip_is_read_as_captured_and_said_a_bomb_is_one_error_at_its_line(tmp_path, monkeypatch):
    """Review B 45: a body whose gzip cannot be undone no longer makes the capture unreadable: it is read
    as captured (no byte dropped, fuzz 25 cap_gz_trail) and said at its line; a bomb is still refused."""
    packed = gzip.compress(BODY, mtime=0)
    for sent, said in ((packed[:-12] + b"\x00" * 4, "the gzip body is cut off"),
                       (packed + b"TRAILING", "the gzip body has 8 byte(s) after its gzip data that are not a "
                                              "gzip member")):
        wire, warnings = _wire(tmp_path, sent), []
        assert [(c.kind, c.body) for c in load_capture(wire, warnings=warnings)] == [("other", sent)]
        assert warnings == [f"{wire}: line 1: its body is read as captured, not decoded: {said}"]
    monkeypatch.setenv("DSH_AUDIT_MAX_DECODED", "64K")
    wire = _wire(tmp_path, gzip.compress(b" " * (1 << 15), mtime=0) * 4)  # many members share one budget
    with pytest.raises(CaptureError) as caught:
        load_capture(wire)
    assert str(caught.value) == (
        f"{wire}: line 1: the gzip body is refused: the decoded body passes the limit of 64 KiB of text "
        "(DSH_AUDIT_MAX_DECODED) (hint: if this is a real body, raise the limit: DSH_AUDIT_MAX_DECODED=128K "
        "(0: no limit); see docs/hostile-inputs.md)")



@pytest.mark.parametrize(("sent", "tokens"), [
    (gzip.compress(USAGE_BODY[:9], mtime=0) + gzip.compress(USAGE_BODY[9:], mtime=0), Tokens(40, 0, 0, 2)),
    (gzip.compress(USAGE_BODY, mtime=0) + b"\x00\x00", UnusableUsage(
        why="the capture's usage is damaged (the gzip body has 2 byte(s) after its gzip data that are not a gzip "
            "member)")),
], ids=["members", "trailing"])
def test_a_gzip_response_body_is_read_member_after_member_as_a_request_body_is(sent, tokens):
    response = {"headers": [{"name": "Content-Encoding", "value": "gzip"}],
                "content": {"text": base64.b64encode(sent).decode(), "encoding": "base64"}}
    assert response_tokens(response) == tokens

# -- 7: stats' prompt and cache-read sums of requests that logged no usage are unknown ------------

def _indexed(tmp_path: Path, monkeypatch, capsys, old: str, new: str) -> dict[str, Any]:
    """``stats --json`` of an index of the a-chat log edited (every ``old`` written ``new``, a regex)."""
    log, db = tmp_path / "s.jsonl", tmp_path / "i.db"
    log.write_text(re.sub(old, new, CHAT.read_text("utf-8")), "utf-8")
    assert invoke(monkeypatch, capsys, "index", "--no-capture", "--db", str(db), str(log))[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--json")
    assert code == 0
    return dict(json.loads(out))


@needs_corpus
@pytest.mark.parametrize(("old", "new", "sums", "cost_tokens", "text"), [
    # no request logged usage: every sum is unknown (null), never 0
    (r',"usage":\{[^{}]*\}', "", (None, None, None, 0), None,
     ["requests 3 (0 with cache reads and prompt logged); prompt tokens of those ?",
      "cache read actual ? (n/a) vs expected ? (n/a)"]),
    # a usage without cacheReadTokens: its prompt and reads are unknown, the sums a lower bound over the other
    (r',"cacheReadTokens":0', "", (8027, 7936, 7936, 1), 8074,
     ["requests 3 (1 with cache reads and prompt logged); prompt tokens of those 8027",
      "cache read actual 7936 (98.9%) vs expected 7936 (98.9%)"]),
    # the first request logged no usage, the second did: the sums are over the second alone (session 45)
    (r',"usage":\{"inputTokens":7969[^{}]*\}', "", (8027, 7936, 7936, 0), 8045,
     ["requests 3 (1 with cache reads and prompt logged); prompt tokens of those 8027",
      "cache read actual 7936 (98.9%) vs expected 7936 (98.9%)"]),
], ids=["no-usage", "no-cache-read", "partly"])
def test_stats_prompt_and_read_sums_of_no_logged_usage_are_unknown(tmp_path, monkeypatch, capsys, old, new, sums,
                                                                    cost_tokens, text):
    stats = _indexed(tmp_path, monkeypatch, capsys, old, new)
    keys = ("prompt_tokens", "actual_cache_read", "expected_cache_read", "prompt_unknown_requests")
    rows = [stats["totals"], *stats["by_model"], *stats["by_day"], *stats["top_sessions"]]
    assert [tuple(row[key] for key in keys) for row in rows] == [sums] * 4
    assert [None if c["tokens"] is None else c["tokens"]["total"] for c in (stats["cost"], *stats["cost_by_model"])] \
        == [cost_tokens] * 2
    # session 45: cache and sessions say what stats says of the same log (a sum of no known request is null, "?")
    log, ratio = str(tmp_path / "s.jsonl"), stats["totals"]["actual_hit_ratio"]
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--no-capture", "--json", log)
    cache = json.loads(out)
    assert code == 0 and (tuple(cache[key] for key in keys[:3]), cache["actual_hit_ratio"]) == (sums[:3], ratio)
    assert (cache["reusable_cache_read"], cache["lost_tokens"]) == (stats["totals"]["reusable_cache_read"],
                                                                    stats["totals"]["lost_tokens"]) == (sums[1], 0)  # reusable: null as the reads
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--no-capture", log)
    assert code == 0 and out.splitlines()[1:3] == text
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--no-capture", "--json", log)
    row = json.loads(out)
    assert code == 0 and (row["prompt_tokens"], row["actual_cache_read"], row["actual_hit_ratio"]) == (*sums[:2], ratio)
    assert (None if row["tokens"] is None else row["tokens"]["total"]) == cost_tokens
    page = tmp_path / "s.html"  # the HTML report's overview of the log and the page's totals
    assert invoke(monkeypatch, capsys, "report", "--no-capture", log, "-o", str(page))[0] in (0, 1)
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page.read_text("utf-8"), re.S)
    data = json.loads(blob.group(1)) if blob else {}
    assert [(c["prompt_tokens"], c["cache_read"], c["hit_ratio"])
            for c in (data["sessions"][0]["overview"], data["totals"]["cache"])] == [(*sums[:2], ratio)] * 2
    check = json.loads(invoke(monkeypatch, capsys, "check", "--no-capture", "--json", log)[1])["sessions"][0]
    assert (tuple(check["cache"][key] for key in keys[:3]), check["cache"]["actual_hit_ratio"]) == (sums[:3], ratio)
    assert (None if check["cost"]["tokens"] is None else check["cost"]["tokens"]["total"]) == cost_tokens


@needs_corpus
@pytest.mark.parametrize(("old", "new", "cells"), [
    (r',"usage":\{[^{}]*\}', "", ["", "", "", ""]),
    (r',"cacheReadTokens":0', "", ["8027", "7936", "7936", "47"]),  # lower bounds: a table says ≥8027
], ids=["no-usage", "no-cache-read"])
def test_stats_shows_unknown_token_sums_as_usage_does(tmp_path, monkeypatch, capsys, old, new, cells):
    stats = _indexed(tmp_path, monkeypatch, capsys, old, new)
    assert stats["totals"]["tokens"] == (None if old.startswith(",\"usage") else {
        "cache_miss": 91, "cache_read": 7936, "cache_write": 0, "output": 47, "total": 8074})
    db = stats["db"]
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", db, "--format", "csv")
    names = ("prompt tokens", "cache read actual", "cache read expected", "output tokens")
    assert code == 0 and [line for line in out.splitlines() if line.split(",")[1:2] in ([n] for n in names)] == [
        f"{db}: fleet totals,{name},{cell}" for name, cell in zip(names, cells)]
    model = [line for line in out.splitlines() if line.startswith("by model,")]
    # the model billed, with the name logged (session 43) in a column of its own (session 46, as usage's CSV)
    assert model == [f"by model,deepseek-flash,deepseek-v4-flash,3,{1 if cells[0] else 0},{cells[0]},{cells[1]},"
                     + ("0.988663261492463,0.988663261492463,7936,0,0" if cells[0] else ",,,0,0")]  # reusable (unknown: empty), lost
    monkeypatch.setenv("COLUMNS", "150")
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", db)
    rows = [line for line in out.splitlines() if "prompt tokens" in line or "cache read actual" in line]
    mark = "≥" if cells[0] else ""
    assert [" ".join(row.strip("│ ").split()) for row in rows] == [
        f"prompt tokens │ {mark}{cells[0] or '?'}",
        f"cache read actual / expected │ {mark}{cells[1] or '?'} / {mark}{cells[2] or '?'}"]
