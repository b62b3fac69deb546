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
from dsh_audit.wire._piai_models import BUILTIN_MODELS
from dsh_audit.wire._piai_routes import parse_routes

ORACLE = Path(__file__).parent / "data" / "piai_oracle"
CASES = sorted(p.stem for p in ORACLE.glob("*.json"))
#: The Stainless platform header the recording machine's Node wrote (v20 there, v24 in the corpus).
RUNTIME = "x-stainless-runtime-version"
#: Cases whose route sets profile ``headers``, merged under the SDKs' ``Headers`` semantics (README).
PROFILE_HEADERS = {"anth-profile-headers", "oai-profile-headers", "deepseek-route-long"}
#: Cases whose every request goes through a pi-ai catalog route (no route file), by catalog provider.
CATALOG_CASES = {
    "anthropic": {"anth-opus-47-efforts", "anth-haiku-budgets", "anth-fable-sonnet-5", "anth-switch-45-46",
                  "anth-max-tokens-caps", "auto-compactions-opus-47", "trim-anthropic", "deepseek-claude-deepseek",
                  "anth-redacted-iserror"},
    "deepseek": {"trim-deepseek", "deepseek-native-to-catalog", "deepseek-claude-deepseek"},
    "openrouter": {"openrouter-anthropic-models", "openrouter-deepseek-models", "openrouter-gpt5-models",
                   "auto-compactions-openrouter-claude"},
}
#: Catalog cases whose log records a context window other than the catalog's (``request/context``).
LOGGED_WINDOWS = {"auto-compactions-opus-47": 16000, "auto-compactions-openrouter-claude": 16000}


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
    assert len(CASES) == 70
    records = [load(case) for case in CASES]
    assert sum(len(r["requests"]) for r in records) == 403
    assert {r["pi_ai"] for r in records} == {"0.82.1"}
    kinds = {q["kind"] for r in records for q in r["requests"]}
    assert kinds == {"loop", "title", "compaction"}
    apis = {q["pi_ai_model"]["api"] for r in records for q in r["requests"]}
    assert apis == {"anthropic-messages", "openai-completions"}


@pytest.mark.parametrize("provider", sorted(CATALOG_CASES))
def test_catalog_cases_used_pi_ais_own_catalog_entries(provider: str) -> None:
    """These cases were recorded with pi-ai's own catalog entry for every model (only a logged
    context window laid over it), so the bodies check dsh-audit's catalog facts too, and each entry
    pi-ai was given is dsh-audit's :data:`BUILTIN_MODELS` entry field by field."""
    seen = set()
    for case in sorted(CATALOG_CASES[provider]):
        record = load(case)
        assert record["routes"] is None
        for q in record["requests"]:
            given = q["pi_ai_model"]
            if given["provider"] != provider:
                continue
            seen.add(given["id"])
            ours = BUILTIN_MODELS[(provider, given["id"])]
            logged = LOGGED_WINDOWS.get(case, ours.context_window)
            assert (given["api"], given["baseUrl"], given["contextWindow"], given["maxTokens"], given["reasoning"],
                    tuple(given["input"]), given.get("thinkingLevelMap"), given.get("compat", {})) == (
                ours.api, ours.base_url, logged, ours.max_tokens, ours.reasoning, ours.input,
                None if ours.thinking_level_map is None else dict(ours.thinking_level_map), dict(ours.compat))
    expected = {
        "anthropic": {"claude-fable-5", "claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-1",
                      "claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5",
                      "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-sonnet-4-6", "claude-sonnet-5"},
        "deepseek": {"deepseek-v4-pro", "deepseek-v4-flash"},
        "openrouter": {"anthropic/claude-sonnet-4.6", "anthropic/claude-opus-4.7", "anthropic/claude-haiku-4.5",
                       "anthropic/claude-sonnet-4.5", "anthropic/claude-fable-5", "anthropic/claude-3-haiku",
                       "deepseek/deepseek-v4-pro", "deepseek/deepseek-v4-flash", "deepseek/deepseek-r1",
                       "deepseek/deepseek-chat", "deepseek/deepseek-v3.2", "openai/gpt-5", "openai/gpt-5.1-chat",
                       "openai/gpt-5.2", "openai/gpt-5.4-mini", "openai/gpt-5.5-pro", "openai/gpt-5.6-sol"},
    }[provider]
    assert seen == expected


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


@pytest.mark.parametrize("case", CASES)
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
    """Profile headers go out lower-cased; one that overrides an SDK or pi-ai header is moved to the
    profile's place, before ``user-agent`` (as in :func:`test_every_header_set_and_path_is_pi_ais`,
    named here because these are the cases that show it)."""
    record = load(case)
    session = opened(record, tmp_path)
    requests = pi_requests(session)
    assert len(requests) == len(record["requests"])
    for request, expected in zip(requests, record["requests"]):
        options = {"compaction_instruction": record["compaction_instruction"]} if request.kind == "compaction" else {}
        wire = session.bodies._renderer(session.route(request).adapter).render(request, **options)
        headers = [[k, v] for k, v in wire.headers if k != RUNTIME]
        assert headers == expected["headers"]
        assert all(k == k.lower() for k, _ in headers)
        assert [k for k, _ in headers][-2:] == ["user-agent", "content-type"]


def _diff(ours: bytes, theirs: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    lo, hi = max(0, at - 100), at + 100
    return f"differ at byte {at}:\n ours   {ours[lo:hi]!r}\n pi-ai  {theirs[lo:hi]!r}"
