"""pi-ai's own bytes for inputs the live-pi corpus does not cover: every body byte for byte.

Each ``tests/data/piai_oracle/<case>.json`` holds a DSH log built with
:class:`~dsh_audit.testing.LogBuilder` (as its JSONL lines), the route configuration it needs, and,
for every request that goes through a pi-ai route, the body and headers that pi-ai **0.82.1**'s
real ``streamSimple`` sent for it (``README.md`` there says how they were recorded; no test runs
Node). Here each log is opened through the trunk (:func:`dsh_audit.session.open_session`) and each
request rendered by the route the log gives it, as ``render``, ``diff`` and ``check`` do. The
``resp-*`` cases are pi-ai's ``openai-responses`` API (OpenAI's own catalog route and hand-declared
Responses routes); two of them (``resp-images*``) also carry the image bytes their log references.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.session import Session, open_session, route_renderer
from dsh_audit.wire import make_renderer
from dsh_audit.wire._piai_catalog import BUILTIN_MODELS, PIAI_CATALOG

from test_routes46 import routes_as_given

ORACLE = Path(__file__).parent / "data" / "piai_oracle"
CASES = sorted(p.stem for p in ORACLE.glob("*.json"))
#: The Stainless platform header the recording machine's Node wrote (v20 there, v24 in the corpus).
RUNTIME = "x-stainless-runtime-version"
#: Cases whose route sets profile ``headers``, merged under the SDKs' ``Headers`` semantics (README).
PROFILE_HEADERS = {"anth-profile-headers", "oai-profile-headers", "deepseek-route-long", "resp-profile-headers",
                   "resp-headers-none"}
#: The pi-ai renderers (adapter names) whose requests the cases record.
PI_ADAPTERS = ("anthropic", "openai", "responses")
#: Cases whose every request goes through a pi-ai catalog route (no route file), by catalog provider.
CATALOG_CASES = {
    "anthropic": {"anth-opus-47-efforts", "anth-haiku-budgets", "anth-fable-sonnet-5", "anth-switch-45-46",
                  "anth-max-tokens-caps", "auto-compactions-opus-47", "trim-anthropic", "deepseek-claude-deepseek",
                  "anth-redacted-iserror", "resp-claude-switch"},
    "deepseek": {"trim-deepseek", "deepseek-native-to-catalog", "deepseek-claude-deepseek", "resp-foreign-deepseek"},
    "openrouter": {"openrouter-anthropic-models", "openrouter-deepseek-models", "openrouter-gpt5-models",
                   "auto-compactions-openrouter-claude"},
    "openai": {"resp-chat", "resp-efforts-gpt5", "resp-efforts-gpt52", "resp-efforts-gpt54", "resp-efforts-gpt56",
               "resp-efforts-o", "resp-nonreasoning", "resp-catalog-rest", "resp-foreign-deepseek",
               "resp-claude-switch", "resp-ids-openai", "resp-clamp-9000", "resp-clamp-20000",
               "resp-auto-compactions", "resp-edge", "resp-images"},
    "github-copilot": {"copilot-dynamic-headers"},
}
#: Catalog cases whose log records a context window other than the catalog's (``request/context``).
LOGGED_WINDOWS = {"auto-compactions-opus-47": 16000, "auto-compactions-openrouter-claude": 16000,
                  "resp-clamp-9000": 9000, "resp-clamp-20000": 20000, "resp-auto-compactions": 16000}


def load(case: str) -> dict[str, Any]:
    return json.loads((ORACLE / f"{case}.json").read_text("utf-8"))


def opened(record: dict[str, Any], tmp_path: Path) -> Session:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    session = open_session(path)
    if record["routes"] is not None:
        # nine cases' route files are ones DSH refuses (test_routes46.py): the models pi-ai was given
        routes = routes_as_given(record["routes"])
        session.use_routes(routes)
        # The session's shared renderers take the route file's model facts for the anthropic and
        # openai adapters (Bodies._renderer_cache); until it does so for responses too, give it the
        # responses renderer that has them.
        session.bodies._renderer_cache("responses").setdefault("responses",
                                                               make_renderer("responses", models=routes.models))
    return session


def pi_requests(session: Session) -> list[Any]:
    return [r for r in session.requests if session.route(r).adapter in PI_ADAPTERS]


def options_for(record: dict[str, Any], request: Any) -> dict[str, Any]:
    """The per-request options a case needs: DSH's compaction instruction, the image bytes."""
    options: dict[str, Any] = {}
    if request.kind == "compaction":
        options["compaction_instruction"] = record["compaction_instruction"]
    if "images" in record:
        options["images"] = {key: base64.b64decode(data) for key, data in record["images"].items()}
        options["offloaded_image_text"] = record["offloaded_image_text"]
    return options


def test_the_oracle_set_is_whole() -> None:
    assert len(CASES) == 102
    records = [load(case) for case in CASES]
    assert sum(len(r["requests"]) for r in records) == 734
    assert {r["pi_ai"] for r in records} == {"0.82.1"}
    kinds = {q["kind"] for r in records for q in r["requests"]}
    assert kinds == {"loop", "title", "compaction"}
    apis = {q["pi_ai_model"]["api"] for r in records for q in r["requests"]}
    assert apis == {"anthropic-messages", "openai-completions", "openai-responses"}
    responses = [r for r in records if r["case"].startswith("resp-")]
    assert (len(responses), sum(len(r["requests"]) for r in responses)) == (25, 269)
    assert {q["path"] for r in responses for q in r["requests"] if q["pi_ai_model"]["api"] == "openai-responses"} \
        == {"/v1/responses", "/api/v1/responses"}  # OpenAI and a gateway; OpenRouter's /api/v1


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
            ours = PIAI_CATALOG[(provider, given["id"])]  # BUILTIN_MODELS's, and github-copilot's
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
        "openai": {model_id for p, model_id in BUILTIN_MODELS if p == "openai"},  # all 38
        "github-copilot": {"claude-sonnet-4.5", "claude-opus-4.6", "gemini-3.5-flash", "gpt-5.4-mini"},
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
        ours = run(request, options_for(record, request))
        theirs = expected["body"].encode("utf-8")
        assert ours == theirs, f"{case} request {request.index}: " + _diff(ours, theirs)


@pytest.mark.parametrize("case", CASES)
def test_every_header_set_and_path_is_pi_ais(case: str, tmp_path: Path) -> None:
    record = load(case)
    session = opened(record, tmp_path)
    for request, expected in zip(pi_requests(session), record["requests"]):
        adapter = session.route(request).adapter
        renderer = session.bodies._renderer(adapter)  # the renderer the session's views share
        wire = renderer.render(request, **options_for(record, request))
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
        wire = session.bodies._renderer(session.route(request).adapter).render(request, **options_for(record, request))
        headers = [[k, v] for k, v in wire.headers if k != RUNTIME]
        assert headers == expected["headers"]
        assert all(k == k.lower() for k, _ in headers)
        assert [k for k, _ in headers][-2:] == ["user-agent", "content-type"]


def _diff(ours: bytes, theirs: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    lo, hi = max(0, at - 100), at + 100
    return f"differ at byte {at}:\n ours   {ours[lo:hi]!r}\n pi-ai  {theirs[lo:hi]!r}"
