"""A long table is written without rich's per-cell layout (issue 11): ``_draw_table`` writes the
rows itself when rich would wrap, fold, crop and style nothing in them (a text cell comes wrapped
at its spaces by ``_cell_text``), and what it writes is byte for byte what rich writes
(``_draw_table_rich``, the reference), boxed and compact, piped, on a stdout that is not UTF-8 and
on a colour terminal; any other table is drawn by rich as before. Both end no line with a space
(issue 14: rich pads a compact table's last column and every caption to the table's width)."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from dsh_audit.report import _console, _table_draw, terminal
from dsh_audit.report import _tables as layout
from dsh_audit.report.terminal import print_table

from _properties import examples

Draw = Callable[..., None]

FAST: Draw = _table_draw._draw_table
RICH: Draw = _table_draw._draw_table_rich  # the reference: rich draws every cell


@contextmanager
def _stdout(kind: str, width: int) -> Iterator[Callable[[], bytes]]:
    """stdout as ``kind`` (``utf-8`` or ``ascii``: a pipe in that encoding; ``terminal``: a colour
    terminal ``width`` columns wide) with COLUMNS set to ``width``; yields what was written."""
    with mock.patch.dict(os.environ, {"COLUMNS": str(width)}):
        if kind == "terminal":
            screen = io.StringIO()

            def console() -> Console:
                return Console(file=screen, force_terminal=True, color_system="truecolor", width=width,
                               highlight=False, soft_wrap=False)

            # print_table and the width of its title (output_width) both draw on this console
            with mock.patch.object(layout, "stdout_console", console), \
                    mock.patch.object(_console, "stdout_console", console), redirect_stdout(io.StringIO()):
                yield lambda: screen.getvalue().encode()
        else:
            raw = io.BytesIO()
            pipe = io.TextIOWrapper(raw, encoding=kind, newline="\n", write_through=True)
            with redirect_stdout(pipe):
                yield raw.getvalue


def _printed(draw: Draw, kind: str, width: int, *args: Any, **options: Any) -> bytes:
    """What ``print_table(*args, **options)`` writes with ``draw`` as its ``_draw_table``."""
    with _stdout(kind, width) as written, mock.patch.object(layout, "_draw_table", draw):
        print_table(*args, **options)
        return written()


def _outcome(draw: Draw, kind: str, width: int, *args: Any, **options: Any) -> bytes | str:
    """:func:`_printed`, or the error it raised (the one-block-per-row layout, drawn by rich alone,
    can fail to write an ASCII stdout at a very narrow width: the same error either way)."""
    try:
        return _printed(draw, kind, width, *args, **options)
    except UnicodeEncodeError as error:
        return repr(error)


class _Spy:
    """``_draw_table_rich`` counting its calls: the tables the fast path left to rich."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args: Any, **options: Any) -> None:
        self.calls += 1
        RICH(*args, **options)


@pytest.fixture
def rich_draws(monkeypatch: pytest.MonkeyPatch) -> _Spy:
    spy = _Spy()
    monkeypatch.setattr(_table_draw, "_draw_table_rich", spy)
    return spy


@pytest.fixture
def boxed() -> Iterator[None]:
    """Boxed tables at any width (BOXED_FROM 0): these tests draw boxes on narrow terminals."""
    with mock.patch.object(layout, "BOXED_FROM", 0):
        yield


def _both(kind: str, width: int, *args: Any, **options: Any) -> tuple[str, str]:
    """What print_table writes, through the fast path and drawn by rich, as text."""
    encoding = "ascii" if kind == "ascii" else "utf-8"
    return (_printed(FAST, kind, width, *args, **options).decode(encoding),
            _printed(RICH, kind, width, *args, **options).decode(encoding))


# --- exact tables ----------------------------------------------------------------------------------

COLUMNS = ["#", "turn/step/try", "kind", "model", "cache read", "cost $"]
ROWS = [[0, "1/1/1", "loop", "deepseek-chat", "27,584", "$0.0042"],
        [1, "1/2/1", "", "深度求索 模型", "-", "$0.0100"],
        [12, "2/1/1", "compact", None, "?", "≥$0.0007"]]


def test_a_boxed_table_is_written_by_the_fast_path_as_rich_draws_it(rich_draws: _Spy, boxed: None) -> None:
    fast, reference = _both("utf-8", 80, "log.jsonl  session s-1", COLUMNS, ROWS, caption="prices: DeepSeek list")
    assert rich_draws.calls == 0
    assert fast == reference == (
        "log.jsonl  session s-1\n"
        "┏━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━┓\n"
        "┃  # ┃ turn/step/try ┃ kind    ┃ model         ┃ cache read ┃   cost $ ┃\n"
        "┡━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━┩\n"
        "│  0 │ 1/1/1         │ loop    │ deepseek-chat │     27,584 │  $0.0042 │\n"
        "│  1 │ 1/2/1         │         │ 深度求索 模型 │          - │  $0.0100 │\n"
        "│ 12 │ 2/1/1         │ compact │ -             │          ? │ ≥$0.0007 │\n"
        "└────┴───────────────┴─────────┴───────────────┴────────────┴──────────┘\n"
        "prices: DeepSeek list\n")


def test_a_compact_table_is_written_by_the_fast_path_as_rich_draws_it(rich_draws: _Spy) -> None:
    fast, reference = _both("utf-8", 60, "log.jsonl", COLUMNS, ROWS, caption="prices: DeepSeek list")
    assert rich_draws.calls == 0
    assert fast == reference == (
        "log.jsonl\n"
        "                                             cache\n"
        " #  turn/step/try  kind     model             read    cost $\n"
        "────────────────────────────────────────────────────────────\n"
        " 0  1/1/1          loop     deepseek-chat   27,584   $0.0042\n"
        " 1  1/2/1                   深度求索 模型        -   $0.0100\n"
        "12  2/1/1          compact  -                    ?  ≥$0.0007\n"
        "prices: DeepSeek list\n")


def test_a_table_of_no_rows_and_one_with_a_narrow_terminal_note(rich_draws: _Spy, boxed: None) -> None:
    fast, reference = _both("utf-8", 30, "", ["name", "value", "empty"], [], caption=None)
    assert rich_draws.calls == 0
    assert fast == reference == (
        "┏━━━━━━┳━━━━━━━┳━━━━━━━┓\n"
        "┃ name ┃ value ┃ empty ┃\n"
        "┡━━━━━━╇━━━━━━━╇━━━━━━━┩\n"
        "└──────┴───────┴───────┘\n")
    fast, reference = _both("utf-8", 40, "t", ["name", "value", "empty"],
                            [["alpha beta gamma delta", "12345678901", "-"], ["b", "2", ""]], caption="two rows")
    assert rich_draws.calls == 0
    assert fast == reference == (
        "t\n"
        "┏━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┓\n"
        "┃ name                   ┃       value ┃\n"
        "┡━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━┩\n"
        "│ alpha beta gamma delta │ 12345678901 │\n"
        "│ b                      │           2 │\n"
        "└────────────────────────┴─────────────┘\n"
        "two rows\n"
        "narrow terminal: empty (no values) not\n"
        "shown (widen it, or use --json)\n")


def test_a_stdout_that_is_not_utf8_gets_ascii_borders_and_escapes(rich_draws: _Spy, boxed: None) -> None:
    fast, reference = _both("ascii", 80, "t", ["name", "n"], [["caf\u00e9", 1], ["漢", 22]])
    assert rich_draws.calls == 0
    assert fast == reference == (
        "t\n"
        "+----------------+\n"
        "| name      |  n |\n"
        "|-----------+----|\n"
        "| caf\\u00e9 |  1 |\n"
        "| \\u6f22    | 22 |\n"
        "+----------------+\n")


def test_on_a_colour_terminal_only_the_header_is_styled(rich_draws: _Spy, boxed: None) -> None:
    """rich styles the header (``table.header``, bold), not the caption (a ``Text``: rich gives a
    str caption ``table.caption``), rows or borders; it draws the header, the fast path the rows."""
    fast, reference = _both("terminal", 80, "t", ["name", "n"], [["a", 1], ["b", 22]], caption="c")
    assert rich_draws.calls == 0
    assert fast == reference == (
        "t\n"
        "┏━━━━━━┳━━━━┓\n"
        "┃\x1b[1m \x1b[0m\x1b[1mname\x1b[0m\x1b[1m \x1b[0m┃\x1b[1m \x1b[0m\x1b[1m n\x1b[0m\x1b[1m \x1b[0m┃\n"
        "┡━━━━━━╇━━━━┩\n"
        "│ a    │  1 │\n"
        "│ b    │ 22 │\n"
        "└──────┴────┘\n"
        "c\n")


def test_a_row_with_a_wrapped_cell_is_as_high_as_its_lines(rich_draws: _Spy) -> None:
    rows = [["a cell wrapped over lines", 1, "x"], ["b", 22, "moved to /home/me/sessions/session-1/session.jsonl"]]
    with mock.patch.object(layout, "BOXED_FROM", 48):  # boxed from 48 columns: this test draws boxes
        fast, reference = _both("utf-8", 48, "t", ["text", "n", "note"], rows)
    assert rich_draws.calls == 0
    assert fast == reference == (
        "t\n"
        "┏━━━━━━━━━━━━┳━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓\n"
        "┃ text       ┃  n ┃ note                       ┃\n"
        "┡━━━━━━━━━━━━╇━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩\n"
        "│ a cell     │  1 │ x                          │\n"
        "│ wrapped    │    │                            │\n"
        "│ over lines │    │                            │\n"
        "│ b          │ 22 │ moved to                   │\n"
        "│            │    │ /home/me/ses…session.jsonl │\n"
        "└────────────┴────┴────────────────────────────┘\n")
    with mock.patch.object(layout, "BOXED_FROM", 48):
        fast, reference = _both("utf-8", 40, "t", ["text", "n", "note"], rows)
    assert rich_draws.calls == 0
    assert fast == reference == (
        "t\n"
        "text        n  note\n"
        "────────────────────────────────────────\n"
        "a cell      1  x\n"
        "wrapped\n"
        "over\n"
        "lines\n"
        "b          22  moved to\n"
        "               /home/me/ses…ession.jsonl\n")


@pytest.mark.parametrize(("cell", "by_rich"), [("tab\tbed", 0), ("no\u00a0break", 1), ("x\ufe0f", 1)])
def test_a_cell_that_may_not_be_plain_lines_is_drawn_by_rich(rich_draws: _Spy, cell: str, by_rich: int) -> None:
    """A space other than U+0020 (rich's ``\\s``), U+FE0F: rich draws the table; a tab is shown
    escaped (``\\u0009``), plain text."""
    fast, reference = _both("utf-8", 20, "t", ["text", "n"], [[cell, 1], ["b", 2]])
    assert rich_draws.calls == by_rich
    assert fast == reference


# --- any table -------------------------------------------------------------------------------------

_PIECES = ["a", "b", "xyz", " ", " ", "-", "/", ".", "_", ":", "::", "##", "0", "42", "é", "漢", "字", "한",
           "😀", "\u3000", "\u00a0", "\t", "\ufe0f", "\u0301", "\u200d", "\x1b[1m", "[b]x[/b]", "~", "$",
           "/home/me/sessions/session-1/session.jsonl", "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd",
           "2027-01-15 08:00"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)
_NUMBER = st.one_of(
    st.integers(-10**6, 10**12).map(str), st.integers(0, 10**12).map("{:,}".format),
    st.integers(0, 10**6).map(lambda n: f"~{n}"), st.integers(0, 10**4).map(lambda n: f"{n / 10:.1f}%"),
    st.integers(0, 10**6).map(lambda n: f"${n / 10**4:.4f}"), st.integers(0, 10**6).map(lambda n: f"≥${n / 10**4:.4f}"),
    st.sampled_from(["-", "?", "$?", "n/a", "", "1/2/1", "0..3"]))
_HEADER = st.one_of(st.sampled_from(["#", "turn/step/try", "cache read", "off-peak", "cost $", "漢字 列", "a",
                                     "session id", "of which breaks", ""]), _TEXT)


@st.composite
def _tables(draw: st.DrawFn) -> tuple[str, list[str], list[list[Any]], dict[str, Any]]:
    count = draw(st.integers(1, 6))
    headers = [draw(_HEADER) for _ in range(count)]
    kinds = [draw(st.sampled_from([_NUMBER, _TEXT, st.sampled_from(["-", "", "loop", "3 initial"])]))
             for _ in range(count)]
    rows: list[list[Any]] = []
    for _ in range(draw(st.integers(0, 8))):
        row: list[Any] = [draw(kind) for kind in kinds]
        if draw(st.integers(0, 9)) == 0:
            row = row[:draw(st.integers(0, count))]  # a short row
        rows.append([None if cell == "" and draw(st.booleans()) else cell for cell in row])
    options = {"caption": draw(st.one_of(st.none(), _TEXT, st.sampled_from(["", "a caption that is long enough "
                                                                                "to wrap on a narrow table"]))),
               "droppable": draw(st.lists(st.sampled_from(headers), unique=True, max_size=2))}
    return draw(_TEXT), headers, rows, options


@pytest.mark.slow
@settings(max_examples=examples(60))
@given(_tables(), st.integers(16, 140), st.sampled_from(["utf-8", "ascii", "terminal"]))
def test_any_table_is_written_as_rich_writes_it(table: tuple[str, list[str], list[list[Any]], dict[str, Any]],
                                                width: int, kind: str) -> None:
    title, headers, rows, options = table
    fast = _outcome(FAST, kind, width, title, headers, rows, **options)
    reference = _outcome(RICH, kind, width, title, headers, rows, **options)
    assert fast == reference


@pytest.mark.slow
@settings(max_examples=examples(40))
@given(_tables(), st.lists(st.integers(0, 30), min_size=1, max_size=6), st.booleans(),
       st.integers(10, 120), st.sampled_from(["utf-8", "terminal"]))
def test_any_widths_are_drawn_as_rich_draws_them(table: tuple[str, list[str], list[list[Any]], dict[str, Any]],
                                                 widths: Sequence[int], compact: bool, width: int, kind: str) -> None:
    """Widths print_table would not choose (too narrow for a header or a cell, too wide for the
    console, zero): the fast path draws what rich draws, or leaves it to rich."""
    title, headers, rows, options = table
    headers = (headers * 6)[:len(widths)]
    cells = [[terminal.table_cell(cell) for cell in row][:len(widths)] for row in rows]
    numeric = [at % 2 == 0 for at in range(len(widths))]
    captions = [text for text in (options["caption"],) if text is not None]
    drawn = []
    for draw in (FAST, RICH):
        with _stdout(kind, width) as written:
            draw(_console.stdout_console(), title, headers, cells, numeric, widths, captions, compact=compact)
            drawn.append(written())
    assert drawn[0] == drawn[1]
