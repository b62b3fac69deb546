"""The ``DSH_AUDIT_`` environment variables of the command line: each option's own, named after its
long option (``check --policy``: ``DSH_AUDIT_CHECK_POLICY``), a ``DSH_AUDIT_*`` variable no command
reads named in a warning with the closest one it may have meant, and a ``$DSH_AUDIT_ADAPTER`` that
names no adapter refused. Loaded with the first command (``--version`` loads none of it).
"""

from __future__ import annotations

import os

import click

from ..errors import UsageError, did_you_mean
from . import _PREFIX, _VARIABLES
from ._common import echo_warning

__all__ = ["name_variables", "refuse_bad_adapter", "warn_unknown_variables"]


def _variable(*words: str) -> str:
    """``DSH_AUDIT_<WORD>_<WORD>``: upper case, dashes as underscores (as click spells a command's part)."""
    return "_".join((_PREFIX, *words)).upper().replace("-", "_")


def name_variables(command: click.Command, name: str) -> None:
    """Name each option's environment variable after its first long option (its ``--help`` shows it).
    click would name it after the Python parameter (``policy_path``), which a user never sees; that
    name stays readable, after this one, as click's ``auto_envvar_prefix`` fallback."""
    for param in command.params:
        if isinstance(param, click.Option) and param.envvar is None and param.allow_from_autoenv:
            long = next((opt for opt in param.opts if opt.startswith("--")), None)
            if long is not None:
                param.envvar = _variable(name, long.removeprefix("--"))


def _option_variables(command: click.Command, name: str) -> dict[str, str]:
    """Every environment variable the options of command ``name`` read -> the one its help names:
    ``DSH_AUDIT_<COMMAND>_<OPTION>`` itself, and the older spelling after the parameter."""
    known: dict[str, str] = {}
    for param in command.params:
        if isinstance(param, click.Option) and isinstance(param.envvar, str):
            known[param.envvar] = param.envvar
            if param.name:
                known.setdefault(_variable(name, param.name), param.envvar)
    return known


def warn_unknown_variables(ctx: click.Context) -> None:
    """Say each ``DSH_AUDIT_*`` environment variable that no command reads, with the closest known
    name: a misspelt one would otherwise be ignored in silence (and ``check`` gate with its default
    policy instead of the one the variable names). The running command's variables are looked at
    first, so that the other commands are imported only when a variable is not one of its."""
    group = ctx.command
    assert isinstance(group, click.Group)
    known = {name: name for name in _VARIABLES}
    unknown = sorted(name for name in os.environ if name.startswith(_PREFIX + "_") and name not in known)
    for names in ([ctx.invoked_subcommand or ""], group.list_commands(ctx)):
        for name in names:
            command = group.get_command(ctx, name)
            known.update(_option_variables(command, name) if command is not None else {})
        unknown = [name for name in unknown if name not in known]
        if not unknown:
            return
    # compared without the prefix they all share, which would make any two names look alike
    tails = {name.removeprefix(_PREFIX): shown for name, shown in known.items()}
    for name in unknown:
        echo_warning(f"{name} is not a dsh-audit variable"
                     + did_you_mean(name.removeprefix(_PREFIX), tails, shown=tails.__getitem__))


#: ``$DSH_AUDIT_ADAPTER`` (the library's ``session.ADAPTER_ENV``, not imported: ``--version`` loads no
#: library code), the wire format forced on every request a command renders (``--adapter`` sets it).
_ADAPTER_VARIABLE = "DSH_AUDIT_ADAPTER"


def refuse_bad_adapter() -> None:
    """Refuse a ``$DSH_AUDIT_ADAPTER`` that names no adapter (``bogus``, ``Anthropic``, `` openai``):
    the library would render each request's own route instead, in silence, while the user asked
    for one format. Unset or empty, it forces none.

    Raises:
        UsageError: one line naming the variable, its value (escaped on output) and the valid ones.
    """
    value = os.environ.get(_ADAPTER_VARIABLE)
    if not value:
        return
    # here, not at import: ``--version`` and a run without the variable load no option module
    from ._options import ADAPTER_CHOICES

    valid = ("auto", *ADAPTER_CHOICES)
    if value not in valid:
        raise UsageError(f"{_ADAPTER_VARIABLE}={value!r} names no adapter: expected {', '.join(valid)}",
                          hint="set it to one of them, or unset it to take each request's route from the log")
