"""Redact benchmark: ``dsh-audit redact`` and ``redact --check`` against the parse floor, in one run.

Measured as benchmarks/bench_commands.py measures every other command (its functions, imported):
each run is a fresh subprocess, its peak RSS its own (``os.wait4`` on that child), from cached
bytecode, and

  floor     decompress every zstd frame and ``orjson.loads`` every line (timed after its imports)
  start-up  ``dsh-audit --version`` (best of 3, before each log)
  redact    ``dsh-audit redact LOG -o OUT --salt bench`` into an empty folder: the log read once and
            redacted as it is read, then the original's and the copy's requests, breaks and cache
            verdicts compared (the copy is read back), the manifest written
  check     ``dsh-audit redact --check OUT`` on the bundle the last redact run wrote: the copy read
            and its verdicts compared with the manifest's
  capture   with --capture, bounded logs only: ``redact LOG -o OUT --capture wire.jsonl --salt bench``,
            the capture a wire.jsonl of every loop request's body rendered from the log (written once
            beside the log in benchmarks/data/, by a spawned child; about 16 times the log's decoded
            size), so each captured body is redacted and diffed too. A growing log's capture is
            quadratic in the log (each request carries the whole history): not made.

work = wall - start-up. Logs: for each --sizes MB the generated "bounded" and "growing" logs of
benchmarks/generate.py (benchmarks/data/, shared with bench_commands.py and reused when present).
With two or more sizes, scaling exponents log(t2/t1)/log(s2/s1) between the two largest sizes are
printed per measurement and family, for work time and for peak RSS.

Run on demand (not part of the test suite; one benchmark process at a time):

    .venv/bin/python benchmarks/bench_redact.py --sizes 1 --repeat 1                  # quick check
    .venv/bin/python benchmarks/bench_redact.py --sizes 10 30 --repeat 2 --json bench-redact.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_commands import (FAMILIES, ROOT, Limits, add_run_options, best_of, exponent, finish,  # noqa: E402
                            fmt, generated_log, machine, measure_floor, measure_startup, precompile, run)

SALT = "bench"
MEASURES = ("redact", "check", "capture")


def write_capture(log: str, path: str) -> None:
    """A wire.jsonl of every request of ``log``, each body as rendered from the log (run in a child);
    a compaction request, whose instruction the log does not record, is left out (not captured)."""
    from dsh_audit.errors import RenderError
    from dsh_audit.session import open_session

    session = open_session(log)
    with open(path, "wb") as out:
        for index, request in enumerate(session.requests):
            try:
                body = session.bodies.render(request, session.route(request).adapter)
            except RenderError:
                continue
            record = {"seq": index, "method": "POST", "path": "/chat/completions",
                      "headers": {"host": "gw.bench.example:8443", "authorization": "Bearer bench-token-0123456789"},
                      "body": body.decode("utf-8")}
            out.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")


def capture_of(log: Path) -> Path:
    """The capture of ``log`` beside it, written once (in a spawned child: its memory is not ours)."""
    path = log.with_name(log.name.replace(".jsonl.zstd", "") + ".wire.jsonl")
    if path.exists():
        return path
    partial = path.with_suffix(".partial")
    print(f"rendering {path.relative_to(ROOT)} ...", file=sys.stderr)
    child = multiprocessing.get_context("spawn").Process(target=write_capture, args=(str(log), str(partial)))
    child.start()
    child.join()
    if child.exitcode != 0:
        raise SystemExit(f"rendering the capture of {log} failed (exit {child.exitcode})")
    partial.rename(path)
    return path


def argv_of(dsh: Path, name: str, log: Path, out: Path, capture: Path | None) -> list[str]:
    if name == "check":
        return [str(dsh), "redact", "--check", str(out)]
    extra = ["--capture", str(capture)] if name == "capture" and capture is not None else []
    return [str(dsh), "redact", str(log), "-o", str(out), "--salt", SALT, *extra]


def measure(dsh: Path, names: list[str], log: Path, capture: Path | None, repeat: int, limits: Limits,
            startup: float) -> dict[str, dict[str, Any]]:
    """Each of ``names`` on ``log``, best of ``repeat``; every redact writes into an empty folder, and
    ``check`` checks the bundle the last ``redact`` wrote."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-redact-") as tmp:
        bundle = Path(tmp) / "bundle" / log.name
        for name in names:
            runs = []
            for attempt in range(repeat):
                folder = Path(tmp) / ("bundle" if name != "capture" else f"capture-{attempt}")
                out = bundle if name == "check" else folder / log.name
                if name != "check":
                    folder.mkdir(exist_ok=True)
                    for leftover in folder.iterdir():
                        leftover.unlink()
                result = run(argv_of(dsh, name, log, out, capture), timeout=limits.timeout,
                             max_rss_mb=limits.max_rss_mb)
                if name != "check" and out.exists():
                    result["output_mb"] = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
                runs.append(result)
            result = best_of(runs)
            if "wall" in result:
                result["work"] = result["wall"] - startup
            shown = argv_of(Path("dsh-audit"), name, Path("LOG"), Path("OUT"), Path("wire.jsonl"))
            result["argv"] = shown
            results[name] = result
    return results


def table(label: str, path: Path, floor: dict[str, Any], startup: dict[str, Any],
          results: dict[str, dict[str, Any]], capture: Path | None) -> str:
    decoded = floor.get("decoded_bytes")
    lines = [f"### {label}", "",
             f"`{path.relative_to(ROOT)}`: {path.stat().st_size / 1e6:.2f} MB on disk, "
             + (f"{decoded / 1e6:.2f} MB decoded, {floor['lines']:,} lines" if decoded else "decoded size unknown")
             + (f"; capture `{capture.name}` {capture.stat().st_size / 1e6:.2f} MB" if capture is not None else ""),
             "", "| command | work s | x floor | peak RSS MB | wall s | CPU s | output MB | exit |",
             "|---|---|---|---|---|---|---|---|",
             f"| start-up: `dsh-audit --version`, best of 3 | - | - | {fmt(startup.get('max_rss_mb'), 0)} | "
             f"{fmt(startup.get('wall'))} | {fmt(startup.get('cpu'))} | - | {startup.get('rc')} |"]
    floor_s = floor.get("seconds")
    if "error" in floor:
        lines.append(f"| floor | {floor['error']} | - | - | - | - | - | {floor.get('rc')} |")
    else:
        lines.append(f"| floor: zstd + `orjson.loads` per line (timed after imports) | {fmt(floor_s)} | 1.00 | "
                     f"{fmt(floor['max_rss_mb'], 0)} | {fmt(floor['wall'])} | {fmt(floor['cpu'])} | - | "
                     f"{floor['rc']} |")
    for r in results.values():
        command = " ".join(r["argv"][1:])
        work = r["error"].replace("|", "\\|") if "error" in r else fmt(r["work"])
        ratio = f"{r['work'] / floor_s:.1f}" if "error" not in r and floor_s and r["work"] > 0 else "-"
        lines.append(f"| `{command}` | {work} | {ratio} | {fmt(r.get('max_rss_mb'), 0)} | {fmt(r.get('wall'))} | "
                     f"{fmt(r.get('cpu'))} | {fmt(r.get('output_mb'), 2)} | {r.get('rc')} |")
    return "\n".join(lines)


def scaling(entries: list[dict[str, Any]], names: list[str]) -> tuple[str, dict[str, Any]]:
    families = [f for f in FAMILIES if sum(e["family"] == f for e in entries) >= 2]
    if not families:
        return "", {}
    data: dict[str, Any] = {}
    lines = ["### Scaling exponents", "",
             "log(y2/y1) / log(s2/s1) between the two largest sizes of each family, s = decoded bytes; time is "
             "work (the floor's own time for the floor); CPU is the run's CPU seconds, which a busy machine moves "
             "less than wall time; 1 is linear, 2 quadratic.", "",
             "| measurement |" + "".join(f" {f}: time | {f}: CPU | {f}: peak RSS |" for f in families),
             "|---|" + "---|---|---|" * len(families)]
    for name in ["floor", *names]:
        row = f"| {name} |"
        for family in families:
            times, cpu, rss = [], [], []
            for e in (e for e in entries if e["family"] == family):
                r = e["floor"] if name == "floor" else e["results"].get(name, {"error": "not measured"})
                size = e["floor"].get("decoded_bytes") or e["mb"] * 1e6
                ok = "error" not in r
                times.append((size, (r["seconds"] if name == "floor" else r["work"]) if ok else None))
                cpu.append((size, r.get("cpu") if ok else None))
                rss.append((size, r.get("max_rss_mb") if ok else None))
            values = [exponent(times), exponent(cpu), exponent(rss)]
            data.setdefault(name, {})[family] = dict(zip(("time", "cpu", "peak_rss"), values))
            row += "".join(f" {fmt(v, 2)} |" for v in values)
        lines.append(row)
    return "\n".join(lines), data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser)
    parser.add_argument("--capture", action="store_true",
                        help="also redact each log with a wire.jsonl of its rendered bodies (rendered once)")
    args = parser.parse_args()
    families = [f for f in args.families.split(",") if f]
    for bad in [f for f in families if f not in FAMILIES]:
        parser.error(f"unknown family: {bad}")
    if not args.dsh_audit.exists():
        parser.error(f"{args.dsh_audit} not found (use --dsh-audit)")
    names = [n for n in MEASURES if n != "capture" or args.capture]
    info = machine()
    limits = Limits(args.timeout, args.max_rss_mb)
    precompile(args.dsh_audit, limits)
    entries: list[dict[str, Any]] = []
    for family in families:
        for mb in sorted(args.sizes):
            label = f"generated {family}-history {mb:g} MB"
            path = generated_log(family, mb)
            capture = capture_of(path) if args.capture and family == "bounded" else None
            print(f"measuring {label} ...", file=sys.stderr)
            startup = measure_startup(args.dsh_audit, limits)  # per log: the machine's load drifts
            if "error" in startup:
                raise SystemExit(f"dsh-audit --version failed: {startup['error']}")
            floor = measure_floor(path, args.repeat, limits)
            results = measure(args.dsh_audit, [n for n in names if n != "capture" or capture is not None], path,
                              capture, args.repeat, limits, startup["wall"])
            entries.append({"label": label, "family": family, "mb": mb, "path": str(path),
                            "capture": None if capture is None else str(capture), "startup": startup,
                            "floor": floor, "results": results})
    print(f"machine: {info['cpus']} cores, python {info['python']}, load average "
          f"{' '.join(f'{x:.1f}' for x in info['load_average'])} at start, {info['date']}; "
          f"bytecode: {info['bytecode']}; best of {args.repeat}\n")
    for e in entries:
        capture = Path(e["capture"]) if e["capture"] else None
        print(table(e["label"], Path(e["path"]), e["floor"], e["startup"], e["results"], capture) + "\n")
    text, exponents = scaling(entries, names)
    if text:
        print(text + "\n")
    finish(args, info, limits, entries, exponents)


if __name__ == "__main__":
    main()
