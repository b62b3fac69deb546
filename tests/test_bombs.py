"""Bounded work on bombs (issue 15): a zstd log that expands far beyond what real logs do is
refused in one line naming the limit and the variable that raises it; blank lines cost neither
time nor memory per line; a gzip HAR body is decoded, within the same limits."""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import zstandard

from _cli import invoke

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CHAT = Path(__file__).resolve().parents[1] / "sample_logs" / "chat" / "session.jsonl"
BUDGET = 30.0  # seconds; each run below takes about one


def run(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "dsh_audit", *args], capture_output=True, text=True,
                            timeout=120, env={**os.environ, **(env or {})})
    return result, time.monotonic() - start


def blank_bomb(path: Path, mib: int) -> Path:
    """A DSH zstd log: the header frame, then one frame of ``mib`` MiB of blank lines."""
    header = CHAT.read_bytes().split(b"\n", 1)[0] + b"\n"
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    path.write_bytes(compressor.compress(header) + compressor.compress(b"\n" * (mib << 20)))
    return path


def test_blank_line_bomb_is_refused_by_the_ratio_limit(tmp_path):
    bomb = blank_bomb(tmp_path / "session.jsonl.zstd", 64)
    assert bomb.stat().st_size < 4096
    result, took = run("requests", str(bomb))
    assert took < BUDGET
    assert result.returncode == 2
    assert result.stdout == ""
    # Frames are decompressed as they are read: the ratio is over the 287 bytes read so far, and
    # the text is counted in batches of blocks (1 MiB), the first batch past the 4 MiB floor.
    assert result.stderr == (
        f"error: {bomb}:2: refused as a decompression bomb: 287 zstd bytes expand to more than "
        f"4980872 bytes, past the limit of 200x (DSH_AUDIT_MAX_RATIO) (hint: real DSH logs expand 3-6x; "
        "if this is a real log, raise the limit: DSH_AUDIT_MAX_RATIO=2000 (0: no limit); see "
        "docs/hostile-inputs.md)\n")
    checked, took = run("validate", str(bomb))
    assert took < BUDGET
    assert checked.returncode == 1
    assert "DSH101 error: refused as a decompression bomb" in checked.stdout + checked.stderr
    assert "past the limit of 200x (DSH_AUDIT_MAX_RATIO)" in checked.stdout + checked.stderr


def test_blank_lines_past_the_limits_are_read_fast_as_one_run(tmp_path):
    bomb = blank_bomb(tmp_path / "session.jsonl.zstd", 128)
    result, took = run("requests", str(bomb), env={"DSH_AUDIT_MAX_RATIO": "0"})
    assert took < BUDGET
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"warning: {bomb}:2: corrupt session log: unparsable committed event (not valid JSON); "
        "no turn/end follows, so DSH treats the rest as a crash-damaged tail: 134217728 record(s) from "
        "the first event on ignored\n")


def test_decoded_size_limit_is_one_line(tmp_path):
    bomb = blank_bomb(tmp_path / "session.jsonl.zstd", 64)
    result, _ = run("requests", str(bomb), env={"DSH_AUDIT_MAX_RATIO": "0", "DSH_AUDIT_MAX_DECODED": "16M"})
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {bomb}:")
    assert lines[0].endswith(": refused: the decoded log passes the limit of 16 MiB of text (DSH_AUDIT_MAX_DECODED) "
                             "(hint: if this is a real log, raise the limit: DSH_AUDIT_MAX_DECODED=32M (0: no "
                             "limit); see docs/hostile-inputs.md)")


def test_a_limit_that_is_not_a_number_is_a_usage_error(tmp_path, monkeypatch, capsys):
    bomb = blank_bomb(tmp_path / "session.jsonl.zstd", 1)
    monkeypatch.setenv("DSH_AUDIT_MAX_DECODED", "lots")
    assert invoke(monkeypatch, capsys, "requests", str(bomb)) == (2, "", [
        "error: DSH_AUDIT_MAX_DECODED='lots' is not a size (hint: give bytes with an optional K, M, G or T suffix, "
        "e.g. 16G; 0 means no limit)"])


def test_plain_blank_lines_in_the_middle_are_one_finding_with_every_line_counted(tmp_path):
    lines = CHAT.read_bytes().split(b"\n")
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"\n".join(lines[:3]) + b"\n" + b"\n" * (8 << 20) + b"\n".join(lines[3:]))
    result, took = run("validate", str(log))
    assert took < BUDGET
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == (
        f"{log}:4: seq 2: DSH104 error: line is not valid JSON (blank, and so are the 8388607 line(s) after "
        "it) (every line is one JSON value written by JSON.stringify)")


def test_gzip_har_bodies_are_decoded(tmp_path, monkeypatch, capsys):
    scenario = CORPUS / "live" / "a-chat"
    records = [json.loads(line) for line in (scenario / "wire.jsonl").read_text().splitlines() if line]
    entries = []
    for number, record in enumerate(records):
        packed = base64.b64encode(gzip.compress(record["body"].encode())).decode()
        headers = [{"name": k, "value": v} for k, v in record["headers"].items()]
        if number % 2 == 0:  # the header says gzip, the body travels as base64
            headers.append({"name": "Content-Encoding", "value": "gzip"})
            post = {"mimeType": "application/json", "text": packed, "encoding": "base64"}
        else:  # only postData.encoding says gzip
            post = {"mimeType": "application/json", "text": packed, "encoding": "gzip"}
        entries.append({"startedDateTime": "2026-01-01T00:00:00Z",
                        "request": {"method": record["method"], "url": "http://127.0.0.1" + record["path"],
                                    "headers": headers, "postData": post}})
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    code, out, err = invoke(monkeypatch, capsys, "diff", str(scenario / "home" / "sessions"), "--capture", str(har))
    assert (code, err) == (0, [])
    assert out.splitlines()[-1] == "3 request(s): 3 identical; 0 capture(s) unexplained, 0 foreign: OK"


def test_gzip_bomb_in_a_har_body_is_refused(tmp_path):
    packed = base64.b64encode(gzip.compress(b" " * (16 << 20), compresslevel=6)).decode()
    entry = {"request": {"method": "POST", "url": "http://h/chat/completions",
                         "headers": [{"name": "content-encoding", "value": "gzip"}],
                         "postData": {"mimeType": "application/json", "text": packed, "encoding": "base64"}}}
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"entries": [entry]}}))
    result, took = run("diff", str(CHAT), "--capture", str(har))
    assert took < BUDGET
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith(f"error: {har}: entries[0]: the gzip body is refused as a decompression bomb: ")
    assert "past the limit of 200x (DSH_AUDIT_MAX_RATIO)" in lines[0]
