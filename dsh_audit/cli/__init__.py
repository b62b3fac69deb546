"""The ``dsh-audit`` command line: parse options, call one library function, render."""

from __future__ import annotations

import sys

import click

from .. import __version__
from ._common import run_guarded
from ._requests import requests_command, show_command

__all__ = ["cli", "main"]


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


cli.add_command(requests_command)
cli.add_command(show_command)


def main() -> None:
    """Console entry point: exit codes 0 clean, 1 findings, 2 bad input or usage."""
    sys.exit(run_guarded(cli))
