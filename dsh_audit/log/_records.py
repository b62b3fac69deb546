"""Storage records: DSH's packed chunk rows, validated strictly and expanded to their events."""

from __future__ import annotations

from itertools import accumulate, count
from typing import Any

from ._shapes import MAX_SAFE, is_safe_int
from ._types import CHUNK_ROW_TYPES

__all__ = ["RowError", "decode_record", "expand_row", "row_head"]


class RowError(Exception):
    """A packed chunk row that fails DSH's strict row validation."""


def _exact_keys(record: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return len(record) == len(keys) and all(k in record for k in keys)


def _row_members(tag: str, data: dict[str, Any], key: str) -> list[str]:
    if not all(isinstance(data.get(k), (int, float)) and not isinstance(data.get(k), bool)
               for k in ("turn", "step", "index")):
        raise RowError(f"malformed {tag} storage row: turn/step/index must be numbers")
    payload = data.get(key)
    if not isinstance(payload, list) or not payload or not set(map(type, payload)) <= {str}:
        raise RowError(f"malformed {tag} storage row: {key} must be a non-empty string array")
    dt = data.get("dt")
    if not isinstance(dt, list) or not (set(map(type, dt)) <= {int} or all(is_safe_int(g) for g in dt)):
        raise RowError(f"malformed {tag} storage row: dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        raise RowError(f"malformed {tag} storage row: dt length {len(dt)} does not match {len(payload)} members")
    return payload


_TEXT_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})
_CALL_KEYS = frozenset({"turn", "step", "index", "id", "dt", "args"})
_NAMED_CALL_KEYS = _CALL_KEYS | {"name"}

#: a valid row's tag, members and their times; None for the times of a row whose gaps are none of
#: them negative: the running sum of its gaps from time0, made only when its events are built
_Shape = tuple[str, list[str], "list[float] | None"]


def _plain_row(row: dict[str, Any]) -> _Shape | None:
    """:func:`_validate_row`'s result for a row as DSH writes it, found with a few type tests (the
    common case); None when the row is not plainly one, and the full check must say.

    Plainly one: exactly the keys type, seq0, time0 and data; ``int`` seq0 (not negative), time0,
    turn, step and index; string members (at least one), id and name; ``int`` gaps, one fewer
    than members; every member's seq and time a safe integer. Every row this accepts the full
    check accepts too, with the same members and times.
    """
    data = row.get("data")
    if len(row) != 4 or type(data) is not dict:
        return None
    seq0, time0 = row.get("seq0"), row.get("time0")
    if (type(seq0) is not int or type(time0) is not int or type(data.get("turn")) is not int
            or type(data.get("step")) is not int or type(data.get("index")) is not int):
        return None
    tag = row["type"]
    if tag == "tool-call-chunks":
        keys = data.keys()
        if type(data.get("id")) is not str or not (keys == _CALL_KEYS or (keys == _NAMED_CALL_KEYS
                                                                        and type(data["name"]) is str)):
            return None
        members = data["args"]
    elif len(data) == 5 and _TEXT_KEYS.issuperset(data):
        members = data["texts"]
    else:
        return None
    gaps = data["dt"]
    if (type(members) is not list or type(gaps) is not list or not members or len(gaps) != len(members) - 1
            or not set(map(type, members)) <= {str} or not set(map(type, gaps)) <= {int}
            or not 0 <= seq0 <= MAX_SAFE - len(members) + 1):
        return None
    if not gaps or min(gaps) >= 0:  # times that never go back: time0 is the least, the sum the last
        if -MAX_SAFE <= time0 and time0 + sum(gaps) <= MAX_SAFE:
            return tag, members, None  # no list of big ints, most of it never used (replay takes the first)
        return None
    times: list[float] = list(accumulate(gaps, initial=time0))  # as the full check adds them
    if max(times) > MAX_SAFE or min(times) < -MAX_SAFE:
        return None
    return tag, members, times


def _validate_row(row: dict[str, Any]) -> _Shape:
    """DSH's strict row validation; returns the tag, the members and their times.

    A row as DSH writes it passes :func:`_plain_row`'s few type tests; any other takes every
    check, which says what is wrong (the :class:`RowError`'s message).
    """
    plain = _plain_row(row)
    if plain is not None:
        return plain
    tag = row["type"]
    if not _exact_keys(row, ("type", "seq0", "time0", "data")):
        raise RowError(f"malformed {tag} storage row: envelope must be exactly {{type, seq0, time0, data}}")
    seq0, time0, data = row["seq0"], row["time0"], row["data"]
    if not is_safe_int(seq0) or seq0 < 0:
        raise RowError(f"malformed {tag} storage row: seq0 must be a non-negative safe integer")
    if not is_safe_int(time0):
        raise RowError(f"malformed {tag} storage row: time0 must be a safe integer")
    if not isinstance(data, dict):
        raise RowError(f"malformed {tag} storage row: data must be an object")
    if tag == "tool-call-chunks":
        with_name = _exact_keys(data, ("turn", "step", "index", "id", "name", "dt", "args"))
        if not with_name and not _exact_keys(data, ("turn", "step", "index", "id", "dt", "args")):
            raise RowError(f"malformed {tag} storage row: data must be exactly {{turn, step, index, id, name?, dt, args}}")
        if not isinstance(data["id"], str) or (with_name and not isinstance(data["name"], str)):
            raise RowError(f"malformed {tag} storage row: id (and name when present) must be strings")
        members = _row_members(tag, data, "args")
    else:
        if not _exact_keys(data, ("turn", "step", "index", "dt", "texts")):
            raise RowError(f"malformed {tag} storage row: data must be exactly {{turn, step, index, dt, texts}}")
        members = _row_members(tag, data, "texts")
    if not is_safe_int(seq0 + len(members) - 1):
        raise RowError(f"malformed {tag} storage row: member seqs must stay safe integers")
    times = list(accumulate(data["dt"], initial=time0))  # each the one before plus its gap, as JavaScript adds
    if max(times) > MAX_SAFE or min(times) < -MAX_SAFE:  # finite numbers: the same test as abs() of each
        raise RowError(f"malformed {tag} storage row: member times must stay safe integers")
    return tag, members, times


def _expand(row: dict[str, Any], shape: _Shape, limit: int | None = None) -> list[dict[str, Any]]:
    """The events of a validated row (its first ``limit`` only when given)."""
    tag, members, listed = shape
    if limit is not None:
        members = members[:limit]
    data, seq0 = row["data"], row["seq0"]
    times = listed if listed is not None else accumulate(data["dt"], initial=row["time0"])
    turn, step, index = data["turn"], data["step"], data["index"]
    # Each member's event with its chunk (the same keys in the same order for every member), in one
    # comprehension: a row holds dozens of members.
    if tag != "tool-call-chunks":
        kind = "text-delta" if tag == "text-chunks" else "reasoning-delta"
        return [{"type": "assistant/chunk", "seq": seq, "time": time,
                 "data": {"turn": turn, "step": step, "chunk": {"type": kind, "index": index, "text": member}}}
                for seq, time, member in zip(count(seq0), times, members)]
    ident = data["id"]
    if "name" not in data:
        return [{"type": "assistant/chunk", "seq": seq, "time": time,
                 "data": {"turn": turn, "step": step,
                          "chunk": {"type": "tool-call-delta", "index": index, "id": ident, "argumentsDelta": member}}}
                for seq, time, member in zip(count(seq0), times, members)]
    name = data["name"]
    return [{"type": "assistant/chunk", "seq": seq, "time": time,
             "data": {"turn": turn, "step": step, "chunk": {"type": "tool-call-delta", "index": index, "id": ident,
                                                            "name": name, "argumentsDelta": member}}}
            for seq, time, member in zip(count(seq0), times, members)]


def expand_row(row: dict[str, Any], *, limit: int | None = None, share: bool = False) -> list[dict[str, Any]]:
    """Validate a ``*-chunks`` row strictly and expand it to its ``assistant/chunk`` events (only
    the first ``limit`` of them when given: a reader that takes the others from the row itself).

    With ``share``, the row is validated once for two consumers, as :func:`decode_record` shares
    it: the next :func:`decode_record` or :func:`row_head` of the same object takes this
    validation (and the events built) instead of validating the row again.

    Raises:
        RowError: the row fails DSH's strict row validation (the whole row, whatever ``limit``).

    Example:
        >>> row = {"type": "text-chunks", "seq0": 4, "time0": 10,
        ...        "data": {"turn": 1, "step": 1, "index": 0, "dt": [2], "texts": ["a", "b"]}}
        >>> [(e["seq"], e["time"], e["data"]["chunk"]["text"]) for e in expand_row(row)]
        [(4, 10, 'a'), (5, 12, 'b')]
        >>> expand_row(row, limit=1) == expand_row(row)[:1]
        True
    """
    global _SHARED_ROW
    if share:
        _SHARED_ROW = _NOTHING_SHARED  # a row nobody took is not held while the next line is decoded
    shape = _validate_row(row)
    events = _expand(row, shape, limit)
    if share:
        _SHARED_ROW = (row, shape, events)
    return events


def row_head(row: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Validate a row like :func:`expand_row` but build only its first event; return it and the count.

    A row a first consumer already validated (:func:`decode_record` or :func:`expand_row` with
    ``share``) is not validated again: its first event and count are taken from that validation.
    """
    shared = _take_row(row)
    if shared is not None:
        shape, events = shared
        return events[0], len(shape[1])
    shape = _validate_row(row)
    return _head(row, shape), len(shape[1])


def _head(row: dict[str, Any], shape: _Shape) -> dict[str, Any]:
    """``_expand(row, shape, 1)[0]``, built alone: the first member's event (at ``seq0`` and
    ``time0``, as the running sum of the gaps starts there), with no list or iterator made for it
    (a reader that collapses rows builds one per row).

    Example:
        >>> data = {"turn": 1, "step": 2, "index": 0, "dt": [3], "texts": ["a", "b"]}
        >>> rows = [{"type": "reasoning-chunks", "seq0": 4, "time0": 10, "data": data},
        ...         {"type": "text-chunks", "seq0": 4.0, "time0": 10.0, "data": data},  # the full check's
        ...         {"type": "tool-call-chunks", "seq0": 4, "time0": 10,
        ...          "data": {"turn": 1, "step": 2, "index": 0, "id": "c", "dt": [3], "args": ["{", "}"]}},
        ...         {"type": "tool-call-chunks", "seq0": 4, "time0": 10, "data": {"turn": 1, "step": 2, "index": 0,
        ...          "id": "c", "name": "f", "dt": [3], "args": ["{", "}"]}}]
        >>> [row_head(row)[0] == expand_row(row)[0] and type(row_head(row)[0]["seq"]) is type(row["seq0"])
        ...  for row in rows]
        [True, True, True, True]
    """
    tag, members, _ = shape
    data = row["data"]
    turn, step, index, member = data["turn"], data["step"], data["index"], members[0]
    if tag != "tool-call-chunks":
        chunk = {"type": "text-delta" if tag == "text-chunks" else "reasoning-delta", "index": index, "text": member}
    elif "name" not in data:
        chunk = {"type": "tool-call-delta", "index": index, "id": data["id"], "argumentsDelta": member}
    else:
        chunk = {"type": "tool-call-delta", "index": index, "id": data["id"], "name": data["name"],
                 "argumentsDelta": member}
    return {"type": "assistant/chunk", "seq": row["seq0"], "time": row["time0"],
            "data": {"turn": turn, "step": step, "chunk": chunk}}


#: the packed row a first consumer validated for a later one (:func:`decode_record` or
#: :func:`expand_row` with ``share``): the row, its shape and the events built of it (all, or the first)
_SHARED_ROW: tuple[Any, _Shape, list[dict[str, Any]]]
_NOTHING_SHARED: tuple[Any, _Shape, list[dict[str, Any]]] = (None, ("", [], []), [])
_SHARED_ROW = _NOTHING_SHARED


def _take_row(row: dict[str, Any]) -> tuple[_Shape, list[dict[str, Any]]] | None:
    """The shape of ``row`` and the events built of it when a first consumer kept them for this
    very object (and forget them)."""
    global _SHARED_ROW
    found, shape, events = _SHARED_ROW
    if found is not row:
        return None
    _SHARED_ROW = _NOTHING_SHARED
    return shape, events


def decode_record(value: Any, *, share: bool = False) -> list[Any]:
    """One parsed line to the events it stores (a row expands; anything else passes through).

    A row is validated and expanded once for two consumers that decode the same parsed value in
    turn (the validation rules, then the reader of ``check`` and ``report``; see
    :func:`~dsh_audit.log.parse_line`): the first decodes it with ``share=True`` (or expands it
    with :func:`expand_row`'s ``share``), and the next :func:`decode_record` or :func:`row_head`
    of the same object takes that validation and expansion (and forgets them) instead of
    validating the row again. Both only read the events. A row that fails validation is kept for
    nobody: the next consumer meets the same :class:`RowError`.
    """
    global _SHARED_ROW
    if share:
        _SHARED_ROW = _NOTHING_SHARED  # a row nobody took is not held while the next line is decoded
    if isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] in CHUNK_ROW_TYPES:
        shared = None if share else _take_row(value)
        if shared is None:
            return expand_row(value, share=share)
        shape, events = shared
        return events if len(events) == len(shape[1]) else _expand(value, shape)
    return [value]

