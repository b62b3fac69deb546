"""pi-ai's own bytes for inputs the live-pi corpus does not cover: every body byte for byte.

Each ``tests/data/piai_oracle/<case>.json`` holds a DSH log built with
:class:`~dsh_audit.testing.LogBuilder` (as its JSONL lines), the route configuration it needs, and,
for every request that goes through a pi-ai route, the body and headers that pi-ai **0.82.1**'s
real ``streamSimple`` sent for it (``README.md`` there says how they were recorded; no test runs
Node). Here each log is opened through the trunk (:func:`dsh_audit.session.open_session`) and each
request rendered by the route the log gives it, as ``render``, ``diff`` and ``check`` do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.session import Session, open_session, route_renderer
from dsh_audit.wire._piai_routes import parse_routes

ORACLE = Path(__file__).parent / "data" / "piai_oracle"
CASES = sorted(p.stem for p in ORACLE.glob("*.json"))
#: The Stainless platform header the recording machine's Node wrote (v20 there, v24 in the corpus).
RUNTIME = "x-stainless-runtime-version"
#: Cases whose route sets profile ``headers``: their header order is a known difference (README).
PROFILE_HEADERS = {"anth-profile-headers", "oai-profile-headers"}


def load(case: str) -> dict[str, Any]:
    return json.loads((ORACLE / f"{case}.json").read_text("utf-8"))


def opened(record: dict[str, Any], tmp_path: Path) -> Session:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    session = open_session(path)
    if record["routes"] is not None:
        session.use_routes(parse_routes(record["routes"]))
    return session


def pi_requests(session: Session) -> list[Any]:
    return [r for r in session.requests if session.route(r).adapter in ("anthropic", "openai")]


def test_the_oracle_set_is_whole() -> None:
    assert len(CASES) == 51
    records = [load(case) for case in CASES]
    assert sum(len(r["requests"]) for r in records) == 232
    assert {r["pi_ai"] for r in records} == {"0.82.1"}
    kinds = {q["kind"] for r in records for q in r["requests"]}
    assert kinds == {"loop", "title", "compaction"}
    apis = {q["pi_ai_model"]["api"] for r in records for q in r["requests"]}
    assert apis == {"anthropic-messages", "openai-completions"}


@pytest.mark.parametrize("case", CASES)
def test_every_body_is_pi_ais_byte_for_byte(case: str, tmp_path: Path) -> None:
    record = load(case)
    session = opened(record, tmp_path)
    requests = pi_requests(session)
    assert [r.index for r in requests] == [q["index"] for q in record["requests"]]
    run = route_renderer([session])
    for request, expected in zip(requests, record["requests"]):
        assert request.kind == expected["kind"]
        options = {"compaction_instruction": record["compaction_instruction"]} if request.kind == "compaction" else {}
        ours = run(request, options)
        theirs = expected["body"].encode("utf-8")
        assert ours == theirs, f"{case} request {request.index}: " + _diff(ours, theirs)


@pytest.mark.parametrize("case", [c for c in CASES if c not in PROFILE_HEADERS])
def test_every_header_set_and_path_is_pi_ais(case: str, tmp_path: Path) -> None:
    record = load(case)
    session = opened(record, tmp_path)
    for request, expected in zip(pi_requests(session), record["requests"]):
        adapter = session.route(request).adapter
        renderer = session.bodies._renderer(adapter)  # the renderer the session's views share
        options = {"compaction_instruction": record["compaction_instruction"]} if request.kind == "compaction" else {}
        wire = renderer.render(request, **options)
        assert (wire.method, wire.path) == (expected["method"], expected["path"])
        assert [[k, v] for k, v in wire.headers if k != RUNTIME] == expected["headers"], request.index


@pytest.mark.parametrize("case", sorted(PROFILE_HEADERS))
def test_profile_headers_follow_the_sdk_header_merge(case: str, tmp_path: Path) -> None:
    record = load(case)
    session = opened(record, tmp_path)
    request, expected = pi_requests(session)[0], record["requests"][0]
    wire = session.bodies._renderer(session.route(request).adapter).render(request)
    assert [[k, v] for k, v in wire.headers if k != RUNTIME] == expected["headers"]


def _diff(ours: bytes, theirs: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    lo, hi = max(0, at - 100), at + 100
    return f"differ at byte {at}:\n ours   {ours[lo:hi]!r}\n pi-ai  {theirs[lo:hi]!r}"
