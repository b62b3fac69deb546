"""Output for people and tools when stdout cannot write every character (issues 14 and 15).

With ``PYTHONIOENCODING=ascii`` (or ``latin-1``, or a C locale with UTF-8 mode off) the CLI writes
each character stdout cannot hold as the JSON escape of its UTF-16 code units (``caf\\u00e9``).
Two defects, each with tests below that failed before the fix:

- tables were measured on the characters, then the stream wrote each one it could not hold as
  six: every row holding one overflowed its columns (``requests``, ``sessions``, ``usage``,
  ``check``...). Now cells, headers, titles and folded lines are escaped before they are measured.
- click writes UTF-8 to a stream whose codec is named ``ascii``, past its error handler: under
  ``PYTHONIOENCODING=ascii`` every JSON line (``--json``, ``show``), every echoed line (``explain``)
  and every warning was raw UTF-8. Now they take the same escapes: JSON lines are pure ASCII and
  decode to the same values.

Every run here is the real CLI through its entry point, its stdout and stderr text streams over a
file in that encoding as Python builds them for a process under ``PYTHONIOENCODING`` (in process:
``_cli.invoke_encoded``); the first tests check that a process of its own, its stdout a pipe in
that encoding, writes the same bytes.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from _cli import CALLER_SETTINGS, invoke, invoke_encoded
from dsh_audit.report.terminal import middle_cut, stdout_text
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
SESSION = "s-caf\u00e9-\u2192-\U0001f600"
TITLE = "Caf\u00e9 \u2192 \u6f22\u5b57 \U0001f600"
MODEL = "deepseek-\u2192\u6f22\u5b57"
# How stdout writes them: latin-1 holds the e-acute, neither holds the arrow, the CJK or the emoji.
SHOWN = {
    "ascii": {SESSION: "s-caf\\u00e9-\\u2192-\\ud83d\\ude00", MODEL: "deepseek-\\u2192\\u6f22\\u5b57"},
    "latin-1": {SESSION: "s-caf\u00e9-\\u2192-\\ud83d\\ude00", MODEL: "deepseek-\\u2192\\u6f22\\u5b57"},
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``s/session.jsonl``: two turns and a title call, non-ASCII text in the
    session id, the prompts, the title and the model the second turn switches to."""
    folder = tmp_path_factory.mktemp("encoding")
    builder = LogBuilder(session_id=SESSION)
    with builder.turn("R\u00e9sum\u00e9 \u2192 \u6f22\u5b57"):
        with builder.step():
            # usage as DSH's DeepSeek adapter logs it from the API's reply: the cache read included
            builder.assistant("H\u00e9llo \U0001f600", usage={"inputTokens": 133, "outputTokens": 9, "cacheReadTokens": 0})
    builder.title(TITLE)
    builder.configure(model=MODEL)
    with builder.turn("two"):
        with builder.step():
            builder.assistant("Hi", usage={"inputTokens": 231, "outputTokens": 7, "cacheReadTokens": 0})
    builder.write_jsonl(folder / "s" / "session.jsonl")
    return folder


def cli(folder: Path, encoding: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``dsh-audit ARGS`` in a process of its own in ``folder`` (this tree's package), stdout a pipe
    in ``encoding`` and 80 columns wide, no setting of the caller's that changes what is printed."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(CALLER_SETTINGS)}
    env.update(PYTHONIOENCODING=encoding, COLUMNS="80", PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.run([sys.executable, "-m", "dsh_audit", *args], cwd=folder, capture_output=True, timeout=60,
                          env=env)


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Callable[..., tuple[int, str, list[str]]]:
    """``run(folder, encoding, *args)``: ``dsh-audit ARGS`` in ``folder``, stdout in ``encoding``
    (``_cli.invoke_encoded``): its exit code, stdout and stderr lines, both decoded in ``encoding``
    (strictly: a byte it cannot hold fails)."""

    def run(folder: Path, encoding: str, *args: str) -> tuple[int, str, list[str]]:
        monkeypatch.chdir(folder)
        code, out, err = invoke_encoded(monkeypatch, encoding, *args)
        return code, out.decode(encoding), err.decode(encoding).splitlines()

    return run


@pytest.mark.parametrize(("encoding", "args"), [
    ("ascii", ("usage", "s/session.jsonl", "--by", "model")),  # a table, and warnings on stderr
    ("ascii", ("sessions", "s/session.jsonl", "--json", "--no-cost")),  # a JSON line, through click
    ("latin-1", ("explain", "s/session.jsonl", "2")),  # folded echoed lines
    ("latin-1", ("requests", "s/session.jsonl", "--format", "csv")),
], ids=lambda value: value if isinstance(value, str) else value[0])
def test_a_process_of_its_own_writes_what_the_run_in_process_writes(folder, monkeypatch, encoding, args):
    """The runs below are in process: a real process, its stdout a pipe in ``encoding``, writes
    the same bytes to stdout and stderr and exits alike."""
    done = cli(folder, encoding, *args)
    monkeypatch.chdir(folder)
    assert invoke_encoded(monkeypatch, encoding, *args) == (done.returncode, done.stdout, done.stderr)
    assert done.stdout.decode(encoding).isascii() == (encoding == "ascii")


def separators(lines: list[str]) -> set[tuple[int, ...]]:
    """The offsets of the column separators (``|`` and ``+``) of each line: one tuple when they line up."""
    return {tuple(at for at, char in enumerate(line) if char in "|+") for line in lines}


# -- tables -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_table_keeps_its_columns(run, folder, encoding):
    """Before: the title line and the table were measured on ``caf\u00e9``..., then written
    longer; now the heading is a line of its own above the table and every row's separators line
    up (the compact table, every row on one line, "cache read" right-aligned: its ``?`` is a
    number not logged)."""
    code, out, err = run(folder, encoding, "requests", "s/session.jsonl")
    assert (code, err) == (0, [])
    lines = out.splitlines()
    heading = f"s/session.jsonl  session {SHOWN[encoding][SESSION]}"
    assert lines == [
        heading,
        "# |turn/step/attempt |kind  |header    |msgs |input |cache read |output |finish",
        "--+------------------+------+----------+-----+------+-----------+-------+------",
        "0 |1/1/1             |loop  |5 initial |   1 |  133 |         0 |     9 |stop",
        "1 |-                 |title |-         |   1 |    ? |         ? |     ? |",
        "2 |2/1/1             |loop  |22 change |   3 |  231 |         0 |     7 |stop",
        "  |total             |      |          |     |  364 |         0 |    16 |",
        "total: each count summed over the requests that logged it (?: not logged)",
    ]
    assert len(separators(lines[1:-1])) == 1


def test_a_table_wraps_escapes_in_their_column_ascii(run, folder):
    """--no-cost: hit, breaks and cost have no value in any row, so they are the first left out."""
    code, out, err = run(folder, "ascii", "sessions", "s/session.jsonl", "--no-cost")
    assert (code, err) == (0, [])
    lines = out.splitlines()
    assert [line.rstrip() for line in lines] == [
        "1 session(s), newest first",
        "when (UTC)       |title                   |reqs |id",
        "-----------------+------------------------+-----+-------------------------------",
        "2027-01-15 08:00 |Caf\\u00e9 \\u2192        |   3 |s-caf\\u00e9-\\u2192-\\ud83d\\ude00",
        "                 |\\u6f22\\u5b57            |     |",
        "                 |\\ud83d\\ude00            |     |",
        "total            |                        |   3 |",  # issue 14 B1; its lesser columns left out first
        "narrow terminal: hit, breaks, cost (no values), format, first (UTC), tokens,",
        "project not shown (widen it, or use --json)",
    ]  # the id whole, even in its escapes: a piece of an id on a line of its own reads as another id;
    # the title keeps its 24 columns, so the table is drawn without its box (it cannot be boxed in 80)
    assert max(len(line) for line in lines) <= 80
    assert len(separators([line.rstrip() for line in lines[1:6]])) == 1


def test_a_table_wraps_escapes_in_their_column_latin_1(run, folder):
    """Below 100 columns every table is compact (one style for every command): latin-1 shows é as
    itself, the rest as escapes, each kept whole in its column; the id is cut to its unique prefix
    before the project is left out (session 41)."""
    code, out, err = run(folder, "latin-1", "sessions", "s/session.jsonl", "--no-cost")
    assert (code, err) == (0, [])
    lines = out.splitlines()
    assert lines == [
        "1 session(s), newest first",
        "when (UTC)       |title             |project           |requests |id",
        "-----------------+------------------+------------------+---------+-------------",
        "2027-01-15 08:00 |Caf\u00e9 \\u2192\\u2026 |/home/dev/project |       3 |s-caf\u00e9-\\u2192",
        "total            |                  |                  |       3 |",  # issue 14 B1
        # every column kept, cells cut: the lesser ones left out before, said in the same caption (session 45)
        "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles);",
        "narrow terminal: hit ratio, breaks, cost (no values), format, first (UTC),",
        "tokens not shown (widen it, or use --json)",
    ]
    assert max(len(line) for line in lines) <= 80 and not any(line.endswith(" ") for line in lines)
    assert len(separators(lines[1:5])) == 1


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_usage_by_model_lines_up_and_warns_in_escapes(run, folder, encoding):
    """The model column holds the model's escapes; the warning naming it (stderr, which click
    wrote as UTF-8 under ``ascii``) takes the same escapes."""
    code, out, err = run(folder, encoding, "usage", "s/session.jsonl", "--by", "model")
    assert code == 0
    lines = [line.rstrip() for line in out.splitlines()]
    # A compact table at 80 columns (lesser columns left out and named); the model column holds
    # the model's escapes and a lower bound's "≥" is its escape, every row's separators lined up;
    # "requests" kept, the token columns left out first (session 38), but the costliest, the misses,
    # only after the what-ifs (session 40).
    # (session 43: a row is the model the price table bills; the name logged, which would wrap the
    # key, in the caption)
    assert lines[:6] == [
        "usage by model",
        "model                       |requests |cache miss |         cost |unpriced",
        "----------------------------+---------+-----------+--------------+--------",
        "deepseek-flash              |       2 |       133 |\\u2265$0.0001 |       1",
        "deepseek-\\u2192\\u6f22\\u5b57 |       1 |       231 |           $? |       1",
        "total                       |       3 |       364 |\\u2265$0.0001 |       2"]
    assert len(separators(lines[1:6])) == 1
    assert lines[9] == "logged); model as billed: deepseek-flash (logged as deepseek-v4-flash)"
    assert lines[-2:] == ["narrow terminal: lost tokens (cost) (no values), reusable, cache read, cache",
                          "write, no cache, output, off-peak not shown (widen it, or use --json)"]
    assert max(len(line) for line in out.splitlines()) <= 80
    assert err == [f"warning: 1 request(s) unpriced: no price for model '{SHOWN[encoding][MODEL]}' (provider "
                   "deepseek-official: give --prices FILE a [providers.deepseek.models."
                   f"\"{SHOWN[encoding][MODEL]}\"] table of cache_miss, cache_read and output rates)",
                   "warning: 1 request(s) unpriced: usage not logged"]


def test_check_records_and_status_ascii(run, folder):
    code, out, err = run(folder, "ascii", "check", "s/session.jsonl")
    assert (code, err) == (0, [])
    assert [line.rstrip() for line in out.splitlines()] == [
        # at 80 columns: short headers (session 40: brks, finds), the id cut to a unique prefix (no `…` on an
        # ASCII stdout: the prefix `show` takes), the capture, hit ratio and cost kept
        "dsh-audit check",
        "status |session            |reqs |capture |brks | hit |         cost |finds",
        "-------+-------------------+-----+--------+-----+-----+--------------+-----",
        "ok     |s-caf\\u00e9-\\u2192 |   3 |none    |   1 |0.0% |\\u2265$0.0001 |    1",
        "session: shortest unique prefix of its id (--json for whole ids)",
        "log: s/session.jsonl",  # the log named under the table (session 38: never left out)
        # the finding "finds" counts, info too (session 42: it was counted, not listed)
        "s/session.jsonl: DSH810 info: no capture given or found beside the log",
        "  (wire.jsonl) (hint: pass --capture FILE, or put a wire.jsonl holding the log's",
        "  requests beside it or up to four folders above it)",
        "PASSED: 1 log(s), 3 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing",
        "  (policy: defaults)",  # session 42: indented as a finding's rest (only the verdict starts a line)
    ]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_explain_folds_the_escaped_text(run, folder, encoding):
    """Folded lines are measured on what stdout writes: none is longer than COLUMNS."""
    code, out, err = run(folder, encoding, "explain", "s/session.jsonl", "2")
    assert (code, err) == (0, [])
    lines = out.splitlines()
    first = f"request 2 (loop, turn 2 step 1 attempt 1) of session {SHOWN[encoding][SESSION]}:"
    start = [first, "  break, cause header_change"] if encoding == "latin-1" else \
        ["request 2 (loop, turn 2 step 1 attempt 1) of session",
         f"  {SHOWN[encoding][SESSION]}: break, cause header_change"]
    assert lines[:2] == start
    assert lines[2:] == [
        "  compared with request 0 (step); 1 leading message(s) shared",
        "  prompt changed at config (header_change: model)",
        "  cost: $0 (of 128 reusable, read 0: 128 within the rule's tolerance, not",
        "    counted as lost) (as `cache` counts them)",
        "  first divergence: config, byte 19 of the body",
        "fields:",
        '  model: "deepseek-v4-flash" \\u2192 "deepseek-\\u2192\\u6f22\\u5b57" (prompt)',
        "evidence:",
        '  seq 22 request/header {"reason":"change",',
        '    "config":{"provider":"deepseek-official",',
        '    "model":"deepseek-\\u2192\\u6f22\\u5b57","reasoningEffort":"high",',
        '    "maxTokens":65536},"adapterDefaults":null,"system_chars":31,"tools":null}',
    ]
    assert max(len(line) for line in lines) <= 80


PATH = "/home/\u00e9\u6f22\u5b57/sessions/\u6f22\u5b57-1/session.jsonl"


@pytest.mark.parametrize(("encoding", "text", "cut"), [
    ("ascii", "caf\\u00e9 \\ud83d\\ude00 ok", "/home/\\u00e9\\u2026ession.jsonl"),
    # an escape that does not fit is left out whole, never cut: the line is shorter
    ("latin-1", "caf\u00e9 \\ud83d\\ude00 ok", "/home/\u00e9\\u2026ession.jsonl"),
    ("utf-8", "caf\u00e9 \U0001f600 ok", "/home/\u00e9\u6f22\u5b57/se\u20261/session.jsonl"),
])
def test_text_is_measured_as_stdout_writes_it(monkeypatch, encoding, text, cut):
    """:func:`stdout_text` spells what stdout cannot write as the stream does; :func:`middle_cut`
    (a long path in a table's title) measures those escapes and its own ``\u2026``."""
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding=encoding))
    assert stdout_text("caf\u00e9 \U0001f600 ok") == text
    assert middle_cut(PATH, 30) == cut
    assert middle_cut(PATH, 200) == stdout_text(PATH)


# -- JSON, CSV, Markdown ------------------------------------------------------------------------------

JSON_COMMANDS = [
    ("sessions", "s/session.jsonl", "--json", "--no-cost"),
    ("requests", "s/session.jsonl", "--format", "json"),
    ("usage", "s/session.jsonl", "--by", "model", "--json"),
    ("explain", "s/session.jsonl", "2", "--json"),
    ("show", "s/session.jsonl", "2", "--compact"),
]


@pytest.mark.parametrize("args", JSON_COMMANDS, ids=lambda args: args[0])
def test_json_lines_are_ascii_and_decode_to_the_same_values(run, folder, args, monkeypatch, capsys):
    """Before: raw UTF-8 under ``ascii`` (click wrote past the stream). Now pure ASCII, each
    character as its ``\\uXXXX`` escape (a surrogate pair for the emoji): the same values as the
    UTF-8 lines (the CLI run in process writes those)."""
    code, out, _ = run(folder, "ascii", *args)
    assert code == 0
    assert out.isascii()
    assert "\\ud83d\\ude00" in out or "\\u6f22\\u5b57" in out
    monkeypatch.chdir(folder)
    utf8_code, utf8_out, _ = invoke(monkeypatch, capsys, *args)
    assert utf8_code == 0
    assert SESSION in utf8_out or MODEL in utf8_out
    assert [json.loads(line) for line in out.splitlines()] == [json.loads(line) for line in utf8_out.splitlines()]


def test_pretty_json_is_ascii_and_decodes_to_the_same_values(run, folder):
    code, out, err = run(folder, "ascii", "show", "s/session.jsonl", "2")
    assert (code, err) == (0, [])
    assert out.isascii()
    assert '\n  "session_id": "s-caf\\u00e9-\\u2192-\\ud83d\\ude00",\n' in out
    request = json.loads(out)
    assert (request["session_id"], request["header"]["config"]["model"]) == (SESSION, MODEL)


def test_json_lines_latin_1_escape_what_latin_1_cannot_hold(run, folder):
    code, out, err = run(folder, "latin-1", "sessions", "s/session.jsonl", "--json", "--no-cost")
    assert (code, err) == (0, [])
    assert '"session_id":"s-caf\u00e9-\\u2192-\\ud83d\\ude00",' in out
    summary = json.loads(out)
    assert (summary["session_id"], summary["title"]) == (SESSION, TITLE)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_csv_and_markdown_take_the_same_escapes(run, folder, encoding):
    shown = SHOWN[encoding][SESSION]
    code, out, err = run(folder, encoding, "requests", "s/session.jsonl", "--format", "csv")
    assert (code, err) == (0, [])
    assert out.splitlines() == [
        "table,log,session,#,turn/step/attempt,kind,header,msgs,input,cache read,output,finish",
        f"requests,s/session.jsonl,{shown},0,1/1/1,loop,5 initial,1,133,0,9,stop",
        f"requests,s/session.jsonl,{shown},1,-,title,-,1,,,,",
        f"requests,s/session.jsonl,{shown},2,2/1/1,loop,22 change,3,231,0,7,stop",
    ]
    code, out, err = run(folder, encoding, "sessions", "s/session.jsonl", "--format", "markdown", "--no-cost")
    assert (code, err) == (0, [])
    title = "Caf\\u00e9" if encoding == "ascii" else "Caf\u00e9"
    assert out.splitlines()[-3:-1] == [(f"| 2027-01-15 08:00 | {title} \\u2192 \\u6f22\\u5b57 \\ud83d\\ude00 | "
                                      f"/home/dev/project | 3 | 380 | - | - | - | 2027-01-15 08:00 | v0 | {shown} |"),
                                     "| total |  |  | 3 | 380 | - | - | - |  |  |  |"]  # issue 14 B1


def test_render_writes_the_exact_body_bytes_whatever_the_encoding(folder, monkeypatch):
    """A body is bytes for a wire, not text for a terminal: the same bytes under every encoding."""
    monkeypatch.chdir(folder)
    runs = [invoke_encoded(monkeypatch, encoding, "render", "s/session.jsonl", "2") for encoding in ("utf-8", "ascii")]
    assert [(code, err) for code, _, err in runs] == [(0, b""), (0, b"")]
    assert runs[0][1] == runs[1][1]
    assert MODEL.encode("utf-8") in runs[0][1]


# -- UTF-8: nothing escaped -------------------------------------------------------------------------

def test_utf8_stdout_writes_the_characters_as_in_process(folder, monkeypatch, capsys):
    """Under UTF-8 nothing changes: a process of its own writes what the CLI run in process (no
    stdout set up by ``main``) writes, characters as they are."""
    monkeypatch.chdir(folder)
    monkeypatch.setenv("COLUMNS", "80")
    for args in (["requests", "s/session.jsonl"], ["sessions", "s/session.jsonl", "--json", "--no-cost"]):
        done = cli(folder, "utf-8", *args)
        out = done.stdout.decode("utf-8")
        assert (done.returncode, done.stderr) == (0, b"")
        assert invoke(monkeypatch, capsys, *args) == (0, out, [])
        assert "\\u00e9" not in out and SESSION in out
    assert out.startswith(f'{{"path":"s/session.jsonl","session_id":"{SESSION}","title":"{TITLE}",')
