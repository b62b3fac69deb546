"""Session 31: writing a huge body as JSON under a memory limit (fuzz round 12, docs/hostile-inputs.md).

orjson 3.13.0 segfaults (exit 139, no line) instead of raising MemoryError when an allocation fails.
Parsing was checked first (``ensure_room``), but ``diff`` of a capture whose body holds one string
of more than 16 MiB (parsed a piece at a time, cheaply) still crashed in ``orjson.dumps``: the
differ writes each message as JSON to align them (``diff.py`` ``_keys``), and orjson asks for about
13 bytes of address space per character of a long string. Now ``jsjson`` checks the room first
(``fits_in_memory``) and, when orjson might not fit, writes with its exact writer, whose running
out is a MemoryError: the one error line ("the capture does not fit in memory", exit 2).

An importer checks a long line before orjson parses it, as the log reader does: one that does not
fit is one error naming the file and line.

The commands run for real in a subprocess whose address space is limited (``RLIMIT_AS``, set in
``preexec_fn``) to the size of an interpreter that imported the CLI plus a room given here.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import chat_log, invoke

import dsh_audit
from dsh_audit import jsjson
from dsh_audit.errors import UnreadableError
from dsh_audit.importers._model import read_jsonl
from dsh_audit.log import _json_room

if sys.platform != "win32":
    import resource

needs_proc = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="the address-space limit is measured from /proc (Linux)")

ROOT = Path(dsh_audit.__file__).resolve().parent.parent
#: A body of one message of this many characters: more than 16 MiB, so parsing it is cheap (a piece
#: at a time) and writing it was not.
BIG = 17_000_000
#: With this room, orjson.dumps of the big message crashed the process (exit 139; measured: from 115
#: to 300 MiB); the exact writer fits.
ROOM = 200 << 20
#: With this room the big body does not fit whatever writes it (measured: up to 100 MiB), a body of a
#: million characters does (from 40 MiB).
TIGHT = 70 << 20
TOO_LARGE = "the capture does not fit in memory (hint: compare a smaller capture, e.g. one session's requests)"
SUMMARY = "1 request(s): 0 identical, 1 different; 0 capture(s) unexplained, 0 foreign: FAILED"


@functools.cache
def _base() -> int:
    """The address space of an interpreter once it imported the CLI (bytes)."""
    done = subprocess.run([sys.executable, "-c", "import dsh_audit.cli\n"
                           "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmSize:')))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return int(done.stdout) * 1024


def _limited(room: int, *args: str) -> tuple[int, str, list[str]]:
    """``dsh-audit ARGS`` with its address space limited to :func:`_base` plus ``room``: exit code,
    stdout, stderr lines."""
    limit = _base() + room

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run([sys.executable, "-m", "dsh_audit", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, preexec_fn=limit_memory)
    return done.returncode, done.stdout, done.stderr.splitlines()


def _capture(tmp_path: Path, size: int) -> tuple[Path, Path]:
    """Session s1's log, and a capture of it whose one body holds one user message of ``size`` characters."""
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    body = {"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "a" * size}]}
    wire = tmp_path / "wire.jsonl"
    record = {"method": "POST", "path": "/chat/completions", "headers": {"x-deepseek-harness-session-id": "s1"},
              "body": json.dumps(body)}
    wire.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return log, wire


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """:func:`_capture` of :data:`BIG` characters, written once (17 MB) for the two tests that only read it."""
    return _capture(tmp_path_factory.mktemp("big"), BIG)


@needs_proc
def test_a_big_one_string_body_is_diffed_where_orjson_crashed(big: tuple[Path, Path]) -> None:
    log, wire = big
    code, out, err = _limited(ROOM, "diff", str(log), "--capture", str(wire))
    assert (code, err, out.splitlines()[-1:]) == (1, [], [SUMMARY])


@needs_proc
def test_a_big_one_string_body_that_does_not_fit_is_one_line(big: tuple[Path, Path]) -> None:
    log, wire = big
    assert _limited(TIGHT, "diff", str(log), "--capture", str(wire)) == (2, "", [f"error: {wire}: {TOO_LARGE}"])


@needs_proc
def test_a_smaller_body_is_diffed_in_the_same_room(tmp_path: Path) -> None:
    log, wire = _capture(tmp_path, 1_000_000)
    code, out, err = _limited(TIGHT, "diff", str(log), "--capture", str(wire))
    assert (code, err, out.splitlines()[-1:]) == (1, [], [SUMMARY])


def _room_left(monkeypatch: pytest.MonkeyPatch, left: int) -> None:
    """Make the writer see a limit with ``left`` bytes left under it (the parser sees room enough)."""
    monkeypatch.setattr(jsjson, "memory_limited", lambda: True)
    monkeypatch.setattr(jsjson, "memory_left", lambda: left)
    monkeypatch.setattr(_json_room, "fits_in_memory", lambda need: True)


def test_the_exact_writer_writes_what_orjson_would_have(monkeypatch: pytest.MonkeyPatch) -> None:
    """With too little room for orjson (about 40 MiB for the value below), the exact writer writes
    the same bytes, a piece of a MiB at a time."""
    value = {"role": "user", "content": "a" * (1 << 21) + "é\n😀"}
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert jsjson.stringify(value) == expected
    assert jsjson._fast(value) is not None  # room enough: orjson writes it
    _room_left(monkeypatch, 30 << 20)
    assert jsjson._fast(value) is None  # too little room for orjson: the exact writer does
    assert (jsjson.stringify(value), jsjson.stringify_bytes(value)) == (expected, expected.encode())


def test_a_body_too_large_to_write_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Where even a piece does not fit, writing raises MemoryError: diff says the one line."""
    log, wire = _capture(tmp_path, 2_000_000)
    _room_left(monkeypatch, 0)
    with pytest.raises(MemoryError, match=r"^writing 1048576 characters as JSON needs about \d+ MiB of memory$"):
        jsjson.stringify("a" * 2_000_000)
    assert invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire)) == (
        2, "", [f"error: {wire}: {TOO_LARGE}"])


def test_an_imported_line_too_large_for_memory_is_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An importer checks a long line before orjson parses it: one that does not fit is one error
    naming the file and line (never orjson's crash)."""
    path = tmp_path / "foreign.jsonl"
    path.write_text('{"type": "user"}\n' + json.dumps({"text": "a" * 2_000_000}) + "\n", encoding="utf-8")
    monkeypatch.setattr(_json_room, "memory_limited", lambda: True)
    monkeypatch.setattr(_json_room, "fits_in_memory", lambda need: need <= 1 << 20)
    warnings: list[str] = []
    lines = read_jsonl(path, warnings)
    assert next(lines) == (1, {"type": "user"})
    with pytest.raises(UnreadableError) as caught:
        next(lines)
    assert (str(caught.value), warnings) == (
        f"{path}:2: line does not fit in memory (hint: import the log where more memory is allowed (ulimit -v))", [])
