"""Never obey the log (issue 15): text from a log reaches the terminal escaped, never as control
sequences, rich markup or a CI workflow command; one-line errors stay one line."""

from __future__ import annotations

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


COMMANDS = [
    ["requests"], ["breaks", "--all"], ["cache"], ["validate"], ["usage"], ["check"], ["explain", None, "1"],
    ["show", None, "0"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_hostile_session_text_is_shown_inert(tmp_path, monkeypatch, capsys, args):
    log = hostile_log(tmp_path / "s" / "session.jsonl")
    argv = [str(log) if a is None else a for a in args]
    if None not in args:
        argv.append(str(log))
    code, out, err = invoke(monkeypatch, capsys, *argv)
    assert code in (0, 1, 2), (code, out, err)
    if args[0] != "show":  # show prints the request as JSON: lossless, escaped by JSON itself
        assert_inert(out, err)
    if args[0] in ("requests", "breaks", "cache"):
        assert "[link=https://evil.example]L[/link]" in out  # shown literally, not a hyperlink


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
