"""A copy of a log that is another session: tests that need two sessions from one sample log give
each copy its own header ``id``, since every command reads two files of one session id with the
same lines (or one the first lines of the other) as one session (the rule of copies,
``dsh_audit/log/_copies.py``), whatever their folders' names."""

from __future__ import annotations

import json
from pathlib import Path


def copy_as(source: Path, target: Path, session_id: str, *, cut: int = 0) -> Path:
    """``source`` (a plain log) copied to ``target`` (its folders made) with its header's ``id``
    set to ``session_id``, every other byte as it was; ``cut`` bytes dropped from its end (a
    torn copy)."""
    header, _, rest = source.read_bytes().partition(b"\n")
    fields = json.loads(header)
    fields["id"] = session_id
    data = json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode() + b"\n" + rest
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data[:len(data) - cut])
    return target
