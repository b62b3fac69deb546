"""The rules the tables of ``stats`` and ``usage`` share, so that one fleet reads alike in both:
how a row by model is keyed (the model the price table bills, with the names its requests logged
while the table has room for them) and the order a narrow terminal leaves the cost columns out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .._listing import billed_model_text
from ..report.terminal import listing_format

__all__ = ["bucket_drop_order", "logged_column", "model_keyed", "whole_keyed"]

#: Each row's billed model and the models its requests logged.
Models = Sequence[tuple[str, Sequence[str]]]
Row = tuple[object, ...]


def bucket_drop_order(spent: Mapping[str, float], what_ifs: Sequence[str]) -> tuple[str, ...]:
    """The columns of the token buckets (``spent``: each one's cost, in the order of a tie) and
    the ``what_ifs`` in the order a narrow terminal leaves them out: the buckets that cost the
    least first, then the what-ifs, then the costliest bucket, so that where the money went stays
    in sight (an Anthropic session's cache writes, a DeepSeek one's misses). The one order of
    `stats` (``_stats_tables._cost_droppable``) and `usage` (``_usage_table._droppable``).

    Example:
        >>> bucket_drop_order({"output": 2.0, "cache read": 1.0, "cache miss": 2.0}, ("off-peak",))
        ('cache read', 'output', 'off-peak', 'cache miss')
    """
    buckets = sorted(spent, key=spent.__getitem__)  # cheapest first; a tie in spent's order (a stable sort)
    return (*buckets[:-1], *what_ifs, *buckets[-1:])


def _whole_keys(models: Models) -> list[str]:
    """Each row's key naming the logged models too (:func:`billed_model_text`)."""
    return [billed_model_text(model, logged) for model, logged in models]


def whole_keyed(models: Models, rows: Sequence[Row]) -> list[Row]:
    """``rows`` (their key cell left out) keyed by model, each key naming the logged models too
    (:func:`billed_model_text`): the rows of a table by model that has room for them."""
    return [(key, *row) for key, row in zip(_whole_keys(models), rows)]


def logged_column(key: str, columns: Sequence[str], models: Models, rows: Sequence[Row]
                  ) -> tuple[tuple[str, ...], list[Row]]:
    """A CSV table by model's columns (``key``'s, a ``logged models`` column, then ``columns``) and
    its ``rows`` (their key cell left out): each keyed by the model the price table bills alone
    (``models``: each row's, with the names its requests logged), those names in the column of
    their own, ``; ``-separated (as ``--json``'s ``logged_models``), not a table's one cell
    ``deepseek-flash (logged as ...)``: a pivot on the model gets plain keys (README: a cell a table
    combines is separate columns in CSV). The one rule of `stats` and `usage --by model`.

    Example:
        >>> logged_column("model", ("requests",), [("deepseek-flash", ["deepseek-v4-flash"]), ("total", ())],
        ...               [(2,), (2,)])
        (('model', 'logged models', 'requests'), [('deepseek-flash', 'deepseek-v4-flash', 2), ('total', '', 2)])
    """
    return ((key, "logged models", *columns),
            [(model, "; ".join(logged), *row) for (model, logged), row in zip(models, rows, strict=True)])


def model_keyed(models: Models, rows: Sequence[Row], fits: Callable[[list[Row]], bool]) -> tuple[list[Row], str | None]:
    """``rows`` (their key cell left out) keyed by the model the price table bills (``models``:
    each row's, with the models its requests logged), and the caption's note on the keys (None: no
    note). Each key names the logged models too (:func:`whole_keyed`), as --format markdown always
    shows it (CSV: the names in a column of their own, :func:`logged_column`), and a table when it
    ``fits`` the rows so keyed (the layout the table would draw has each key on one line, leaving
    out only lesser columns); else a key would wrap, which the tables' rule keeps for last (README,
    listings): the billed names alone, and the note says the others.

    Example:
        >>> model_keyed([("deepseek-flash", ["deepseek-v4-flash"]), ("x", ["x"])], [(1,), (2,)], lambda rows: False)
        ([('deepseek-flash', 1), ('x', 2)], 'model as billed: deepseek-flash (logged as deepseek-v4-flash)')
    """
    whole = whole_keyed(models, rows)
    named = [key for key, (model, _) in zip(_whole_keys(models), models) if key != model]
    if not named or listing_format() != "table" or fits(whole):
        return whole, None
    return [(model, *row) for (model, _), row in zip(models, rows)], "model as billed: " + ", ".join(named)
