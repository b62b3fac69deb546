"""How an option's value was given: typed, from its environment variable or its default
(:func:`option_variable`, :func:`given_as`), the one decider of two options that conflict
(:func:`give_way`: a typed option over its ``DSH_AUDIT_*`` variable over a default), and the one
line a usage error is said as (:func:`usage_error_text`: a value read from a variable names the
variable). :func:`dsh_audit.cli._common.run_guarded` imports it only for a usage error:
``--version`` loads no module of ``cli/`` but ``_common``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import click

from ..errors import UsageError

__all__ = ["give_way", "given_as", "option_variable", "usage_error_text"]


def usage_error_text(exc: click.UsageError, command: click.Group) -> str:
    """The one line a usage error of ``command`` (the group) is said as, like every other error:
    the message (escaped like log text when said: it may quote an argument), where the usage is and
    its help, instead of click's three-line block; an option of the command that builds what the
    running one shows (:data:`_STORED_BY`) named as that command's, and a value read from an
    environment variable named as that variable (:func:`_from_variable`)."""
    names, ctx = [], exc.ctx or _usage_context(command)
    stored = _stored_option(exc, ctx)
    while ctx is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    where = " ".join(["dsh-audit", *reversed(names[:-1])])  # the root's name is however it was started
    if stored is not None:
        return f"{stored} (hint: see `dsh-audit {_STORED_BY[names[0]]} --help`)"
    return f"{_from_variable(exc)}{exc.format_message()} (hint: see `{where} --help`)"


def _usage_context(group: click.Group) -> click.Context | None:
    """The context of the command a usage error with none came from: click raises some errors of
    an option's value before the command's context holds it (a bare ``--prices`` at the end:
    ``BadOptionUsage`` from its parser, with no context), so that the hint would name the group's
    help instead of the command's. The command line (``sys.argv``) is read again resiliently
    (no callback runs, no error is raised) for the command's name; None when it cannot be."""
    try:
        root = group.make_context("dsh-audit", sys.argv[1:], resilient_parsing=True)
        # the command's name and its arguments (click 8.1 names the first ``protected_args``)
        protected = getattr(root, "_protected_args", None)
        given = [*(root.protected_args if protected is None else protected), *root.args]
        name, command, _ = group.resolve_command(root, given) if given else (None, None, [])
    except (click.ClickException, click.exceptions.Exit, IndexError):
        return None
    if command is None or name is None:
        return root
    return click.Context(command, info_name=name, parent=root)


#: A command that shows what another one stored, by name (``stats`` reads the index ``index``
#: built): an option of the other given to it is an option of the other (``stats --prices``: the
#: costs were priced when the logs were indexed), not a typo of its own closest option.
_STORED_BY = {"stats": "index"}


def _stored_option(exc: click.UsageError, ctx: click.Context | None) -> str | None:
    """The message of ``exc`` when it is an option :data:`_STORED_BY`'s command takes instead of
    the running one (``No such option '--prices': ...``), else None."""
    builder = _STORED_BY.get(ctx.info_name or "") if ctx is not None else None
    if builder is None or ctx is None or ctx.parent is None or not isinstance(exc, click.NoSuchOption):
        return None
    group = ctx.parent.command
    other = group.get_command(ctx.parent, builder) if isinstance(group, click.Group) else None
    option = exc.option_name
    if other is None or not any(option in (*param.opts, *param.secondary_opts) for param in other.params):
        return None
    return (f"No such option {option!r}: {ctx.info_name} shows what `dsh-audit {builder}` stored; give "
            f"{option} to `dsh-audit {builder}`, which reads the logs again with it")


def _from_variable(exc: click.UsageError) -> str:
    """``VARIABLE=value: `` when ``exc`` is about the value of an option read from its environment
    variable (:func:`option_variable`), which click's message names only as the option; else ``""``."""
    param = getattr(exc, "param", None)
    if exc.ctx is None or not isinstance(param, click.Option) or param.name is None:
        return ""
    found = option_variable(param.name, exc.ctx)
    return "" if found is None else f"{'='.join(found)}: "


def option_variable(name: str, ctx: click.Context | None = None) -> tuple[str, str] | None:
    """The environment variable the value of parameter ``name`` of the running command (``ctx``)
    was read from, and that variable's value as set: its ``DSH_AUDIT_<COMMAND>_<OPTION>``, or the
    older spelling after the parameter, whichever click read (the first set and not empty). None
    when the value was typed, or is the option's default."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None or ctx.get_parameter_source(name) is not click.core.ParameterSource.ENVIRONMENT:
        return None
    param = next((p for p in ctx.command.params if p.name == name and isinstance(p, click.Option)), None)
    if param is None:
        return None
    names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
    if param.allow_from_autoenv and ctx.auto_envvar_prefix:
        names.append(f"{ctx.auto_envvar_prefix}_{name.upper()}")
    return next(((variable, os.environ[variable]) for variable in names if os.environ.get(variable)), None)


def given_as(name: str, typed: str, ctx: click.Context | None = None) -> str:
    """How the user gave parameter ``name`` of the running command, for a message: ``typed`` (the
    option as typed: ``--format csv``), or ``VARIABLE=value`` when it was read from its
    environment variable (:func:`option_variable`)."""
    found = option_variable(name, ctx)
    return typed if found is None else "=".join(found)


#: The hint of two options that ask for two things, both read from environment variables.
_VARIABLES_HINT = ("a DSH_AUDIT_<COMMAND>_<OPTION> variable is that option's default: unset one of them, or "
                   "give the option you mean on the command line")


def _explicitness(ctx: click.Context, name: str) -> int:
    """How directly parameter ``name`` was given: 0 typed, 1 from its environment variable, 2 a default."""
    source = ctx.get_parameter_source(name)
    ranks = {click.core.ParameterSource.COMMANDLINE: 0, click.core.ParameterSource.PROMPT: 0,
             click.core.ParameterSource.ENVIRONMENT: 1}
    return 2 if source is None else ranks.get(source, 2)


def give_way(first: str, second: str, *, typed: tuple[str, str], clash: Callable[[str, str], str],
             hint: str) -> str:
    """Of parameters ``first`` and ``second`` of the running command, which ask for two things
    together, the one that gives way (the caller drops its value): the less directly given one.
    An option typed on the command line wins over one read from its environment variable
    (``DSH_AUDIT_<COMMAND>_<OPTION>`` is that option's default), which wins over a default. The one
    decider of every pair of options that conflict (``--json`` and ``--format``, ``--since`` and
    ``--until``, ``--baseline`` and ``--no-baseline``).

    Raises:
        UsageError: both were given alike: the message is ``clash(A, B)``, A and B each option as
            typed (``typed``), or ``VARIABLE=value`` when both came from variables (then the hint
            says so; else it is ``hint``).
    """
    ctx = click.get_current_context()
    ranks = (_explicitness(ctx, first), _explicitness(ctx, second))
    if ranks[0] != ranks[1]:
        return first if ranks[0] > ranks[1] else second
    shown = (given_as(first, typed[0], ctx), given_as(second, typed[1], ctx))
    raise UsageError(clash(*shown), hint=_VARIABLES_HINT if ranks[0] == 1 else hint)
