"""At 80 columns every ``--help`` wraps at whitespace only: no option name, path or package name is
split at a hyphen over two lines (issue 14)."""

from __future__ import annotations

import re

import click
import pytest

from dsh_audit.cli import cli

from _cli import invoke

WIDTH = 80
# A line ending in a word and a hyphen ("--fail-", "docs/cache-"), the next going on with the word.
_BROKEN_END = re.compile(r"\w-$")
_GOES_ON = re.compile(r"\s*\w")


def _commands() -> list[tuple[str, click.Command]]:
    context = click.Context(cli)  # the group imports each command's module on demand
    found = [(name, cli.get_command(context, name)) for name in cli.list_commands(context)]
    return [(name, command) for name, command in found if command is not None]


COMMANDS = _commands()


def hyphen_breaks(lines: list[str]) -> list[tuple[str, str]]:
    """The pairs of lines where a word was broken at a hyphen."""
    return [(line, after) for line, after in zip(lines, lines[1:])
            if _BROKEN_END.search(line.rstrip()) and _GOES_ON.match(after)]


def long_options(command: click.Command) -> list[str]:
    """The ``--name`` spellings of the command's shown options, ``--help`` included."""
    names = ["--help"]
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            names += [name for name in [*param.opts, *param.secondary_opts] if name.startswith("--")]
    return names


def whole_on_a_line(name: str, lines: list[str]) -> bool:
    token = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
    return any(token.search(line) for line in lines)


def help_lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    code, out, err = invoke(monkeypatch, capsys, *args, "--help")
    assert (code, err) == (0, [])
    return out.splitlines()


def _write_sample(formatter: click.HelpFormatter) -> list[str]:
    formatter.write_usage("dsh-audit breaks", "[OPTIONS] [--fail-on-any-break]")
    formatter.write_text("Exit 1 when a break is unexplained (--fail-on-any-break: when any).")
    formatter.write_dl([("--fail-on-any-break", "needs pip install 'dsh-audit[dask]' (docs/cache-retention.md)")])
    return formatter.getvalue().splitlines()


def test_the_checks_catch_what_clicks_own_formatter_does() -> None:
    """The checks below can fail: at 50 columns click's own formatter splits at hyphens."""
    lines = _write_sample(click.HelpFormatter(width=50))
    assert lines == [
        "Usage: dsh-audit breaks [OPTIONS] [--fail-on-any-",
        "                        break]",
        "Exit 1 when a break is unexplained (--fail-on-any-",
        "break: when any).",
        "--fail-on-any-break  needs pip install 'dsh-",
        "                     audit[dask]' (docs/cache-",
        "                     retention.md)",
    ]
    assert len(hyphen_breaks(lines)) == 4
    assert whole_on_a_line("--fail-on-any-break", lines)  # the dl term is never wrapped
    assert not whole_on_a_line("--fail-on-any-break", lines[:4])


def test_the_groups_formatter_wraps_usage_text_and_lists_at_whitespace() -> None:
    context = cli.context_class(cli, info_name="dsh-audit", terminal_width=50, max_content_width=50)
    assert _write_sample(context.make_formatter()) == [
        "Usage: dsh-audit breaks [OPTIONS]",
        "                        [--fail-on-any-break]",
        "Exit 1 when a break is unexplained",
        "(--fail-on-any-break: when any).",
        "--fail-on-any-break  needs pip install",
        "                     'dsh-audit[dask]'",
        "                     (docs/cache-retention.md)",
    ]


def test_the_group_help_at_80_columns_splits_no_word(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    lines = help_lines(monkeypatch, capsys)
    assert hyphen_breaks(lines) == []
    assert [name for name in ("--help", "--version") if not whole_on_a_line(name, lines)] == []
    assert [name for name, _ in COMMANDS if not whole_on_a_line(name, lines)] == []


@pytest.mark.parametrize("name, command", COMMANDS, ids=[name for name, _ in COMMANDS])
def test_every_command_help_at_80_columns_splits_no_word(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], name: str,
                                                         command: click.Command) -> None:
    lines = help_lines(monkeypatch, capsys, name)
    assert lines[0].startswith(f"Usage: dsh-audit {name} ")
    assert hyphen_breaks(lines) == []
    assert [option for option in long_options(command) if not whole_on_a_line(option, lines)] == []


def test_every_help_line_fits_80_columns(monkeypatch, capsys) -> None:
    """Example blocks are not rewrapped (click's \\b): each must fit as written."""
    for name in sorted(cli.list_commands(click.Context(cli))):
        monkeypatch.setenv("COLUMNS", "80")
        code, out, _ = invoke(monkeypatch, capsys, name, "--help")
        assert code == 0 and [line for line in out.splitlines() if len(line) > 80] == [], name
