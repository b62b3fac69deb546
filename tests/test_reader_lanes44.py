"""The reader's fast lane (session 44, issue 11) takes only what the full checks would pass.

A record of a type whose only checks are its envelope's (a plain ``assistant/chunk``, ``step/start``,
``step/end``, ``tool/call``) is taken from bytes to event in one step; anything the lane cannot prove
sound goes through every check, in DSH's order. Each case edits one record of the chat sample and
expects what the full checks say: the same refusal, or (an integral float time, which JavaScript
reads as an integer) the same events as the unedited log.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from dsh_audit.log import Event, read_log

CHAT = Path(__file__).resolve().parent.parent / "sample_logs" / "chat" / "session.jsonl"
_STEP, _CHUNK = 4, 11  # 0-based lines of step/start seq 3 and assistant/chunk seq 10
_REFUSED = "DSH refuses the log too (--lenient does not relax events); `dsh-audit validate FILE` lists every problem"


def _no_data(record: dict[str, Any]) -> None:
    del record["data"]
    record["meta"] = {}  # four keys still, data not among them


# name: (line, edit, the refusal's place and hint; None: the log reads as the unedited one)
CASES: dict[str, tuple[int, Callable[[dict[str, Any]], None], str | None]] = {
    "step without data": (_STEP, _no_data, "5 seq 3: seed event at index 3 has an invalid event envelope (hint: "
                          'key "meta" is not an envelope key: DSH allows type, seq, time, data, surfaceOp, '
                          f"sourceEventSeqs, ignorable; {_REFUSED} (rule DSH110))"),
    "step time not whole": (_STEP, lambda r: r.update(time=1800000000004.5),
                            "5 seq 3: seed event at index 3 has an invalid event envelope (hint: time 1800000000004.5 "
                            "is not a safe integer: DSH requires Date.now() milliseconds, an integer; "
                            f"{_REFUSED} (rule DSH111))"),
    "step time a whole float": (_STEP, lambda r: r.update(time=1800000000004.0), None),
    "chunk time unsafe": (_CHUNK, lambda r: r.update(time=2**53),
                          "12 seq 10: seed event at index 10 has an invalid event envelope (hint: time "
                          "9007199254740992 is not a safe integer: DSH requires Date.now() milliseconds, an integer; "
                          f"{_REFUSED} (rule DSH111))"),
}


def _events(path: Path) -> list[Event]:
    return list(read_log(path).events(collapse_rows=True))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_record_the_lane_cannot_prove_sound_takes_every_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str) -> None:
    at, edit, refusal = CASES[case]
    lines = CHAT.read_text("utf-8").splitlines()
    record = json.loads(lines[at])
    edit(record)
    lines[at] = json.dumps(record, separators=(",", ":"))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    if refusal is None:
        assert _events(path) == _events(CHAT)
        assert invoke(monkeypatch, capsys, "requests", str(path), "--json")[1] == \
            invoke(monkeypatch, capsys, "requests", str(CHAT), "--json")[1].replace(str(CHAT), str(path))
        return
    for command in ("requests", "breaks"):
        assert invoke(monkeypatch, capsys, command, str(path)) == (2, "", [f"error: {path}:{refusal}"]), command
