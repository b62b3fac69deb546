"""The validation rules take what the reader and replay of the same read already did (issue 11,
session 36): replay folds the reader's events into the rules' surface fold
(``LineValidator.shared_fold``), and the rules take each event it folded (``SurfaceFold.last``),
made from the stored event they admit, instead of upgrading, checking, building and folding it
again; they read the fold's verdict (``last_replacement``, ``last_refusal``). Replay is played
here by folding the reader's events, as ``dsh_audit.replay.iter_requests`` does. The findings
stay :func:`validate`'s, which reads the file alone and admits every event itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import ReplayError
from dsh_audit.log import read_log
from dsh_audit.validate import LineValidator, _admit, validate

ROOT = Path(__file__).resolve().parent.parent
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"


def _counted(monkeypatch: pytest.MonkeyPatch, calls: list[Any] | None = None) -> list[Any]:
    """Every call of the admission's own upgrade and event builder, by name (appended to ``calls``)."""
    calls = [] if calls is None else calls
    for name in ("upgrade_event", "new_event"):
        real: Callable[..., Any] = getattr(_admit, name)

        def spy(*args: Any, _real: Callable[..., Any] = real, _name: str = name, **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(f"dsh_audit.validate._admit.{name}", spy)
    return calls


def _replayed(path: Path, checker: LineValidator) -> list[int]:
    """Read ``path`` with ``checker`` as its tee, folding every event but chunks into the shared
    fold as replay does, up to the first refusal (replay stops there): the seqs folded."""
    log = read_log(path, tee=checker)
    fold = checker.shared_fold()
    assert fold is not None
    folded: list[int] = []
    try:
        for event in log.events(collapse_rows=True):
            if event.type != "assistant/chunk":
                folded.append(event.seq)
                fold.apply(event)
    except ReplayError:
        pass
    finally:
        log.close()
    return folded


def test_the_rules_admit_none_of_the_events_replay_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counted(monkeypatch)
    checker = LineValidator(CHAT)
    folded = _replayed(CHAT, checker)
    assert (len(folded), checker.finish(), calls) == (21, [], [])  # the 21 events not chunks (16, 2 rows)
    assert validate(CHAT) == []
    assert calls == ["upgrade_event", "new_event"] * 21  # alone, the rules admit them themselves


def test_what_the_reader_lets_through_is_found_and_the_rules_go_on_after_replay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown type marked ignorable (DSH507) and a replace of nothing (DSH304) are events the
    reader yields; the fold refuses the second, and replay stops there: the rules take both from
    the fold, then admit and fold the rest themselves."""
    lines = CHAT.read_text().splitlines()
    last = json.loads(lines[-1])
    seq, time = last["seq"], last["time"]
    plugin = {"type": "plugin/note", "seq": seq + 1, "time": time + 1, "data": {}, "ignorable": True}
    bad = {"type": "user/message", "seq": seq + 2, "time": time + 2,
           "data": {"id": "m-x", "role": "user", "content": [], "source": {"kind": "user"}},
           "surfaceOp": {"op": "replace", "start": 9999, "end": 9999}, "sourceEventSeqs": [9998]}
    tail = {"type": "user/message", "seq": seq + 3, "time": time + 3,
            "data": {"id": "m-y", "role": "user", "content": [], "source": {"kind": "user"}}, "surfaceOp": "append"}
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([*lines, *(json.dumps(e) for e in (plugin, bad, tail))]) + "\n")
    expected = validate(path)
    assert [(f.rule, f.line, f.seq, f.message) for f in expected] == [
        ("DSH507", 41, 44, 'unknown event type "plugin/note" is marked ignorable and skipped'),
        ("DSH304", 42, 45, "surface replace: start seq 9999 not found in surface")]
    calls = _counted(monkeypatch)
    checker = LineValidator(path)
    folded = _replayed(path, checker)
    fold = checker.shared_fold()
    assert fold is not None
    assert (folded[-2:], fold.nodes[-1], calls) == ([seq + 1, seq + 2], seq + 3, ["upgrade_event", "new_event"])
    assert checker.finish() == expected
