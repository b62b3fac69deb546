"""Shared CLI plumbing: error conversion at the edge, common options, output helpers."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ..errors import DshAuditError

__all__ = ["EXIT_BAD_INPUT", "EXIT_FINDINGS", "EXIT_OK", "echo_error", "echo_warning", "json_option",
           "lenient_option", "run_guarded"]

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2


def echo_error(error: DshAuditError | str) -> None:
    click.echo(f"error: {error}", err=True)


def echo_warning(text: str) -> None:
    click.echo(f"warning: {text}", err=True)


def run_guarded(command: click.Group) -> int:
    """Run the click group; a DshAuditError becomes one line on stderr and exit 2."""
    try:
        result = command.main(standalone_mode=False)
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_BAD_INPUT
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return EXIT_BAD_INPUT if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except BrokenPipeError:
        sys.stderr.close()
        return EXIT_OK
    return result if isinstance(result, int) else EXIT_OK


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True,
                        help="One JSON object per line on stdout, for other tools.")(func)


def lenient_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--lenient`` and ``--max-version``: how strictly a log is read (passed as ``read_options``)."""
    func = click.option("--max-version", type=click.IntRange(0, 4), default=4, show_default=True,
                        help="Newest log format version to read; 0 reproduces DSH 0.1.0-rc.8, "
                             "which reads only v0.")(func)
    return click.option("--lenient", is_flag=True,
                        help="Accept headers DSH refuses only for metadata (missing version or "
                             "delegationDepth, non-absolute cwd), as for tokenised test fixtures.")(func)
