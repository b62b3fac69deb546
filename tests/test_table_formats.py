"""Tables for humans (issue 14, item 4): ``--format table|json|csv|markdown`` on every command that
prints a table, CSV and Markdown that lose nothing and carry no markup or formula from a log, and
a pager for a table on a terminal (``--no-pager``, ``DSH_AUDIT_PAGER``, ``PAGER``)."""

from __future__ import annotations

import ast
import csv
import fcntl
import functools
import inspect
import io
import json
import os
import re
import shlex
from decimal import Decimal
import struct
import subprocess
import sys
import termios
import threading
import unicodedata
from importlib import import_module
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from _terminal import read_terminal
from dsh_audit.cli import _COMMANDS, cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.cli._options import _FORMATS
from dsh_audit.report.terminal import LISTING_FORMATS, Amount, listing, print_table
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
TOOLS = SAMPLES / "tools" / "session.jsonl"
CHANGE = ROOT.parent / "shared" / "corpus" / "live" / "c-change" / "home"
needs_corpus = pytest.mark.skipif(not CHANGE.is_dir(), reason="../shared/corpus is absent")
# Every command that prints a table (also derived from the sources below, so that both must agree).
TABLE_COMMANDS = {"breaks", "cache", "check", "diff", "requests", "sessions", "stats", "usage", "validate"}
HOSTILE_TITLE = "[x](javascript:alert(1)) <img src=x onerror=alert(1)> | *b* _i_ `c` # ~~s~~ \x1b[31mred\x07 &amp;"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.stdout_bytes.decode(), result.stderr  # click's .stdout drops the \r of \r\n


def csv_table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def csv_rows(text: str) -> list[list[str]]:
    """The rows of CSV output without their leading ``table`` column (the table's title)."""
    rows = csv_table(text)
    assert all(row[0] == "table" for row in rows[:1])
    return [row[1:] for row in rows]


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


# -- CSV: the rows --json prints, whole -------------------------------------------------------------

def test_requests_csv_is_the_json_rows() -> None:
    code, out, _ = run("requests", str(TOOLS), "--format", "csv")
    assert code == 0 and out.endswith("\r\n")
    _, json_out, _ = run("requests", str(TOOLS), "--json")
    expected = [["log", "session", "#", "turn/step/attempt", "kind", "header", "msgs", "input", "cache read", "output",
                 "finish"]]
    for r in json_lines(json_out):
        where = "-" if r["turn"] is None else f"{r['turn']}/-" if r["step"] is None else \
            f"{r['turn']}/{r['step']}/{r['attempt']}"
        header = "-" if r["header_seq"] is None else f"{r['header_seq']} {r['header_reason'] or ''}".strip()
        usage = r["usage"] or r["message_usage"] or {}
        finish = (r["finish"] or {}).get("kind", "")
        expected.append([str(TOOLS), "session-sample-tools", str(r["index"]), where, r["kind"], header,
                         str(r["message_count"]),
                         *(str(usage[k]) if k in usage else "" for k in ("inputTokens", "cacheReadTokens", "outputTokens")),
                         finish])  # an unknown count is an empty cell
    assert len(expected) == 5
    assert csv_rows(out) == expected
    titles = {row[0] for row in csv_table(out)[1:]}
    assert titles == {"requests"}  # the log and the session in columns of their own, as `check` names them


@needs_corpus
@pytest.mark.parametrize(("args", "sources"), [
    ((), ["capture"] + ["log"] * 7),  # the title call's usage is the wire.jsonl's found beside the log
    (("--no-capture",), [""] + ["log"] * 7)])  # the log alone: the title call's counts unknown
def test_cache_csv_is_the_json_timeline_and_the_summary_goes_to_stderr(args: tuple[str, ...],
                                                                       sources: list[str]) -> None:
    code, out, err = run("cache", str(CHANGE), *args, "--format", "csv")
    assert code == 0
    _, json_out, _ = run("cache", str(CHANGE), *args, "--json")
    (report,) = json_lines(json_out)
    expected = [["log", "session", "#", "kind", "turn/step/attempt", "prompt", "prompt (estimated)", "reusable",
                 "expected", "actual", "classification", "lost", "usage source"]]
    for v in report["timeline"]:  # a count plain, an unknown one empty, an estimate in its own column
        where = "-" if v["turn"] is None else f"{v['turn']}/{v['step']}/{v['attempt']}"
        cause = f" ({v['cause']})" if v["cause"] and v["cause"] not in v["classification"] else ""
        logged = v["prompt_tokens"] is not None
        expected.append([report["path"], "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824", str(v["index"]), v["kind"], where,
                         str(v["prompt_tokens"]) if logged else "", "" if logged else str(v["counted_tokens"]),
                         str(v["reusable_cache_read"]), str(v["expected_cache_read"]),
                         "" if v["actual_cache_read"] is None else str(v["actual_cache_read"]),
                         v["classification"] + cause, str(sum(v["lost_tokens_by_cause"].values())),
                         "" if v["actual_cache_read"] is None and not logged else v.get("usage_source", "log")])
    assert csv_rows(out) == expected
    assert len(expected) == 9 and [row[-1] for row in expected[1:]] == sources
    assert "breaks 5 by cause: header_change 5" in err  # the summary stays, beside the CSV


@needs_corpus
def test_usage_csv_is_the_json_rows_and_total() -> None:
    code, out, _ = run("usage", str(CHANGE), "--format", "csv")
    assert code == 0
    _, json_out, _ = run("usage", str(CHANGE), "--json")
    (table,) = json_lines(json_out)

    def row(r: dict[str, Any]) -> list[str]:
        t = r["tokens"]
        reusable = r["reusable_cache_read"]
        return [r["key"], str(r["requests"]), str(t["cache_miss"]), "" if reusable is None else str(reusable),
                str(r["lost_tokens"]),
                _usd_csv(r, r["lost_cost_usd"]), str(t["cache_read"]), str(t["cache_write"]), str(t["output"]),
                _usd_csv(r, r["cost_usd"]["total"]),
                *(_usd_csv(r, r["cost_usd"][bucket]) for bucket in ("cache_miss", "cache_read", "cache_write", "output")),
                _usd_csv(r, r["no_cache_cost_usd"]), _usd_csv(r, r["off_peak_cost_usd"]), str(r["unpriced_requests"])]

    # the lost tokens beside the cache misses they are part of; in CSV two plain columns; what each
    # bucket cost after "cost", the JSON's cost_usd (session 41); the reusable reads they are measured from
    # before them, the JSON's reusable_cache_read (session 46)
    assert csv_rows(out) == [
        ["session", "requests", "cache miss", "reusable", "lost tokens", "lost cost", "cache read", "cache write", "output",
         "cost", "cache miss cost", "cache read cost", "cache write cost", "output cost", "no cache", "off-peak",
         "unpriced"],
        *(row(r) for r in table["rows"]), row(table["totals"])]
    # the title call logged no usage: the wire.jsonl found beside the log prices it; each amount the
    # exact one the JSON has, not the table's 4 decimals
    assert csv_rows(out)[-1] == ["total", "8", "21583", "48256", "11968", "0.007635584", "36160", "0", "101", "0.01109977",
                                 "0.01011531", "0.00079552", "0", "0.00018894", "0.03416985", "0.01109977", "0"]
    # the log alone: every amount a request owes is a lower bound (the unpriced count beside)
    code, out, _ = run("usage", str(CHANGE), "--no-capture", "--format", "csv")
    assert (code, csv_rows(out)[-1]) == (0, ["total", "8", "21449", "48256", "11968", "0.007635584", "36160", "0", "96",
                                             "0.01107667", "0.01009521", "0.00079552", "0", "0.00018594",
                                             "0.03414675", "0.01107667", "1"])


def _usd(row: dict[str, Any], value: float | None) -> str:
    """An amount as a table shows it: ``≥$`` (a lower bound) when a request is unpriced, ``$?`` when none was priced."""
    if value is None:
        return "$?"
    return ("≥" if row["unpriced_requests"] else "") + f"${value:.4f}"


def _usd_csv(row: dict[str, Any], value: float | None) -> str:
    """An amount as CSV writes it: the exact number (as the JSON has it) a spreadsheet can sum (a
    lower bound beside the row's unpriced count), empty when unknown."""
    return "" if value is None else format(Decimal(repr(value)), "f")


def test_sessions_csv_is_the_json_rows_with_every_column() -> None:
    env = {"DSH_HOME": str(SAMPLES), "COLUMNS": "40"}  # narrow: the table would drop columns, CSV never
    code, out, _ = run("sessions", "--format", "csv", env=env)
    assert code == 0
    _, json_out, _ = run("sessions", "--json", env=env)
    # the cost exact (as the JSON has it), its unpriced count beside it
    # and the hit ratio itself, from 0 to 1 with every digit (empty when there is none)
    expected = [["when (UTC)", "title", "project", "requests", "tokens", "hit ratio", "breaks", "cost", "unpriced",
                 "first (UTC)", "format", "id"]]
    for s in json_lines(json_out):
        expected.append([s["last_activity_at"][:16].replace("T", " "), s["title"] or "-", s["project"],
                         str(s["requests"]), str(s["tokens"]["total"]) if s["tokens"] else "",
                         _usd_csv(s, s["actual_hit_ratio"]),
                         "-" if s["breaks"] is None else str(s["breaks"]), _usd_csv(s, s["cost_usd"] and s["cost_usd"]["total"]),
                         "" if s["unpriced_requests"] is None else str(s["unpriced_requests"]),
                         s["first_activity_at"][:16].replace("T", " "), f"v{s['format_version']}", s["session_id"]])
    assert len(expected) == 9  # no totals row: CSV holds the JSON's rows (as `requests`; a consumer sums)
    assert csv_rows(out) == expected


def test_csv_guards_formulas_keeps_numbers_and_separates_tables(capsys: pytest.CaptureFixture[str]) -> None:
    with listing("csv"):
        print_table("first", ("a", "b"), [("=1+2", -5), ("+12%", "@SUM(A1)"), ("-x", None), ('q"uote,', "\x1b[2J")])
        print_table("second", ("c",), [("- 3",)])
    out = capsys.readouterr().out
    assert out == ("table,a,b\r\nfirst,'=1+2,-5\r\nfirst,+12%,'@SUM(A1)\r\nfirst,'-x,-\r\n"
                   "first,\"q\"\"uote,\",\\u001b[2J\r\n"
                   "\r\ntable,c\r\nsecond,'- 3\r\n")


def test_the_two_lists_of_formats_agree() -> None:
    assert _FORMATS == LISTING_FORMATS == ("table", "json", "csv", "markdown")


# -- Markdown: inert, whole ---------------------------------------------------------------------------

def _hostile_home(tmp_path: Path) -> Path:
    b = LogBuilder(session_id="session-hostile-md")
    with b.turn("hello"):
        with b.step():
            b.assistant("hi")
    b.title(HOSTILE_TITLE)
    b.write_jsonl(tmp_path / "sessions" / "--proj--" / "session-hostile-md" / "session.jsonl")
    return tmp_path / "sessions"


@pytest.mark.parametrize(("options", "cells"), [
    ((), "| 1 | ? | ? | 0 | \\$? |"),  # no request logged usage: tokens and hit ratio unknown, never "-" nor 0
    (("--no-accounting",), "| 1 | ? | - | - | - |"),  # no accounting: hit ratio, breaks, cost do not apply
], ids=["accounting", "no-accounting"])
def test_sessions_shows_an_unknown_as_question_mark_and_what_does_not_apply_as_dash(tmp_path: Path, options, cells):
    b = LogBuilder(session_id="session-nousage")
    with b.turn("hello"):
        with b.step():
            b.assistant("hi", usage=None)
    b.write_jsonl(tmp_path / "s" / "session.jsonl")
    code, out, _ = run("sessions", str(tmp_path), "--format", "markdown", *options)
    assert code == 0 and out.splitlines()[4:6] == [
        f"| 2027-01-15 08:00 | - | /home/dev/project {cells} 2027-01-15 08:00 | v0 | session-nousage |",
        f"| total |  |  {cells}  |  |  |"]


def test_markdown_of_a_hostile_title_is_inert(tmp_path: Path) -> None:
    code, out, _ = run("sessions", str(_hostile_home(tmp_path)), "--format", "markdown")
    assert code == 0
    assert not [ch for ch in out if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf")]
    lines = out.splitlines()
    assert lines[:4] == ["### 1 session(s), newest first", "",
                         "| when (UTC) | title | project | requests | tokens | hit ratio | breaks | cost | first (UTC) | "
                         "format | id |", "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |"]
    # no request logged its cache reads: the hit ratio is unknown ("?", as `cache` and `stats`), not "-"
    assert lines[5] == "| total |  |  | 2 | 7 | ? | 0 | \\$? |  |  |  |"  # issue 14 B1
    assert lines[4].split(" | ")[1] == ("\\[x\\](javascript:alert(1)) \\<img src=x onerror=alert(1)\\> \\| \\*b\\* "
                                        "\\_i\\_ \\`c\\` \\# \\~\\~s\\~\\~ \\\\u001b\\[31mred\\\\u0007 \\&amp;")
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(out)
    for markup in ("<a", "<img", "<em>", "<strong>", "<code>", "<s>", "<h1>", "<ol", "<ul"):
        assert markup not in html
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html)
    assert len(cells) == 2 * 11 and cells[1] == ("[x](javascript:alert(1)) &lt;img src=x onerror=alert(1)&gt; | *b* _i_ "
                                            "`c` # ~~s~~ \\u001b[31mred\\u0007 &amp;amp;")
    assert "<h3>1 session(s), newest first</h3>" in html


def test_markdown_caption_and_text_lines_stay_text(capsys: pytest.CaptureFixture[str]) -> None:
    from dsh_audit.cli._common import echo

    with listing("markdown"):
        echo("- not a list <b>")
        print_table("# t", ("n", "w"), [(1, "a|b")], caption="1. not a list either")
    out = capsys.readouterr().out
    assert out == ("\\- not a list \\<b\\>  \n\n### \\# t\n\n| n | w |\n| ---: | --- |\n| 1 | a\\|b |\n\n"
                   "1\\. not a list either\n")


# -- usage: --json is --format json -------------------------------------------------------------------

def test_json_and_another_format_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "requests", str(TOOLS), "--json", "--format", "csv"])
    assert run_guarded(cli) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("error: --json and --format csv ask for two formats "
                   "(hint: --json is --format json: give one of them)\n")


def test_format_json_is_json() -> None:
    assert run("requests", str(TOOLS), "--format", "json") == run("requests", str(TOOLS), "--json")
    assert run("requests", str(TOOLS), "--format", "json", "--json")[1].startswith(
        '{"path":' + json.dumps(str(TOOLS)) + ',"index":0,')


def test_check_format_json_is_the_json_report_and_csv_keeps_stdout_for_csv() -> None:
    code, out, _ = run("check", str(TOOLS), "--format", "json")
    assert code in (0, 1)
    assert json.loads(out)["sessions"][0]["path"] == str(TOOLS)
    # JSON lines, as every --json (issue 14 B3): the report --json-report - writes indented, on one line
    dash = run("check", str(TOOLS), "--json-report", "-")[1]
    assert (out.count("\n"), json.loads(out) == json.loads(dash), dash.count("\n") > 20) == (1, True, True)
    code, out, err = run("check", str(TOOLS), "--format", "csv")
    rows = csv_rows(out)
    assert rows[0] == ["status", "log", "session", "requests", "capture", "breaks", "hit ratio", "cost",
                       "unpriced", "findings"]
    assert [r[1] for r in rows[1:]] == [str(TOOLS)]
    assert "PASSED" in err or "FAILED" in err


@functools.cache  # the source does not change during a run: each module is parsed once, not once per path to it
def _calls_and_imports(module: Any) -> tuple[dict[str, set[str]], list[tuple[str, set[str]]]]:
    """The names each function of ``module`` calls, and its relative imports in order: (module, names as bound)."""
    calls: dict[str, set[str]] = {}
    imports: list[tuple[str, set[str]]] = []
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.FunctionDef):
            calls[node.name] = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call)
                                and isinstance(c.func, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            imports.append((node.module, {a.asname or a.name for a in node.names}))
    return calls, imports


def _table_functions(module: Any, seen: frozenset[str] = frozenset()) -> set[str]:
    """The functions of ``module`` that print a table: call print_table, or call one that does
    (its own, or one it imports from a sibling ``dsh_audit.cli`` module that does)."""
    calls, imports = _calls_and_imports(module)
    printing = {"print_table"}
    for name, names in imports:
        if name not in seen and module.__name__.startswith("dsh_audit.cli."):
            sibling = import_module(f"dsh_audit.cli.{name}")
            printing |= names & _table_functions(sibling, seen | {name})
    while True:
        more = {name for name, called in calls.items() if called & printing} - printing
        if not more:
            return printing
        printing |= more


def test_every_command_that_prints_a_table_has_format_and_no_pager() -> None:
    found = set()
    for name in cli.list_commands(click.Context(cli)):
        command = cli.get_command(click.Context(cli), name)
        assert command is not None and command.callback is not None
        callback = inspect.unwrap(command.callback)
        prints = callback.__name__ in _table_functions(import_module(f"dsh_audit.cli.{_COMMANDS[name]}"))
        options = {opt: p for p in command.params if isinstance(p, click.Option) for opt in p.opts}
        flags = set(options) | {flag for option in options.values() for flag in option.secondary_opts}
        has = {"--format", "--pager", "--no-pager"} <= flags
        assert has == prints, name
        if prints:
            found.add(name)
            assert isinstance(options["--format"].type, click.Choice)
            assert list(options["--format"].type.choices) == ["table", "json", "csv", "markdown"], name
            assert "csv (RFC 4180" in (options["--format"].help or "")
            assert "$DSH_AUDIT_PAGER" in (options["--pager"].help or "")
    assert found == TABLE_COMMANDS


# -- the pager ----------------------------------------------------------------------------------------

# A pager that copies what it is given to the file it is named.
PAGER_SCRIPT = ("import shutil, sys\nwith open(sys.argv[1], 'wb') as out:\n"
                "    shutil.copyfileobj(sys.stdin.buffer, out)\n")
WIDTH = 60  # the terminal's: narrower than the table, so that it drops a column (piped output would not)
REQUESTS = ["requests", str(TOOLS)]
MISSING = "/nonexistent/pager -x"
QUITTER = shlex.join([sys.executable, "-c", "import sys; sys.stdin.close()"])
# name: (arguments, DSH_AUDIT_PAGER, PAGER, stdout a terminal); "PAGER" stands for the copying pager.
SCENARIOS: dict[str, tuple[list[str], str | None, str | None, bool]] = {
    "paged": (REQUESTS, "PAGER", "cat", True),
    "no-pager": ([*REQUESTS, "--no-pager"], "PAGER", None, True),
    "empty": (REQUESTS, "", "PAGER", True),
    "piped": (REQUESTS, "PAGER", None, False),
    "quits at once": (REQUESTS, QUITTER, None, True),
    "check markdown": (["check", str(TOOLS), "--format", "markdown"], "PAGER", None, True),
    "check json": (["check", str(TOOLS), "--format", "json"], "PAGER", None, True),
}


def _run_on_terminal(args: list[str], env: dict[str, str], *, tty: bool) -> tuple[int, str, str]:
    """Run dsh-audit with stdout a pseudo-terminal ``WIDTH`` columns wide (else a pipe): exit code,
    what reached stdout (colours dropped), stderr."""
    import pty

    command = [sys.executable, "-m", "dsh_audit", *args]
    if not tty:
        done = subprocess.run(command, capture_output=True, env=env, timeout=60)
        return done.returncode, done.stdout.decode(), done.stderr.decode()
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, WIDTH, 0, 0))
    with subprocess.Popen(command, stdout=child, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          env=env) as process:
        os.close(child)
        err: list[bytes] = []
        reader = threading.Thread(target=lambda: err.append(process.stderr.read() if process.stderr else b""))
        reader.start()
        written = read_terminal(main)
        reader.join()
        code = process.wait(60)
    os.close(main)
    return code, ANSI.sub("", written.decode().replace("\r\n", "\n")), err[0].decode()


@pytest.fixture(scope="module")
def terminal_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str, str | None]]:
    """Every scenario, run at once (real processes, real pagers): exit code, what reached the
    terminal, stderr, and what the copying pager received (None: it never ran)."""
    from concurrent.futures import ThreadPoolExecutor

    folder = tmp_path_factory.mktemp("pager")
    script = folder / "pager.py"
    script.write_text(PAGER_SCRIPT, encoding="utf-8")

    def one(name: str) -> tuple[int, str, str, str | None]:
        args, own, general, tty = SCENARIOS[name]
        paged = folder / f"{name}.txt"
        pager = shlex.join([sys.executable, str(script), str(paged)])
        env = {k: v for k, v in os.environ.items() if k not in ("DSH_AUDIT_PAGER", "PAGER", "COLUMNS", "LINES")}
        for key, value in (("DSH_AUDIT_PAGER", own), ("PAGER", general)):
            if value is not None:
                env[key] = pager if value == "PAGER" else value
        code, shown, err = _run_on_terminal(args, env, tty=tty)
        return code, shown, err, paged.read_text(encoding="utf-8") if paged.exists() else None

    with ThreadPoolExecutor(len(SCENARIOS)) as pool:
        return dict(zip(SCENARIOS, pool.map(one, SCENARIOS)))


def test_a_table_on_a_terminal_goes_through_the_pager_at_the_terminals_width(
        terminal_runs: dict[str, tuple[int, str, str, str | None]]) -> None:
    code, shown, err, paged = terminal_runs["paged"]
    assert (code, shown, err) == (0, "", "")
    assert paged is not None and paged == terminal_runs["no-pager"][1]  # the same table as unpaged, as wide
    assert max(len(line) for line in paged.splitlines()) <= WIDTH
    assert "session session-sample-tools" in paged and "narrow terminal: finish not shown" in paged
    assert "3  1/4/1  loop  5 initial     8    260         256      11" in paged


def test_check_pages_its_markdown_summary_but_not_its_json_report(
        terminal_runs: dict[str, tuple[int, str, str, str | None]]) -> None:
    """``check --format markdown`` is a listing like any other (paged on a terminal);
    ``--format json`` is a machine format, printed directly, as every command's JSON is."""
    code, shown, err, paged = terminal_runs["check markdown"]
    assert (code, shown, err) == (0, "", "")
    assert paged is not None and paged.startswith("## dsh-audit check: ✅ passed: no breaks\n\n1 log(s), 4 request(s); ")
    code, shown, err, paged = terminal_runs["check json"]
    assert (code, err, paged) == (0, "", None)
    assert json.loads(shown)["passed"] is True


def test_no_pager_prints_directly(terminal_runs: dict[str, tuple[int, str, str, str | None]]) -> None:
    code, shown, err, paged = terminal_runs["no-pager"]
    assert (code, err, paged) == (0, "", None)
    assert "session session-sample-tools" in shown and "3  1/4/1  loop  5 initial     8    260         256      11" in shown


@pytest.mark.parametrize("name", ["empty", "piped"])
def test_an_empty_pager_and_piped_stdout_never_page(terminal_runs: dict[str, tuple[int, str, str, str | None]],
                                                    name: str) -> None:
    code, shown, err, paged = terminal_runs[name]
    assert (code, err, paged) == (0, "", None)
    assert "session session-sample-tools" in shown and "1/4/1" in shown


@pytest.mark.parametrize(("own", "general", "chosen"), [
    (None, None, (["less"], False)),
    (None, "most -s", (["most", "-s"], True)),
    ("less -S", "most", (["less", "-S"], True)),
    ("cat", "most", None),
    ("", "most", None),
    (None, "", None),
])
def test_the_pager_is_dsh_audit_pager_else_pager_else_less(monkeypatch: pytest.MonkeyPatch, own: str | None,
                                                          general: str | None, chosen: Any) -> None:
    from dsh_audit.report._listing import pager_command

    for name, value in (("DSH_AUDIT_PAGER", own), ("PAGER", general)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert pager_command() == chosen


def test_only_a_table_or_markdown_on_a_terminal_is_paged() -> None:
    from dsh_audit.report._listing import Listing

    assert [Listing(fmt, pager=True).page for fmt in LISTING_FORMATS] == [True, False, False, True]
    assert not Listing("table", pager=False).page


def test_a_pager_that_quits_at_once_is_no_failure(terminal_runs: dict[str, tuple[int, str, str, str | None]]) -> None:
    assert terminal_runs["quits at once"][:3] == (0, "", "")


def test_a_pager_that_cannot_start_is_a_warning_and_the_table_is_printed(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from dsh_audit.report import _listing

    monkeypatch.setenv("DSH_AUDIT_PAGER", MISSING)
    state = _listing.Listing("table", pager=True)  # as on a terminal
    token = _listing._CURRENT.set(state)
    try:
        print_table("t", ("a",), [("x",)])
    finally:
        _listing._CURRENT.reset(token)
    out, err = capsys.readouterr()
    assert state.process is None and "x" in out
    assert err == (f"warning: cannot start the pager {MISSING!r}: No such file or directory; printing "
                   "directly (hint: set DSH_AUDIT_PAGER or PAGER to a pager, or pass --no-pager)\n")


def test_csv_reads_money_only_from_amounts(capsys: pytest.CaptureFixture[str]) -> None:
    """A title that reads like an amount stays the log's text; an :class:`Amount` is its exact value
    (empty when unknown), whatever the table shows."""
    with listing("csv"):
        print_table("sessions", ("title", "cost", "no cache", "breaks $", "unpriced"),
                    [("$5", Amount(0.01234, "≥$0.0123"), Amount(None, "$?"), Amount(0.5, "$0.5000"), "1"),
                     ("$?", Amount(0.001, "$0.0010"), Amount(0.002, "$0.0020"), Amount(0.000021, "$0.000021"), "")])
    assert capsys.readouterr().out == ("table,title,cost,no cache,breaks $,unpriced\r\n"
                                       "sessions,$5,0.01234,,0.5,1\r\n"
                                       "sessions,$?,0.001,0.002,0.000021,\r\n")
