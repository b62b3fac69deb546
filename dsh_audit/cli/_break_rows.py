"""``breaks``'s rows: a transition's table row (with what it lost) and JSON line, the total and caption."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..attribution import Transition
from ..report.terminal import Amount, id_prefixes, listing_format, rows_fit
from ._break_loss import _Lost, _total
from ._table_ids import id_caption


def _divergence(t: Transition) -> str:
    d = t.first_divergence
    if d is None:
        return ""
    text = d.segment + (f" msg {d.message_index}" if d.message_index is not None else "")
    if d.offset is not None:
        text += f" @{d.offset}"
    if d.body_offset is not None:
        text += f" body@{d.body_offset}"
    return text


def _row(t: Transition, lost: _Lost | None, *, csv: bool = False,
         names: dict[str, str] | None = None) -> tuple[object, ...]:
    """A table row; ``lost`` None: without the lost column (``breaks`` without --accounting); ``names``:
    a parent's session id as the "vs" cell shows it (:func:`_short_parents`), else whole."""
    # a number (CSV: plain, empty when there is none), or text when it is a parent's request
    previous: object = Amount(t.previous, "-" if t.previous is None else str(t.previous))
    if t.previous is not None and t.previous_session_id not in (None, t.session_id):
        parent = t.previous_session_id or ""
        previous = f"{t.previous} ({(names or {}).get(parent, parent)})"
    cause = (t.cause or "") + (f" +{','.join(t.other_causes)}" if t.other_causes else "")
    cost = () if lost is None else lost.cells(csv=csv)
    return (t.request, previous, t.relation, t.verdict, cause, *cost, ", ".join(t.field_names),
            " ".join(map(str, t.evidence_seqs)), _divergence(t))


def _total_row(losses: Sequence[_Lost]) -> tuple[object, ...]:
    """The table's last row: ``total`` (under "cause", beside the sum: "#" stays a column of
    numbers, as narrow as they are) and what the listed requests lost (:func:`_total`)."""
    return ("", "", "", "", "total", *_total(losses).cells(csv=False), "", "", "")  # reusable, actual, lost


def _caption(losses: Sequence[_Lost]) -> str | None:
    """What the table's lost column leaves unsaid: which losses are not known, and why."""
    notes = []
    unknown = sum(lost.tokens is None for lost in losses)
    if unknown:
        notes.append(f"?: {unknown} request(s) logged no cache reads, left out of the total")
    if any(lost.tokens and lost.cost is None for lost in losses):
        notes.append("$?: no rate prices it (--json: unpriced says why), ≥$: a lower bound")
    return "; ".join(notes) or None


def _json_row(path: str | None, t: Transition, lost: _Lost | None) -> dict[str, Any]:
    """A ``breaks --json`` row: the log's path first (as in `cache`, `sessions` and `check`: two
    files may hold one session id), the transition's JSON, ``unexplained`` after its causes:
    whether it is a break the log does not explain (:attr:`Transition.is_unexplained`, as
    ``--fail-on unexplained``, `cache` and `check` count them), and last what the request lost of
    the cache (:meth:`_Lost.to_json`; ``lost`` None: not priced, no such keys)."""
    row: dict[str, Any] = {"path": path}
    for key, value in t.to_json().items():
        row[key] = value
        if key == "other_causes":
            row["unexplained"] = t.is_unexplained
    row.setdefault("unexplained", t.is_unexplained)
    if lost is not None:
        row.update(lost.to_json())
    return row


def _short_parents(listed: Sequence[Transition], columns: Sequence[str], rows: list[tuple[object, ...]],
                   droppable: Sequence[str]) -> tuple[dict[str, str] | None, str | None]:
    """Each parent's session id as its shortest unique prefix among the log's own and its
    parents' (:func:`id_prefixes`, as every table shortens one: ``session-70444d8d``, which `show`
    and `explain` accept), and the caption saying so, when the table would not fit the terminal
    with whole ids and every column but "first divergence" (as `sessions` and `usage` shorten
    theirs, before a column that says something is left out); None, None when it would, or
    outside a table."""
    parents = {t.previous_session_id for t in listed if t.previous_session_id not in (None, t.session_id)}
    if not parents or listing_format() != "table" or rows_fit(columns, rows, droppable=droppable,
                                                              spare=("first divergence",)):
        return None, None
    names = id_prefixes([*(p for p in parents if p), *(t.session_id for t in listed)])
    return names, id_caption("vs", whose="a parent's session id")
