"""The ``dsh-audit`` command line: parse options, call one library function, render.

Each command lives in its own ``cli/_<name>.py`` module exporting ``COMMANDS``; the group below
registers every module listed in ``_COMMAND_MODULES``.
"""

from __future__ import annotations

import importlib
import sys

import click

from .. import __version__
from ._common import run_guarded as _run_guarded

__all__ = ["cli", "main"]

_COMMAND_MODULES = ("_requests", "_render", "_diff", "_attribution", "_cache", "_check", "_validate", "_fleet")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "DSH_AUDIT"})
@click.version_option(__version__, prog_name="dsh-audit")
def cli() -> None:
    """Replay and audit DeepSeek Harness (DSH) session logs.

    Every LLM request DSH sends is a pure function of its session log; dsh-audit rebuilds those
    requests without DSH and checks them.

    \b
    Example:
        dsh-audit requests ~/.dsh/sessions
    """


def _register() -> None:
    for name in _COMMAND_MODULES:
        for command in importlib.import_module(f"{__name__}.{name}").COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    """Console entry point: exit codes 0 clean, 1 findings, 2 bad input or usage."""
    sys.exit(_run_guarded(cli))
