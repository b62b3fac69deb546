"""Watch benchmark: memory of a long ``dsh-audit watch`` while a generated session is appended.

A generated DSH session (benchmarks/generate.py: tool calls, packed rows, a compaction every
``--compact-every`` turns, so the live surface stays bounded as in real long sessions) is
appended to a session folder one DSH append batch at a time (a zstd frame per batch with
``--zstd``), as fast as ``--pause`` allows, for ``--minutes``. ``dsh-audit watch --json`` runs as
its own process; its resident memory (VmRSS) is sampled every ``--every`` seconds together with
the requests it has reported so far. Memory that stays flat while the request count grows is
what a watch over hours needs.

Run on demand (not part of the test suite):

    python benchmarks/bench_watch.py --minutes 2.5
    python benchmarks/bench_watch.py --minutes 60 --zstd --every 60

Results print as a Markdown table (elapsed, MB appended, requests reported, RSS).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate  # noqa: E402  the benchmark log generator, beside this script


class _Done(Exception):
    """The time is up: stop generating."""


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=2.5, help="how long to append")
    parser.add_argument("--pause", type=float, default=0.002, help="seconds between append batches")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between memory samples")
    parser.add_argument("--zstd", action="store_true", help="write session.jsonl.zstd, a frame per batch")
    parser.add_argument("--compact-every", type=int, default=40, help="turns between compactions (0: never)")
    parser.add_argument("--result-kb", type=int, default=4, help="size of each tool result")
    parser.add_argument("--polling", action="store_true", help="run the watch with --polling")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    target = folder / "sessions" / "--bench--" / "session-bench" / ("session.jsonl" + (".zstd" if args.zstd else ""))
    target.parent.mkdir(parents=True)
    command = [sys.executable, "-m", "dsh_audit", "watch", str(folder / "sessions"), "--json",
               *(["--polling"] if args.polling else [])]
    watcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    counts = {"requests": 0, "breaks": 0}
    first: list[dict[str, Any]] = []
    last: list[dict[str, Any]] = []

    def read() -> None:
        assert watcher.stdout is not None
        for line in watcher.stdout:
            item = json.loads(line)
            if item["type"] in ("request", "break"):
                counts["requests"] += 1
                counts["breaks"] += item["type"] == "break"
            elif item["type"] == "watching":
                first.append(item)
            elif item["type"] == "summary":
                last.append(item)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while not first and watcher.poll() is None:  # the watch is up before the session starts
        time.sleep(0.1)
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    began = time.monotonic()
    deadline = began + args.minutes * 60
    written = [0]
    rows: list[tuple[float, float, int, float]] = []
    next_sample = [began]

    def sample() -> None:
        rows.append((time.monotonic() - began, written[0] / 1e6, counts["requests"], rss_mb(watcher.pid)))
        print(f"{rows[-1][0]:7.1f} s  {rows[-1][1]:8.1f} MB  {rows[-1][2]:7d} requests  {rows[-1][3]:7.1f} MB RSS",
              file=sys.stderr)

    with open(target, "ab") as out:
        def write(batch: bytes) -> None:
            now = time.monotonic()
            if now >= next_sample[0]:
                sample()
                next_sample[0] = now + args.every
            if now >= deadline:
                raise _Done
            data = compressor.compress(batch) if args.zstd else batch
            out.write(data)
            out.flush()
            written[0] += len(batch)
            time.sleep(args.pause)

        try:
            generate(write, 1 << 62, seed=7, compact_every=args.compact_every, result_kb=args.result_kb,
                     zstd_frames=True, frames="batch")
        except _Done:
            pass
    time.sleep(3.0)  # let the watch catch up with the last batches
    sample()
    watcher.send_signal(signal.SIGINT)
    watcher.wait(timeout=60)
    reader.join(timeout=10)
    err = watcher.stderr.read() if watcher.stderr is not None else ""
    print(f"\nwatch: {first[0]['message'] if first else '?'}")
    print(f"summary: {last[0] if last else err.strip()[-300:]}")
    print(f"exit code {watcher.returncode}\n")
    print("| elapsed (s) | appended (MB, decoded) | requests reported | watch RSS (MB) |")
    print("| ---: | ---: | ---: | ---: |")
    for elapsed, mb, requests, rss in rows:
        print(f"| {elapsed:.0f} | {mb:.1f} | {requests} | {rss:.1f} |")
    if len(rows) >= 3:
        (_, _, r1, m1), (_, _, r2, m2) = rows[1], rows[-1]
        per = (m2 - m1) / max(1, r2 - r1) * 1000
        print(f"\nRSS change after the first sample: {m2 - m1:+.1f} MB over {r2 - r1} requests "
              f"({per:+.3f} MB per 1000 requests)")
        settled = [row for row in rows if row[2] >= 5000]  # the bounded caches are full by then
        if len(settled) >= 2:
            (_, _, r1, m1), (_, _, r2, m2) = settled[0], settled[-1]
            print(f"after 5,000 requests: {m1:.1f} -> {m2:.1f} MB from {r1} to {r2} requests "
                  f"({(m2 - m1) / max(1, r2 - r1) * 1000:+.3f} MB per 1000 requests)")
    os.remove(target)


if __name__ == "__main__":
    main()
