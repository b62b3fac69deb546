"""How `watch` prices requests from a capture that grows beside the log: the time of
``CapturedUsage.__call__`` per request, as the log and its ``wire.jsonl`` grow one request at a time.

A generated log (``generate.py``) with every usage removed (so each request is priced from the
capture), and a ``wire.jsonl`` whose record i is request i's body (rendered from the log) with a
response usage. The log and the capture are appended one request at a time (whole lines), and the
call for the new request is timed in CPU time (the machine is shared: wall time counts the other
processes too), each size ``REPEAT`` times (default 3), the least kept; each call's tokens are
checked. A compaction call is in the log but not in the capture (its instruction is not logged, so
its body cannot be rendered), as a capture that never holds a kind. The reader keeps where it
stopped in the capture and aligns only what was appended (docs/performance.md, "Watch"), so the
total should grow linearly (exponent ~1) with the requests.

Usage: .venv/bin/python benchmarks/bench_watch_capture.py [N ...]   (default 50 200 800)
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import write_log  # noqa: E402

from dsh_audit.errors import RenderError  # noqa: E402
from dsh_audit.session import open_session  # noqa: E402
from dsh_audit.watch._captured import CapturedUsage  # noqa: E402  (watch's own reader, as it runs)
COMPACT = int(os.environ.get("COMPACT", "10"))
REPEAT = int(os.environ.get("REPEAT", "3"))


def build(folder: Path, requests: int) -> tuple[list[bytes], list[int], list[bytes]]:
    """Log lines without usage, the line count that holds each request, capture lines."""
    full = folder / "full.jsonl"
    write_log(full, requests * (0.0062 if COMPACT == 0 else 0.0075), result_kb=1, compact_every=COMPACT, prune_every=0)
    lines = []
    for raw in full.read_bytes().splitlines(keepends=True):
        event = json.loads(raw)
        data = event.get("data") or {}
        if event.get("type") == "assistant/chunk" and data.get("chunk", {}).get("type") == "usage":
            data["chunk"] = {"type": "block-start", "index": 9, "blockType": "text"}  # keeps the seq
        if event.get("type") == "assistant/message":
            data.pop("usage", None)
        lines.append((json.dumps(event) + "\n").encode())
    bare = folder / "bare.jsonl"
    bare.write_bytes(b"".join(lines))
    session = open_session(str(bare))
    sid = session.id
    records = []
    for request in session.requests:
        try:
            body = session.bodies.render(request, session.route(request).adapter)
        except RenderError:  # a compaction call: its instruction is not logged (not captured, as bench_redact)
            records.append(b"")
            continue
        usage = {"prompt_tokens": 1000 + request.index, "completion_tokens": 7, "prompt_cache_hit_tokens": 0,
                 "prompt_cache_miss_tokens": 1000 + request.index}
        record = {"seq": request.index + 1, "method": "POST", "path": "/chat/completions",
                  "headers": {"x-deepseek-harness-session-id": sid}, "kind": "conversation",
                  "body": body.decode(), "response": {"usage": usage}}
        records.append((json.dumps(record) + "\n").encode())
    return lines, [r.index for r in session.requests], records


def run(n: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines, _, records = build(folder, n)
        session = open_session(str(folder / "bare.jsonl"))
        requests = session.requests[:n]
        # each request's last line: the line of the assistant/message that ends it
        msg_lines = [i for i, raw in enumerate(lines) if b'"assistant/message"' in raw or b'"compaction/end"' in raw
                     or b'"compaction/done"' in raw]
        log = folder / "logs" / "session.jsonl"
        log.parent.mkdir()
        wire = folder / "wire.jsonl"
        usage = CapturedUsage(str(log), None, lenient=False, max_version=4)
        total, last = 0.0, 0.0
        log.write_bytes(b"".join(lines[: msg_lines[0] + 1]))
        wire.write_bytes(b"")
        with open(log, "ab") as lh, open(wire, "ab") as wh:
            for i, request in enumerate(requests):
                if i:
                    lh.write(b"".join(lines[msg_lines[i - 1] + 1: msg_lines[i] + 1]))
                    lh.flush()
                wh.write(records[i])
                wh.flush()
                start = time.process_time()
                got = usage(request)
                spent = time.process_time() - start
                assert not records[i] or got is not None and got.cache_miss == 1000 + request.index, (i, got)
                total += spent
                if i >= len(requests) - 10:
                    last += spent
        return total, last / 10, len(requests)


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [50, 200, 800]
    prev = None
    print("| requests | total CPU s | CPU ms/request (last 10) | exponent (total) |")
    print("|---|---|---|---|")
    for n in sizes:
        total, last, count = min(run(n) for _ in range(REPEAT))
        exp = "" if prev is None else f"{math.log(total / prev[1]) / math.log(count / prev[0]):.2f}"
        print(f"| {count} | {total:.3f} | {last * 1000:.2f} | {exp} |", flush=True)
        prev = (count, total)
