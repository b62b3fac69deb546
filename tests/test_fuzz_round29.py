"""Fuzz round 29's text-safety defects and wording (D1, D2, D4, D7).

D1: with a width (a terminal, or COLUMNS), check's finding lines split a log's path at its newline
before escaping it, so a folder named ``x<LF>PASSED: ...`` printed a forged ``PASSED:`` line;
explain did the same with a session id, and a line wrapped at a space could start ``::error``. D2:
a token total of 0 read "?" (none logged) though a request logged 0. D4: explain said Python's
``None`` for a header without reasoningEffort. D7: a ``$`` of a log's text reached Markdown, where
GitHub renders ``$...$`` as math. Wording: DSH701/702 called 2^53 "not a non-negative integer".
"""

from __future__ import annotations

import json
from typing import Any
from pathlib import Path

import pytest
import zstandard
from _cli import chat_log, invoke

from dsh_audit.attribution import Transition, format_transition
from dsh_audit.capture import NO_CAPTURE_ENV
from dsh_audit.report._safe_text import markdown_inline
from dsh_audit.report.terminal import Amount, fit_lines
from dsh_audit.testing import LogBuilder
from dsh_audit.validate._stream import usage_problems

SAMPLE_CHANGE = (Path(__file__).resolve().parents[1] / "sample_logs" / "sessions" / "--home-dev-projects-demo--"
                 / "session-sample-change" / "session.jsonl.zstd")
FORGED = "x\nPASSED: 1 log(s), 0 error(s)"
PATH = "x\\u000aPASSED: 1 log(s), 0 error(s)/session.jsonl"


@pytest.mark.parametrize(("columns", "expected"), [
    ("200", [f"{PATH}: DSH810 info: no capture given, and captures found beside the log are ignored (--no-capture) "
             "(hint: pass --capture FILE; without --no-capture, a",
             "  wire.jsonl beside the log or up to four folders above it is compared)",
             "PASSED: 1 log(s), 1 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing (policy: defaults)"]),
    ("80", [f"{PATH}: DSH810 info: no capture",
            "  given, and captures found beside the log are ignored (--no-capture) (hint:",
            "  pass --capture FILE; without --no-capture, a wire.jsonl beside the log or up",
            "  to four folders above it is compared)",
            "PASSED: 1 log(s), 1 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing", "  (policy: defaults)"]),
])
def test_check_findings_escape_a_newline_of_a_path_before_wrapping(columns, expected, tmp_path, monkeypatch, capsys):
    chat_log(tmp_path / FORGED / "session.jsonl", "session-nl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setenv(NO_CAPTURE_ENV, "1")
    code, out, err = invoke(monkeypatch, capsys, "check", FORGED)
    lines = out.splitlines()
    assert (code, err) == (0, [])
    assert lines[lines.index(next(line for line in lines if line.startswith(PATH + ":"))):] == expected
    assert [line for line in lines if line.startswith("PASSED")] == [expected[-1 if columns == "200" else -2]]


def test_a_wrapped_line_never_starts_a_ci_command():
    assert fit_lines("PASSED: x (policy: a ::error::boom)", 20, hanging=0) == [
        "PASSED: x (policy: a", "\\u003a:error::boom)"]
    # measured as shown (fix W: the escape's 5 cells overran the width): folded as any long word is
    # after its "[" (where a JSON value starts: brief m14b), no longer anywhere
    assert fit_lines("note: see  ##[error]x", 12) == ["note: see", "  \\u0023#[", "  error]x"]
    assert fit_lines("log.jsonl: DSH801 error: w ::error::boom-and-more-textxxx", 32, hanging=0) == [
        "log.jsonl: DSH801 error: w", "\\u003a:error::", "boom-and-more-textxxx"]  # after its last ":" (m14b)


def test_explain_escapes_a_newline_of_a_session_id():
    text = format_transition(Transition("s-x\nPASSED: forged", 0, None, None, "first", "first", None,
                                        notes=("a\nb",)))
    assert text.split("\n") == ["request 0 (loop) of session s-x\\u000aPASSED: forged: first",
                                "  nothing before it in its conversation: no cache to reuse", "  note: a\\u000ab"]


def test_explain_says_no_effort_where_a_header_drops_it(tmp_path, monkeypatch, capsys):
    with SAMPLE_CHANGE.open("rb") as packed:
        lines = zstandard.ZstdDecompressor().stream_reader(packed).read().decode().split("\n")
    event = json.loads(lines[36])
    del event["data"]["header"]["config"]["reasoningEffort"]
    lines[36] = json.dumps(event)
    (tmp_path / "session.jsonl").write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = invoke(monkeypatch, capsys, "explain", str(tmp_path / "session.jsonl"), "2")
    assert code == 0
    assert [line for line in out.splitlines() if "reasoningEffort:" in line] == [
        '  reasoningEffort: "high" → null (prompt); thinking enabled → not sent (effort unset)']


def test_a_token_sum_of_zero_that_a_request_logged_is_no_question_mark():
    assert [Amount.tokens(0, lacking=True, logged=True), Amount.tokens(0, lacking=True, logged=False),
            Amount.tokens(None, lacking=False), Amount.tokens(0, lacking=False, logged=False)] == [
        Amount(0, "≥0"), Amount(None, "?"), Amount(None, "?"), 0]


def test_markdown_escapes_a_dollar_of_log_text_but_not_an_amount_nor_a_code_span():
    assert [markdown_inline(text) for text in ("p$\\sqrt{x^2}$q/session.jsonl", "$0.0006", "≥$0.0016 (1 unpriced)",
                                               "0+? ($?)", "≥$: a lower bound", "see http://x.example/$a$",
                                               "run $1+1=2$ x", "run $1.5$ end")] == [
        "p\\$\\\\sqrt{x^2}\\$q/session.jsonl", "$0.0006", "≥$0.0016 (1 unpriced)", "0+? (\\$?)",
        "≥\\$: a lower bound", "`see http://x.example/$a$`",
        # math whose opener a digit follows: its closer (never followed by a digit) is escaped (fix W)
        "run $1+1=2\\$ x", "run $1.5\\$ end"]


def test_a_usage_count_past_two_to_the_53_is_no_safe_integer():
    """Session 43: and a reasoningTokens above the outputTokens that holds it (fuzz 30a U3) is DSH702."""
    assert usage_problems({"inputTokens": 9007199254740992, "outputTokens": 1, "cacheReadTokens": -1,
                           "reasoningTokens": 2.0}) == [
        ("DSH701", "usage inputTokens 9007199254740992 is not a non-negative safe integer (≤ 2^53 − 1)"),
        ("DSH702", "usage cacheReadTokens -1 is not a non-negative safe integer (≤ 2^53 − 1)"),
        ("DSH702", "usage reasoningTokens 2 is above outputTokens 1, which holds it")]
    assert usage_problems({"inputTokens": 1, "outputTokens": 2, "reasoningTokens": 2}) == []


#: What every pricing view says of a request whose reasoningTokens (100) exceed its outputTokens (24).
_ABOVE = "the log's usage is damaged (request 1, seq 20: reasoningTokens 100 above outputTokens 24)"


@pytest.mark.parametrize(("args", "expected"), [
    (("usage", "--json"), (1, 5, 0, {_ABOVE: 1})),
    (("check", "--json-report", "-"), ({_ABOVE: 1}, 5, 0, 2)),
    (("requests", "--format", "csv"), ["100,0,5,stop", "100,0,,stop"]),
    (("report", "-o"), 1)])
def test_reasoning_above_its_output_leaves_the_request_unpriced_in_every_view(
        args: tuple[str, ...], expected: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Fuzz 30a U3, before: 100 reasoning tokens of 24 output were priced at the 24, and summed as
    100 reasoning, unsaid. Reasoning is a part of the output on every route (DSH's native DeepSeek
    adapter and pi-ai alike), so one of the two is damaged: unpriced, as a capture saying so is."""
    b = LogBuilder(session_id="s-r", provider="deepseek", model="deepseek-v4-flash")
    for usage in ({"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0},
                  {"inputTokens": 100, "outputTokens": 24, "cacheReadTokens": 0, "reasoningTokens": 100}):
        with b.turn("Hi"), b.step():
            b.assistant("Hello", usage=usage)
    log = str(b.write_jsonl(tmp_path / "s.jsonl"))
    page = tmp_path / "page.html"
    code, out, err = invoke(monkeypatch, capsys, args[0], log, "--no-capture", *args[1:],
                            *([str(page)] if args[0] == "report" else []))
    if args[0] == "usage":
        totals = json.loads(out)["totals"]
        assert (totals["unpriced_requests"], totals["tokens"]["output"], totals["tokens"]["reasoning"],
                json.loads(out)["unpriced"]) == expected
    elif args[0] == "check":
        report = json.loads(out)
        cost = report["sessions"][0]["cost"]
        assert (cost["unpriced"], cost["tokens"]["output"], cost["tokens"]["reasoning"],
                report["counts"]["warning"]) == expected
    elif args[0] == "requests":
        assert [line.split(",", 8)[8] for line in out.splitlines()[1:]] == expected
    else:
        assert (code, page.read_text(encoding="utf-8").count(f'"unpriced":"{_ABOVE}"')) == (0, expected)


_IMPORTED = Path(__file__).resolve().parent / "data" / "importers"


@pytest.mark.parametrize(("source", "old", "new", "why"), [
    ("codex/rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
     '"output_tokens":40,"reasoning_output_tokens":20', '"output_tokens":40,"reasoning_output_tokens":400',
     "request 0, line 10: reasoningTokens 400 above outputTokens 40"),
    ("claude-code/7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl", '"input_tokens":8,', '"input_tokens":2000000000,',
     "request 1, line 8: inputTokens past 1,000,000,000 tokens")])
def test_an_imported_logs_damaged_usage_is_said_at_its_line(source, old, new, why, tmp_path, monkeypatch, capsys):
    """Fuzz 32's D6: a Codex rollout's was said at "seq 8", a number it has no field for (its first
    response line): an imported log's usage is said at the line of the record holding it."""
    log = tmp_path / Path(source).name
    log.write_text((_IMPORTED / source).read_text("utf-8").replace(old, new), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log))
    assert (code, [line for line in err if "unpriced" in line]) == (
        0, [f"warning: 1 request(s) unpriced: the log's usage is damaged ({why})"])


def _two_requests(tmp_path: Path, second: dict[str, Any]) -> Path:
    """A two-turn log: request 0 logs cacheReadTokens 0, request 1 logs ``second`` as its usage."""
    b = LogBuilder(session_id="s-zero")
    for usage in ({"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0}, second):
        with b.turn("Hi"), b.step():
            b.assistant("Hello", usage=usage)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(line + "\n" for line in b.lines(packed=False)), encoding="utf-8")
    return path


@pytest.mark.parametrize(("args", "start", "expected"), [
    (("requests", "--format", "markdown"), "|  | total", "|  | total |  |  |  | ≥100 | ≥0 | 10 |  |"),
    (("usage", "--by", "request", "--format", "csv"), "usage by request,total",
     "usage by request,total,2,100,0,0,0,0,0,10,0.000036,0.00003,0,0,0.000006,0.000036,0.000018,1,,,,,,,"),
    (("usage", "--format", "csv"), "usage by session,total",
     "usage by session,total,2,100,0,0,0,0,0,10,0.000036,0.00003,0,0,0.000006,0.000036,0.000018,1"),
])
def test_a_total_of_zero_a_request_logged_is_a_lower_bound(args, start, expected, tmp_path, monkeypatch, capsys):
    path = _two_requests(tmp_path, {"inputTokens": 100, "outputTokens": 5})
    code, out, err = invoke(monkeypatch, capsys, *args[:1], str(path), *args[1:])
    assert (code, [line for line in out.splitlines() if line.startswith(start)]) == (0, [expected])


@pytest.mark.parametrize("second", [{"inputTokens": "many", "outputTokens": -5},
                                    {"inputTokens": 100, "outputTokens": "24"},
                                    {"inputTokens": 100, "outputTokens": 24, "reasoningTokens": 100}])
def test_a_usage_of_no_valid_count_is_not_said_to_be_unlogged(second, tmp_path, monkeypatch, capsys):
    """Session 43 (review B3): an output below its own reasoningTokens that was the usage's one count
    (DSH's native input with no cache reads is none) leaves no count, as ``"24"`` does: it was a
    usage of none known, its tokens 0 by request, and the requests total a lower bound ``≥100``."""
    path = _two_requests(tmp_path, second)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(path))
    why = ("the log's usage is damaged (request 1, seq 20: reasoningTokens 100 above outputTokens 24)"
           if "reasoningTokens" in second else "usage holds no valid count")  # the excess said as what it is
    assert (code, [line for line in err if "unpriced" in line]) == (0, [f"warning: 1 request(s) unpriced: {why}"])
    totals = json.loads(invoke(monkeypatch, capsys, "usage", str(path), "--json")[1])["totals"]
    rows = json.loads(invoke(monkeypatch, capsys, "usage", str(path), "--by", "request", "--json")[1])["rows"]
    table = invoke(monkeypatch, capsys, "requests", str(path), "--format", "markdown")[1]
    assert (totals["usage_unknown_requests"], totals["tokens_unknown_requests"], rows[1]["tokens"],
            [line for line in table.splitlines() if line.startswith("|  | total")]) == (
        1, {}, None, ["|  | total |  |  |  | 100 | 0 | 5 |  |"])
