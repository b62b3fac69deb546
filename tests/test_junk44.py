"""Junk lines at C speed (issue 15, audit 44 gap 2): a million CRLF blank lines, lines of spaces,
lines of ``x`` or of ``{}`` between a log's header and its records cost no Python work per line and
no memory per line. A line of JSON whitespace alone is refused by DSH's ``JSON.parse`` as an empty
one is, so each is one of a blank run; a run of lines that open no JSON value is one line read; a
run of one finding again and again (``{}``: no seq) is one finding, every line still counted."""

from __future__ import annotations

import io
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_audit.log import iter_lines

CHAT = Path(__file__).resolve().parents[1] / "sample_logs" / "chat" / "session.jsonl"
LINES = 1 << 20
#: ``{}`` lines are still read one by one (their finding is folded, every line counted): an eighth of
#: a million of them proves the one finding and the bounded output at a suite's pace.
OBJECTS = 1 << 17
BUDGET = 5.0  # CPU seconds, for a million lines; each run takes 0.3 (0.3 too for the {} lines)
REFUSED = ("corrupt session log: unparsable committed event (not valid JSON) (hint: no option skips a damaged "
           "record before the last turn/end (--lenient adapts headers only; DSH refuses the log too): repair or "
           "remove the line; `dsh-audit validate FILE` lists every damaged line)")
NOT_JSON = "(every line is one JSON value written by JSON.stringify)"


def run(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The run, and the CPU seconds it took (not wall time: the suite runs on a busy machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([sys.executable, "-m", "dsh_audit", *args], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "COLUMNS": "200"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return result, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


@pytest.mark.parametrize(("unit", "first", "requests_error", "validate_first"), [
    (b"\r\n", 2, f"seq 0: {REFUSED}",
     f"seq 0: DSH104 error: line is not valid JSON (blank, and so are the {LINES - 1} line(s) after it) {NOT_JSON}"),
    (b" \t\n", 2, f"seq 0: {REFUSED}",
     f"seq 0: DSH104 error: line is not valid JSON (blank, and so are the {LINES - 1} line(s) after it) {NOT_JSON}"),
    (b"x\r\n", 2, f"seq 0: {REFUSED}",
     f"seq 0: DSH104 error: line is not valid JSON (and neither are the {LINES - 1} line(s) after it) {NOT_JSON}"),
    (b"{}\n", 2, "seq 0: corrupt session log: seq gap in committed region at line 1 (expected 0, got undefined): "
     "the event has no seq; \"line 1\" is DSH's count of event lines (the header is not one) (hint: no option skips "
     "a record out of seq before the last turn/end (--lenient adapts headers only; DSH refuses the log too): write "
     "each seq as an integer, the record's place 0, 1, 2, …; `dsh-audit validate FILE` lists every seq that is no "
     "integer (DSH111))",
     # the refusal's line stays alone (check drops it as the refusal's twin), the rest fold at line 3
     "seq 0: DSH111 error: event has no seq (write Date.now() milliseconds and the position as integers)"),
])
def test_a_million_junk_lines_before_a_turn_end_cost_no_work_per_line(tmp_path, unit, first, requests_error,
                                                                      validate_first):
    header, records = CHAT.read_bytes().split(b"\n", 1)
    log = tmp_path / "session.jsonl"
    count = OBJECTS if unit == b"{}\n" else LINES
    log.write_bytes(header + b"\n" + unit * count + records)
    # the budget scales with the lines written (a start-up's 0.5 s aside): one DSH111 a line cost 2.6 s of
    # 128 Ki "{}" lines, within a million lines' 5 s, so the {} case could not fail on time alone
    budget = BUDGET if count == LINES else 0.5 + BUDGET * count / LINES
    refused, took = run("requests", str(log))
    assert took < budget
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == f"error: {log}:{first} {requests_error}\n"
    checked, took = run("validate", str(log))
    assert took < budget
    assert checked.returncode == 1
    assert checked.stdout.splitlines()[0] == f"{log}:{first}: {validate_first}"
    if unit == b"{}\n":
        assert checked.stdout.splitlines()[1] == (
            f"{log}:3: seq 1: DSH111 error: event has no seq (and so do the {OBJECTS - 2} line(s) after it) "
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
