"""Route files DSH refuses as it loads them are refused (session 46, oracle o2).

DSH 0.1.0-rc.8's ``llm-pi-ai`` refuses, before any request: a compat switch its gates withhold
(``catalog.ts`` ``assertOfferedCompatFields``: ``sendSessionAffinityHeaders``, ``openRouterRouting``,
``zaiToolStream``, ...), a switch name no API declares, a switch with no value, and a value its schema
(``config.ts`` ``compatProfile``, ``chatTemplateKwarg``) does not take; and, in the fields no request
reads, a wrong ``transport``, ``apiKeyEnv``, ``websocketConnectTimeoutMs`` or ``streamIdleTimeoutMs``,
a model listed twice and a ``modelOverrides`` entry that sets ``id``. dsh-audit rendered requests for
such files that DSH could never have sent. Nine stored ``tests/data/piai_oracle`` cases have such a
route file: pi-ai was given the models directly; :func:`routes_as_given` rebuilds what it was given.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from dsh_audit.errors import UsageError
from dsh_audit.wire import load_routes
from dsh_audit.wire._piai_compat_gates import COMPAT_GATES, compat_value_problem
from dsh_audit.wire._piai_routes import PiRoutes, parse_routes

from _cli import invoke
from test_routes_round31 import ROUTES_HINT, session, write

ORACLE = Path(__file__).parent / "data" / "piai_oracle"
WITHHELD = ("is not configurable here (DSH's compat gate withholds it): pi-ai's installed catalog sets it for the "
            "vendors that need it, so name that provider as the route instead")
WITHHELD_HINT = ("(hint: name the vendor's own catalog route as the provider (its pi-ai catalog entries carry the "
                 "switch), or remove the switch from that route file)")
KWARG = ("is not a chat_template_kwargs value: a string, number, boolean or null, or {$var: thinking.enabled | "
         "thinking.effort, omitWhenOff?: boolean}")
LOCAL = "  local:\n    api: openai-completions\n    baseURL: http://127.0.0.1:8080/v1\n    models:\n      - id: m\n"


def _refused(switches: dict[str, Any]) -> dict[str, Any]:
    """The switches of one compat mapping DSH refuses (a withheld name, a value outside its schema)."""
    offered = {name for gate in COMPAT_GATES.values() for name, offer in gate.items() if offer}
    return {k: v for k, v in switches.items() if k not in offered or compat_value_problem(k, v) is not None}


def loadable(config: dict[str, Any]) -> dict[str, Any]:
    """A route configuration without the compat switches DSH refuses (a copy)."""
    return _split(config)[0]


def _split(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[tuple[str | None, dict[str, Any]]]]]:
    """``config`` without the switches DSH refuses, and those switches: provider -> [(model id, None for
    the route's own compat, switches)]."""
    config = copy.deepcopy(config)
    laid: dict[str, list[tuple[str | None, dict[str, Any]]]] = {}
    for provider, profile in config["providers"].items():
        sites = [(None, profile.get("compat") or {})]
        sites += [(entry["id"], entry.get("compat") or {}) for entry in profile.get("models") or []]
        sites += [(model_id, fields.get("compat") or {}) for model_id, fields in
                  (profile.get("modelOverrides") or {}).items()]
        for model_id, compat in sites:
            refused = _refused(compat)
            for name in refused:
                del compat[name]
            laid.setdefault(provider, []).append((model_id, refused))
    return config, laid


def routes_as_given(config: dict[str, Any]) -> PiRoutes:
    """The models an oracle case gave pi-ai, from a route file DSH refuses: the file without the switches
    DSH refuses (:func:`loadable`), each of them then laid on the compat of the models whose API declares
    it (a model's own switch on that model), as pi-ai's own catalog entries carry such switches."""
    config, laid = _split(config)
    routes = parse_routes(config)
    models = dict(routes.models)
    for (provider, model_id), model in routes.models.items():
        compat = dict(model.compat)
        for site, refused in laid.get(provider, []):
            if site is None:
                compat.update((k, v) for k, v in refused.items() if k in COMPAT_GATES.get(model.api, {}))
            elif site == model_id:
                compat.update(refused)
        models[provider, model_id] = dataclasses.replace(model, compat=compat)
    return dataclasses.replace(routes, models=MappingProxyType(models))


#: The stored oracle cases whose route file DSH refuses, and the one-line reason (o2 RESULTS.txt: eight;
#: o2 did not run ``oauth/``).
REFUSED_CASES = {
    "anth-affinity": "providers.anthropic.compat.sendSessionAffinityHeaders",
    "deepseek-route-long": "providers.deepseek.compat.sendSessionAffinityHeaders",
    "oai-affinity-openrouter": "providers.local-openai.compat.sendSessionAffinityHeaders",
    "oai-compat-routing": "providers.local-openai.compat.openRouterRouting",
    "oai-compat-zai": "providers.local-openai.compat.zaiToolStream",
    "oai-profile-headers": "providers.local-openai.compat.sendSessionAffinityHeaders",
    "openrouter-route-long": "providers.openrouter.compat.sendSessionAffinityHeaders",
    "oauth/oauth-retention-long": "providers.anthropic.compat.sendSessionAffinityHeaders",
}


def test_the_oracle_cases_dsh_cannot_load_are_refused_with_dshs_reason() -> None:
    stored = {str(p.relative_to(ORACLE).with_suffix("")): json.loads(p.read_text("utf-8"))
              for p in sorted(ORACLE.rglob("*.json"))}
    errors = {}
    for case, record in stored.items():
        if isinstance(record, dict) and record.get("routes") is not None:
            try:
                parse_routes(record["routes"])
            except ValueError as exc:
                errors[case] = str(exc)
    assert errors == {**{case: f"{where}: {WITHHELD}" for case, where in REFUSED_CASES.items()},
                      "oai-compat-chat-template": f"providers.local-openai.compat.chatTemplateKwargs.effort: {KWARG}"}


def test_routes_as_given_lays_the_refused_switches_where_the_file_put_them() -> None:
    record = json.loads((ORACLE / "oai-compat-chat-template.json").read_text("utf-8"))
    model = routes_as_given(record["routes"]).models["local-openai", "local-coder"]
    assert dict(model.compat) == {"thinkingFormat": "chat-template", "chatTemplateKwargs": {
        "enable_thinking": {"$var": "thinking.enabled"}, "effort": {"omitWhenOff": True}, "level": {}, "fixed": 3,
        "flag": False, "list": [1]}}


@pytest.mark.parametrize(("route", "error"), [
    ("  anthropic:\n    compat: {sendSessionAffinityHeaders: true}\n",
     f"providers.anthropic.compat.sendSessionAffinityHeaders: {WITHHELD} {WITHHELD_HINT}"),
    (LOCAL + "        compat: {openRouterRouting: {only: [a]}}\n",
     f"providers.local.models[0].compat.openRouterRouting: {WITHHELD} {WITHHELD_HINT}"),
    (LOCAL + "    compat: {zaiToolStream: true}\n",
     f"providers.local.compat.zaiToolStream: {WITHHELD} {WITHHELD_HINT}"),
    # withheld from the Responses APIs, refused on a catalog model's override too
    ("  openai:\n    modelOverrides:\n      gpt-5:\n        compat: {supportsToolSearch: true}\n",
     f"providers.openai.modelOverrides.gpt-5.compat.supportsToolSearch: {WITHHELD} {WITHHELD_HINT}"),
    # a withheld name written bare is refused for its name, not its missing value
    (LOCAL + "    compat: {sendSessionAffinityHeaders: }\n",
     f"providers.local.compat.sendSessionAffinityHeaders: {WITHHELD} {WITHHELD_HINT}"),
    (LOCAL + "    compat: {thinkingFormat: chat-template, chatTemplateKwargs: {effort: {omitWhenOff: true}}}\n",
     f"providers.local.compat.chatTemplateKwargs.effort: {KWARG} {ROUTES_HINT}"),
    (LOCAL + "    compat: {chatTemplateKwargs: {level: {}}}\n",
     f"providers.local.compat.chatTemplateKwargs.level: {KWARG} {ROUTES_HINT}"),
    (LOCAL + "    compat: {chatTemplateKwargs: {list: [1]}}\n",
     f"providers.local.compat.chatTemplateKwargs.list: {KWARG} {ROUTES_HINT}"),
    (LOCAL + "    compat: {chatTemplateKwargs: {e: {$var: thinking.level}}}\n",
     f"providers.local.compat.chatTemplateKwargs.e: {KWARG} {ROUTES_HINT}"),
    (LOCAL + "    compat: {chatTemplateKwargs: {e: {$var: thinking.effort, omitWhenOff: yes}}}\n",
     f"providers.local.compat.chatTemplateKwargs.e: {KWARG} {ROUTES_HINT}"),
    (LOCAL + "    compat: {chatTemplateKwargs: [1]}\n",
     f"providers.local.compat.chatTemplateKwargs: must be a mapping of chat_template_kwargs names to values "
     f"{ROUTES_HINT}"),
    (LOCAL + "    compat: {supportsStore: 'false'}\n",
     f"providers.local.compat.supportsStore: must be true or false {ROUTES_HINT}"),
    (LOCAL + "    compat: {thinkingFormat: anthropic}\n",
     "providers.local.compat.thinkingFormat: must be one of openai, deepseek, openrouter, together, zai, qwen, "
     f"chat-template, qwen-chat-template, string-thinking, ant-ling {ROUTES_HINT}"),
    (LOCAL + "    compat: {supportsStore: }\n",
     "providers.local.compat.supportsStore: has no value; give it one, or remove the key to leave the field to "
     f"the next layer (the installed catalog entry, then pi-ai's own detection) {ROUTES_HINT}"),
    (LOCAL + "    compat: {supportStore: false}\n",
     "providers.local.compat.supportStore: no wire protocol declares it (DSH's compat gate); the configurable "
     "switches are supportsStore, supportsDeveloperRole, supportsReasoningEffort, supportsUsageInStreaming, "
     "maxTokensField, requiresToolResultName, requiresAssistantAfterToolResult, requiresThinkingAsText, "
     "requiresReasoningContentOnAssistantMessages, thinkingFormat, chatTemplateKwargs, supportsStrictMode, "
     "cacheControlFormat, supportsLongCacheRetention, supportsEagerToolInputStreaming, supportsCacheControlOnTools, "
     f"supportsTemperature, forceAdaptiveThinking, allowEmptySignature, supportsStrictTools {ROUTES_HINT}"),
])
def test_a_compat_switch_dsh_refuses_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], route: str,
        error: str) -> None:
    log = session(tmp_path / "s.jsonl", "anthropic", [("claude-sonnet-4-5", "anthropic-messages")])
    routes = write(tmp_path / "r.yml", "providers:\n" + route)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes))
    assert (code, out, err) == (2, "", [f"error: {routes}: route file: {error}"])


def test_the_kwarg_values_dshs_schema_takes_are_taken(tmp_path: Path) -> None:
    routes = load_routes(write(tmp_path / "r.yml", "providers:\n" + LOCAL + (
        "    compat:\n      thinkingFormat: chat-template\n      chatTemplateKwargs:\n"
        "        a: {$var: thinking.effort, omitWhenOff: true}\n        b: {$var: thinking.enabled, note: kept}\n"
        "        c: 1.5\n        d: x\n        e: null\n        f: {$var: thinking.effort, omitWhenOff: null}\n")))
    assert dict(routes.models["local", "m"].compat)["chatTemplateKwargs"] == {
        "a": {"$var": "thinking.effort", "omitWhenOff": True}, "b": {"$var": "thinking.enabled", "note": "kept"},
        "c": 1.5, "d": "x", "e": None, "f": {"$var": "thinking.effort", "omitWhenOff": None}}


@pytest.mark.parametrize(("fields", "error"), [
    ("    transport: http\n", "providers.local.transport: must be one of sse, websocket, websocket-cached, auto"),
    ("    apiKeyEnv: MY-KEY\n", "providers.local.apiKeyEnv: must name an environment variable (letters, digits and "
                               "_, not starting with a digit: DSH's credential ref)"),
    ("    apiKeyEnv: 5\n", "providers.local.apiKeyEnv: must be a string"),
    ("    displayName: [a]\n", "providers.local.displayName: must be a string"),
    ("    websocketConnectTimeoutMs: -1\n",
     "providers.local.websocketConnectTimeoutMs: must be a whole number of milliseconds"),
    ("    streamIdleTimeoutMs: 0\n",
     "providers.local.streamIdleTimeoutMs: must be a positive finite number no greater than 2147483647"),
    ("    streamIdleTimeoutMs: 2147483648\n",
     "providers.local.streamIdleTimeoutMs: must be a positive finite number no greater than 2147483647"),
    ("      - id: m\n", "providers.local.models[1].id: lists model 'm' more than once"),
    ("        name: 7\n", "providers.local.models[0].name: must be a string"),
])
def test_a_setting_no_request_reads_is_still_refused_as_dsh_refuses_it(tmp_path: Path, fields: str,
                                                                     error: str) -> None:
    path = write(tmp_path / "r.yml", "providers:\n" + LOCAL + fields)
    with pytest.raises(UsageError) as caught:
        load_routes(path)
    assert (caught.value.message, caught.value.hint) == (
        f"route file: {error}", "see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models")


def test_a_model_override_that_sets_its_id_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "r.yml", "providers:\n  anthropic:\n    modelOverrides:\n"
                                     "      claude-sonnet-4-5: {id: claude-sonnet-4-6}\n")
    with pytest.raises(UsageError) as caught:
        load_routes(path)
    assert caught.value.message == ("route file: providers.anthropic.modelOverrides.claude-sonnet-4-5.id: is set, "
                                    "but the model's id is the modelOverrides key")


def test_the_settings_dsh_takes_are_taken(tmp_path: Path) -> None:
    routes = load_routes(write(tmp_path / "r.yml", "providers:\n" + LOCAL.replace("  local:\n", (
        "  local:\n    apiKeyEnv: _KEY_1\n    displayName: Local\n    transport: websocket-cached\n"
        "    websocketConnectTimeoutMs: 0\n    streamIdleTimeoutMs: 0.5\n"))))
    assert list(routes.models) == [("local", "m")]


RETRY_HINT = ("write the route's retryPolicy as DSH reads it: {mode: normal, maxRetries, retryableCodes, backoff} or "
              "{mode: always, backoff}, backoff {initialDelayMs, maxDelayMs, jitterRatio}, in that route file")
SAFE = "must be a non-negative safe integer (0 to 9007199254740991)"
DELAY = "must be a positive finite number no greater than 2147483647"


def _with_policy(tmp_path: Path, policy: str) -> Path:
    """A route file whose one hand-declared route sets ``retryPolicy: <policy>``."""
    route = LOCAL.replace("  local:\n", f"  local:\n    retryPolicy: {policy}\n")
    return write(tmp_path / "r.yml", "providers:\n" + route)


@pytest.mark.parametrize(("policy", "error"), [
    # DSH retry-policy.spec.ts's refusals, one for one
    ("{mode: normal, maxRetries: -1}", f"maxRetries: {SAFE}"),
    ("{mode: normal, maxRetries: 1.5}", f"maxRetries: {SAFE}"),
    ("{mode: normal, maxRetries: 9007199254740992}", f"maxRetries: {SAFE}"),
    ("{mode: always, backoff: {initialDelayMs: 0}}", f"backoff.initialDelayMs: {DELAY}"),
    ("{mode: normal, backoff: {maxDelayMs: .inf}}", f"backoff.maxDelayMs: {DELAY}"),
    ("{mode: normal, backoff: {initialDelayMs: 2147483648}}", f"backoff.initialDelayMs: {DELAY}"),
    ("{mode: always, backoff: {maxDelayMs: 2147483648}}", f"backoff.maxDelayMs: {DELAY}"),
    ("{mode: normal, backoff: {initialDelayMs: 20, maxDelayMs: 10}}",
     "backoff.initialDelayMs: must be less than or equal to maxDelayMs (20 > 10)"),
    ("{mode: always, backoff: {jitterRatio: 1.1}}", "backoff.jitterRatio: must be a number between 0 and 1"),
    ("{mode: normal, retryableCodes: []}", "retryableCodes: must not be empty; remove the key for DSH's default codes"),
    ("{mode: normal, retryableCodes: [SERVER, SERVER]}",
     "retryableCodes[1]: repeats 'SERVER' (the codes must not contain duplicates)"),
    ("{mode: normal, retryableCodes: ['']}", "retryableCodes[0]: must be a non-empty string"),
    ("{mode: normal, retryableCodes: [429]}", "retryableCodes[0]: must be a non-empty string"),
    ("{mode: normal, maxRetires: 1}",
     "maxRetires: is not a retryPolicy key (known: mode, maxRetries, retryableCodes, backoff)"),
    ("{mode: always, backoff: {initialDelay: 1}}",
     "backoff.initialDelay: is not a backoff key (known: initialDelayMs, maxDelayMs, jitterRatio)"),
    ("{mode: sometimes}", 'mode: must be "normal" or "always"'),
    # and what DSH's schema refuses before resolveRetryPolicy runs
    ("{maxRetries: 3}", 'mode: must be "normal" or "always"'),
    ("normal", ": must be a mapping with a mode (normal or always)"),
    ("", ": has no value; give it a mode (normal or always), or remove the key for DSH's default policy"),
    ("{mode: normal, maxRetries: true}", f"maxRetries: {SAFE}"),
    ("{mode: normal, retryableCodes: SERVER}", "retryableCodes: must be a list of failure codes"),
    ("{mode: normal, retryableCodes: [SERVER, null]}", "retryableCodes[1]: must be a non-empty string"),
    ("{mode: always, backoff: 5}", "backoff: must be a mapping of initialDelayMs, maxDelayMs, jitterRatio"),
    ("{mode: always, backoff: {initialDelayMs: 20000}}",
     "backoff.initialDelayMs: must be less than or equal to maxDelayMs (20000 > 10000 (DSH's default))"),
    ("{mode: always, backoff: {maxDelayMs: 100}}",
     "backoff.initialDelayMs: must be less than or equal to maxDelayMs (500 (DSH's default) > 100)"),
    ("{mode: always, backoff: {jitterRatio: .nan}}", "backoff.jitterRatio: must be a number between 0 and 1"),
    ("{mode: always, backoff: {jitterRatio: '0.5'}}", "backoff.jitterRatio: must be a number between 0 and 1"),
])
def test_a_retry_policy_dsh_refuses_is_refused(tmp_path: Path, policy: str, error: str) -> None:
    path = _with_policy(tmp_path, policy)
    with pytest.raises(UsageError) as caught:
        load_routes(path)
    where = "providers.local.retryPolicy" + ("" if error.startswith(":") else ".")
    assert (caught.value.message, caught.value.hint) == (f"route file: {where}{error}", RETRY_HINT)


def test_a_retry_policy_refusal_is_one_line_naming_the_file_and_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = session(tmp_path / "s.jsonl", "anthropic", [("claude-sonnet-4-5", "anthropic-messages")])
    routes = write(tmp_path / "r.yml", "providers:\n  anthropic:\n    retryPolicy:\n      mode: always\n"
                                       "      backoff: {jitterRatio: 2}\n")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes))
    assert (code, out, err) == (2, "", [f"error: {routes}: route file: providers.anthropic.retryPolicy.backoff."
                                        f"jitterRatio: must be a number between 0 and 1 (hint: {RETRY_HINT})"])


@pytest.mark.parametrize("policy", [
    "{mode: normal}",
    "{mode: always}",
    # always mode allows, and does not read, the normal-only fields a layer kept (retry-policy.spec.ts)
    "{mode: always, maxRetries: -1, retryableCodes: []}",
    "{mode: normal, maxRetries: 0, retryableCodes: [SERVER, RATE_LIMIT], backoff: {initialDelayMs: 0.5, "
    "maxDelayMs: 2147483647, jitterRatio: 0}}",
    "{mode: normal, maxRetries: 9007199254740991.0, backoff: {initialDelayMs: 10000}}",
    # a null field takes its default (schemastery)
    "{mode: normal, maxRetries: null, retryableCodes: null, backoff: {initialDelayMs: null, jitterRatio: 1}}",
    "{mode: always, backoff: null, maxRetries: x, retryableCodes: 7}",
    "{mode: always, backoff: {}}",
])
def test_a_retry_policy_dsh_takes_is_taken(tmp_path: Path, policy: str) -> None:
    path = _with_policy(tmp_path, policy)
    assert list(load_routes(path).models) == [("local", "m")]
