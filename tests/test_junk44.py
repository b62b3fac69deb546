"""Junk lines at C speed (issue 15, audit 44 gap 2): thousands of CRLF blank lines, lines of spaces,
lines of ``x`` or of ``{}`` between a log's header and its records cost no Python work per line. A line
of JSON whitespace alone is refused by DSH's ``JSON.parse`` as an empty one is, so each is one of a
blank run; a run of lines that open no JSON value is one line read; a run of one finding again and
again (``{}``: no seq) is one finding, every line still counted.

The work is counted, not timed (a timed test failed CI on a busy machine): the Python function calls a
run makes, under a profile hook, are the same for a thousand junk lines as for two thousand, and a
``{}`` line costs a fixed few calls (its JSON is read; its finding folds). Seconds live in benchmarks/."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_audit.log import iter_lines

CHAT = Path(__file__).resolve().parents[1] / "sample_logs" / "chat" / "session.jsonl"
LINES = 2000
REFUSED = ("corrupt session log: unparsable committed event (not valid JSON) (hint: no option skips a damaged "
           "record before the last turn/end (--lenient adapts headers only; DSH refuses the log too): repair or "
           "remove the line; `dsh-audit validate FILE` lists every damaged line)")
NOT_JSON = "(every line is one JSON value written by JSON.stringify)"
#: The command line under a profile hook that counts Python function calls (threads too); the count
#: goes to the file named first.
COUNTED = """
import sys, threading
calls = [0]
def count(frame, event, arg):
    if event == "call":
        calls[0] += 1
out, sys.argv = sys.argv[1], ["dsh-audit", *sys.argv[2:]]
sys.setprofile(count)
threading.setprofile(count)
try:
    from dsh_audit.__main__ import main
    main()
finally:
    sys.setprofile(None)
    open(out, "w").write(str(calls[0]))
"""


def run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """The run, and the Python function calls it made."""
    counted = tmp_path / "calls"
    result = subprocess.run([sys.executable, "-c", COUNTED, str(counted), *args], capture_output=True, text=True,
                            timeout=120)
    return result, int(counted.read_text())


def junk_log(tmp_path: Path, unit: bytes, count: int) -> Path:
    header, records = CHAT.read_bytes().split(b"\n", 1)
    log = tmp_path / f"session{count}.jsonl"
    log.write_bytes(header + b"\n" + unit * count + records)
    return log


@pytest.mark.parametrize(("unit", "per_line", "requests_error", "validate_first"), [
    (b"\r\n", (0, 0), f"seq 0: {REFUSED}",
     f"seq 0: DSH104 error: line is not valid JSON (blank, and so are the {LINES - 1} line(s) after it) {NOT_JSON}"),
    (b" \t\n", (0, 0), f"seq 0: {REFUSED}",
     f"seq 0: DSH104 error: line is not valid JSON (blank, and so are the {LINES - 1} line(s) after it) {NOT_JSON}"),
    (b"x\r\n", (0, 0), f"seq 0: {REFUSED}",
     f"seq 0: DSH104 error: line is not valid JSON (and neither are the {LINES - 1} line(s) after it) {NOT_JSON}"),
    # a {} line is read (4 calls in requests, 8 in validate, measured); one DSH111 finding a line cost far more
    (b"{}\n", (4, 8), "seq 0: corrupt session log: seq gap in committed region at line 1 (expected 0, got undefined): "
     "the event has no seq; \"line 1\" is DSH's count of event lines (the header is not one) (hint: no option skips "
     "a record out of seq before the last turn/end (--lenient adapts headers only; DSH refuses the log too): write "
     "each seq as an integer, the record's place 0, 1, 2, …; `dsh-audit validate FILE` lists every seq that is no "
     "integer (DSH111))",
     # the refusal's line stays alone (check drops it as the refusal's twin), the rest fold at line 3
     "seq 0: DSH111 error: event has no seq (write Date.now() milliseconds and the position as integers)"),
])
def test_junk_lines_before_a_turn_end_cost_no_work_per_line(tmp_path, unit, per_line, requests_error,
                                                            validate_first):
    half, log = junk_log(tmp_path, unit, LINES // 2), junk_log(tmp_path, unit, LINES)
    refused, calls = run(tmp_path, "requests", str(log))
    assert calls - run(tmp_path, "requests", str(half))[1] <= per_line[0] * LINES // 2
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == f"error: {log}:2 {requests_error}\n"
    checked, calls = run(tmp_path, "validate", str(log))
    assert calls - run(tmp_path, "validate", str(half))[1] <= per_line[1] * LINES // 2
    assert checked.returncode == 1
    assert checked.stdout.splitlines()[0] == f"{log}:2: {validate_first}"
    if unit == b"{}\n":
        assert checked.stdout.splitlines()[1] == (
            f"{log}:3: seq 1: DSH111 error: event has no seq (and so do the {LINES - 2} line(s) after it) "
            "(write Date.now() milliseconds and the position as integers)")
    assert len(checked.stdout) < 20_000  # one finding for the run, not one a line


def test_junk_runs_keep_every_line_number_across_pieces():
    """Runs are found piece by piece of the decoder: one that crosses a piece's end (a CR there,
    its LF in the next) is still one run, and the line after it keeps its number."""
    data = b"{}\n" + b"\r\n" * ((1 << 19) + 1) + b"x\n" * 3 + b"\xff\n" + b"x\n" * 2 + b'{"a":1}\n' + b" \n" * 2
    lines = [(line.number, bytes(line.raw), line.count)
             for line in iter_lines(io.BufferedReader(io.BytesIO(data)), "p", [], junk=True)]
    blanks = (1 << 19) + 1
    assert lines == [(1, b"{}", 1), (2, b"", blanks), (blanks + 2, b"x", 3), (blanks + 5, b"\xff", 1),
                     (blanks + 6, b"x", 2), (blanks + 8, b'{"a":1}', 1), (blanks + 9, b"", 2)]
    plain = [(line.number, line.count) for line in iter_lines(io.BufferedReader(io.BytesIO(data)), "p", [])]
    assert plain[2:5] == [(blanks + 2, 1), (blanks + 3, 1), (blanks + 4, 1)]  # junk runs only when asked
