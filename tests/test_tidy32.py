"""Fixes of a review of session 32's usage changes (issues 13/14).

- ``usage --by request`` at 80, 140 and 150 columns shows session ids shortened, each row on one
  line: whether whole ids fit is measured as :func:`print_table` lays the table out
  (:func:`dsh_audit.report.terminal.rows_fit`, the one helper of ``usage``, ``stats``, ``check``
  and ``sessions``), whole headers first, never a header's longest word.
- The HTML page's totals are ``usage --json``'s for the same logs, a log that could not be read
  included: ``logs_failed``, ``cost_complete`` false and ``≥$`` amounts (:meth:`UsageTable.to_json`).
- ``usage --json`` of an empty window names the price table, as a run with requests does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.cache import usage_table
from dsh_audit.report.terminal import print_table, rows_fit
from dsh_audit.testing import LogBuilder

LIVE = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live"
C_CHANGE = LIVE / "c-change" / "session-logs" / "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824.jsonl"
A_CHAT = LIVE / "a-chat" / "session-logs" / "session-2b096b61-0a34-4da6-abec-4e87161c2c0b.jsonl"
needs_corpus = pytest.mark.skipif(not (C_CHANGE.is_file() and A_CHAT.is_file()), reason="../shared/corpus is absent")

T0 = 1_796_112_000_000  # 2026-12-01T08:00:00Z

# each row's cells; "reusable" beside the lost tokens (session 46)
ROWS = [("session-da27503b #0", "1", "?", "?", "", "?", "?", "?", "$?", "$?", "$?", "1"),
        ("session-da27503b #1", "1", "7963", "0", "", "0", "0", "3", "$0.0012", "$0.0012", "$0.0012", ""),
        ("session-da27503b #2", "1", "7993", "7936", "7936 ($0.0051)", "0", "0", "18", "$0.0053", "$0.0053",
         "$0.0053", ""),
        ("session-da27503b #3", "1", "103", "7936", "", "7936", "0", "14", "$0.0003", "$0.0053", "$0.0003", ""),
        ("session-da27503b #4", "1", "1910", "7936", "1152 ($0.0007)", "6784", "0", "13", "$0.0014",
         "$0.0058", "$0.0014", ""),
        ("session-da27503b #5", "1", "178", "8576", "", "8640", "0", "25", "$0.0004", "$0.0059", "$0.0004", ""),
        ("session-da27503b #6", "1", "306", "8192", "", "8000", "0", "2", "$0.0004", "$0.0055", "$0.0004", ""),
        ("session-da27503b #7", "1", "2996", "7680", "2880 ($0.0018)", "4800", "0", "21", "$0.0021",
         "$0.0052", "$0.0021", ""),
        ("session-2b096b61 #0", "1", "?", "?", "", "?", "?", "?", "$?", "$?", "$?", "1"),
        ("session-2b096b61 #1", "1", "7969", "0", "", "0", "0", "29", "$0.0012", "$0.0012", "$0.0012", ""),
        ("session-2b096b61 #2", "1", "91", "7936", "", "7936", "0", "18", "$0.000048", "$0.0012", "$0.000048", ""),
        ("total", "11", "29509", "56192", "11968 ($0.0076)", "44096", "0", "143", "≥$0.0123", "≥$0.0366",
         "≥$0.0123", "2")]
CAPTION = ("2 session(s); USD per 1,000,000 tokens from the price table (packaged); check your contract; ≥$: a lower "
           "bound (unpriced requests left out), $?: no request priced; tokens: sums over the 9 request(s) with usage "
           "logged (?: none logged); session ids: shortest unique prefix (--json for whole ids)")


def _boxed(widths: list[int]) -> list[str]:
    """The rows of the boxed table at ``widths`` (the key and the lost tokens left-aligned)."""
    return ["│ " + " │ ".join(cell.ljust(w) if at in (0, 4) else cell.rjust(w)
                              for at, (cell, w) in enumerate(zip(row, widths))) + " │" for row in ROWS]


def _caption(width: int) -> list[str]:
    """:data:`CAPTION` as rich wraps it at ``width``."""
    lines: list[str] = []
    for word in CAPTION.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


@needs_corpus
def test_usage_by_request_shortens_ids_and_keeps_each_row_on_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    def usage(columns: int) -> list[str]:
        monkeypatch.setenv("COLUMNS", str(columns))
        code, out, err = invoke(monkeypatch, capsys, "usage", str(C_CHANGE), str(A_CHAT), "--by", "request",
                                "--no-capture")  # the logs alone (a capture found prices: test_found38)
        assert (code, err) == (0, ["warning: 2 request(s) unpriced: usage not logged"])
        lines = [line.rstrip() for line in out.splitlines()]
        assert max(len(line) for line in out.splitlines()) <= columns
        return lines

    # 80: ids shortened, then the columns with no value and the rest left out (the caption says which)
    assert usage(80) == [
        'usage by request',
        '                        cache',
        'request                  miss  reusable  lost tokens (cost)       cost  unpriced',
        "─" * 80,
        'session-da27503b #0         ?         ?                             $?         1',
        'session-da27503b #1      7963         0                        $0.0012',
        'session-da27503b #2      7993      7936  7936 ($0.0051)        $0.0053',
        'session-da27503b #3       103      7936                        $0.0003',
        'session-da27503b #4      1910      7936  1152 ($0.0007)        $0.0014',
        'session-da27503b #5       178      8576                        $0.0004',
        'session-da27503b #6       306      8192                        $0.0004',
        'session-da27503b #7      2996      7680  2880 ($0.0018)        $0.0021',
        'session-2b096b61 #0         ?         ?                             $?         1',
        'session-2b096b61 #1      7969         0                        $0.0012',
        'session-2b096b61 #2        91      7936                      $0.000048',
        'total                   29509     56192  11968 ($0.0076)      ≥$0.0123         2',
        '2 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
        'your contract; ≥$: a lower bound (unpriced requests left out), $?: no request',
        'priced; tokens: sums over the 9 request(s) with usage logged (?: none logged);',
        'session ids: shortest unique prefix (--json for whole ids)',
        'narrow terminal: cache write, off-peak, requests, output, cache read, no cache',
        'not shown (widen it, or use --json)',
    ]
    # 150 (140 before "reusable", session 46): the ids shortened before cache write is left out; every
    # row one line, headers wrapped
    widths = [19, 8, 7, 8, 17, 7, 7, 6, 9, 8, 9, 8]
    assert usage(150) == [
        "usage by request",
        "┏" + "┳".join("━" * (w + 2) for w in widths) + "┓",
        "┃                     ┃          ┃   cache ┃          ┃ lost tokens       ┃   cache ┃   cache ┃        ┃"
        "           ┃          ┃           ┃          ┃",
        "┃ request             ┃ requests ┃    miss ┃ reusable ┃ (cost)            ┃    read ┃   write ┃ output ┃"
        "      cost ┃ no cache ┃  off-peak ┃ unpriced ┃",
        "┡" + "╇".join("━" * (w + 2) for w in widths) + "┩",
        *_boxed(widths),
        "└" + "┴".join("─" * (w + 2) for w in widths) + "┘",
        *_caption(150)]
    # 161 (150 before): every header whole too; before the fix every row wrapped its "#N" onto a line of its own
    widths = [19, 8, 10, 8, 18, 10, 11, 6, 9, 8, 9, 8]
    assert usage(161) == [
        "usage by request",
        "┏" + "┳".join("━" * (w + 2) for w in widths) + "┓",
        "┃ request             ┃ requests ┃ cache miss ┃ reusable ┃ lost tokens (cost) ┃ cache read ┃ cache write ┃"
        " output ┃      cost ┃ no cache ┃  off-peak ┃ unpriced ┃",
        "┡" + "╇".join("━" * (w + 2) for w in widths) + "┩",
        *_boxed(widths),
        "└" + "┴".join("─" * (w + 2) for w in widths) + "┘",
        *_caption(161)]


def test_rows_fit_measures_the_table_print_table_draws(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    uuid = "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"  # 44 cells
    path = "/home/dev/.dsh/sessions/--p--/s/session.jsonl"  # 45 cells
    columns = ("session", "lost tokens (cost)", "path")
    rows = [(uuid, "7936 ($0.0051)", path)]
    results = {}
    for width in (107, 112, 114, 117):
        monkeypatch.setenv("COLUMNS", str(width))
        results[width] = (rows_fit(columns, rows), rows_fit(columns, rows, droppable=("path",)),
                          rows_fit(columns, rows, wrapping=("path",)),
                          rows_fit(columns, rows, droppable=("path",), spare=()))
    # 112: the compact table, every cell whole (44 + 18 + 45 + 2 gaps of 2, whole headers); 114:
    # the boxed table fits with the headers' words whole, so print_table draws it, the path
    # narrowed and wrapped; 117: the boxed table with every header whole; 107: the path cut.
    # A column that may go (droppable; not when spare says it may not) or wrap need not be whole.
    assert results == {107: (False, True, True, False), 112: (True, True, True, True),
                       114: (False, True, True, False), 117: (True, True, True, True)}
    # what print_table draws at 114: the path on two lines
    monkeypatch.setenv("COLUMNS", "114")
    print_table("t", columns, rows)
    drawn = capsys.readouterr().out
    assert path not in drawn and drawn.startswith("t\n┏") and uuid in drawn
    monkeypatch.setenv("COLUMNS", "60")
    # the id itself does not fit: never, whatever may go
    assert rows_fit(columns, [(uuid * 2, "1", "p")], droppable=("path",)) is False


def _log(path: Path, session_id: str, *, drop: int | None = None) -> Path:
    """Two priced deepseek-v4-flash requests; ``drop``: a line left out (a seq gap: unreadable)."""
    b = LogBuilder(session_id=session_id, created_at=T0, model="deepseek-v4-flash", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for at, line in enumerate(b.lines(packed=False)) if at != drop), "utf-8")
    return path


def test_the_page_totals_are_usage_json_with_a_log_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    logs = [str(_log(tmp_path / "good" / "session.jsonl", "s-good")),
            str(_log(tmp_path / "gap" / "session.jsonl", "s-gap", drop=3))]
    usage = {}
    for by in ("model", "day"):
        code, out, _ = invoke(monkeypatch, capsys, "usage", *logs, "--by", by, "--json")
        assert code == 2
        usage[by] = json.loads(out)
    page = tmp_path / "team.html"
    code, _, _ = invoke(monkeypatch, capsys, "report", *logs, "-o", str(page))
    # a log DSH refuses (a seq gap): exit 1, as check's DSH801 (2 is for one that cannot be read); the page
    # made all the same
    assert code == 1 and page.is_file()
    found = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page.read_text("utf-8"), re.S)
    assert found is not None
    totals = json.loads(found.group(1))["totals"]
    shown = totals["total"].pop("shown")
    for row in (*totals["by_model"], *totals["by_day"]):
        del row["shown"]
    assert (totals["sessions"], totals["logs_failed"]) == (usage["model"]["sessions"], usage["model"]["logs_failed"]) \
        == (1, 1)
    assert totals["total"] == usage["model"]["totals"] == usage["day"]["totals"]
    assert (totals["total"]["cost_complete"], totals["total"]["unpriced_requests"]) == (False, 0)
    assert totals["by_model"] == usage["model"]["rows"] and totals["by_day"] == usage["day"]["rows"]
    assert totals["unpriced"] == usage["model"]["unpriced"] == {}
    cost = totals["total"]["cost_usd"]["total"]
    assert shown["cost"] == f"≥${cost:.4f}" and shown["lost"].startswith("≥$")
    # the table's total says the same lower bound
    code, out, _ = invoke(monkeypatch, capsys, "usage", *logs, "--by", "model")
    assert code == 2 and f"≥${cost:.4f}" in out


def test_an_empty_window_names_the_price_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    log = str(_log(tmp_path / "good" / "session.jsonl", "s-good"))
    code, out, _ = invoke(monkeypatch, capsys, "usage", log, "--json")
    assert code == 0
    whole = json.loads(out)
    code, out, err = invoke(monkeypatch, capsys, "usage", log, "--since", "2030-01-01", "--json")
    assert code == 0 and len(err) == 1 and err[0].startswith("note: --since 2030-01-01T00:00:00Z: 1 of 1 log(s)")
    empty = json.loads(out)
    assert empty["prices"] == whole["prices"] and empty["prices"]["currency"] == "USD"
    assert (empty["sessions"], empty["logs_failed"], empty["rows"], empty["totals"]["tokens"]["total"],
            empty["totals"]["cost_usd"]["total"], empty["totals"]["cost_complete"]) == (0, 0, [], 0, 0, True)
    # the table alone: no ledger, no price table named, unless given
    assert usage_table([]).prices == {} and usage_table([], prices={"currency": "USD"}).prices == {"currency": "USD"}
