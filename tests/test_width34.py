"""Tables and lines at any width; check's short table form; "baselined" on the HTML page (issues 14/15).

- Fuzz round 14, D10: piped with ``COLUMNS=1`` the tables printed "…" and blank lines, plain
  lines one character a line; at 5 and 20 dates and ids were cut (``2…``, ``202…1:02``). Now a
  terminal narrower than 40 columns (the narrowest layout: the widest header beside a date or a
  short id) gets the 40-column lines, whole, for the terminal to wrap.
- A table with a short form (``print_table(short=...)``) tries it before it leaves out a column
  that has a value: check's columns ``hit ratio`` and ``cost`` stay at 80 columns, its ids cut at
  their end to a unique prefix (``id_prefixes``, as every command cuts them since session 40).
- The HTML page's finding lines say "baselined", as check's Markdown summary does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from dsh_audit.cli import cli
from dsh_audit.report.terminal import id_prefixes, print_table, rows_fit
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "sample_logs" / "sessions"
CHANGE = SESSIONS / "--home-dev-projects-demo--" / "session-sample-change"
UUID_ID = "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"


def _run(columns: int, *args: str) -> str:
    """``dsh-audit ARGS`` with stdout piped and ``COLUMNS`` set: its stdout (exit 0)."""
    result = CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": str(columns)},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


# Each command, and values it must show whole at every width.
COMMANDS = {
    "requests": (("requests", CHANGE), ["session-sample-change", "193", "962", "3/1/1", "35 change"]),
    "breaks": (("breaks", CHANGE), ["header_change", "reasoningEffort", "tools", "63"]),
    "check": (("check", CHANGE), ["session-sample-change", "11.7%", "$0.0011", "PASSED:", "(policy: defaults)"]),
    "explain": (("explain", CHANGE, "2"), ["session-sample-change:", "header_change", "reasoningEffort:",
                                           "227", "seq 35 request/header"]),
    # the cache misses (962 in all) are a token column, left out at 40 columns before the money (session 38);
    # the id its unique prefix with "…" before a column with a value goes, as every table cuts one (session 40)
    "usage": (("usage", CHANGE, "--by", "request"), ["session-sample-c… #4", "$0.0011"]),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_below_40_columns_the_40_column_lines_every_value_whole(command: str) -> None:
    args, values = COMMANDS[command]
    floor = _run(40, *args)
    # but a log's path, whole on its line (to be copied: the terminal wraps it), also as a
    # finding's first word ("PATH:")
    assert max(cell_len(line) for line in floor.splitlines()
               if " " in line.strip() or not line.endswith((".jsonl", ".zstd", ".jsonl:", ".zstd:"))) <= 40
    for columns in (1, 5, 20):
        assert _run(columns, *args) == floor, columns
    for columns, out in ((40, floor), (80, _run(80, *args))):
        for value in values:
            assert value in out, (columns, value)
    assert "\n2\n" not in floor and "…\n" not in floor  # no value cut to a character or to nothing


def test_sessions_at_one_column_keeps_dates_ids_and_amounts() -> None:
    out = _run(1, "sessions", SESSIONS)
    lines = [line.rstrip() for line in out.splitlines()]
    assert lines[0] == "8 session(s), newest first"
    # a block holds the essential fields alone (session 46): labels as wide as "when (UTC)", the lesser ones out
    assert lines[1:7] == ["when (UTC)  2027-01-15 08:00", "title       -", "requests    4", "breaks      0",
                          "cost        $0.0003", "id          session-sample-tools"]
    assert {"id          session-sample-change", "cost        $0.0011", "breaks      4"} <= set(lines)
    assert [line for line in lines if line.startswith(("hit ratio ", "first (UTC) ", "format ", "tokens ", "project "))] == []
    assert out == _run(40, "sessions", SESSIONS)


def test_a_heading_cuts_a_session_id_at_its_end(tmp_path: Path) -> None:
    """A heading's ``session ID`` line too long for the floor keeps the id's start (a prefix
    `explain` takes), not its two ends."""
    builder = LogBuilder(session_id=UUID_ID)
    with builder.turn("hi"), builder.step():
        builder.assistant("hello", usage={"inputTokens": 100, "outputTokens": 2, "cacheReadTokens": 0})
    log = builder.write_jsonl(tmp_path / "s" / "session.jsonl")
    assert _run(20, "requests", log).splitlines()[1] == "session session-86ef2d28-6e7a-43ae-ad66…"
    assert _run(80, "requests", log).splitlines()[1] == f"session {UUID_ID}"


# -- check's table keeps its numbers ----------------------------------------------------------

CHECK = ["status", "log", "session", "requests", "capture", "breaks", "hit ratio", "cost", "findings"]
DROPPABLE = ["log", "capture", "hit ratio", "cost"]
SHORT = {"requests": "reqs", "hit ratio": "hit"}
IDS = ["s-caf\u00e9-\u2192-session-of-a-long-name", "session-sample-compaction", "session-sample-change",
       "session-sample-chat"]


def _check_rows(prefixes: bool) -> list[list[object]]:
    """check's rows of ``IDS``, each id its unique prefix (:func:`id_prefixes`) with ``prefixes``."""
    names = id_prefixes(IDS) if prefixes else {whole: whole for whole in IDS}
    return [["ok", f"s/{at}/session.jsonl", names[session], 3, "none", 1, f"{10 + at}.5%", "\u2265$0.0001", 1]
            for at, session in enumerate(IDS)]


def _check_table(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], columns: int, *,
                 short: dict[str, str] | None = None, prefixes: bool = False) -> list[str]:
    """check's columns (``_check.py``) at ``columns``, with the short form ``short`` and the ids'
    unique ``prefixes``."""
    monkeypatch.setenv("COLUMNS", str(columns))
    print_table("dsh-audit check", CHECK, _check_rows(prefixes), droppable=DROPPABLE, short=short)
    lines = capsys.readouterr().out.splitlines()
    assert max(cell_len(line) for line in lines) <= columns
    return [line.rstrip() for line in lines]


def test_check_at_80_columns_keeps_hit_ratio_and_cost_with_short_headers_and_ids_cut_at_their_end(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert _check_table(monkeypatch, capsys, 80)[-1] == (
        "narrow terminal: log, capture, hit ratio not shown (widen it, or use --json)")
    lines = _check_table(monkeypatch, capsys, 80, short=SHORT, prefixes=True)
    assert lines == [
        "dsh-audit check",
        "status  session               reqs  capture  breaks    hit      cost  findings",
        "─" * 78,
        "ok      s-café-→…                3  none          1  10.5%  ≥$0.0001         1",
        "ok      session-sample-co…       3  none          1  11.5%  ≥$0.0001         1",
        "ok      session-sample-chan…     3  none          1  12.5%  ≥$0.0001         1",
        "ok      session-sample-chat      3  none          1  13.5%  ≥$0.0001         1",
        "narrow terminal: log not shown (widen it, or use --json)"]
    # every id shown is a prefix of its own id only: one `explain` takes
    for line, whole in zip(lines[3:7], IDS):
        shown = line.split()[1].removesuffix("…")
        assert [i for i in IDS if i.startswith(shown)] == [whole]


def test_narrower_the_short_headers_come_before_a_column_with_values_goes(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``capture`` (lesser than the ratio and the cost) goes first, with the short headers; whole
    ids (no prefixes) cost the ratio and the cost at 70 columns."""
    assert _check_table(monkeypatch, capsys, 70, short=SHORT, prefixes=True) == [
        "dsh-audit check",
        "status  session               reqs  breaks    hit      cost  findings",
        "─" * 69,
        "ok      s-café-→…                3       1  10.5%  ≥$0.0001         1",
        "ok      session-sample-co…       3       1  11.5%  ≥$0.0001         1",
        "ok      session-sample-chan…     3       1  12.5%  ≥$0.0001         1",
        "ok      session-sample-chat      3       1  13.5%  ≥$0.0001         1",
        "narrow terminal: log, capture not shown (widen it, or use --json)"]
    lines = _check_table(monkeypatch, capsys, 70, short=SHORT)
    assert lines[1] == "status  session                          requests  breaks  findings"
    assert lines[-2:] == ["narrow terminal: log, capture, hit ratio, cost not shown (widen it, or",
                          "use --json)"]


def test_rows_fit_reads_the_short_form_as_print_table_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole ids fit once the headers are short, and no narrower (a command then shortens them)."""
    rows = [["ok", "s/session.jsonl", "session-sample-change", 3, "none", 1, "10.5%", "$0.0001", 1]]
    monkeypatch.setenv("COLUMNS", "78")
    assert not rows_fit(CHECK, rows, droppable=DROPPABLE, spare=["log"])
    assert rows_fit(CHECK, rows, droppable=DROPPABLE, spare=["log"], short=SHORT)
    monkeypatch.setenv("COLUMNS", "77")
    assert not rows_fit(CHECK, rows, droppable=DROPPABLE, spare=["log"], short=SHORT)


# -- the HTML page says "baselined" -------------------------------------------------------------

def test_the_page_data_marks_a_baselined_finding_and_its_line_says_so(tmp_path: Path) -> None:
    baseline, page, markdown = tmp_path / "b.json", tmp_path / "r.html", tmp_path / "s.md"
    _run(80, "check", CHANGE, "--json-report", baseline)
    _run(80, "report", CHANGE, "--baseline", baseline, "-o", page)
    _run(80, "check", CHANGE, "--baseline", baseline, "--markdown", markdown)
    html = page.read_text("utf-8")
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', html, re.S)
    assert blob is not None
    findings = json.loads(blob.group(1))["sessions"][0]["findings"]
    assert [(f["rule"], f["severity"], f["fails"], f.get("baselined")) for f in findings] == [
        ("DSH810", "info", False, True)]
    # the line the page draws of it: "RULE SEVERITY (baselined): ...", as the Markdown summary words it
    assert '+(f.fails?" (fails)":f.baselined?" (baselined)":"")+": "+' in html
    assert "- **DSH810** info (baselined): no capture" in markdown.read_text("utf-8")
