"""check's JUnit report is written a testcase at a time (``iter_junit``): the same XML as one
ElementTree indented whole, for a passing log, failing findings on the log and on a request,
control characters, and the captures no log explains."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

from dsh_audit.gate import CheckResult, Finding, Policy, RequestOutline, SessionCheck
from dsh_audit.report import format_junit, iter_junit


def _result() -> CheckResult:
    requests = (RequestOutline(0, "loop", "s<1>", 1, 1, 1), RequestOutline(1, "title", "s<1>"))
    log = Finding("DSH201", "error", "bad \x01 record & <more>", "logs/a.jsonl", line=3, seq=2,
                  session_id="s<1>", fails=True, hint="fix it")
    on_request = Finding("DSH821", "error", "unexplained break", "logs/a.jsonl", seq=9, session_id="s<1>",
                         request=0, fails=True)
    note = Finding("DSH822", "info", "a note", "logs/a.jsonl", session_id="s<1>", request=1)
    loose = Finding("DSH814", "error", "a capture no log explains", "wire.jsonl", fails=True)
    first = SessionCheck(path="logs/a.jsonl", session_id="s<1>", requests=requests,
                         findings=(log, on_request, note))
    second = SessionCheck(path="logs/b.jsonl", session_id=None)
    return CheckResult(sessions=(first, second), findings=(log, on_request, note, loose), policy=Policy())


EXPECTED = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="dsh-audit check" tests="5" failures="3" errors="0" time="0">
  <testsuite name="logs/a.jsonl (s&lt;1&gt;)" file="logs/a.jsonl" tests="3" failures="2" errors="0" skipped="0" time="0">
    <testcase name="log" classname="dsh-audit.logs/a.jsonl" time="0">
      <failure message="DSH201: bad \\u0001 record &amp; &lt;more&gt;" type="DSH201">logs/a.jsonl:3: seq 2: DSH201 error (fails the gate: validation-fail-severity): bad \\u0001 record &amp; &lt;more&gt;
hint: fix it</failure>
    </testcase>
    <testcase name="request 0 (loop turn 1 step 1 attempt 1)" classname="dsh-audit.logs/a.jsonl" time="0">
      <failure message="DSH821: unexplained break" type="DSH821">logs/a.jsonl: seq 9: request 0: DSH821 error (fails the gate: fail-on-unexplained-break): unexplained break</failure>
    </testcase>
    <testcase name="request 1 (title)" classname="dsh-audit.logs/a.jsonl" time="0">
      <system-out>logs/a.jsonl: request 1: DSH822 info: a note</system-out>
    </testcase>
  </testsuite>
  <testsuite name="logs/b.jsonl" file="logs/b.jsonl" tests="1" failures="0" errors="0" skipped="0" time="0">
    <testcase name="log" classname="dsh-audit.logs/b.jsonl" time="0" />
  </testsuite>
  <testsuite name="captures" tests="1" failures="1" errors="0" skipped="0" time="0">
    <testcase name="captures no log explains" classname="dsh-audit.captures" time="0">
      <failure message="DSH814: a capture no log explains" type="DSH814">wire.jsonl: DSH814 error (fails the gate: capture-fail): a capture no log explains</failure>
    </testcase>
  </testsuite>
</testsuites>
"""


def test_junit_is_written_in_pieces_that_make_the_whole_indented_tree() -> None:
    result = _result()
    pieces = list(iter_junit(result))
    assert "".join(pieces) == format_junit(result) == EXPECTED
    assert len(pieces) > 6  # testcases come one at a time, not as one text
    ET.fromstring(EXPECTED.split("\n", 1)[1])  # well-formed


def test_junit_of_no_log_is_an_empty_testsuites() -> None:
    empty = replace(_result(), sessions=(), findings=())
    assert format_junit(empty) == ('<?xml version="1.0" encoding="UTF-8"?>\n'
                                   '<testsuites name="dsh-audit check" tests="0" failures="0" errors="0" time="0" />\n')
