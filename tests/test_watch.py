"""``dsh-audit watch`` against a writer process appending a real corpus session as DSH does.

A writer subprocess appends a corpus log unit by unit (plain: line by line; zstd: frame by frame,
at the original frame boundaries) and records when each unit's write began, pausing before each
unit that completes a break (found by replaying growing prefixes of the log), so that the watch
has seen the log without it; ``watch --json`` runs as another subprocess, stopped with Ctrl-C
once it has printed the log's last request. The breaks it prints must equal what ``breaks
--json`` says about the finished log, each printed within one second of the unit that completes
it, never before it.
"""

from __future__ import annotations

import heapq
import importlib.util
import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import zstandard
from _cli import invoke
from click.testing import CliRunner

from dsh_audit.attribution import iter_attribute
from dsh_audit.cli import cli
from dsh_audit.log import TornTail, complete_length
from dsh_audit.watch import TailStream

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "c-change"
PLAIN = sorted(CORPUS.glob("session-logs/*.jsonl"))
ZSTD = sorted(CORPUS.glob("home/sessions/**/session.jsonl.zstd"))
needs_corpus = pytest.mark.skipif(not PLAIN or not ZSTD, reason="the DSH corpus is not present")

WRITER = textwrap.dedent("""
    import json, os, sys, time
    plan, stamps = sys.argv[1:3]
    times, cache = [], {}
    for source, start, end, target, pause in json.load(open(plan)):
        if source not in cache:
            cache[source] = open(source, "rb").read()
        os.makedirs(os.path.dirname(target), exist_ok=True)
        time.sleep(pause)
        times.append(time.time())  # before the write: a watcher may print before this process runs again
        with open(target, "ab") as out:
            out.write(cache[source][start:end])
    json.dump(times, open(stamps, "w"))
""")


def _write(tmp_path: Path, plan: list[tuple[str, int, int, str, float]]) -> list[float]:
    """Run the writer process over ``plan`` (source, start, end, target, seconds to pause before
    the write); when each step was written."""
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "writer.py").write_text(WRITER)
    subprocess.run([sys.executable, str(tmp_path / "writer.py"), str(tmp_path / "plan.json"),
                    str(tmp_path / "times.json")], check=True, timeout=60)
    times: list[float] = json.loads((tmp_path / "times.json").read_text())
    return times


def _units(data: bytes, *, zstd: bool) -> list[int]:
    """End offsets of each line (plain) or each frame (zstd)."""
    if not zstd:
        return [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    cuts, start = [], 0
    while start < len(data):
        reader = zstandard.ZstdDecompressor().decompressobj()
        reader.decompress(data[start:])
        start = len(data) - len(reader.unused_data)
        cuts.append(start)
    return cuts


def _breaks(path: Path) -> set[tuple[int, str | None, tuple[int, ...]]]:
    return {(t.request, t.cause, t.evidence_seqs) for t in iter_attribute(path) if t.verdict == "break"}


def _completing_units(data: bytes, cuts: list[int], keys: set[tuple[int, str | None, tuple[int, ...]]],
                      scratch: Path, suffix: str) -> dict[tuple[int, str | None, tuple[int, ...]], int]:
    """For each break of ``keys``: the first unit after which a prefix of the log already shows it
    (each prefix replayed once, whichever breaks it is asked about)."""
    shown: dict[int, set[tuple[int, str | None, tuple[int, ...]]]] = {}

    def breaks_after(unit: int) -> set[tuple[int, str | None, tuple[int, ...]]]:
        if unit not in shown:
            prefix = scratch / f"prefix{suffix}"
            prefix.write_bytes(data[:cuts[unit]])
            try:
                shown[unit] = _breaks(prefix)
            except Exception:  # noqa: BLE001 - a prefix cut inside a turn may be refused: not yet shown
                shown[unit] = set()
        return shown[unit]

    found = {}
    for key in keys:
        low, high = 0, len(cuts) - 1
        while low < high:
            middle = (low + high) // 2
            if key in breaks_after(middle):
                high = middle
            else:
                low = middle + 1
        found[key] = low
    return found


def _watch(folder: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "dsh_audit", "watch", str(folder), "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _started(pipe: Any, prefix: str, timeout: float = 60.0) -> str:
    """Wait until the watch prints its opening line (starting with ``prefix``: it prints it once it
    follows the folder, its Ctrl-C handler in place), instead of sleeping a guessed time. Reads the
    pipe's file descriptor byte by byte, so ``communicate()`` afterwards gets every later byte."""
    read, line = b"", b""
    deadline = time.monotonic() + timeout
    while not (line.endswith(b"\n") and line.startswith(prefix.encode())):
        if line.endswith(b"\n"):
            line = b""
        ready, _, _ = select.select([pipe.fileno()], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no opening line within {timeout} s: {read!r}"
        byte = os.read(pipe.fileno(), 1)
        assert byte, read  # the watch ended before it started watching
        read, line = read + byte, line + byte
    return read.decode("utf-8")


def _cli_stdout(*args: str, code: int | None = None) -> str:
    """A one-shot command over the finished folder, in-process (the process is not what is tested)."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert code is None or result.exit_code == code, result.output
    return result.stdout


def _break_keys(output: str) -> set[tuple[int, str | None, tuple[int, ...]]]:
    """Each break ``breaks --json`` printed: its request, cause and evidence seqs."""
    return {(b["request"], b["cause"], tuple(b["evidence_seqs"])) for b in _json_lines(output)}


PAUSE = 0.05  # seconds the writer waits before each unit that completes a break: the watch sees the log without it


def _clock(seen_at: str) -> float:
    """A watch line's ``seen_at`` (ISO 8601 UTC to the millisecond) in seconds since the epoch."""
    return datetime.strptime(seen_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


@needs_corpus
@pytest.mark.parametrize("kind", ["plain", "zstd"])
def test_watch_prints_each_break_as_it_happens(tmp_path: Path, kind: str) -> None:
    source = PLAIN[0] if kind == "plain" else ZSTD[0]
    data = source.read_bytes()
    cuts = _units(data, zstd=kind == "zstd")
    assert len(cuts) > 3
    suffix = ".jsonl" if kind == "plain" else ".jsonl.zstd"
    target = tmp_path / "sessions" / "--proj--" / "session-1" / f"session{suffix}"
    (tmp_path / "sessions").mkdir()
    watcher = _watch(tmp_path / "sessions", "--rescan", "0.05")
    lines = _Lines(watcher)
    try:
        # while the watch starts: the breaks the finished log holds, and the unit completing each
        expected = _break_keys(_cli_stdout("breaks", "--json", str(source)))
        last = len(_cli_stdout("requests", "--json", str(source), code=0).splitlines()) - 1
        completing = _completing_units(data, cuts, expected, tmp_path, suffix)
        assert lines.until(lambda x: True, timeout=60)[0]["type"] == "watching"  # before the session starts
        pauses = set(completing.values())
        written = _write(tmp_path, [(str(source), start, end, str(target), PAUSE if unit in pauses else 0.0)
                                    for unit, (start, end) in enumerate(zip([0, *cuts], cuts))])
        lines.until(lambda x: x["type"] in ("request", "break") and x["index"] == last, timeout=60)
    finally:
        _interrupt(watcher)
    _ended_cleanly(watcher, lines)
    lines.until(lambda x: x["type"] == "summary")
    printed = {(x["index"], x["cause"], tuple(x["evidence_seqs"])): _clock(x["seen_at"]) for x in lines.seen
               if x["type"] == "break"}
    assert lines.seen[-1]["type"] == "summary"
    assert _break_keys(_cli_stdout("breaks", "--json", str(target))) == expected  # the finished log's
    assert expected and set(printed) == expected
    requests = [x for x in lines.seen if x["type"] in ("request", "break")]
    assert [x["index"] for x in requests] == list(range(len(requests))) == list(range(last + 1))
    assert lines.seen[-1]["breaks"] == len(expected) and lines.seen[-1]["sessions"] == 1

    for key, seen in printed.items():
        unit = completing[key]
        print(f"{kind} break {key[0]} printed {seen - written[unit]:.3f} s after unit {unit}")
        # ``seen_at`` is printed to the millisecond, floored, so it may read up to 1 ms early
        assert -0.001 <= seen - written[unit] < 1.0, (key, unit, seen - written[unit])


def test_tail_stream_waits_for_complete_units_and_reports_a_torn_tail(tmp_path: Path) -> None:
    import threading

    from dsh_audit.log import iter_lines

    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"a":1}\n{"b"')
    stop = threading.Event()
    stream = TailStream(str(path), stop=stop, settle=0.3, poll=0.01)
    torn: list[TornTail] = []
    lines = iter_lines(stream, str(path), torn)  # type: ignore[arg-type]
    assert next(lines).raw == b'{"a":1}'
    with open(path, "ab") as handle:
        handle.write(b':2}\n{"c":')
    assert next(lines).raw == b'{"b":2}'
    began = time.monotonic()
    assert list(lines) == []  # the unfinished '{"c":' settles into a torn tail
    assert time.monotonic() - began >= 0.3
    assert stream.torn and torn and "no terminating newline" in torn[0].reason
    assert complete_length(b"x\ny", zstd=False) == 2


def test_watch_exits_zero_on_ctrl_c_with_a_summary(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    watcher = subprocess.Popen([sys.executable, "-m", "dsh_audit", "watch", str(tmp_path / "sessions")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    opening = _started(watcher.stderr, "watching ")
    watcher.send_signal(signal.SIGINT)
    out, err = watcher.communicate(timeout=20)
    err = opening + err
    assert watcher.returncode == 0, err
    assert "Traceback" not in err
    assert "watched 0 session(s): 0 request(s), 0 break(s)" in err


LIVE = CORPUS.parent


def _timed_units(path: Path) -> list[tuple[float, int, int]]:
    """(time of its last record, start, end) of each line or frame of a corpus log."""
    data = path.read_bytes()
    zstd = path.name.endswith(".zstd")
    cuts = _units(data, zstd=zstd)
    out = []
    for start, end in zip([0, *cuts], cuts):
        text = zstandard.ZstdDecompressor().decompressobj().decompress(data[start:end]) if zstd else data[start:end]
        last = json.loads(text.strip().splitlines()[-1])
        out.append((float(last.get("time", last.get("createdAt", 0))), start, end))
    return out


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.skipif(not list(LIVE.glob("*/session-logs/*.jsonl")), reason="the DSH corpus is not present")
@pytest.mark.parametrize("kind", ["plain", "zstd"])
def test_watch_verdicts_equal_cache_and_breaks_over_the_finished_folder(tmp_path: Path, kind: str) -> None:
    """Every live corpus log, written at once in the order DSH wrote its records (a fork or subagent
    child interleaved with its parent; a short pause between units, a longer one where the writer
    goes from one log to another): watch's per-request verdicts, expected and actual cache reads
    equal `cache --json` over the finished folder, and its breaks `breaks --json` (children
    compared with their parents). The watch is stopped with Ctrl-C once it has printed as many
    requests as `cache` counts."""
    logs = sorted(LIVE.glob("*/session-logs/*.jsonl")) if kind == "plain" else \
        sorted(LIVE.glob("*/home/sessions/**/session.jsonl.zstd"))
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    watcher = _watch(sessions, "--rescan", "0.05")  # it starts while the plan is made
    reader = _Lines(watcher)
    try:
        streams = []
        for log in logs:
            scenario, *rest = log.relative_to(LIVE).parts
            inner = rest[1:] if rest[0] == "session-logs" else rest[2:]  # under session-logs/ or home/sessions/
            target = str(sessions.joinpath(scenario, *inner))
            streams.append([(when, (str(log), start, end, target)) for when, start, end in _timed_units(log)])
        order = [step for _, step in heapq.merge(*streams, key=lambda unit: unit[0])]
        plan = [(*step, 0.002 if at and order[at - 1][3] != step[3] else 0.0005) for at, step in enumerate(order)]
        assert reader.until(lambda x: True, timeout=60)[0]["type"] == "watching"
        _write(tmp_path, plan)
        cache = _json_lines(_cli_stdout("cache", "--json", str(sessions), code=0))  # while the watch reads
        finished = _json_lines(_cli_stdout("breaks", "--json", str(sessions)))
        total = sum(len(report["timeline"]) for report in cache)
        shown: set[tuple[str, int]] = set()

        def all_shown(item: dict[str, Any]) -> bool:
            if item["type"] in ("request", "break"):
                shown.add((item["session_id"], item["index"]))
            return len(shown) == total

        reader.until(all_shown, timeout=60)
    finally:
        _interrupt(watcher)
    _ended_cleanly(watcher, reader)
    reader.until(lambda x: x["type"] == "summary")
    lines = reader.seen
    assert lines[0]["type"] == "watching" and lines[-1]["type"] == "summary"
    assert lines[-1]["sessions"] == len(logs) == 11 and lines[-1]["errors"] == 0
    printed = {(x["session_id"], x["index"]): (x["classification"], x["expected_cache_read"], x["actual_cache_read"])
               for x in lines if x["type"] in ("request", "break")}
    printed_breaks = {(x["session_id"], x["index"]): x["cause"] for x in lines if x["type"] == "break"}

    assert len(cache) == len(logs) and all(report["requests"] for report in cache)
    expected = {(report["session_id"], v["index"]): (v["classification"], v["expected_cache_read"], v["actual_cache_read"])
                for report in cache for v in report["timeline"]}
    assert printed == expected
    assert printed_breaks == {(b["session_id"], b["request"]): b["cause"] for b in finished}
    # the subagent child was compared with its parent, not taken as a first request
    assert printed_breaks[("718aabf5-ac98-48d9-87ec-fa18653fd4d4", 0)] == "subagent"
    assert ("402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", 0) in printed  # the fork child


class _Lines:
    """The JSON lines a running ``watch --json`` prints, read as they come."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.items: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        assert process.stdout is not None
        stdout = process.stdout

        def read() -> None:
            with stdout:
                for line in stdout:
                    self.items.put(json.loads(line))

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()

    def until(self, test: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> list[dict[str, Any]]:
        """Every line up to and including the first that passes ``test``."""
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            item = self.items.get(timeout=max(0.01, deadline - time.monotonic()))
            got.append(item)
            self.seen.append(item)
            if test(item):
                return got


def _interrupt(watcher: subprocess.Popen[str]) -> None:
    """Ctrl-C the watch and wait for it to end (its stdout is the reader thread's: not communicate())."""
    watcher.send_signal(signal.SIGINT)
    watcher.wait(timeout=20)


def _ended_cleanly(watcher: subprocess.Popen[str], lines: _Lines) -> str:
    """After :func:`_interrupt`: the watch exited 0 without a traceback; its stderr."""
    assert watcher.stderr is not None
    with watcher.stderr:
        err = watcher.stderr.read()
    lines.reader.join(timeout=10)
    assert watcher.returncode == 0, err
    assert "Traceback" not in err
    return err


def _header_id(path: Path) -> str:
    return str(json.loads(path.read_bytes().split(b"\n", 1)[0])["id"])


def _requests_of(lines: list[dict[str, Any]], sid: str) -> list[int]:
    return [x["index"] for x in lines if x["type"] in ("request", "break") and x["session_id"] == sid]


@pytest.mark.skipif(not list(LIVE.glob("*/session-logs/*.jsonl")), reason="the DSH corpus is not present")
@pytest.mark.parametrize("mode", ["notifications", "polling"])
def test_watch_follows_new_replaced_truncated_broken_and_deleted_logs(tmp_path: Path, mode: str) -> None:
    chat, tools, resume = (next(LIVE.glob(f"{name}/session-logs/*.jsonl")) for name in ("a-chat", "b-tools", "d-resume"))
    sessions = tmp_path / "sessions"
    first, second = sessions / "proj" / "session-1" / "session.jsonl", sessions / "proj" / "session-2" / "session.jsonl"
    sessions.mkdir()
    # new logs are looked for every 0.025 s (polling; with notifications at once, and every 0.25 s)
    watcher = _watch(sessions, "--rescan", "0.025", *(["--polling"] if mode == "polling" else []))
    lines = _Lines(watcher)
    try:
        opening = lines.until(lambda x: True)[0]
        assert opening["type"] == "watching" and opening["path"] == str(sessions)
        notified = mode == "notifications" and importlib.util.find_spec("watchdog") is not None
        method = "file-system notifications (watchdog)" if notified else "polling every 0.05-0.5 s"
        assert opening["message"].startswith(f"following 0 log(s); changes are noticed by {method}")

        first.parent.mkdir(parents=True)
        first.write_bytes(chat.read_bytes())
        got = lines.until(lambda x: x["type"] == "request" and x["index"] == 2 and x["session_id"] == _header_id(chat))
        assert [x["type"] for x in got] == ["started", "request", "request", "request"]

        second.parent.mkdir(parents=True)  # a second session starts while watching
        second.write_bytes(tools.read_bytes())
        got = lines.until(lambda x: x["type"] in ("request", "break") and x["index"] == 8)
        assert got[0]["type"] == "started" and got[0]["path"] == str(second)
        assert _requests_of(got, _header_id(tools)) == list(range(9))

        replacement = tmp_path / "new.jsonl"  # another file takes the log's path
        replacement.write_bytes(resume.read_bytes())
        os.replace(replacement, first)
        got = lines.until(lambda x: x["type"] in ("request", "break") and x["index"] == 5)
        assert (got[0]["type"], got[0]["path"], got[0]["message"]) == (
            "replaced", str(first), "another file replaced the log while it was watched")
        assert got[1]["type"] == "started" and _requests_of(got, _header_id(resume)) == list(range(6))

        with open(second, "r+b") as handle:  # truncated in place, then written anew
            handle.truncate(0)
        got = lines.until(lambda x: x["type"] == "replaced")
        assert got[-1]["message"] == f"the log shrank from {tools.stat().st_size} to 0 bytes while it was watched"
        second.write_bytes(chat.read_bytes())
        got = lines.until(lambda x: x["type"] == "request" and x["index"] == 2)
        assert _requests_of(got, _header_id(chat)) == [0, 1, 2]

        replacement.write_bytes(b"this is not a session log\n")  # garbage replaces a log
        os.replace(replacement, first)
        got = lines.until(lambda x: x["type"] == "error")
        assert [x["type"] for x in got] == ["replaced", "error"] and got[-1]["path"] == str(first)
        second.unlink()  # a deleted log
        got = lines.until(lambda x: x["type"] == "error")
        lines_read = chat.read_bytes().count(b"\n")
        assert got == [{**got[0], "type": "error", "path": str(second),
                        "message": f"{second}:{lines_read + 1}: the log was deleted while it was watched "
                                   "(hint: its requests shown stay counted; a file written at its path is read "
                                   "from its first byte, and its session written again elsewhere under the watched "
                                   "paths goes on where it stopped; with --polling, --rescan sets how often it is "
                                   "looked for)"}]
        time.sleep(0.3)  # each is reported once, not at every look (a dozen looks when polling, one with notifications)
        assert lines.items.empty()
    finally:
        _interrupt(watcher)
    _ended_cleanly(watcher, lines)
    summary = lines.until(lambda x: x["type"] == "summary")[-1]
    assert summary == {"type": "summary", "sessions": 3, "requests": 3 + 9 + 6 + 3, "breaks": 1,
                       "cost_usd": summary["cost_usd"], "errors": 2, "unpriced_requests": 4, "cost_complete": False}


@pytest.mark.skipif(not list(LIVE.glob("c-change/session-logs/*.jsonl")), reason="the DSH corpus is not present")
def test_watch_lines_fold_at_spaces_to_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Each request's line fits COLUMNS=80 (as every listing does), folded at spaces: the same
    words as the unfolded line, none split. The opening and closing lines and the notes on stderr
    are said as every command's notes are: one line each when piped, a path never cut (docs/cli.md
    "Messages"; they were folded inside a path: tests/test_tour36.py)."""
    log = next(LIVE.glob("c-change/session-logs/*.jsonl"))
    target = tmp_path / "sessions" / "proj" / "session-1" / "session.jsonl"
    target.parent.mkdir(parents=True)
    target.write_bytes(log.read_bytes())
    monkeypatch.setenv("NO_COLOR", "1")

    def run(columns: str) -> tuple[str, str]:
        monkeypatch.setenv("COLUMNS", columns)
        code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path / "sessions"), "--since", "100000d",
                                "--idle-exit", "0.2", "--polling")
        assert code == 0, err
        return out, "".join(line + "\n" for line in err)

    narrow, wide = run("80"), run("1000")

    def text(out: str) -> str:  # every character but the spaces and breaks, without the clock times
        return "".join(re.sub(r"\b\d\d:\d\d:\d\d\b", "", out).split())

    # stderr: whole lines, but the legend for people, folded at spaces to COLUMNS under its first line
    assert re.sub(r"\n  (?=\S)", " ", narrow[1]) == wide[1] and max(len(line) for line in wide[1].splitlines()) > 80
    assert [line for line in narrow[1].splitlines() if len(line) > 80 and not line.startswith(("watching", "note"))] \
        == []
    for folded, whole in zip(narrow[:1], wide[:1]):
        assert max(len(line) for line in folded.splitlines()) <= 80
        assert max(len(line) for line in whole.splitlines()) > 80  # there was something to fold
        assert sorted(text(folded)) == sorted(text(whole))
        # each request's words in the unfolded line's order: folded between fields, none moved (its
        # cost stays after the cache reads, where the legend says: review 40 B)
        requests = re.split(r"\n(?=\S)", folded.rstrip("\n"))
        assert len(requests) == len(whole.splitlines())
        for request, line in zip(requests, whole.splitlines()):
            assert request.split() == line.split(), (request, line)
        # folded at spaces (a long path after a '/'): each folded line ends where a word ended
        words = {piece for line in whole.splitlines() for piece in line.split()}
        ends = [line.split()[-1] for line in folded.splitlines() if line.strip()]
        assert all(end in words or end.endswith("/") or re.fullmatch(r"\d\d:\d\d:\d\d", end)
                   for end in ends), ends
