"""The ``dsh-audit`` command line: parse options, call one library function, render.

Each command lives in its own ``cli/_<name>.py`` module exporting ``COMMANDS``; the group below
names every command in ``_COMMANDS`` and imports a command's module only when that command is
used (``--version`` imports none; ``--help`` imports them all to list their summaries).

Every option can come from the environment variable ``DSH_AUDIT_<COMMAND>_<OPTION>``, named after
its long option (``check --policy``: ``DSH_AUDIT_CHECK_POLICY``), which its ``--help`` shows; click's
own name, after the option's Python parameter (``DSH_AUDIT_CHECK_POLICY_PATH``), is read after it as
an older spelling. A variable is its option's default: the option typed on the command line wins
over it, and over a variable of an option that asks for something else (``DSH_AUDIT_CHECK_JSON=1``
with ``--format csv``: CSV); two such variables are an error naming both
(:func:`~dsh_audit.cli._given.give_way`), and an error about a value read from a variable names
the variable (``DSH_AUDIT_CHECK_FORMAT=xml: ...``). A ``DSH_AUDIT_*`` variable that no command reads
is named in a warning, with the closest one it may have meant.
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
import time
from collections.abc import Callable as _CallableABC
from collections.abc import Iterable as _Iterable
from types import FrameType as _FrameType

import click

from .. import _version
from .._version import __version__
from ._common import discard_stdout_when_gone as _discard_stdout_when_gone
from ._common import escape_unencodable_stdout as _escape_unencodable_stdout
from ._common import on_stdout_gone as _on_stdout_gone
from ._common import run_guarded as _run_guarded

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

#: What every environment variable dsh-audit reads starts with (click's ``auto_envvar_prefix``).
_PREFIX = "DSH_AUDIT"

#: The environment variables read besides the options' own (docs/cli.md says what each sets; the
#: last two are the test suite's, tests/README.md): never named as unknown.
_VARIABLES = frozenset({"DSH_AUDIT_ADAPTER", "DSH_AUDIT_ATTACHMENTS", "DSH_AUDIT_MAX_DECODED", "DSH_AUDIT_MAX_RATIO", "DSH_AUDIT_PAGER",
                        "DSH_AUDIT_NO_CAPTURE", "DSH_AUDIT_PROFILE", "DSH_AUDIT_PROGRESS_DELAY", "DSH_AUDIT_TRACEBACK",
                        "DSH_AUDIT_SLOW", "DSH_AUDIT_HYPOTHESIS_PROFILE"})


_Callback = _CallableABC[[click.Context, click.Parameter, object], object]


def _accept_pager(command: click.Command) -> None:
    """``--pager/--no-pager`` on every command (issue 14: one set of options works on each): a
    command that prints no listing (``index``, ``redact``, ``report``, ``watch``) never pages, and
    takes the option hidden, doing nothing, so that a script or alias passing ``--no-pager`` to
    every command is not refused."""
    if not any(isinstance(param, click.Option) and "--pager" in param.opts for param in command.params):
        command.params.append(click.Option(["--pager/--no-pager"], default=True, hidden=True, expose_value=False,
                                           help="Accepted on every command; this one prints no listing and "
                                                "never pages."))


def _refuse_empty_paths(command: click.Command) -> None:
    """An option that takes a path refuses an empty one (a usage error naming the option), as a
    PATH argument does: ``--capture ""`` would otherwise read the current folder, and ``--sarif ""``
    run the whole check before failing to write (issue 15: an empty path is a usage error). The
    sentence is the library's (:func:`dsh_audit._paths.empty_path_error`), naming the option."""
    for param in command.params:
        if isinstance(param, click.Option) and isinstance(param.type, click.Path):
            param.callback = _no_empty(param.callback)


def _no_empty(callback: _Callback | None) -> _Callback:
    def check(ctx: click.Context, param: click.Parameter, value: object) -> object:
        if value == "" and ctx.get_parameter_source(param.name or "") != click.core.ParameterSource.ENVIRONMENT:
            # the library's sentence (load_prices, open_index, redact say it too); imported here,
            # when an empty path is met, so that --version imports no library code
            from .._paths import empty_path_error

            raise click.UsageError(empty_path_error(*param.opts).message, ctx=ctx)
        return value if callback is None else callback(ctx, param, value)
    return check


# ``--help`` lists the commands in the order of work, each section a step, each summary whole.
_WORKFLOW = (
    ("Find and read sessions", ("sessions", "requests", "show", "render")),
    ("Cache and cost", ("breaks", "explain", "cache", "usage", "watch")),
    ("Prove and gate", ("validate", "diff", "check", "report")),
    ("Share", ("redact",)),
    ("Fleets", ("index", "stats")),
)


# The summary ``--help`` lists for a command whose help's first sentence says more than what the
# command does (report's names its default paths and window, which every command's own --help says):
# every summary is one plain sentence, with no parenthesis.
_SUMMARIES = {"report": "Write one self-contained HTML forensics page for session logs."}


# U+2011 NON-BREAKING HYPHEN: one column wide like "-" but no hyphen to textwrap. click wraps help
# with click.formatting.wrap_text, whose TextWrapper keeps textwrap's break_on_hyphens=True and
# takes no option to turn it off, so "--fail-on-any-break" or "docs/cache-retention.md" would be
# split at a hyphen; holding the hyphens as U+2011 while click wraps makes it break at whitespace.
_HELD_HYPHEN = "\u2011"


# U+00A0 NO-BREAK SPACE, for the same reason: the "[env var:" of click's "[env var: NAME]" after an
# option's help stays on one line ("[env" at the end of one and "var: NAME]" on the next reads badly).
_HELD_SPACE = "\u00a0"
_ENV_NOTE = "[env var:"


def _hold_breaks(text: str) -> str:
    """``text`` with no break click's wrapping may take at a hyphen, nor inside "[env var:"."""
    return text.replace("-", _HELD_HYPHEN).replace(_ENV_NOTE, _ENV_NOTE.replace(" ", _HELD_SPACE))


class _WholeWordFormatter(click.HelpFormatter):
    """click's help formatter, wrapping at whitespace only: the text click wraps (usage, help,
    definition lists) goes in with its hyphens held (:data:`_HELD_HYPHEN`), and every string
    written to the buffer comes out with them given back, so an option name, path or package
    name is never split over two lines (issue 14), nor the "[env var:" click puts before an option's
    environment variable. A U+2011 (U+00A0) in the help itself is written as "-" (" ")."""

    def write(self, string: str) -> None:
        super().write(string.replace(_HELD_HYPHEN, "-").replace(_HELD_SPACE, " "))

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog, _hold_breaks(args), prefix)

    def write_text(self, text: str) -> None:
        super().write_text(_hold_breaks(text))

    def write_dl(self, rows: _Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        super().write_dl([(_hold_breaks(term), _hold_breaks(text)) for term, text in rows], col_max, col_spacing)


class _HelpContext(click.Context):
    """The context of the group and of each of its commands: help wrapped at whitespace only, each
    option's environment variable shown after its help."""

    formatter_class = _WholeWordFormatter

    def get_help(self) -> str:
        # click's show_envvar, set for the help only: set for good, it would also put the variable in
        # every error about the option's value ("--jobs (env var: ...)") wherever the value came from;
        # an error about a value read from a variable names it (run_guarded: "VARIABLE=value: ...").
        options = [param for param in self.command.params if isinstance(param, click.Option) and param.envvar
                   and not param.show_envvar]
        for option in options:
            option.show_envvar = True
        try:
            return super().get_help()
        finally:
            for option in options:
                option.show_envvar = False


class _LazyGroup(click.Group):
    """A group whose commands are imported on first use, from the :data:`_COMMANDS` table; it and
    its commands format their help with :class:`_WholeWordFormatter`."""

    context_class = _HelpContext

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        # A command's own context_class makes its --help's context (click.Command.make_context).
        cmd.context_class = _HelpContext
        cmd.short_help = cmd.short_help or _SUMMARIES.get(name or cmd.name or "")
        _accept_pager(cmd)
        from ._environment import name_variables  # here: --version and `import dsh_audit.cli` load no command

        name_variables(cmd, name or cmd.name or "")
        _refuse_empty_paths(cmd)
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

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            module = importlib.import_module(f"{__name__}.{_COMMANDS[cmd_name]}")
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with every command loaded first when the name given is none of them: click
        suggests the close names among the commands loaded (``session``: "Did you mean
        'sessions'?"), which are none in a lazy group."""
        if args and not ctx.resilient_parsing and args[0] not in _COMMANDS:
            for name in _COMMANDS:
                self.get_command(ctx, name)
        resolved = super().resolve_command(ctx, args)
        if resolved[0] in _UNTIL_STOPPED and not ctx.resilient_parsing:
            _on_stdout_gone(_stop_as_sigterm_does)
        return resolved


#: The commands that run until they are stopped: stdout's reader going away (``watch | head``)
#: stops one as SIGTERM does (its summary, exit 0); every other command runs to its end.
_UNTIL_STOPPED = frozenset({"watch"})


def _stop_as_sigterm_does() -> None:
    """Stop the running command through its own SIGTERM handler, when it has one (``watch``
    installs it before it prints its first line)."""
    if callable(signal.getsignal(signal.SIGTERM)):
        signal.raise_signal(signal.SIGTERM)


@click.group(cls=_LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": _PREFIX})
@click.version_option(__version__, prog_name="dsh-audit", allow_from_autoenv=False, message=(
    f"%(prog)s %(version)s: reads DSH session logs of format v{_version.LOG_FORMATS[0]}-v{_version.LOG_FORMATS[-1]} "
    f"(v0 as DSH {_version.DSH_RELEASE} reads it; --max-version 0 reads only v0, as that release does) and "
    f"renders DSH's native DeepSeek requests and pi-ai {_version.PI_AI_RELEASE}'s Anthropic and OpenAI ones"))
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Replay and audit DeepSeek Harness (DSH) session logs.

    Every LLM request DSH sends is a pure function of its session log; dsh-audit rebuilds those
    requests without DSH and checks them.

    \b
    Example:
        dsh-audit requests ~/.dsh/sessions
    """
    from ._environment import refuse_bad_adapter, warn_unknown_variables

    warn_unknown_variables(ctx)
    refuse_bad_adapter()


class _FirstInterrupt:
    """The console script's Ctrl-C: the first SIGINT raises KeyboardInterrupt, as Python's own handler
    does, and every later one is ignored (fuzz round 16: a second Ctrl-C, or the copy ``timeout`` or a
    CI runner forwards to the process group, interrupted the cleanup the first one started, a
    finalizer or the interpreter's exit, with a traceback). A KeyboardInterrupt that a finalizer
    swallowed (``__del__``: Python prints it and goes on) is sent again until the main flow gets it,
    so the first Ctrl-C is never lost."""

    __slots__ = ("armed", "fired", "hook", "in_hook", "late", "lost")

    def __init__(self) -> None:
        self.armed = self.fired = self.in_hook = self.late = self.lost = False
        self.hook = sys.unraisablehook

    def arm(self) -> None:
        """Take SIGINT over where Python's own handler has it (where it is ignored, ``nohup`` or an
        ``&`` of a script, it stays ignored)."""
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.armed, self.hook = True, sys.unraisablehook
            sys.unraisablehook = self.unraisable
            signal.signal(signal.SIGINT, self.interrupt)

    def interrupt(self, signum: int, frame: _FrameType | None) -> None:
        if not self.armed or self.in_hook or self.fired and not self.lost:
            return  # a later Ctrl-C (the first one is being handled or sent again), or one as main ends
        self.fired, self.lost = True, False
        raise KeyboardInterrupt

    def unraisable(self, unraisable: sys.UnraisableHookArgs) -> None:
        if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and self.fired):
            self.hook(unraisable)
            return
        self.in_hook = True
        if not self.lost:
            self.lost = True
            threading.Thread(target=self._resend, name="dsh-audit-interrupt", daemon=True).start()
        self.in_hook = False

    def _resend(self) -> None:
        """Interrupt the main thread until it has the KeyboardInterrupt a finalizer swallowed."""
        main = threading.main_thread().ident
        while self.lost and main is not None:
            signal.pthread_kill(main, signal.SIGINT)
            time.sleep(0.01)

    def finish(self, *, exiting: bool = False) -> None:
        """Give Python's handler and hook back (``main`` may run in a process that goes on: a test).
        After an interrupt SIGINT is ignored instead: the interpreter's exit then runs to its end
        (finalizers, thread joins, multiprocessing's clean-up of the pool's semaphores, which
        ``os._exit`` would skip) and no later Ctrl-C can cut it short with a traceback. ``exiting``:
        the process ends after ``main`` (the console script), so SIGINT is never Python's again (its
        KeyboardInterrupt in the interpreter's exit killed the run by SIGINT, fuzz round 34B): a
        Ctrl-C is only noted (:attr:`late`), for ``main`` to answer."""
        if self.armed:
            self.armed = self.lost = False  # first: a Ctrl-C from here on is ignored
            sys.unraisablehook = self.hook
            signal.signal(signal.SIGINT, signal.SIG_IGN if self.fired else self.note_late if exiting
                          else signal.default_int_handler)

    def note_late(self, signum: int, frame: _FrameType | None) -> None:
        self.late = True

    def ignore_from_now(self) -> None:
        """SIGINT ignored to the process's end, after ``finish(exiting=True)``: Python gives a signal
        that has a handler of its own the default action back as it finalizes, so a Ctrl-C there
        killed the run by SIGINT (rc -2, fuzz round 34B); an ignored one stays ignored."""
        if signal.getsignal(signal.SIGINT) == self.note_late:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def main(*, exiting: bool = False) -> None:
    """The command line: exit codes 0 clean, 1 findings, 2 bad input or usage, 3 an unexpected error,
    130 interrupted (Ctrl-C: ``aborted`` on stderr, however many times it is pressed). ``exiting``:
    the process ends when this returns (the console script, :func:`dsh_audit.__main__.main`, which
    guards the start-up before this): a Ctrl-C after the command's work is still 130 and ``aborted``,
    and one as the interpreter exits is ignored."""
    interrupts = _FirstInterrupt()
    restore_stdout = _discard_stdout_when_gone()  # a reader that stops early (``| head``) changes no exit code
    try:
        interrupts.arm()
        _escape_unencodable_stdout()
        code = _run_guarded(cli)
        interrupts.finish(exiting=exiting)  # in here: a Ctrl-C as it starts is still this run's
    except KeyboardInterrupt:  # one outside click's handling of it (which says "aborted" itself)
        click.echo("aborted", err=True)
        code = 130
    interrupts.finish(exiting=exiting)  # once it has fired, Ctrl-C cannot interrupt this (nor what follows)
    restore_stdout()
    interrupts.ignore_from_now()  # first: a Ctrl-C up to here is noted, one after it ignored
    if interrupts.late:  # after the command's work: still an interrupted run
        click.echo("aborted", err=True)
        code = 130
    sys.exit(code)
