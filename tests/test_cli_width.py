"""Every line of the human output fits COLUMNS, no header word or number is split, and a negative
request index counts from the end (issue 14)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.report._tables import BOXED_FROM
from dsh_audit.report.terminal import fit_lines, middle_cut, print_table

from _golden import CORPUS

SESSION = CORPUS / "live" / "c-change" / "home" / "sessions" / "--home-dev-dsh-runs-a-c-change-ws--" / \
    "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"
LOG = SESSION / "session.jsonl.zstd"
# The path as given from the corpus' parent folder, so that the cut path line is the same wherever
# ../shared is checked out.
RELATIVE = str(LOG.relative_to(CORPUS.parent))
needs_corpus = pytest.mark.skipif(not LOG.is_file(), reason="../shared/corpus is absent")


def invoke(*args: str, columns: int) -> tuple[int, list[str]]:
    """The real CLI with its stdout piped and COLUMNS set: exit code and stdout lines, trailing blanks cut."""
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": str(columns)}, catch_exceptions=False)
    lines = result.stdout.splitlines()
    # but a log's path, whole on its line (to be copied; the terminal wraps it)
    assert max(cell_len(line) for line in lines if not _a_path(line)) <= columns, "\n".join(lines)
    return result.exit_code, [line.rstrip() for line in lines]


def _a_path(line: str) -> bool:
    """A heading's line that is one log path, never cut: a terminal narrower than it wraps it."""
    return " " not in line and line.endswith((".jsonl", ".zstd"))


def guarded(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Through the real CLI edge: errors become one line on stderr and an exit code."""
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    out = capsys.readouterr()
    return code, out.out, out.err


# --- 80 and 60 columns on the corpus session -----------------------------------------------------

@needs_corpus
def test_cache_at_80_columns_summary_wraps_at_words_and_headers_stay_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS.parent)
    code, lines = invoke("cache", RELATIVE, "--no-capture", columns=80)  # the log alone (a capture found prices)
    assert code == 0
    assert lines[0] == RELATIVE  # whole, to be copied (the terminal wraps it)
    # the title call logged no usage: every amount is a sum over the priced requests, a lower bound
    assert lines[1:16] == [
        "session session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824",
        "requests 8 (7 with cache reads and prompt logged); prompt tokens of those 57609",
        "cache read actual 36160 (62.8%) vs expected 17024 (29.6%)",
        "breaks 5 by cause: header_change 5",
        "tokens lost (of 48256 reusable): header_change 11968; cost lost $0.0076 (all",
        "  causes: breaks and other shortfalls)",
        "session cost ≥$0.0111 (cache miss ≥$0.0101, cache read ≥$0.0008, cache write",
        "  ≥$0.0000, output ≥$0.0002)",
        "with no cache ≥$0.0341; all off-peak ≥$0.0111; breaks cost $0.0076 (the part of",
        "  the cost lost that breaks caused); 1 request(s) unpriced (≥$: a sum over the",
        "  priced ones only) (list prices, check your contract)",
        "tokens: estimate-utf8-bytes/4",
        "rules: deepseek unit 128 min 64 ttl 10800s",
        "  (api-docs.deepseek.com/guides/kv_cache, 2026-08-13)",
        "timeline"]
    assert lines[16:21] == [  # "turn/step/attempt" never split over lines: its short form, said below
        "#  kind   t/s/a  prompt  expected  actual  classification                   lost",
        "─" * 80,
        "0  title  -        ~140         0       ?  usage_unknown",
        "1  loop   1/1/1    7963         0       0  as_expected",
        "2  loop   2/1/1    7993         0       0  break_explained (header_change)  7936"]
    # a row a line: "reusable" left out (and named) before a classification wraps (session 43)
    assert lines[-3:] == ["7  loop   6/1/1    7796       512    4800  break_explained (header_change)  2880",
                          "t/s/a: turn/step/attempt", "narrow terminal: reusable not shown (widen it, or use --json)"]


@needs_corpus
def test_cache_at_60_columns_leaves_out_lesser_columns_before_a_block_per_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before session 43: one block of lines per request. Now "reusable", "prompt" and "kind" go
    (named below: kind too, as at 70 columns, fuzz 32 D5), and only then a classification too long
    for what is left wraps, at its space."""
    monkeypatch.chdir(CORPUS.parent)
    code, lines = invoke("cache", RELATIVE, columns=60)
    assert code == 0
    assert lines[:2] == [RELATIVE, "session session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"]
    start = lines.index("timeline")
    assert lines[start + 1:start + 6] == [
        "#  t/s/a  expected  actual  classification              lost", "─" * 60,
        "0  -             0      0*  as_expected", "1  1/1/1         0       0  as_expected",
        "2  2/1/1         0       0  break_explained             7936"]
    assert lines[-4:] == ["the request and judged its cache", "t/s/a: turn/step/attempt",
                          "narrow terminal: reusable, prompt, kind not shown (widen it,", "or use --json)"]


@needs_corpus
def test_breaks_at_80_columns_leaves_out_first_divergence_and_relation_to_keep_a_dotted_name_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "adapterDefaults.reasoningEffort" was folded at its dot ("adapterDefaults." /
    "reasoningEffort"), which reads as two field names; now "relation" is left out for it."""
    monkeypatch.chdir(CORPUS.parent)
    _, lines = invoke("breaks", RELATIVE, columns=80)
    assert lines == [
        RELATIVE,
        "session session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824",
        " " * 72 + "evidence",
        "#  vs  verdict  cause          fields                                       seqs",
        "─" * 80,
        "2   1  break    header_change  model, system                                  30",
        "3   2  break    header_change  reasoningEffort,                               51",
        " " * 31 + "adapterDefaults.reasoningEffort",
        "4   3  break    header_change  system                                         76",
        "6   5  break    header_change  system                                        121",
        "7   6  break    header_change  system, tools                                 135",
        "narrow terminal: first divergence, relation not shown (widen it, or use --json)"]


@needs_corpus
def test_requests_at_80_columns_is_compact_with_a_row_a_line():
    """The boxed table would wrap "10 initial" under every row; the compact one holds each row on one
    line, "turn/step/attempt" in its short form before a header ("cache read") wraps."""
    code, lines = invoke("requests", str(LOG), columns=80)
    assert code == 0
    assert lines[2:6] == [
        "#  t/s/a  kind   header      msgs  input  cache read  output  finish",
        "─" * 72,
        "0  -      title  -              1   134*          0*      5*",  # the capture's (session 41)
        "1  1/1/1  loop   10 initial     2   7963           0       3  stop"]
    assert "4  4/1/1  loop   76 change      9   1910        6784      13  tool-calls" in lines
    assert lines[-1] == "t/s/a: turn/step/attempt"


@needs_corpus
def test_requests_at_60_columns_is_compact_without_finish():
    """Without finish, every row holds on one line ("10 initial" unwrapped), "turn/step/attempt" in its
    short form (never split over lines), which a caption explains."""
    code, lines = invoke("requests", str(LOG), columns=60)
    assert code == 0
    assert lines[2:7] == [
        "#  t/s/a  kind   header      msgs  input  cache read  output",
        "─" * 60,
        "0  -      title  -              1   134*          0*      5*",  # the capture's (session 41)
        "1  1/1/1  loop   10 initial     2   7963           0       3",
        "2  2/1/1  loop   30 change      4   7993           0      18"]
    assert lines[-3:] == ["the request", "t/s/a: turn/step/attempt",
                          "narrow terminal: finish not shown (widen it, or use --json)"]


@needs_corpus
def test_sessions_at_80_columns_keeps_the_date_the_title_and_a_short_id_whole():
    """Before: "2026-12-02 11:02", "Fake session title" and the id were each split over lines.
    Session 38: the title gives way (cut at its end) before a number column ("hit ratio") is left out."""
    code, lines = invoke("sessions", str(LOG), "--no-capture", columns=80)  # the log alone (a capture found prices)
    assert code == 0
    assert lines == [
        "1 session(s), newest first",
        "when (UTC)        title          reqs    hit  breaks      cost  id",
        "─" * 80,
        "2026-12-02 11:02  Fake session…     8  62.8%       5  ≥$0.0111  session-da27503b",
        "total                               8  62.8%       5  ≥$0.0111",  # issue 14 B1
        "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)",
        "narrow terminal: format, first (UTC), tokens, project not shown (widen it, or",
        "use --json)"]


@needs_corpus
def test_usage_at_80_columns_keeps_every_number_and_id_whole():
    code, lines = invoke("usage", str(LOG), "--no-capture", columns=80)  # the log alone (a capture found prices)
    assert code == 0
    # the title call logged no usage: lower bounds, and the unpriced column is never left out then;
    # the lost tokens stand beside the cache misses they are part of, their cost exact (the title
    # call that could not be priced lost nothing); a lesser column (output) is left out before a
    # cell is wrapped; "requests" is kept (session 38: the tokens go before it); the reusable cache
    # reads the lost tokens are measured from stand beside them (session 46: lost <= reusable - read)
    assert lines == [
        'usage by session',
        '                            cache            lost tokens',
        'session           requests   miss  reusable  (cost)               cost  unpriced',
        '────────────────────────────────────────────────────────────────────────────────',
        'session-da27503b         8  21449     48256  11968 ($0.0076)  ≥$0.0111         1',
        'total                    8  21449     48256  11968 ($0.0076)  ≥$0.0111         1',
        '1 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
        'your contract; ≥$: a lower bound (unpriced requests left out), $?: no request',
        'priced; tokens: sums over the 7 request(s) with usage logged (?: none logged);',
        'session ids: shortest unique prefix (--json for whole ids)',
        'narrow terminal: cache write, off-peak, output, cache read, no cache not shown',
        '(widen it, or use --json)']


@needs_corpus
@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("command", ["cache", "breaks", "requests", "sessions", "usage"])
def test_every_listing_fits(command: str, columns: int):
    code, lines = invoke(command, str(LOG), columns=columns)  # invoke asserts the width
    assert code in (0, 1) and lines


@needs_corpus
@pytest.mark.parametrize("columns", [80, 60])
def test_explain_wraps_at_words_with_a_hanging_indent(columns: int):
    code, lines = invoke("explain", str(LOG), "-1", columns=columns)
    assert code == 0
    if columns == 80:
        assert lines[:7] == [
            "request 7 (loop, turn 6 step 1 attempt 1) of session",
            "  session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824: break, cause header_change",
            "  compared with request 6 (step); 14 leading message(s) shared",
            "  prompt changed at system (header_change: system, tools)",
            "  cost: 2880 token(s) it should have read from the cache and did not (of 7680",
            "    reusable, read 4800) (as `cache` counts them), $0.0018 over cache reads at",
            "    its rate"]
        assert lines[-4:] == [
            '  seq 135 request/header {"reason":"change",',
            '    "config":{"provider":"deepseek-official","model":"deepseek-v4-pro",',
            '    "reasoningEffort":"max","maxTokens":256000},',
            '    "adapterDefaults":{"maxTokens":true},"system_chars":3800,"tools":23}']


# --- negative request indexes --------------------------------------------------------------------

@needs_corpus
def test_show_minus_one_is_the_last_request_before_or_after_the_path():
    runner = CliRunner()
    last = runner.invoke(cli, ["show", str(LOG), "7", "--compact"], catch_exceptions=False)
    assert last.exit_code == 0 and last.output.startswith('{"index":7,')
    for args in (["show", str(LOG), "-1", "--compact"], ["show", "-1", str(LOG), "--compact"],
                 ["show", "--compact", str(LOG), "-1"], ["show", str(LOG), "--", "-1"]):
        result = runner.invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, args
        assert result.output == (last.output if "--compact" in args else
                                 runner.invoke(cli, ["show", str(LOG), "7"]).output), args
    before = runner.invoke(cli, ["show", str(LOG), "-2", "--compact"], catch_exceptions=False)
    assert before.output.startswith('{"index":6,')
    first = runner.invoke(cli, ["show", str(LOG), "-8", "--compact"], catch_exceptions=False)
    assert first.output.startswith('{"index":0,')


@needs_corpus
def test_explain_and_render_take_a_negative_index():
    runner = CliRunner()
    assert runner.invoke(cli, ["explain", str(LOG), "-2", "--json"]).output == \
        runner.invoke(cli, ["explain", str(LOG), "6", "--json"]).output
    last = runner.invoke(cli, ["render", str(LOG), "7"])
    assert last.exit_code == 0 and last.stdout_bytes.startswith(b'{"model":"deepseek-v4-pro"')
    assert runner.invoke(cli, ["render", "-1", str(LOG)]).stdout_bytes == last.stdout_bytes


@needs_corpus
@pytest.mark.parametrize("command", ["show", "explain", "render"])
@pytest.mark.parametrize("index", ["-9", "8"])
def test_out_of_range_index_is_one_line_naming_the_valid_range(monkeypatch, capsys, command: str, index: str):
    code, out, err = guarded(monkeypatch, capsys, command, str(LOG), index)
    assert (code, out) == (2, "")
    assert err == (f"error: {LOG}: request {index} does not exist: the log has 8 request(s) (hint: valid indexes "
                   "are 0 to 7, or -8 to -1 from the end; run `dsh-audit requests LOG` to see the indexes)\n")


@needs_corpus
def test_a_negative_option_value_stays_the_options(monkeypatch, capsys):
    code, out, err = guarded(monkeypatch, capsys, "show", str(LOG), "--max-version", "-1", "-1")
    assert (code, out) == (2, "")
    assert "Invalid value for '--max-version': -1 is not in the range 0<=x<=4." in err


def test_help_documents_negative_indexes():
    for command in ("show", "explain", "render"):
        text = CliRunner().invoke(cli, [command, "--help"], env={"COLUMNS": "100"}).output
        assert "a negative INDEX counts from the end (-1 is" in " ".join(text.split()).replace("( -1", "(-1"), command


# --- the layouts, without the corpus -------------------------------------------------------------

def _table(monkeypatch, capsys, columns: int) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    print_table("t", ["name", "turn/step/try", "tokens", "cache read", "cache write"],
                [["alpha beta gamma", "1/1/1", 13613605, 7936, 12345678], ["x", "-", None, 0, 1]],
                droppable=["turn/step/try"])
    lines = capsys.readouterr().out.splitlines()
    assert max(cell_len(line) for line in lines) <= columns
    return [line.rstrip() for line in lines]


# The layouts are tried at 40 columns and more: a narrower terminal gets the 40-column lines
# (tests/test_width34.py).

def test_wide_table_is_boxed_on_one_line_a_row(monkeypatch, capsys):
    assert _table(monkeypatch, capsys, BOXED_FROM) == [  # boxed from 100 columns, compact below
        "t",
        "┏━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━┓",
        "┃ name             ┃ turn/step/try ┃   tokens ┃ cache read ┃ cache write ┃",
        "┡━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━┩",
        "│ alpha beta gamma │ 1/1/1         │ 13613605 │       7936 │    12345678 │",
        "│ x                │ -             │        - │          0 │           1 │",
        "└──────────────────┴───────────────┴──────────┴────────────┴─────────────┘"]


def test_narrower_is_compact_with_a_row_a_line_and_headers_wrapped_at_spaces(monkeypatch, capsys):
    """Compact below 100 columns: "alpha beta gamma" on one line, the headers wrapping instead, at a
    space only: "turn/step/try" is never split (narrower, it is left out first)."""
    assert _table(monkeypatch, capsys, 65) == [
        "t",
        "                                               cache",
        "name              turn/step/try    tokens       read  cache write",
        "─" * 65,
        "alpha beta gamma  1/1/1          13613605       7936     12345678",
        "x                 -                     -          0            1"]
    assert _table(monkeypatch, capsys, 50) == [  # compact below 100 columns (BOXED_FROM)
        "t",
        "                                cache",
        "name                tokens       read  cache write",
        "─" * 50,
        "alpha beta gamma  13613605       7936     12345678",
        "x                        -          0            1",
        "narrow terminal: turn/step/try not shown (widen",
        "it, or use --json)"]


def test_then_a_droppable_column_left_out_then_text_wrapped(monkeypatch, capsys):
    assert _table(monkeypatch, capsys, 45) == [
        "t",
        "                             cache      cache",
        "name                tokens    read      write",
        "─" * 45,
        "alpha beta gamma  13613605    7936   12345678",
        "x                        -       0          1",
        "narrow terminal: turn/step/try not shown",
        "(widen it, or use --json)"]
    # no layout of whole cells fits: text wraps down to its words, the header "turn/step/try" whole
    # or its column left out (it is droppable)
    assert _table(monkeypatch, capsys, 40) == [
        "t",
        "                       cache       cache",
        "name        tokens      read       write",
        "─" * 40,
        "alpha     13613605      7936    12345678",
        "beta",
        "gamma",
        "x                -         0           1",
        "narrow terminal: turn/step/try not shown",
        "(widen it, or use --json)"]


def test_then_one_block_a_row_every_column_kept(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "40")
    print_table("t", ["name", "reusable", "expected", "actual", "lost", "cache read"],
                [["alpha beta", 13613605, 7936, 0, "~146", 12345678], ["x", 1, 2, 3, None, 4]])
    assert [line.rstrip() for line in capsys.readouterr().out.splitlines()] == [
        "t", "name        alpha beta", "reusable    13613605", "expected    7936", "actual      0", "lost        ~146",
        "cache read  12345678", "",
        "name        x", "reusable    1", "expected    2", "actual      3", "lost        -", "cache read  4"]


def test_fit_lines_and_middle_cut():
    assert fit_lines("  seq 7 x/y {\"a\":1,\"bb\":\"cccccccccc\"}", 22) == [
        '  seq 7 x/y {"a":1,', '    "bb":"cccccccccc"}']
    assert fit_lines("numbers 13613605 and 12,345 stay whole", 12) == [
        "numbers", "  13613605", "  and 12,345", "  stay whole"]
    assert fit_lines("esc \x1b[31m", 80) == ["esc \\u001b[31m"]
    assert middle_cut("/a/very/long/path/to/session.jsonl", 16) == "/a/very…on.jsonl"
    assert middle_cut("short", 16) == "short"
