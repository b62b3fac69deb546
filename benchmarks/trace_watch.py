"""Where a watch's memory goes: tracemalloc snapshots of one followed log, compared by traceback.

A generated session (benchmarks/generate.py, the same workload as bench_watch.py) is written to a
file once; :func:`dsh_audit.watch.follow_log` then follows it in this process (a TailStream whose
watch has already stopped reads to the end and ends) with replay, attribution and cache verdicts,
as ``dsh-audit watch`` runs them. At each ``--at`` request count the traced total is printed, and
at the end each snapshot is compared with the one before, grouped by allocation traceback: what
grows there is what the watch still keeps per request.

Run on demand (not part of the test suite; tracemalloc makes it ~30x slower than a watch):

    python benchmarks/trace_watch.py --mb 70 --at 2000,4000,6000
    python benchmarks/trace_watch.py --mb 110 --start 6000 --at 7000,9000   # only what survives after 6000
    python benchmarks/trace_watch.py --mb 70 --at 2000,4000,8000 --no-trace   # peak RSS only, fast
"""

from __future__ import annotations

import argparse
import gc
import itertools
import resource
import sys
import tempfile
import threading
import tracemalloc
from pathlib import Path

from dsh_audit.watch import TailStream, WatchRequest, follow_log

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import write_log  # the benchmark log generator, beside this script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=70, help="size of the generated log (decoded MB)")
    parser.add_argument("--at", default="2000,4000,6000", help="request counts at which to take a snapshot")
    parser.add_argument("--frames", type=int, default=8, help="traceback depth kept by tracemalloc")
    parser.add_argument("--top", type=int, default=12, help="tracebacks shown per comparison")
    parser.add_argument("--start", type=int, default=0, help="start tracing after this many requests (what "
                        "survives from then on, once the bounded caches are full; much faster)")
    parser.add_argument("--no-trace", action="store_true", help="print peak RSS instead (no tracemalloc)")
    args = parser.parse_args()
    path = Path(tempfile.gettempdir()) / f"trace-watch-{args.mb:g}mb.jsonl"
    if not path.exists():
        write_log(path, args.mb, seed=7, compact_every=40, result_kb=4, frames="batch")
    marks = sorted(int(x) for x in args.at.split(","))
    stop = threading.Event()
    stop.set()  # read what the file holds, then end
    if not args.no_trace and not args.start:
        tracemalloc.start(args.frames)
    snapshots: dict[int, tracemalloc.Snapshot] = {}
    count = 0
    for item in follow_log(TailStream(str(path), stop=stop, settle=1.0, poll=0.01)):
        if not isinstance(item, WatchRequest):
            continue
        count += 1
        if count == args.start and not args.no_trace:
            tracemalloc.start(args.frames)
        if count not in marks:
            continue
        gc.collect()
        if args.no_trace:
            print(f"{count} requests: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB",
                  flush=True)
        else:
            snapshots[count] = tracemalloc.take_snapshot()
            print(f"{count} requests: traced {tracemalloc.get_traced_memory()[0] / 1e6:.1f} MB", flush=True)
        if count == marks[-1]:
            break
    own = [tracemalloc.Filter(False, tracemalloc.__file__)]
    counts = sorted(snapshots)
    for low, high in itertools.pairwise(counts):
        print(f"\n{low} -> {high} requests, by traceback:")
        stats = snapshots[high].filter_traces(own).compare_to(snapshots[low].filter_traces(own), "traceback")
        for stat in stats[:args.top]:
            print(f"{stat.size_diff / 1e6:+.2f} MB {stat.count_diff:+d} blocks (now {stat.size / 1e6:.2f} MB)")
            for line in stat.traceback.format():
                print("    " + line.strip())


if __name__ == "__main__":
    main()
