"""pi-ai 0.82.1's OpenRouter catalog (``dist/providers/data/openrouter.json``) ships whole in
:data:`~dsh_audit.wire._piai_catalog.BUILTIN_MODELS`, and the ``or-*`` oracle cases (pi-ai's own bytes for
OpenRouter models of families the other cases do not cover) were recorded with pi-ai's own entries.

The catalog's model ids are pinned here as data: no test reads pi-ai's package or runs Node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import RenderError
from dsh_audit.wire._piai_catalog import BUILTIN_MODELS, resolve_model

ORACLE = Path(__file__).parent / "data" / "piai_oracle"
OR_CASES = sorted(p.stem for p in ORACLE.glob("or-*.json"))
#: Every model id of pi-ai 0.82.1's ``dist/providers/data/openrouter.json`` (``openai-completions``), sorted.
OPENROUTER_IDS = (
    "ai21/jamba-large-1.7", "aion-labs/aion-2.0", "aion-labs/aion-3.0", "aion-labs/aion-3.0-mini",
    "amazon/nova-2-lite-v1", "amazon/nova-lite-v1", "amazon/nova-micro-v1", "amazon/nova-premier-v1",
    "amazon/nova-pro-v1", "anthropic/claude-3-haiku", "anthropic/claude-fable-5", "anthropic/claude-haiku-4.5",
    "anthropic/claude-opus-4", "anthropic/claude-opus-4.1", "anthropic/claude-opus-4.5", "anthropic/claude-opus-4.6",
    "anthropic/claude-opus-4.7", "anthropic/claude-opus-4.7-fast", "anthropic/claude-opus-4.8",
    "anthropic/claude-opus-4.8-fast", "anthropic/claude-opus-5", "anthropic/claude-opus-5-fast",
    "anthropic/claude-sonnet-4", "anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4.6",
    "anthropic/claude-sonnet-5", "arcee-ai/trinity-large-thinking", "arcee-ai/virtuoso-large", "auto",
    "bytedance-seed/seed-1.6", "bytedance-seed/seed-1.6-flash", "bytedance-seed/seed-2.0-lite",
    "bytedance-seed/seed-2.0-mini", "cohere/command-r-08-2024", "cohere/command-r-plus-08-2024",
    "cohere/north-mini-code:free", "deepseek/deepseek-chat", "deepseek/deepseek-chat-v3-0324",
    "deepseek/deepseek-chat-v3.1", "deepseek/deepseek-r1", "deepseek/deepseek-r1-0528",
    "deepseek/deepseek-v3.1-terminus", "deepseek/deepseek-v3.2", "deepseek/deepseek-v3.2-exp",
    "deepseek/deepseek-v4-flash", "deepseek/deepseek-v4-pro", "google/gemini-2.5-flash",
    "google/gemini-2.5-flash-lite", "google/gemini-2.5-pro", "google/gemini-2.5-pro-preview",
    "google/gemini-2.5-pro-preview-05-06", "google/gemini-3-flash-preview", "google/gemini-3-pro-image",
    "google/gemini-3.1-flash-lite", "google/gemini-3.1-flash-lite-preview", "google/gemini-3.1-pro-preview",
    "google/gemini-3.1-pro-preview-customtools", "google/gemini-3.5-flash", "google/gemini-3.5-flash-lite",
    "google/gemini-3.6-flash", "google/gemma-3-12b-it", "google/gemma-3-27b-it", "google/gemma-4-26b-a4b-it",
    "google/gemma-4-26b-a4b-it:free", "google/gemma-4-31b-it", "google/gemma-4-31b-it:free",
    "ibm-granite/granite-4.1-8b", "inception/mercury-2", "inclusionai/ling-2.6-1t", "inclusionai/ling-2.6-flash",
    "inclusionai/ling-3.0-flash:free", "inclusionai/ring-2.6-1t", "kwaipilot/kat-coder-air-v2.5",
    "kwaipilot/kat-coder-pro-v2", "kwaipilot/kat-coder-pro-v2.5", "meituan/longcat-2.0",
    "meta-llama/llama-3.1-70b-instruct", "meta-llama/llama-3.1-8b-instruct", "meta-llama/llama-3.3-70b-instruct",
    "meta-llama/llama-4-maverick", "meta-llama/llama-4-scout", "meta/muse-spark-1.1", "minimax/minimax-m1",
    "minimax/minimax-m2", "minimax/minimax-m2.1", "minimax/minimax-m2.5", "minimax/minimax-m2.7", "minimax/minimax-m3",
    "mistralai/codestral-2508", "mistralai/devstral-2512", "mistralai/ministral-14b-2512",
    "mistralai/ministral-3b-2512", "mistralai/ministral-8b-2512", "mistralai/mistral-large",
    "mistralai/mistral-large-2407", "mistralai/mistral-large-2512", "mistralai/mistral-medium-3",
    "mistralai/mistral-medium-3-5", "mistralai/mistral-medium-3.1", "mistralai/mistral-nemo", "mistralai/mistral-saba",
    "mistralai/mistral-small-2603", "mistralai/mistral-small-3.2-24b-instruct", "mistralai/mixtral-8x22b-instruct",
    "mistralai/voxtral-small-24b-2507", "moonshotai/kimi-k2", "moonshotai/kimi-k2-0905", "moonshotai/kimi-k2-thinking",
    "moonshotai/kimi-k2.5", "moonshotai/kimi-k2.6", "moonshotai/kimi-k2.7-code", "moonshotai/kimi-k3",
    "nex-agi/nex-n2-mini", "nex-agi/nex-n2-pro", "nvidia/nemotron-3-nano-30b-a3b",
    "nvidia/nemotron-3-nano-30b-a3b:free", "nvidia/nemotron-3-nano-omni-30b-a3b-reasoning:free",
    "nvidia/nemotron-3-super-120b-a12b", "nvidia/nemotron-3-super-120b-a12b:free", "nvidia/nemotron-3-ultra-550b-a55b",
    "nvidia/nemotron-3-ultra-550b-a55b:free", "nvidia/nemotron-nano-12b-v2-vl:free", "nvidia/nemotron-nano-9b-v2:free",
    "openai/gpt-3.5-turbo", "openai/gpt-3.5-turbo-0613", "openai/gpt-3.5-turbo-16k", "openai/gpt-4",
    "openai/gpt-4-turbo", "openai/gpt-4-turbo-preview", "openai/gpt-4.1", "openai/gpt-4.1-mini", "openai/gpt-4.1-nano",
    "openai/gpt-4o", "openai/gpt-4o-2024-05-13", "openai/gpt-4o-2024-08-06", "openai/gpt-4o-2024-11-20",
    "openai/gpt-4o-mini", "openai/gpt-4o-mini-2024-07-18", "openai/gpt-5", "openai/gpt-5-codex", "openai/gpt-5-mini",
    "openai/gpt-5-nano", "openai/gpt-5-pro", "openai/gpt-5.1", "openai/gpt-5.1-chat", "openai/gpt-5.1-codex",
    "openai/gpt-5.1-codex-max", "openai/gpt-5.1-codex-mini", "openai/gpt-5.2", "openai/gpt-5.2-chat",
    "openai/gpt-5.2-codex", "openai/gpt-5.2-pro", "openai/gpt-5.3-chat", "openai/gpt-5.3-codex", "openai/gpt-5.4",
    "openai/gpt-5.4-mini", "openai/gpt-5.4-nano", "openai/gpt-5.4-pro", "openai/gpt-5.5", "openai/gpt-5.5-pro",
    "openai/gpt-5.6-luna", "openai/gpt-5.6-luna-pro", "openai/gpt-5.6-sol", "openai/gpt-5.6-sol-pro",
    "openai/gpt-5.6-terra", "openai/gpt-5.6-terra-pro", "openai/gpt-audio", "openai/gpt-audio-mini",
    "openai/gpt-chat-latest", "openai/gpt-oss-120b", "openai/gpt-oss-20b", "openai/gpt-oss-20b:free",
    "openai/gpt-oss-safeguard-20b", "openai/o1", "openai/o3", "openai/o3-deep-research", "openai/o3-mini",
    "openai/o3-mini-high", "openai/o3-pro", "openai/o4-mini", "openai/o4-mini-deep-research", "openai/o4-mini-high",
    "openrouter/auto", "openrouter/auto-beta", "openrouter/free", "openrouter/fusion", "poolside/laguna-m.1",
    "poolside/laguna-m.1:free", "poolside/laguna-s-2.1", "poolside/laguna-s-2.1:free", "poolside/laguna-xs-2.1",
    "poolside/laguna-xs-2.1:free", "qwen/qwen-2.5-72b-instruct", "qwen/qwen-2.5-7b-instruct", "qwen/qwen-plus",
    "qwen/qwen-plus-2025-07-28", "qwen/qwen-plus-2025-07-28:thinking", "qwen/qwen3-14b", "qwen/qwen3-235b-a22b",
    "qwen/qwen3-235b-a22b-2507", "qwen/qwen3-235b-a22b-thinking-2507", "qwen/qwen3-30b-a3b",
    "qwen/qwen3-30b-a3b-instruct-2507", "qwen/qwen3-30b-a3b-thinking-2507", "qwen/qwen3-32b", "qwen/qwen3-8b",
    "qwen/qwen3-coder", "qwen/qwen3-coder-30b-a3b-instruct", "qwen/qwen3-coder-flash", "qwen/qwen3-coder-next",
    "qwen/qwen3-coder-plus", "qwen/qwen3-max", "qwen/qwen3-max-thinking", "qwen/qwen3-next-80b-a3b-instruct",
    "qwen/qwen3-next-80b-a3b-thinking", "qwen/qwen3-vl-235b-a22b-instruct", "qwen/qwen3-vl-235b-a22b-thinking",
    "qwen/qwen3-vl-30b-a3b-instruct", "qwen/qwen3-vl-30b-a3b-thinking", "qwen/qwen3-vl-32b-instruct",
    "qwen/qwen3-vl-8b-instruct", "qwen/qwen3-vl-8b-thinking", "qwen/qwen3.5-122b-a10b", "qwen/qwen3.5-27b",
    "qwen/qwen3.5-35b-a3b", "qwen/qwen3.5-397b-a17b", "qwen/qwen3.5-9b", "qwen/qwen3.5-flash-02-23",
    "qwen/qwen3.5-plus-02-15", "qwen/qwen3.5-plus-20260420", "qwen/qwen3.6-27b", "qwen/qwen3.6-35b-a3b",
    "qwen/qwen3.6-flash", "qwen/qwen3.6-max-preview", "qwen/qwen3.6-plus", "qwen/qwen3.7-max", "qwen/qwen3.7-plus",
    "rekaai/reka-edge", "relace/relace-search", "sakana/fugu-ultra", "sao10k/l3.1-euryale-70b",
    "stepfun/step-3.5-flash", "stepfun/step-3.7-flash", "tencent/hy3", "tencent/hy3-preview",
    "thedrummer/unslopnemo-12b", "thinkingmachines/inkling", "upstage/solar-pro-3", "x-ai/grok-4.20", "x-ai/grok-4.3",
    "x-ai/grok-4.5", "x-ai/grok-build-0.1", "xiaomi/mimo-v2.5", "xiaomi/mimo-v2.5-pro", "z-ai/glm-4.5",
    "z-ai/glm-4.5-air", "z-ai/glm-4.5v", "z-ai/glm-4.6", "z-ai/glm-4.6v", "z-ai/glm-4.7", "z-ai/glm-4.7-flash",
    "z-ai/glm-5", "z-ai/glm-5-turbo", "z-ai/glm-5.1", "z-ai/glm-5.2", "z-ai/glm-5v-turbo",
    "~anthropic/claude-fable-latest", "~anthropic/claude-haiku-latest", "~anthropic/claude-opus-latest",
    "~anthropic/claude-sonnet-latest", "~google/gemini-flash-latest", "~google/gemini-pro-latest",
    "~moonshotai/kimi-latest", "~openai/gpt-latest", "~openai/gpt-mini-latest", "~x-ai/grok-latest",
)
#: ``or-*`` cases whose log records a context window other than the catalog's (``request/context``).
LOGGED_WINDOWS = {"or-window-grok-gemma": 9000}


def load(case: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((ORACLE / f"{case}.json").read_text("utf-8"))
    return record


def test_every_openrouter_catalog_model_ships() -> None:
    assert len(OPENROUTER_IDS) == 276
    assert list(OPENROUTER_IDS) == sorted(set(OPENROUTER_IDS))
    ours = sorted(model_id for provider, model_id in BUILTIN_MODELS if provider == "openrouter")
    assert ours == list(OPENROUTER_IDS)
    for model_id in OPENROUTER_IDS:
        model = BUILTIN_MODELS[("openrouter", model_id)]
        assert (model.provider, model.id, model.api, model.base_url) == (
            "openrouter", model_id, "openai-completions", "https://openrouter.ai/api/v1")
        assert model.compat["thinkingFormat"] == "openrouter"
        assert model.profile is None
    assert len(BUILTIN_MODELS) == 331  # 15 anthropic, 2 deepseek, 276 openrouter, 38 openai


@pytest.mark.parametrize(("model_id", "facts"), [
    # id: (contextWindow, maxTokens, reasoning, input, thinkingLevelMap, compat), pi-ai's entries verbatim
    ("ai21/jamba-large-1.7", (256_000, 4_096, False, ("text",), None,
                              {"supportsDeveloperRole": False, "thinkingFormat": "openrouter"})),
    ("x-ai/grok-4.20", (2_000_000, 4_096, True, ("text", "image"), None,
                        {"supportsDeveloperRole": False, "thinkingFormat": "openrouter"})),
    ("z-ai/glm-5.2", (1_048_576, 131_072, True, ("text",), {"xhigh": "xhigh"},
                      {"supportsDeveloperRole": False, "thinkingFormat": "openrouter"})),
    ("inception/mercury-2", (128_000, 50_000, True, ("text",), {"off": None},
                             {"supportsDeveloperRole": False, "thinkingFormat": "openrouter"})),
    ("moonshotai/kimi-k2.6", (262_144, 262_144, True, ("text", "image"), None,
                              {"supportsDeveloperRole": False, "thinkingFormat": "openrouter",
                               "requiresReasoningContentOnAssistantMessages": True})),
    ("~anthropic/claude-opus-latest", (1_000_000, 128_000, True, ("text", "image"), None,
                                       {"supportsDeveloperRole": False, "thinkingFormat": "openrouter",
                                        "cacheControlFormat": "anthropic"})),
    ("qwen/qwen3-coder", (262_144, 65_536, False, ("text",), None,
                          {"supportsDeveloperRole": False, "thinkingFormat": "openrouter"})),
])
def test_openrouter_entries_field_by_field(model_id: str, facts: tuple[Any, ...]) -> None:
    model = BUILTIN_MODELS[("openrouter", model_id)]
    levels = None if model.thinking_level_map is None else dict(model.thinking_level_map)
    assert (model.context_window, model.max_tokens, model.reasoning, model.input, levels, dict(model.compat)) == facts


def test_thinking_levels_of_new_openrouter_models() -> None:
    """pi-ai ``getSupportedThinkingLevels`` (``dist/models.js``) over the entries' own maps."""
    def levels(model_id: str) -> tuple[str, ...]:
        return BUILTIN_MODELS[("openrouter", model_id)].supported_levels()

    assert levels("z-ai/glm-5.2") == ("off", "minimal", "low", "medium", "high", "xhigh")
    assert levels("inception/mercury-2") == ("minimal", "low", "medium", "high")
    assert levels("qwen/qwen3-max-thinking") == ("off", "minimal", "low", "medium", "high")
    assert levels("meta-llama/llama-4-maverick") == ("off",)


def test_an_id_outside_the_catalog_still_needs_a_route_file() -> None:
    with pytest.raises(RenderError, match="no pi-ai model facts for openrouter/mistralai/magistral-medium-2506"):
        resolve_model("openrouter", "mistralai/magistral-medium-2506")


def test_or_cases_are_there() -> None:
    assert OR_CASES == ["or-foreign-kimi-glm", "or-grok-gemini-models", "or-kimi-glm-models",
                        "or-llama-mistral-models", "or-qwen-models", "or-window-grok-gemma"]
    records = [load(case) for case in OR_CASES]
    assert sum(len(r["requests"]) for r in records) == 50
    assert {r["routes"] for r in records} == {None}


def test_or_cases_used_pi_ais_own_catalog_entries() -> None:
    """Each OpenRouter entry pi-ai was given for an ``or-*`` case is dsh-audit's entry field by field
    (the bodies themselves are compared by ``test_wire_piai_oracle.py``, which globs every case)."""
    seen = set()
    for case in OR_CASES:
        for q in load(case)["requests"]:
            given = q["pi_ai_model"]
            if given["provider"] != "openrouter":
                continue
            seen.add(given["id"])
            ours = BUILTIN_MODELS[("openrouter", given["id"])]
            window = LOGGED_WINDOWS.get(case, ours.context_window)
            assert (given["api"], given["baseUrl"], given["contextWindow"], given["maxTokens"], given["reasoning"],
                    tuple(given["input"]), given.get("thinkingLevelMap"), given["compat"]) == (
                ours.api, ours.base_url, window, ours.max_tokens, ours.reasoning, ours.input,
                None if ours.thinking_level_map is None else dict(ours.thinking_level_map), dict(ours.compat))
    assert seen == {
        "qwen/qwen3-max-thinking", "qwen/qwen3-coder", "qwen/qwen3.6-plus", "qwen/qwen-plus-2025-07-28:thinking",
        "qwen/qwen3-235b-a22b", "qwen/qwen3-vl-8b-instruct", "moonshotai/kimi-k2.6", "moonshotai/kimi-k2",
        "moonshotai/kimi-k3", "z-ai/glm-5.2", "z-ai/glm-4.5v", "z-ai/glm-5", "inception/mercury-2", "x-ai/grok-4.5",
        "x-ai/grok-4.20", "google/gemini-3.1-pro-preview", "google/gemma-3-27b-it", "google/gemini-2.5-flash",
        "google/gemma-4-31b-it", "~anthropic/claude-opus-latest", "mistralai/mistral-medium-3-5",
        "meta-llama/llama-4-maverick", "mistralai/mistral-small-2603", "meta-llama/llama-3.3-70b-instruct",
        "mistralai/codestral-2508"}
