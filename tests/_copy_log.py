"""A copy of a log that is another session: tests that need two sessions from one sample log give
each copy its own header ``id``, since every command reads two files of one session id with the
same lines (or one the first lines of the other) as one session (the rule of copies,
``dsh_audit/log/_copies.py``), whatever their folders' names."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any


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


#: The last answer of ``sample_logs/tools/session.jsonl`` (its ``assistant/message``), and the one
#: :func:`other_answer` writes instead.
ANSWER = (b"There are two Python files, both under src/.", b"There are 2 Python files, both under src/.")


def other_answer(source: Path, target: Path) -> Path:
    """``source`` (``sample_logs/tools/session.jsonl``, or a copy of it) copied to ``target`` (its
    folders made) with the text of its last answer changed: one event differs, so this copy and
    DSH's log of that session are two files of one session whose lines and events differ, each
    read ("each listed"). The sample's two files of ``session-sample-tools`` are not such a pair:
    their lines differ (one packs its chunks in rows) but their events are the same, one session."""
    before, found, after = source.read_bytes().rpartition(ANSWER[0])
    assert found, f"{source} holds no {ANSWER[0]!r}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(before + ANSWER[1] + after)
    shutil.copystat(source, target)  # its mtime too: listings ordered by it stay as they were
    return target


def samples_differing(tmp_path: Path) -> Path:
    """A copy of ``sample_logs`` (under ``tmp_path``) whose ``tools/session.jsonl`` says another
    last answer (:func:`other_answer`): ``session-sample-tools`` in two files that differ, each
    read ("each listed", 11 sessions, 39 requests), as the samples themselves were read before
    session 41 (their two files of it hold the same events: one session)."""
    samples = Path(__file__).resolve().parent.parent / "sample_logs"
    copy = tmp_path / "sample_logs"
    shutil.copytree(samples, copy)
    other_answer(samples / "tools" / "session.jsonl", copy / "tools" / "session.jsonl")
    return copy


def move_event(seq: int, before: int) -> Callable[[list[dict[str, Any]]], None]:
    """An edit of a log's parsed lines (the header first, then the events, seq == index - 1): event
    ``seq`` moved to stand before event ``before``; seqs, and the sourceEventSeqs citing them, are
    renumbered to their places."""
    def edit(log: list[dict[str, Any]]) -> None:
        events = log[1:]
        moved = events.pop(seq)
        events.insert(before if before < seq else before - 1, moved)
        place = {event["seq"]: i for i, event in enumerate(events)}
        for i, event in enumerate(events):
            event["seq"] = i
            if "sourceEventSeqs" in event:
                event["sourceEventSeqs"] = [place[cited] for cited in event["sourceEventSeqs"]]
        log[1:] = events
    return edit
