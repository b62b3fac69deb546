"""``diff`` (and the verdicts ``redact`` compares) reads a captured body once for what it takes from
it: a compaction's instruction and the images of a body holding base64 data (session 37)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.capture import _compare, compare_capture, load_capture
from dsh_audit.session import open_session, route_apis, route_renderer

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "e-compaction"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is absent")
def test_a_compaction_body_holding_base64_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = [json.loads(line) for line in (CORPUS / "wire.jsonl").read_text("utf-8").splitlines()]
    for record in records:  # the compaction's body names base64: its images are looked for too
        if record["kind"] == "compaction":
            record["body"] = record["body"][:-1] + ', "note": "base64"}'
        for key in ("body_bytes", "body_sha256"):
            record.pop(key, None)
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    session = open_session(next(CORPUS.glob("home/sessions/*/*/session.jsonl.zstd")))
    calls: list[Any] = []
    real = _compare.parse_json
    monkeypatch.setattr(_compare, "parse_json", lambda raw: calls.append(raw) or real(raw))
    rows = compare_capture(session.requests, load_capture(wire), render=route_renderer([session]),
                           routes=route_apis([session]))
    compaction = [row for row in rows if row.kind == "compaction"]
    assert [row.verdict for row in compaction] == ["different"]
    assert [json.loads(raw)["note"] for raw in calls] == ["base64"]
