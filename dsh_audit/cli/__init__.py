"""The ``dsh-audit`` command line: parse options, call one library function, render.

Each command lives in its own ``cli/_<name>.py`` module exporting ``COMMANDS``; the group below
names every command in ``_COMMANDS`` and imports a command's module only when that command is
used (``--version`` imports none; ``--help`` imports them all to list their summaries).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable as _Iterable

import click

from .. import _version
from .._version import __version__
from ._common import escape_unencodable_stdout as _escape_unencodable_stdout
from ._common import run_guarded as _run_guarded
from ._common import silence_stdout as _silence_stdout

__all__ = ["cli", "main"]

# Command name -> the cli module whose ``COMMANDS`` defines it (tests/test_layers.py checks both ways).
_COMMANDS = {
    "breaks": "_attribution",
    "cache": "_cache",
    "check": "_check",
    "diff": "_diff",
    "explain": "_attribution",
    "index": "_fleet",
    "redact": "_redact",
    "render": "_render",
    "report": "_check",
    "requests": "_requests",
    "sessions": "_sessions",
    "show": "_requests",
    "stats": "_fleet",
    "usage": "_usage",
    "validate": "_validate",
    "watch": "_watch",
}


# ``--help`` lists the commands in the order of work, each section a step, each summary whole.
_WORKFLOW = (
    ("Find and read sessions", ("sessions", "requests", "show", "render")),
    ("Cache and cost", ("breaks", "explain", "cache", "usage", "watch")),
    ("Prove and gate", ("validate", "diff", "check", "report")),
    ("Share", ("redact",)),
    ("Fleets", ("index", "stats")),
)


# U+2011 NON-BREAKING HYPHEN: one column wide like "-" but no hyphen to textwrap. click wraps help
# with click.formatting.wrap_text, whose TextWrapper keeps textwrap's break_on_hyphens=True and
# takes no option to turn it off, so "--fail-on-any-break" or "docs/cache-retention.md" would be
# split at a hyphen; holding the hyphens as U+2011 while click wraps makes it break at whitespace.
_HELD_HYPHEN = "\u2011"


def _hold_hyphens(text: str) -> str:
    return text.replace("-", _HELD_HYPHEN)


class _WholeWordFormatter(click.HelpFormatter):
    """click's help formatter, wrapping at whitespace only: the text click wraps (usage, help,
    definition lists) goes in with its hyphens held (:data:`_HELD_HYPHEN`), and every string
    written to the buffer comes out with them given back, so an option name, path or package
    name is never split over two lines (issue 14). A U+2011 in the help itself is written as "-"."""

    def write(self, string: str) -> None:
        super().write(string.replace(_HELD_HYPHEN, "-"))

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog, _hold_hyphens(args), prefix)

    def write_text(self, text: str) -> None:
        super().write_text(_hold_hyphens(text))

    def write_dl(self, rows: _Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        super().write_dl([(_hold_hyphens(term), _hold_hyphens(text)) for term, text in rows], col_max, col_spacing)


class _HelpContext(click.Context):
    """The context of the group and of each of its commands: help wrapped at whitespace only."""

    formatter_class = _WholeWordFormatter


class _LazyGroup(click.Group):
    """A group whose commands are imported on first use, from the :data:`_COMMANDS` table; it and
    its commands format their help with :class:`_WholeWordFormatter`."""

    context_class = _HelpContext

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        # A command's own context_class makes its --help's context (click.Command.make_context).
        cmd.context_class = _HelpContext
        super().add_command(cmd, name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        ordered = [name for _, names in _WORKFLOW for name in names]
        return ordered + sorted({*self.commands, *_COMMANDS} - set(ordered))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands by step of the work (:data:`_WORKFLOW`), each with its whole summary (its
        help's first sentence, wrapped, never cut with "...")."""
        listed: set[str] = set()
        sections = [*_WORKFLOW, ("Other", tuple(n for n in self.list_commands(ctx)
                                                if all(n not in names for _, names in _WORKFLOW)))]
        for title, names in sections:
            rows = []
            for name in names:
                command = self.get_command(ctx, name)
                if command is not None and not command.hidden and name not in listed:
                    listed.add(name)
                    rows.append((name, command.get_short_help_str(limit=10_000)))
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> object:
        """A reader that stops early (``dsh-audit requests | head``) is not a failure: exit 0, as
        the command would have, instead of click's exit 1 on a broken pipe."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _silence_stdout()
            raise click.exceptions.Exit(0) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            module = importlib.import_module(f"{__name__}.{_COMMANDS[cmd_name]}")
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(cmd_name)


@click.group(cls=_LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "DSH_AUDIT"})
@click.version_option(__version__, prog_name="dsh-audit", message=(
    f"%(prog)s %(version)s: reads DSH session logs of format v{_version.LOG_FORMATS[0]}-v{_version.LOG_FORMATS[-1]} "
    f"(v0 as DSH {_version.DSH_RELEASE} reads it; --max-version 0 reads only v0, as that release does) and "
    f"renders DSH's native DeepSeek requests and pi-ai {_version.PI_AI_RELEASE}'s Anthropic and OpenAI ones"))
def cli() -> None:
    """Replay and audit DeepSeek Harness (DSH) session logs.

    Every LLM request DSH sends is a pure function of its session log; dsh-audit rebuilds those
    requests without DSH and checks them.

    \b
    Example:
        dsh-audit requests ~/.dsh/sessions
    """


def main() -> None:
    """Console entry point: exit codes 0 clean, 1 findings, 2 bad input or usage, 3 an unexpected error,
    130 interrupted."""
    _escape_unencodable_stdout()
    try:
        code = _run_guarded(cli)
    except KeyboardInterrupt:  # a second Ctrl-C while the first one is being handled
        click.echo("aborted", err=True)
        code = 130
    sys.exit(code)
