"""One admission and one surface fold for the reader, replay and the validation rules of the same
read (issue 11, session 36): ``read_events`` hands replay the rules' fold
(``LineValidator.shared_fold``), so each event the reader admitted is folded once, by replay, and
the rules take it from there (``SurfaceFold.last``, ``last_replacement``, ``last_refusal``)
instead of upgrading, checking, building and folding it again; they admit and fold themselves
only what replay did not get (chunks; what follows a refusal that stopped replay). The findings
stay :func:`validate`'s, which reads the file alone and admits every event itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.replay import SurfaceFold
from dsh_audit.session import open_session
from dsh_audit.validate import validate

from test_validate_admit36 import _counted

ROOT = Path(__file__).resolve().parent.parent
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"


def _spied(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every seq folded, and every call of the admission's own upgrade and event builder (by name)."""
    calls: list[Any] = []
    fold = SurfaceFold.apply

    def folded(self: SurfaceFold, event: Any) -> Any:
        calls.append(event.seq)
        return fold(self, event)

    monkeypatch.setattr(SurfaceFold, "apply", folded)
    return _counted(monkeypatch, calls)


def test_each_event_is_admitted_and_folded_once_in_a_session_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spied(monkeypatch)
    session = open_session(CHAT, validate=True)
    # the 21 events that are not chunks (16 chunks, 2 rows), each folded once, by replay, and not
    # admitted again by the rules
    assert (session.validation, calls) == ([], [s for s in range(44) if s not in _chunk_seqs()])
    calls.clear()
    assert validate(CHAT) == []
    # alone, the rules admit and fold each of them themselves
    assert calls == [c for s in range(44) if s not in _chunk_seqs() for c in ("upgrade_event", "new_event", s)]


def _chunk_seqs() -> set[int]:
    seqs: set[int] = set()
    for line in CHAT.read_text().splitlines()[1:]:
        value = json.loads(line)
        if value["type"] == "assistant/chunk":
            seqs.add(value["seq"])
        elif value["type"].endswith("-chunks"):
            seqs.update(range(value["seq0"], value["seq0"] + len(value["data"]["dt"]) + 1))
    return seqs
