"""Storage encoding for built logs: packed chunk rows, JSONL lines, multi-frame zstd, DSH paths.

Written from the format reference (spec §1.1-§1.4), not from DSH's code:

* a run of at least three consecutive ``assistant/chunk`` deltas of one kind, one block and one
  ``(turn, step)`` becomes one ``*-chunks`` row ``{type, seq0, time0, data}`` (DSH rc.8
  ``packages/core/session/src/chunk-rows.ts``); packing runs per write batch;
* a zstd log is one frame holding the header line alone, then one checksummed frame per batch;
* a log lives at ``<root>/<projectKey(cwd)>/<encodeSegment(id)>/session.jsonl[.zstd]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import zstandard

from ..jsjson import stringify

__all__ = ["encode_segment", "frames_bytes", "jsonl_bytes", "pack_chunk_runs", "project_key", "session_dir_parts"]

_SAFE = re.compile(r"[A-Za-z0-9._-]")
_MIN_RUN = 3
_DELTA_KEYS = {
    "text-delta": ("type", "index", "text"),
    "reasoning-delta": ("type", "index", "text"),
}
_ROW_TAG = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks", "tool-call-delta": "tool-call-chunks"}


def _escape_unit(unit: int) -> str:
    return f"~{unit:04X}"


def _utf16_units(text: str) -> list[int]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(raw[i:i + 2], "little") for i in range(0, len(raw), 2)]


def encode_segment(raw: str) -> str:
    """DSH's injective path-segment encoding of a session id (spec §1.1).

    Example:
        >>> encode_segment("fork:child~1")
        'fork~003Achild~007E1'
    """
    if not raw:
        raise ValueError("cannot encode an empty path segment")
    if raw in (".", ".."):
        return "~002E" * len(raw)
    out = []
    for unit in _utf16_units(raw):
        ch = chr(unit) if unit < 0xD800 or unit > 0xDFFF else ""
        out.append(ch if ch and _SAFE.fullmatch(ch) else _escape_unit(unit))
    return "".join(out)


def project_key(cwd: str) -> str:
    """DSH's lossy project folder name for a working directory, ``--`` included (spec §1.1).

    Example:
        >>> project_key("/home/dev/my project")
        '--home-dev-my~0020project--'
    """
    if not cwd:
        raise ValueError("cannot encode an empty project path")
    out: list[str] = []
    separator_run = False
    for unit in _utf16_units(cwd):
        ch = chr(unit) if unit < 0xD800 or unit > 0xDFFF else ""
        if ch in ("/", "\\", ":"):
            if not separator_run:
                out.append("-")
            separator_run = True
            continue
        out.append(ch if ch and _SAFE.fullmatch(ch) else _escape_unit(unit))
        separator_run = False
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:251]}--"


def session_dir_parts(session_id: str, cwd: str | None) -> tuple[str, str]:
    """The two folder names below a sessions root: project key (or ``_no-cwd``) and encoded id."""
    return (project_key(cwd) if cwd else "_no-cwd", encode_segment(session_id))


def _delta_kind(event: dict[str, Any]) -> str | None:
    """The packable delta kind of an event, or None when it must be stored verbatim."""
    if event.get("type") != "assistant/chunk" or list(event) != ["type", "seq", "time", "data"]:
        return None
    data = event["data"]
    if not isinstance(data, dict) or set(data) != {"turn", "step", "chunk"}:
        return None
    chunk = data["chunk"]
    kind = chunk.get("type") if isinstance(chunk, dict) else None
    if kind in _DELTA_KEYS:
        return kind if set(chunk) == set(_DELTA_KEYS[kind]) else None
    if kind == "tool-call-delta" and set(chunk) - {"name"} == {"type", "index", "id", "argumentsDelta"}:
        return str(kind)
    return None


def _continues(prev: dict[str, Any], nxt: dict[str, Any]) -> bool:
    a, b = prev["data"], nxt["data"]
    ca, cb = a["chunk"], b["chunk"]
    return (nxt["seq"] == prev["seq"] + 1 and (a["turn"], a["step"]) == (b["turn"], b["step"])
            and ca["index"] == cb["index"] and ca.get("id") == cb.get("id")
            and ("name" in ca) == ("name" in cb) and ca.get("name") == cb.get("name"))


def _row(kind: str, run: Sequence[dict[str, Any]]) -> dict[str, Any]:
    first = run[0]
    chunk = first["data"]["chunk"]
    data: dict[str, Any] = {
        "turn": first["data"]["turn"], "step": first["data"]["step"], "index": chunk["index"],
        "dt": [run[i + 1]["time"] - run[i]["time"] for i in range(len(run) - 1)],
    }
    if kind == "tool-call-delta":
        data["id"] = chunk["id"]
        if "name" in chunk:
            data["name"] = chunk["name"]
        data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
    else:
        data["texts"] = [e["data"]["chunk"]["text"] for e in run]
    return {"type": _ROW_TAG[kind], "seq0": first["seq"], "time0": first["time"], "data": data}


def pack_chunk_runs(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pack one write batch: runs of three or more like deltas become rows, the rest pass through.

    Example:
        >>> chunk = lambda s, t: {"type": "assistant/chunk", "seq": s, "time": 5, "data": {
        ...     "turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": t}}}
        >>> pack_chunk_runs([chunk(3, "a"), chunk(4, "b"), chunk(5, "c")])[0]["data"]["texts"]
        ['a', 'b', 'c']
    """
    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    run_kind: str | None = None

    def flush() -> None:
        if run_kind is not None and len(run) >= _MIN_RUN:
            out.append(_row(run_kind, run))
        else:
            out.extend(run)
        run.clear()

    for event in events:
        kind = _delta_kind(event)
        if kind is not None and kind == run_kind and run and _continues(run[-1], event):
            run.append(event)
            continue
        flush()
        run_kind = kind
        if kind is None:
            out.append(event)
        else:
            run.append(event)
    flush()
    return out


def jsonl_bytes(records: Iterable[dict[str, Any]]) -> bytes:
    """Records as JSONL: one ``JSON.stringify`` line each, every line ending in a newline."""
    return "".join(stringify(record) + "\n" for record in records).encode("utf-8")


def frames_bytes(header: dict[str, Any], batches: Sequence[Sequence[dict[str, Any]]], *, level: int = 3) -> bytes:
    """A multi-frame zstd log: the header line alone in frame 1, then one frame per batch.

    Every frame carries its content checksum, as DSH writes them (spec §1.2).
    """
    compressor = zstandard.ZstdCompressor(level=level, write_checksum=True, write_content_size=True)
    parts = [compressor.compress(jsonl_bytes([header]))]
    for batch in batches:
        if batch:
            parts.append(compressor.compress(jsonl_bytes(batch)))
    return b"".join(parts)
