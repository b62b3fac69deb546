"""``--sort``, one name on `sessions`, `usage` and `stats` (their ``--since/--until`` are
:func:`dsh_audit.cli._when.window_options`: the sessions active in a window, or the requests
sent in it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

__all__ = ["sort_option"]


def sort_option(choices: tuple[str, ...], *, meaning: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--sort CHOICE`` (``sort``): the order of a listing's rows, the first of ``choices`` by
    default; ``meaning`` is its help (what each choice orders by)."""
    return click.option("--sort", type=click.Choice(choices), default=choices[0], show_default=True,
                        help=meaning)
