"""Pipeline benchmark: the parse floor against dsh-audit's stages, as ratios measured in one run.

Stages, each timed in a fresh subprocess (so peak RSS is the stage's own):

  a  floor: decompress every zstd frame and ``orjson.loads`` every line
  b  read + reconstruction: every request of the log (``dsh_audit.iter_requests``)
  c  b + DeepSeek rendering of every loop request + attribution, both streaming

Run on demand (not part of the test suite):

    python benchmarks/bench_pipeline.py                       # largest corpus log + 10/100 MB logs
    python benchmarks/bench_pipeline.py --sizes 10 100 1000   # add the 1 GB log

Generated logs go to benchmarks/data/ (git-ignored). Results print as a Markdown table for
docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
CORPUS = ROOT.parent / "shared" / "corpus"

STAGE_CODE = r'''
import json, resource, sys, time
stage, path = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
events = requests = 0
if stage == "a":
    import orjson
    from dsh_audit.log._decode import iter_lines
    torn = []
    with open(path, "rb") as f:
        for line in iter_lines(f, path, torn):
            orjson.loads(line.raw)
            events += 1
else:
    import dsh_audit
    log = dsh_audit.load(path)
    if stage == "b":
        for r in dsh_audit.iter_requests(log):
            requests += 1
    else:
        from dsh_audit.wire import render_all
        from dsh_audit.attribution import iter_attribute
        out = 0
        for wire in render_all(r for r in dsh_audit.iter_requests(log) if r.kind == "loop"):
            out += len(wire.body)
            requests += 1
        breaks = sum(t.verdict == "break" for t in iter_attribute(path))  # streams: bounded memory
    events = log.event_count
elapsed = time.perf_counter() - t0
print(json.dumps({"seconds": elapsed, "events": events, "requests": requests,
                  "output_mb": (out / 1e6) if stage == "c" else 0,
                  "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''


def run_stage(stage: str, path: Path, repeat: int) -> dict[str, float]:
    best: dict[str, float] | None = None
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", STAGE_CODE, stage, str(path)], capture_output=True, text=True,
                             cwd=ROOT)
        if out.returncode != 0:
            return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}  # type: ignore[dict-item]
        result = json.loads(out.stdout)
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    assert best is not None
    return best


def decompressed_size(path: Path) -> int:
    import zstandard

    if not path.name.endswith(".zstd"):
        return path.stat().st_size
    with open(path, "rb") as handle:
        reader = zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True)
        total = 0
        while chunk := reader.read(1 << 20):
            total += len(chunk)
    return total


def largest_corpus_log() -> Path | None:
    logs = list(CORPUS.glob("live/*/home/sessions/*/*/session.jsonl.zstd"))
    return max(logs, key=decompressed_size) if logs else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=float, nargs="*", default=[10, 100], help="generated log sizes, MB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stages", default="abc")
    args = parser.parse_args()
    targets: list[tuple[str, Path]] = []
    corpus = largest_corpus_log()
    if corpus is not None:
        targets.append(("largest corpus log", corpus))
    for mb in args.sizes:
        path = DATA / f"{mb:g}mb.jsonl.zstd"
        if not path.exists():
            subprocess.run([sys.executable, str(ROOT / "benchmarks" / "generate.py"), "--mb", str(mb), "-o", str(path)],
                           check=True)
        targets.append((f"generated {mb:g} MB", path))
    rows = []
    points = []
    for label, path in targets:
        size = decompressed_size(path)
        results = {stage: run_stage(stage, path, args.repeat) for stage in args.stages}
        rows.append((label, size, results))
        if "b" in results and "seconds" in results["b"]:
            points.append((size, results["b"]["seconds"], results.get("c", {}).get("seconds")))
    print(f"| log | MB | events | a floor s | b replay s | c +render+attr s | b/a | c/a | MB/s (c) | peak RSS a/b/c MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, size, r in rows:
        a, b, c = (r.get(s, {}) for s in "abc")
        sec = lambda x: x.get("seconds") if isinstance(x.get("seconds"), float) else None  # noqa: E731
        ratio = lambda x: f"{sec(x) / sec(a):.2f}" if sec(x) and sec(a) else "-"  # noqa: E731
        mbps = f"{size / 1e6 / sec(c):.1f}" if sec(c) else "-"
        rss = "/".join(f"{x.get('max_rss_mb', 0):.0f}" for x in (a, b, c))
        print(f"| {label} | {size / 1e6:.1f} | {a.get('events', '-')} | {sec(a) or '-':.3} | {sec(b) or 0:.3f} | "
              f"{(sec(c) or 0):.3f} | {ratio(b)} | {ratio(c)} | {mbps} | {rss} |")
        for stage, value in r.items():
            if "error" in value:
                print(f"  stage {stage} failed: {value['error']}", file=sys.stderr)
    if len(points) >= 2:
        (s0, t0, c0), (s1, t1, c1) = points[-2], points[-1]
        exponent = math.log(t1 / t0) / math.log(s1 / s0)
        print(f"\nscaling exponent (b, time vs size, last two sizes): {exponent:.2f}")
        if c0 and c1:
            print(f"scaling exponent (c): {math.log(c1 / c0) / math.log(s1 / s0):.2f}")
    print(f"\nmachine: {os.cpu_count()} cores, python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d')}")


if __name__ == "__main__":
    main()
