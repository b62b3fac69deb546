"""Never obey the log (issue 15): text from a log reaches the terminal escaped, never as control
sequences, rich markup or a CI workflow command; one-line errors stay one line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from _cli import invoke_encoded
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.report.terminal import terminal_text
from dsh_audit.testing import LogBuilder

MARKUP = "[bold]B[/] [link=https://evil.example]L[/link] [/]"
CONTROLS = "\x1b[2J\x1b]0;owned\x07\x9b31m\x90x\x9c\u202e\u2066\u2069\x00\x08\r\x7f"
PAYLOAD = f"{MARKUP} {CONTROLS}\n::error::pwned\n##[error]x"
RAW = ["\x1b", "\x9b", "\x90", "\x9c", "\u202e", "\u2066", "\u2069", "\x00", "\x07", "\x08", "\r", "\x7f"]


def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    out, err = capsys.readouterr()
    return code, out, err


def assert_inert(out: str, err: str) -> None:
    for stream in (out, err):
        assert "Traceback" not in stream
        for char in RAW:
            assert char not in stream, repr(char)
        for line in stream.split("\n"):
            assert not line.lstrip().startswith(("::", "##[")), line


def assert_inert_markdown(text: str) -> None:
    """``text`` rendered as CommonMark with tables and raw HTML allowed holds no tag, link or image
    made of a log's text: its ``<script>`` and ``[x](y)`` stay text (escaped, or in a code span)."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    for made in ("<script", "</testcase", "<a ", "<img"):
        assert made not in html, made


def hostile_log(path: Path, *, session_id: str = PAYLOAD, text: str = PAYLOAD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    b = LogBuilder(session_id=session_id, system=text)
    with b.turn(text):
        with b.step():
            b.assistant(text)
    with b.turn(text + " again"):
        with b.step():
            b.assistant(text)
    path.write_text("".join(line + "\n" for line in b.lines(packed=False)), encoding="utf-8")
    return path


def test_terminal_text_escapes_every_hostile_character():
    assert terminal_text(CONTROLS) == ("\\u001b[2J\\u001b]0;owned\\u0007\\u009b31m\\u0090x\\u009c\\u202e\\u2066"
                                       "\\u2069\\u0000\\u0008\\u000d\\u007f")
    assert terminal_text("a\nb\u2028c\ud800d\U000e0001") == "a\\u000ab\\u2028c\\ud800d\\U000e0001"
    assert terminal_text("  ::warning file=x::y") == "  \\u003a:warning file=x::y"
    assert terminal_text("##[error]x") == "\\u0023#[error]x"
    assert terminal_text(MARKUP) == MARKUP  # plain text: printed without markup, never parsed
    assert terminal_text("caf\u00e9 \u4e2d a b") == "caf\u00e9 \u4e2d a b"


# -- every command in every output format on one hostile fixture (issue 15 done-when 1) ------------

# Keys whose values are DSH's own words (event types, enums): a payload there makes the log refused,
# and a refused log shows none of its text.
_WORDS = frozenset({"type", "blockType", "target", "surfaceOp", "role", "kind", "provider", "reasoningEffort",
                    "required", "form", "code", "reason", "titleProvider", "plugin", "argumentsDelta"})
# What the sample logs' free text gets appended: PAYLOAD, lone surrogates, HTML/XML metacharacters.
HOSTILE = f"{PAYLOAD} \udfff\ud800 <script>alert(1)</script>&</testcase>`|` ::set-output name=x::y"


def _poisoned(value: object, key: str | None = None) -> object:
    """``value`` (a parsed event) with :data:`HOSTILE` appended to every free-text string."""
    if isinstance(value, dict):
        return {k: _poisoned(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_poisoned(v, key) for v in value]
    if not isinstance(value, str) or key in _WORDS:
        return value
    if key == "arguments":  # a tool call's JSON arguments: poisoned inside, still JSON
        return json.dumps(_poisoned(json.loads(value), "argument"))
    return value + HOSTILE


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The two sample logs with :data:`HOSTILE` in every free-text field (session id, system,
    messages, tools, model, cwd, title), in folders named with ESC, bidi, a newline, ``::error``
    and a byte that is not UTF-8; a capture of hostile bodies; an index of both logs."""
    root = tmp_path_factory.mktemp("hostile")
    folder = root / os.fsdecode(b"proj\xff\x1b[31m\xe2\x80\xae\n::error::x")
    for name in ("tools", "chat"):
        source = Path(__file__).resolve().parent.parent / "sample_logs" / name / "session.jsonl"
        events = [_poisoned(json.loads(line)) for line in source.read_text("utf-8").splitlines()]
        log = folder / f"{name}\x1b]0;T\x07\u202e\n::warning::w" / "session.jsonl"
        log.parent.mkdir(parents=True)
        log.write_text("".join(json.dumps(e) + "\n" for e in events), "utf-8")
    body = json.dumps({"model": "deepseek-v4-flash" + HOSTILE, "messages": [{"role": "user", "content": HOSTILE}]})
    capture = root / "capture" / "wire.jsonl"
    capture.parent.mkdir()
    capture.write_text(json.dumps({"method": "POST", "path": "/chat/completions" + HOSTILE, "headers": {"x": HOSTILE},
                                   "body": body}) + "\n", "utf-8")
    db = root / "index.sqlite"
    with pytest.MonkeyPatch.context() as patch:
        assert invoke_encoded(patch, "utf-8", "index", str(folder), "--db", str(db))[0] == 0
    logs = sorted(str(p) for p in folder.rglob("session.jsonl"))
    return {"DIR": str(folder), "LOG": next(p for p in logs if "tools" in p), "CAP": str(capture), "DB": str(db),
            "OUT": str(root / "out")}


_FORMATS = ("table", "json", "csv", "markdown")
# Every command, each in every output format it has (--format, --json, --compact) and, for check and
# validate, with every report file; LOG, DIR, CAP, DB and OUT stand for the fixture's paths.
_LISTED = [*(["requests", "DIR", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           *(["breaks", "--all", "DIR", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           *(["cache", "DIR", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           *(["usage", "DIR", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           *(["sessions", "DIR", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           *(["validate", "DIR", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           *(["diff", "LOG", "--capture", "CAP", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           *(["check", "DIR", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           *(["stats", "--db", "DB", *f] for f in (["--json"], *(["--format", x] for x in _FORMATS))),
           ["explain", "LOG", "1"], ["explain", "LOG", "1", "--json"],
           ["show", "LOG", "0"], ["show", "LOG", "0", "--json"], ["show", "LOG", "0", "--compact"],
           ["render", "LOG", "0"], ["render", "LOG", "0", "--headers"],
           ["watch", "DIR", "--since", "100000d", "--idle-exit", "0.05", "--polling"],
           ["watch", "DIR", "--since", "100000d", "--idle-exit", "0.05", "--polling", "--json"],
           ["index", "DIR", "--db", "OUT.sqlite"], ["index", "DIR", "--db", "OUT.sqlite", "--json"],
           ["validate", "DIR", "--sarif", "OUT.sarif"],
           ["check", "DIR", "--json-report", "OUT.json", "--junit", "OUT.xml", "--sarif", "OUT.sarif",
            "--markdown", "OUT.md"],
           ["report", "DIR", "-o", "OUT.html"], ["redact", "LOG", "-o", "OUT.jsonl"]]


def _case_id(args: list[str]) -> str:
    return "-".join(a.lstrip("-") for a in args if a not in ("DIR", "LOG", "CAP", "DB") and not a.startswith("OUT")
                    and a not in ("--since", "100000d", "--idle-exit", "0.05", "--polling", "--capture", "--db"))


# diff's notes followed its Markdown table with no blank line between: GFM read them as rows of it
# and a "|" in a code span of a note as a cell break (session 44: every Markdown table ends with a
# blank line, report/_cells.py), which the diff --format markdown case proves.
@pytest.mark.parametrize("args", _LISTED, ids=_case_id)
def test_hostile_text_goes_inert_through_every_command_and_format(hostile, tmp_path, monkeypatch, capsys, args):
    """No traceback, exit 0, 1 or 2, no raw control character, bidi mark or lone surrogate from the
    log and no ``::``/``##[`` line on stdout or stderr; JSON lines, SARIF and JUnit XML parse;
    Markdown and HTML hold the log's markup escaped, never as a tag."""
    import xml.etree.ElementTree as ElementTree

    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    argv = [hostile[a] if a in hostile else a.replace("OUT", str(tmp_path / "out")) for a in args]
    code, out, err = invoke(monkeypatch, capsys, *argv)
    assert code in (0, 1, 2), (code, err)
    if args[0] == "render":  # the exact body bytes DSH sends, as JSON (--headers: after the head)
        json.loads(out.split("\n\n", 1)[-1] if "--headers" in args else out)
        out = ""
    machine = "--json" in args or "json" in args or (args[0] == "show" and "--compact" in args)
    if machine and args[0] == "show" or args[0] == "show":  # one JSON document (indented unless --json/--compact)
        json.loads(out)
    elif machine:
        for line in out.splitlines():
            json.loads(line)
    assert_inert(out.replace("\r\n", "\n") if "csv" in args else out, err)  # CSV's row ends are RFC 4180's
    if args[0] in ("requests", "breaks", "cache") and "table" in args:
        assert "session-sample-tools[bold]B[/] " in out  # rich markup shown literally, not as style
    if "markdown" in args or args[0] == "check" and "OUT.md" in args:
        text = out + (Path(argv[-1]).read_text("utf-8") if "OUT.md" in args else "")
        assert_inert_markdown(text)
    reports = {a: Path(b) for a, b in zip(args, argv) if a.startswith("OUT.")}
    for name, path in reports.items():
        text = path.read_text("utf-8") if not name.endswith(".sqlite") else ""
        if name.endswith((".json", ".sarif")):
            json.loads(text)
        elif name.endswith(".xml"):
            ElementTree.fromstring(text)
        elif name.endswith(".html"):
            assert "<script>alert(1)" not in text and "&lt;script&gt;alert(1)" in text
        elif name.endswith(".jsonl"):
            [json.loads(line) for line in text.splitlines()]


def test_hostile_folder_name_in_an_error_line_stays_one_line(tmp_path, monkeypatch, capsys):
    folder = tmp_path / f"x{CONTROLS.replace(chr(0), '')}\n::error::y[bold]"
    folder.mkdir()
    # a gate that finds nothing to check: one error line; a describing command: one note line
    for command, code_wanted, prefix in (("check", 2, "error: "), ("requests", 0, "note: ")):
        code, out, err = invoke(monkeypatch, capsys, command, str(folder))
        assert (code, out) == (code_wanted, "")
        assert err.count("\n") == 1 and err.startswith(prefix)
        assert_inert(out, err)
        assert terminal_text(str(folder)) in err


def test_click_usage_errors_quote_arguments_escaped(tmp_path, monkeypatch, capsys):
    code, out, err = invoke(monkeypatch, capsys, "requests", "--by", "\x1b]0;x\x07\n::error::z")
    assert code == 2
    assert_inert(out, err)


def test_check_prints_no_workflow_command_from_a_failing_log(tmp_path, monkeypatch, capsys):
    log = hostile_log(tmp_path / "s" / "session.jsonl")
    # a seq gap before a turn/end: check fails the log and names it in a finding line
    lines = log.read_text("utf-8").splitlines()
    lines.pop(2)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", str(log))
    assert code in (1, 2)
    assert_inert(out, err)


def test_render_headers_cannot_inject_header_lines(tmp_path, monkeypatch, capsys):
    log = hostile_log(tmp_path / "s" / "session.jsonl", session_id="id\r\nX-Injected: 1", text="hi")
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "render", str(log), "0", "--headers"])
    code = run_guarded(cli)
    out = capsys.readouterr().out
    assert code == 0
    head = out.split("\n\n", 1)[0]
    assert not any(line.startswith("X-Injected") for line in head.split("\n"))


def test_a_lone_surrogate_in_id_prompt_and_answer_crashes_no_command(tmp_path: Path, monkeypatch) -> None:
    """``"\\ud800"`` is valid JSON and DSH writes what it is given: every command reads such a
    log, shows the surrogate escaped, and ``index`` stores it as its escape (SQLite holds UTF-8)."""
    builder = LogBuilder(session_id="s-SURR-x")
    with builder.turn("hello SURR there"):
        with builder.step():
            builder.assistant("Hi SURR.")
    log = builder.write_jsonl(tmp_path / "session.jsonl")
    log.write_text(log.read_text().replace("SURR", "\\ud800"))
    db = tmp_path / "index.sqlite"
    commands = (["requests", str(log)], ["breaks", str(log)], ["cache", str(log)], ["check", str(log)],
                ["explain", str(log), "0"], ["show", str(log), "0"], ["sessions", str(log)], ["usage", str(log)],
                ["index", str(log), "--db", str(db)])
    # stdout and stderr UTF-8 text over a file, as a process's piped ones are (_cli.invoke_encoded):
    # a lone surrogate written raw to stdout fails (exit 3).
    for argv in commands:
        code, _, err = invoke_encoded(monkeypatch, "utf-8", *argv)
        assert code == 0, (argv, err)
    import sqlite3

    connection = sqlite3.connect(db)
    assert connection.execute("SELECT session_id FROM sessions").fetchall() == [("s-\\ud800-x",)]
    connection.close()


def test_json_output_escapes_exactly_the_characters_a_terminal_would_act_on() -> None:
    """`--json` and `show` write valid, lossless JSON in which no C1 control, bidi or other format
    character, separator or lone surrogate stays raw (the categories terminal_text escapes)."""
    import json
    import sys
    import unicodedata

    from dsh_audit.report import dumps_line
    from dsh_audit.report._json import ACTIVE_TEXT, dumps_pretty

    active = {chr(c) for c in range(0x80, sys.maxunicode + 1)
              if unicodedata.category(chr(c)) in ("Cc", "Cf", "Cs", "Zl", "Zp")}
    assert {chr(c) for c in range(0x80, sys.maxunicode + 1) if ACTIVE_TEXT.fullmatch(chr(c))} == active
    value = {"title": "ok \x1b]0;x\x07 \x9b31m \u202e \u2028 \ud800 \u200b é 😀 \U000e0041"}
    for text in (dumps_line(value), dumps_pretty(value)):
        assert json.loads(text) == value
        assert not any(ch in active or unicodedata.category(ch) == "Cc" for ch in text.replace("\n", ""))
    assert dumps_line(value) == ('{"title":"ok \\u001b]0;x\\u0007 \\u009b31m \\u202e \\u2028 \\ud800 \\u200b é 😀 '
                                 '\\udb40\\udc41"}')
