"""Options the listings of sessions and their costs share: ``--sort`` (one name on `sessions`,
`usage` and `stats`), and ``--since/--until`` for a command that sums the requests sent in a
window (`usage`, `stats`) rather than listing the sessions active in it.

Both windows are read by :func:`dsh_audit.cli._when.parse_when`, the one reader of a moment on
every command (a date, ``today``, ``yesterday``, a date-time, or an age such as ``24h`` or ``7d``);
only what a window keeps differs, and each command's ``--help`` says which.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ._when import _parse_since

__all__ = ["request_window_options", "sort_option"]

#: The forms of a moment every ``--since/--until`` takes, as the options' help names them.
_WHEN_FORMS = ("a date (2026-11-01, UTC), today or yesterday (UTC days), a date-time (2026-11-01T08:30, UTC "
              "unless it has an offset), or an age such as 24h, 7d or 2w")


def sort_option(choices: tuple[str, ...], *, meaning: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--sort CHOICE`` (``sort``): the order of a listing's rows, the first of ``choices`` by
    default; ``meaning`` is its help (what each choice orders by)."""
    return click.option("--sort", type=click.Choice(choices), default=choices[0], show_default=True,
                        help=meaning)


def request_window_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--since WHEN`` and ``--until WHEN`` (``since``, ``until``: seconds since the epoch, or
    None) of a command that sums the requests sent in the window: their help says so."""
    func = click.option("--until", metavar="WHEN", default=None, callback=_parse_since,
                        help="Only requests sent before WHEN, by the log's own timestamps (a date includes "
                             "that whole day); same forms as --since.")(func)
    return click.option("--since", metavar="WHEN", default=None, callback=_parse_since,
                        help="Only requests sent at or after WHEN, by the log's own timestamps (not the "
                             f"file's mtime): {_WHEN_FORMS}.")(func)
