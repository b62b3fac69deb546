"""Benchmark: DeepSeek wire rendering with the fragment cache vs a naive re-render per request.

Run on demand (not part of pytest):

    .venv/bin/python benchmarks/bench_render.py [--rounds 2000] [--repeat 3]

Two workloads:

* the largest log of ../shared/corpus/live (by messages summed over its requests), every loop and
  title request;
* a synthetic log written with ``dsh_audit.testing.LogBuilder``: one tool round per step
  (reasoning + tool call, then its result), ``--rounds`` requests, with the real system prompt
  and the 27 KB tool list of the corpus ``b-tools`` header, so the surface grows every request.

"cached" renders every request through one ``DeepSeekRenderer`` (each message's fragment and each
header's tools rendered once); "naive" builds a fresh renderer for every request, so every
message of every request is serialised again, as a straightforward implementation would.
Both must produce identical bytes; the script checks a digest of all bodies.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import sys
import tempfile
import time
from pathlib import Path

import dsh_audit
from dsh_audit.wire import DeepSeekRenderer

ROOT = Path(__file__).resolve().parent.parent
LIVE = ROOT.parent / "shared" / "corpus" / "live"


def _run(requests, *, cached: bool) -> tuple[float, str, int]:
    digest = hashlib.sha256()
    total = 0
    shared = DeepSeekRenderer()
    start = time.perf_counter()
    for request in requests:
        renderer = shared if cached else DeepSeekRenderer()
        body = renderer.render(request).body
        total += len(body)
        digest.update(body)
    return time.perf_counter() - start, digest.hexdigest(), total


def _compare(name: str, requests, repeat: int) -> dict[str, object]:
    best = {}
    for mode in ("cached", "naive"):
        runs = [_run(requests, cached=mode == "cached") for _ in range(repeat)]
        best[mode] = min(runs)
    assert best["cached"][1] == best["naive"][1], "cached and naive bodies differ"
    messages = sum(len(r.messages) for r in requests)
    return {"workload": name, "requests": len(requests), "messages": messages,
            "output_mb": best["cached"][2] / 1e6, "cached_s": best["cached"][0], "naive_s": best["naive"][0],
            "ratio": best["naive"][0] / best["cached"][0]}


def _largest_corpus_log():
    best = None
    for path in sorted(LIVE.glob("*/session-logs/*.jsonl")):
        requests = [r for r in dsh_audit.requests(dsh_audit.load(path)) if r.kind in ("loop", "title")]
        size = sum(len(r.messages) for r in requests)
        if best is None or size > best[0]:
            best = (size, path, requests)
    assert best is not None, f"no corpus logs under {LIVE}"
    return best[1], best[2]


def _synthetic(rounds: int, folder: Path):
    from dsh_audit.testing import LogBuilder, ToolCall

    real = next(r for r in dsh_audit.requests(dsh_audit.load(next((LIVE / "b-tools" / "session-logs")
                                                                   .glob("*.jsonl")))) if r.kind == "loop")
    builder = LogBuilder(session_id="bench-synthetic", system=real.header["system"], tools=real.header["tools"],
                         max_tokens=256000)
    with builder.turn("Walk the tree and summarise every file."):
        for i in range(rounds):
            with builder.step():
                reply = builder.assistant(reasoning=f"Next file {i}.",
                                          tool_calls=[ToolCall("read", {"file_path": f"src/file_{i}.py"})])
                builder.tool_result(reply.call_ids[0], f"1: # file {i}\n2: def f{i}(x):\n3:     return x * {i}\n")
        with builder.step():
            builder.assistant("Done.", reasoning="All read.")
    path = builder.write_jsonl(folder / "session.jsonl")
    return [r for r in dsh_audit.requests(dsh_audit.load(path)) if r.kind == "loop"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="tool rounds of the synthetic log")
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings")
    args = parser.parse_args()
    rows = []
    path, requests = _largest_corpus_log()
    rows.append(_compare(f"corpus {path.parent.parent.name}", requests, args.repeat))
    with tempfile.TemporaryDirectory() as folder:
        rows.append(_compare(f"synthetic {args.rounds} tool rounds", _synthetic(args.rounds, Path(folder)),
                             args.repeat))
    print(f"python {platform.python_version()} on {platform.machine()}")
    print("| workload | requests | messages (sum over requests) | output MB | cached s | naive s | naive / cached |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['workload']} | {row['requests']} | {row['messages']} | {row['output_mb']:.1f} | "
              f"{row['cached_s']:.3f} | {row['naive_s']:.3f} | {row['ratio']:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
