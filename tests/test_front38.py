"""First contact and hints (tour 38): a bare ``dsh-audit`` prints its help, a misspelt command gets
the close one, every hint names the CLI option (or says none) that settles the error, DSH's
"upgrade the harness" is followed by what dsh-audit reads, and no log text becomes a link in
Markdown (GitHub's autolinks: a code span)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import chat_log, invoke
from dsh_audit.report._markdown import _md
from dsh_audit.report._safe_text import markdown_inline, markdown_text
from dsh_audit.testing import LogBuilder

SHAPE = "the Price files section of docs/cache-accounting.md gives the shape"


# -- item 1: no command -------------------------------------------------------------------------

def test_no_command_prints_the_help_as_help_does_and_exits_2(monkeypatch, capsys):
    """Before: the help as one escaped ``error:`` line (``\\u000a``, "characters cut"), nothing on
    stdout. Now the same text as ``--help`` on stdout, nothing on stderr, exit 2 (a usage error)."""
    code, out, err = invoke(monkeypatch, capsys)
    assert (code, err) == (2, [])
    assert out.startswith("Usage: ") and " [OPTIONS] COMMAND [ARGS]...\n\n  Replay and audit DeepSeek Harness" in out
    assert invoke(monkeypatch, capsys, "--help") == (0, out, [])


def test_a_subgroup_or_command_with_no_args_is_help_prints_its_help(monkeypatch, capsys):
    """Any group (click's default) or command with ``no_args_is_help`` given nothing: its help, as
    its ``--help`` prints it, on stdout, exit 2."""
    import click

    from dsh_audit.cli._common import run_guarded

    top = click.Group("top")
    sub = click.Group("sub", help="A subgroup.")
    sub.add_command(click.Command("leaf", no_args_is_help=True, help="A leaf.",
                                  params=[click.Argument(["path"])]))
    top.add_command(sub)
    for argv in (["sub"], ["sub", "leaf"]):
        monkeypatch.setattr("sys.argv", ["top", *argv])
        assert run_guarded(top) == 2
        shown = capsys.readouterr()
        monkeypatch.setattr("sys.argv", ["top", *argv, "--help"])
        assert run_guarded(top) == 0
        assert (shown.out, shown.err) == (capsys.readouterr().out, "")
        assert f"top {' '.join(argv)} [OPTIONS]" in shown.out.splitlines()[0]


@pytest.mark.parametrize("typed, said", [
    ("session", "No such command 'session'. Did you mean 'sessions'?"),
    ("stat", "No such command 'stat'. Did you mean 'stats'?"),
    ("chek", "No such command 'chek'. (Did you mean one of: 'cache', 'check'?)"),
    ("nosuch", "No such command 'nosuch'."),
])
def test_a_misspelt_command_is_answered_with_the_close_ones(monkeypatch, capsys, typed, said):
    assert invoke(monkeypatch, capsys, typed) == (2, "", [f"error: {said} (hint: see `dsh-audit --help`)"])


# -- item 2: hints that name the option ---------------------------------------------------------

def test_a_damaged_record_says_no_option_skips_it(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "session.jsonl", "s-bad")
    lines = log.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"text-delta"' in line)
    seq = json.loads(lines[at])["seq"]
    lines[at] = "{bad json\n"
    log.write_text("".join(lines))
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "requests", "session.jsonl") == (2, "", [
        f"error: session.jsonl:{at + 1} seq {seq}: corrupt session log: unparsable committed event (not valid JSON) "
        "(hint: no option skips a damaged record before the last turn/end (--lenient adapts headers only; DSH refuses "
        "the log too): repair or remove the line; `dsh-audit validate FILE` lists every damaged line)"])


@pytest.mark.parametrize("text, said", [
    ("- id: agent-default-model\n  config:\n    model: local-coder\n", "rows: no row with id 'llm-pi-ai'"),
    ("providers: {}\n", "providers: no providers mapping"),
])
def test_a_file_that_holds_no_route_configuration_names_routes(tmp_path, monkeypatch, capsys, text, said):
    chat_log(tmp_path / "session.jsonl", "s-routes")
    (tmp_path / "wrong.yml").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "render", "session.jsonl", "0", "--routes", "wrong.yml") == (2, "", [
        f"error: wrong.yml: route file: {said} (hint: give --routes FILE DSH's llm-pi-ai route configuration "
        "(providers.<id>.api, baseURL, models) or a patch layer whose row with id 'llm-pi-ai' sets its config)"])


def test_a_gate_on_an_empty_sessions_folder_names_path_and_dsh_home(tmp_path, monkeypatch, capsys):
    (tmp_path / "sessions").mkdir()
    monkeypatch.chdir(tmp_path)
    hint = ("(hint: expected session.jsonl or session.jsonl.zstd files below it: pass PATH (a log, a session folder "
            "or a sessions root), or set DSH_HOME to the DSH home whose sessions/ holds them)")
    assert invoke(monkeypatch, capsys, "check", "sessions") == (2, "", [
        f"error: sessions: folder holds no DSH session log {hint}"])
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    assert invoke(monkeypatch, capsys, "check") == (2, "", [
        f"error: {tmp_path / 'sessions'}: folder holds no DSH session log {hint}"])


def test_a_json_price_file_hint_says_toml_is_read_too(tmp_path, monkeypatch, capsys):
    chat_log(tmp_path / "session.jsonl", "s-prices")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "sessions", "session.jsonl", "--prices", "nosuch.json") == (2, "", [
        "error: nosuch.json: cannot open: No such file or directory (hint: give --prices a JSON price table (or a "
        f"TOML one, named *.toml); {SHAPE})"])
    assert invoke(monkeypatch, capsys, "sessions", "session.jsonl", "--prices", "nosuch.toml") == (2, "", [
        f"error: nosuch.toml: cannot open: No such file or directory (hint: give --prices a TOML price table; {SHAPE})"])


@pytest.mark.parametrize("args", [("--prices", "p.toml"), ("--prices=p.toml",), ("--prices",)])
def test_stats_given_an_option_of_index_says_index_takes_it(monkeypatch, capsys, args):
    """Before: "No such option '--prices'. Did you mean '--since'?"."""
    assert invoke(monkeypatch, capsys, "stats", "--db", "x.sqlite", *args) == (2, "", [
        "error: No such option '--prices': stats shows what `dsh-audit index` stored; give --prices to "
        "`dsh-audit index`, which reads the logs again with it (hint: see `dsh-audit index --help`)"])


def test_stats_keeps_clicks_suggestion_for_a_typo_of_its_own(monkeypatch, capsys):
    assert invoke(monkeypatch, capsys, "stats", "--sinc", "x") == (2, "", [
        "error: No such option '--sinc'. (Did you mean one of: '--json', '--since'?) (hint: see `dsh-audit stats --help`)"])


# -- item 4: DSH's "upgrade the harness" ---------------------------------------------------------

def _header_edited(tmp_path: Path, name: str, **changes: object) -> str:
    log = chat_log(tmp_path / name, "s-v")
    lines = log.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header.update(changes)
    for key in [key for key, value in changes.items() if value is None]:
        del header[key]
    lines[0] = json.dumps(header, separators=(",", ":")) + "\n"
    log.write_text("".join(lines))
    return name


def test_a_v1_header_dsh_refuses_says_what_dsh_audit_finds_wrong(tmp_path, monkeypatch, capsys):
    """The tokenised pre-release fixtures (``version: 1``, no delegationDepth): DSH's refusal is kept
    (docs/fidelity.md), and the hint says what dsh-audit, which reads v1, misses in the header."""
    monkeypatch.chdir(tmp_path)
    name = _header_edited(tmp_path, "v1.jsonl", version=1, delegationDepth=None)
    for lenient in ((), ("--lenient",)):
        assert invoke(monkeypatch, capsys, "requests", name, *lenient) == (2, "", [
            "error: v1.jsonl:1: corrupt session log: first line is not a session header of v1: no delegationDepth; "
            'DSH 0.1.0-rc.8, which reads only v0, refuses it as: session "s-v" uses log format v1, but this harness '
            "reads only v0: the log was written by a newer harness (hint: a v1 "  # fix W: no upgrade mends a field
            'header needs type "session", version, a string id, integer createdAt and delegationDepth; '
            "`dsh-audit validate FILE` lists every header field DSH refuses (DSH209); --lenient fills a missing "
            "version/delegationDepth of a v0 header only; nor is it a session the claude-code or codex importer "
            "recognises)"])
    name = _header_edited(tmp_path, "v2.jsonl", version=2, id=7)
    assert invoke(monkeypatch, capsys, "requests", name)[2][0].endswith(
        "(hint: `dsh-audit validate FILE` lists every header field DSH refuses (DSH207, DSH216); nor "
        "is it a session the claude-code or codex importer recognises)")
    # fix W: with other faults beside the mistyped one, the hint names every fault's rule, as the message lists them
    name = _header_edited(tmp_path, "v2b.jsonl", version=2, id=7, createdAt=1.5, origin=7)
    assert invoke(monkeypatch, capsys, "requests", name)[2][0].endswith(
        "(hint: `dsh-audit validate FILE` lists every header field DSH refuses (DSH207, DSH208, "
        "DSH210, DSH216); nor is it a session the claude-code or codex importer recognises)")  # session 44: isSeeded too


@pytest.mark.parametrize("missing, said", [
    (("delegationDepth",), "no delegationDepth (hint: write delegationDepth (0 for a top-level session), or "
                           "--lenient reads it as 0"),
    (("version", "delegationDepth"), "no version; no delegationDepth (hint: write version and delegationDepth (0 for "
                                     "a top-level session), or --lenient reads them as 0"),
])
def test_a_header_lenient_reads_names_lenient(tmp_path, monkeypatch, capsys, missing, said):
    """The tokenised test fixtures' v0 headers: the hint says --lenient reads this one (it said
    what a header needs, and that --lenient fills "a missing v0 version/delegationDepth")."""
    monkeypatch.chdir(tmp_path)
    name = _header_edited(tmp_path, "v0.jsonl", **dict.fromkeys(missing))
    assert invoke(monkeypatch, capsys, "requests", name) == (2, "", [
        f"error: v0.jsonl:1: corrupt session log: first line is not a session header: {said}, "
        "as DSH's test oracle does; nor is it a session the claude-code or codex importer recognises)"])
    assert invoke(monkeypatch, capsys, "requests", name, "--lenient")[0] == 0


def test_a_version_refused_by_max_version_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    name = _header_edited(tmp_path, "v1.jsonl", version=1)
    assert invoke(monkeypatch, capsys, "requests", name, "--max-version", "0") == (2, "", [
        'error: v1.jsonl:1: session "s-v" uses log format v1, but this harness reads only v0: the log was written by '
        "a newer harness — upgrade the harness to open it (hint: --max-version 0 reads only v0; without it "
        "dsh-audit reads v0-v4)"])
    assert invoke(monkeypatch, capsys, "requests", name, "--max-version", "2")[0] == 0
    name = _header_edited(tmp_path, "v9.jsonl", version=9)
    assert invoke(monkeypatch, capsys, "requests", name)[2] == [
        'error: v9.jsonl:1: session "s-v" uses log format v9, but this harness reads only v0-v4: the log was written '
        "by a newer harness — upgrade the harness to open it (hint: dsh-audit reads released formats v0-v4; a newer "
        "number comes from a fork or a newer DSH)"]


# -- item 3: one Markdown escaper, no link ------------------------------------------------------

@pytest.mark.parametrize("text, inline, cell", [
    # GFM autolinks these after escapes are resolved: a code span, whole
    ("[click](http://evil.example.com/x)", "`[click](http://evil.example.com/x)`", None),
    ("see http://evil.example.com", "`see http://evil.example.com`", None),
    ("(https://evil.example.com/x)", "`(https://evil.example.com/x)`", None),
    ("WWW.evil.example.com", "`WWW.evil.example.com`", None),
    ("mail me@evil.example.com", "`mail me@evil.example.com`", None),
    ("a `b` | www.x.y", "``a `b` | www.x.y``", "``a `b` \\| www.x.y``"),
    ("`x` www.x.y `", "`` `x` www.x.y ` ``", None),
    ("ftp://x.y ``` z", "````ftp://x.y ``` z````", None),
    # no autolink: backslash escapes, the one set
    ("<img src=x> & *a* | b_c", "\\<img src=x\\> \\& \\*a\\* \\| b\\_c", None),
    ("f(x) {y} +1 !z", "f(x) {y} +1 !z", None),
    ("\x1b]8;;http://evil\x07", "`\\u001b]8;;http://evil\\u0007`", None),
])
def test_log_text_in_markdown_never_becomes_a_link(text, inline, cell):
    assert markdown_inline(text) == inline
    assert markdown_inline(text, cell=True) == (cell or inline)
    assert markdown_text(text) == inline
    assert _md(text) == inline and _md(text, cell=True) == (cell or inline)


def test_a_line_start_is_escaped_as_before():
    assert (markdown_text("  - item"), markdown_text("1. x"), markdown_text("# h")) == ("\\- item", "1\\. x", "\\# h")


def test_a_hostile_title_and_path_in_sessions_markdown_and_check_summary(tmp_path, monkeypatch, capsys):
    """Tour 38 finding 4: ``\\[click\\](http://evil.example.com/x)`` was still a link on GitHub."""
    b = LogBuilder(session_id="s-hostile")
    with b.turn("hi"), b.step():
        b.assistant("Hello")
    b.title("[click](http://evil.example.com/x) www.evil.example.com `a` | b")
    b.write_jsonl(tmp_path / "www.evil.example.com" / "session.jsonl", packed=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "www.evil.example.com/session.jsonl", "--format",
                          "markdown", "--no-cost")
    assert code == 0
    assert out.splitlines()[-3:] == [
        "| 2027-01-15 08:00 | ``[click](http://evil.example.com/x) www.evil.example.com `a` \\| b`` | "
        "/home/dev/project | 2 | 8 | - | - | - | 2027-01-15 08:00 | v0 | s-hostile |",
        "| total |  |  | 2 | 8 | - | - | - |  |  |  |", ""]  # the total row, then the blank line ending the table
    code, out, _ = invoke(monkeypatch, capsys, "check", "www.evil.example.com/session.jsonl", "--markdown", "-")
    assert code == 0
    assert "| ✅ pass | `www.evil.example.com/session.jsonl` | s-hostile | 2 | none | 0 |" in out
    assert "— `www.evil.example.com/session.jsonl`" in out
