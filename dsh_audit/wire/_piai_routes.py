"""DSH's ``llm-pi-ai`` route configuration: the facts a hand-declared route's requests need.

A DSH deployment names its pi-ai routes in configuration (``config.providers`` of the
``llm-pi-ai`` row; ``live-pi/*/inputs/*.patch.yml`` show the shape): catalog routes that keep
pi-ai's installed catalog and override fields such as ``contextWindow``, and hand-declared routes
with their own ``api``, ``baseURL`` and model entries. The log records none of it, so a route
file is the input that settles it. Each model resolves the way DSH's ``catalog.ts``
``resolveRouteModels`` does (DSH 0.1.0-rc.8): the model entry, then the installed catalog entry,
then the route's defaults; ``reasoningEfforts`` becomes pi-ai's ``thinkingLevelMap`` (a declared
level carries its wire value, an undeclared one is pinned unsupported, a bare ``off`` stays out).
The route's stream settings (``reasoning``, ``cacheRetention``, ``thinkingBudgets``, ``headers``,
``timeoutMs``; DSH ``config.ts`` and ``adapter.ts`` ``profileOptions``/``requestHeaders``) and its request image
bound (``maxRequestImageBytes``) are read into a :class:`~dsh_audit.wire.RouteProfile` carried by
each of its models, and so is dsh-audit's own ``dshAudit`` mapping, which DSH does not read: the facts
of a route DSH's configuration cannot hold (``keyType``: the kind of key DSH's process gave pi-ai,
:func:`~dsh_audit.wire._anthropic_oauth.keyed_profile`).

A route file is read by :func:`~dsh_audit.wire._piai_route_file.load_routes`; the configuration
DSH composes under its home by :func:`~dsh_audit.wire._piai_home.load_home_routes`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .._urls import url_problem
from ._anthropic_oauth import KeyedRouteProfile, checked_key_type, keyed_profile, route_key_type
from ._piai_catalog import catalog_base_url, catalog_models
from ._piai_compat_gates import COMPAT_GATES, compat_apis, compat_value_problem
from ._piai_facts import THINKING_LEVELS, PiModel, RouteProfile
from ._piai_yaml import _SHORT

__all__ = ["PiRoutes", "parse_routes"]

# DSH's llm-pi-ai defaults (config.ts DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_TOKENS, DEFAULT_INPUT).
_DEFAULT_CONTEXT_WINDOW = 262_144
_DEFAULT_MAX_TOKENS = 32_768
_DEFAULT_INPUT = ("text",)
#: The input kinds a route may declare (DSH ``catalog.ts`` ``MODALITIES``: pi-ai's; config.ts refuses others).
_MODALITIES = ("text", "image")
_RETENTIONS = ("none", "short", "long")
_BUDGET_LEVELS = ("minimal", "low", "medium", "high")
#: DSH's attribution header names, which a profile's headers cannot set (``attribution.ts``).
_RESERVED_HEADERS = frozenset({"user-agent"})
_CONFIG_HINT = "see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models"
#: Profile fields DSH no longer reads and refuses (``config.ts`` ``rejectRemovedFields``).
_REMOVED_FIELDS = {"provider": "the route is the providers key", "maxRetries": "compose recovery with dsh-llm-retry",
                   "maxRetryDelayMs": "compose recovery with dsh-llm-retry"}
#: DSH's credential refs (``dsh-credentials`` ``REF_PATTERN``), stream transports (``config.ts`` ``transport``)
#: and its timer limit (``dsh-timeout`` ``MAX_TIMER_DELAY_MS``).
_CREDENTIAL_REF = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRANSPORTS = ("sse", "websocket", "websocket-cached", "auto")
_MAX_TIMER_DELAY_MS = 2_147_483_647
_APIS = frozenset({"anthropic-messages", "openai-completions", "openai-responses", "azure-openai-responses",
                   "openai-codex-responses", "bedrock-converse-stream", "google-generative-ai", "google-vertex",
                   "mistral-conversations"})

@dataclass(frozen=True, slots=True)
class PiRoutes:
    """A route configuration, resolved.

    Attributes:
        apis: provider id -> the pi-ai API its models speak (when they all speak one).
        models: (provider, model id) -> :class:`PiModel` for every model the file serves.
        source: the file it was read from (composed from DSH's layers: the last one that set it).
        layers: composed from a DSH home (:func:`load_home_routes`): every file that set part of
            it, in DSH's order; else empty.
        notes: what the composition could not settle (one line each), for a command to print.
    """

    apis: Mapping[str, str]
    models: Mapping[tuple[str, str], PiModel]
    source: str = ""
    layers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def key_type(self, provider: str) -> str | None:
        """The kind of key the route ``provider`` says DSH gave pi-ai (its ``dshAudit.keyType``, read once
        and kept in the settings of each of its models), checked as a route file's is read; None when it
        says none (or serves no model).

        Raises:
            ValueError: a key type no route file can say, or its models keyed differently (a
                configuration built in Python).

        Example:
            >>> parse_routes({"providers": {"anthropic": {"dshAudit": {"keyType": "oauth"}}}}).key_type("anthropic")
            'oauth'
        """
        found = {route_key_type(model.profile) for (name, _), model in self.models.items() if name == provider}
        if len(found) > 1:
            raise ValueError("differs between the route's models (one route, one kind of key)")
        return found.pop() if found else None


class _Bad(ValueError):
    """One problem in a route file: the key path it is at and what is wrong; ``hint``: what to do
    when :data:`_CONFIG_HINT` (DSH's own settings) is not it (dsh-audit's ``dshAudit`` mapping)."""

    def __init__(self, where: str, what: str, hint: str = "") -> None:
        super().__init__(f"{where}: {what}")
        self.hint = hint or _CONFIG_HINT


#: The hint of a file that holds no route configuration at all (a patch layer of other DSH modules,
#: a YAML file of something else): most often the wrong file given as ``--routes``.
_WRONG_FILE_HINT = ("give --routes FILE DSH's llm-pi-ai route configuration (providers.<id>.api, baseURL, models) "
                    "or a patch layer whose row with id 'llm-pi-ai' sets its config")
#: The hint of an error in a route's ``dshAudit`` mapping (docs/routes.md section 7.2).
_KEY_TYPE_HINT = ("write the route's `dshAudit: {keyType: oauth}` or `dshAudit: {keyType: api-key}` "
                  "(docs/routes.md section 7.2) in the file given as --routes FILE")


def _providers(data: Any) -> Mapping[str, Any]:
    if isinstance(data, list):  # DSH config rows: find the llm-pi-ai row
        rows = [r for r in data if isinstance(r, dict) and r.get("id") == "llm-pi-ai"]
        if not rows:
            raise _Bad("rows", "no row with id 'llm-pi-ai'", _WRONG_FILE_HINT)
        data = rows[-1].get("config")
    if isinstance(data, dict) and "config" in data and "providers" not in data:
        data = data["config"]
    providers = data.get("providers") if isinstance(data, dict) else None
    if not isinstance(providers, dict) or not providers:
        raise _Bad("providers", "no providers mapping", _WRONG_FILE_HINT)
    return providers


def parse_routes(data: Any) -> PiRoutes:
    """Resolve a parsed route configuration (see :func:`~dsh_audit.wire._piai_route_file.load_routes`).

    Raises:
        ValueError: (a subclass) a route DSH would refuse, naming its key path. A header DSH takes
            but fetch cannot send is no such route: the requests that carry it are refused as they
            are rendered (:func:`~dsh_audit.wire._piai_models.route_header_problem`).
    """
    apis: dict[str, str] = {}
    models: dict[tuple[str, str], PiModel] = {}
    notes: list[str] = []
    for provider, profile in _providers(data).items():
        where = f"providers.{provider}"
        if provider == "":  # DSH config.ts resolveProfiles refuses these, as below
            raise _Bad("providers", "a provider name is empty")
        if not isinstance(profile, dict):
            raise _Bad(where, "is not a mapping")
        for key in ("baseURL", "displayName"):
            if profile.get(key) == "":
                raise _Bad(f"{where}.{key}", "is empty")
        for key, instead in _REMOVED_FIELDS.items():
            if key in profile:
                raise _Bad(f"{where}.{key}", f"was removed from DSH's configuration: {instead}")
        _unread_settings(profile, where)
        resolved = _route_models(str(provider), profile, where)
        notes.extend(_dropped_headers(profile, where))
        models.update(((m.provider, m.id), m) for m in resolved)
        shared = {m.api for m in resolved}
        if len(shared) == 1:
            apis[str(provider)] = shared.pop()
    return PiRoutes(MappingProxyType(apis), MappingProxyType(models), notes=tuple(notes))


def _unread_settings(profile: dict[str, Any], where: str) -> None:
    """Refuse what DSH refuses in the profile fields no request reads (``config.ts`` ``profile`` schema and
    ``resolveProfiles``): ``apiKeyEnv`` (a credential ref: ``credentialRef``'s pattern), ``displayName`` and
    ``baseURL`` (strings), ``transport``, ``websocketConnectTimeoutMs`` (``z.natural()``) and
    ``streamIdleTimeoutMs`` (positive, at most the timer limit), ``retryPolicy`` (:func:`_retry_policy`)."""
    for key in ("apiKeyEnv", "displayName", "baseURL"):
        if profile.get(key) is not None and not isinstance(profile[key], str):
            raise _Bad(f"{where}.{key}", "must be a string")
    ref = profile.get("apiKeyEnv")
    if ref is not None and not _CREDENTIAL_REF.fullmatch(ref):
        raise _Bad(f"{where}.apiKeyEnv", "must name an environment variable (letters, digits and _, not starting "
                   "with a digit: DSH's credential ref)")
    if profile.get("transport") is not None and profile["transport"] not in _TRANSPORTS:
        raise _Bad(f"{where}.transport", f"must be one of {', '.join(_TRANSPORTS)}")
    _whole(profile.get("websocketConnectTimeoutMs"), f"{where}.websocketConnectTimeoutMs", 0,
           "must be a whole number of milliseconds")
    _delay(profile.get("streamIdleTimeoutMs"), f"{where}.streamIdleTimeoutMs")
    if "retryPolicy" in profile:
        _retry_policy(profile["retryPolicy"], f"{where}.retryPolicy")


def _delay(value: Any, where: str, hint: str = "") -> float | None:
    """A timer delay DSH takes (``config.ts`` ``streamIdleTimeoutMs``, ``retry-policy.ts`` ``resolveBackoff``):
    a finite number of milliseconds above 0 and at most the timer limit; None when absent."""
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)
                              or not math.isfinite(value) or not 0 < value <= _MAX_TIMER_DELAY_MS):
        raise _Bad(where, f"must be a positive finite number no greater than {_MAX_TIMER_DELAY_MS}", hint)
    return value


#: DSH's retry policy keys (``dsh-llm`` ``retry-policy.ts``: ``NORMAL_POLICY_KEYS``, which ``always`` mode
#: allows too, and ``BACKOFF_KEYS``), its backoff defaults and the bound of ``maxRetries``
#: (``Number.MAX_SAFE_INTEGER``).
_RETRY_KEYS = ("mode", "maxRetries", "retryableCodes", "backoff")
_BACKOFF_KEYS = ("initialDelayMs", "maxDelayMs", "jitterRatio")
_BACKOFF_DEFAULTS = (500, 10_000)
_MAX_SAFE_INTEGER = 2**53 - 1
_RETRY_HINT = ("write the route's retryPolicy as DSH reads it: {mode: normal, maxRetries, retryableCodes, backoff} "
               "or {mode: always, backoff}, backoff {initialDelayMs, maxDelayMs, jitterRatio}, in that route file")


def _retry_policy(policy: Any, where: str) -> None:
    """Refuse a ``retryPolicy`` DSH refuses as it loads the route (``config.ts`` ``RetryPolicySchema``, then
    ``retry-policy.ts`` ``resolveRetryPolicy``). No request reads it, so nothing of it is kept. A policy
    with no value is refused: the schema lets it through and ``resolveRetryPolicy`` fails on it. In
    ``always`` mode ``maxRetries`` and ``retryableCodes`` are allowed and not read (a layer may keep them
    after switching modes); a ``null`` field takes its default (``backoff: null`` too). The outcomes were
    checked against DSH's own schema and ``resolveRetryPolicy``, run under Node once (session 46)."""
    if not isinstance(policy, dict):
        raise _Bad(where, "must be a mapping with a mode (normal or always)" if policy is not None else
                   "has no value; give it a mode (normal or always), or remove the key for DSH's default policy",
                   _RETRY_HINT)
    mode = policy.get("mode")
    if mode not in ("normal", "always"):
        raise _Bad(f"{where}.mode", 'must be "normal" or "always"', _RETRY_HINT)
    _known_keys(policy, _RETRY_KEYS, where, "retryPolicy")
    if mode == "normal":
        retries = policy.get("maxRetries")
        if isinstance(retries, float) and math.isfinite(retries) and retries.is_integer():
            retries = int(retries)
        if retries is not None and (not isinstance(retries, int) or isinstance(retries, bool)
                                    or not 0 <= retries <= _MAX_SAFE_INTEGER):
            raise _Bad(f"{where}.maxRetries", f"must be a non-negative safe integer (0 to {_MAX_SAFE_INTEGER})",
                       _RETRY_HINT)
        _retryable_codes(policy.get("retryableCodes"), f"{where}.retryableCodes")
    backoff = policy.get("backoff")
    if backoff is None:
        return
    if not isinstance(backoff, dict):
        raise _Bad(f"{where}.backoff", f"must be a mapping of {', '.join(_BACKOFF_KEYS)}", _RETRY_HINT)
    _known_keys(backoff, _BACKOFF_KEYS, f"{where}.backoff", "backoff")
    first = _delay(backoff.get("initialDelayMs"), f"{where}.backoff.initialDelayMs", _RETRY_HINT)
    last = _delay(backoff.get("maxDelayMs"), f"{where}.backoff.maxDelayMs", _RETRY_HINT)
    if (first or _BACKOFF_DEFAULTS[0]) > (last or _BACKOFF_DEFAULTS[1]):
        said = [f"{given}" if given is not None else f"{default} (DSH's default)"
                for given, default in zip((first, last), _BACKOFF_DEFAULTS, strict=True)]
        raise _Bad(f"{where}.backoff.initialDelayMs", f"must be less than or equal to maxDelayMs ({said[0]} > "
                   f"{said[1]})", _RETRY_HINT)
    jitter = backoff.get("jitterRatio")
    if jitter is not None and (not isinstance(jitter, (int, float)) or isinstance(jitter, bool)
                               or not 0 <= jitter <= 1):
        raise _Bad(f"{where}.backoff.jitterRatio", "must be a number between 0 and 1", _RETRY_HINT)


def _known_keys(mapping: dict[Any, Any], known: tuple[str, ...], where: str, what: str) -> None:
    """Refuse a key of a retry policy mapping DSH does not know (``retry-policy.ts`` ``validateKeys``)."""
    for key in mapping:
        if key not in known:
            raise _Bad(f"{where}.{key}", f"is not a {what} key (known: {', '.join(known)})", _RETRY_HINT)


def _retryable_codes(codes: Any, where: str) -> None:
    """A normal policy's ``retryableCodes`` as DSH takes it: a non-empty list of distinct non-empty
    strings (None: DSH's default codes)."""
    if codes is None:
        return
    if not isinstance(codes, list):
        raise _Bad(where, "must be a list of failure codes", _RETRY_HINT)
    if not codes:
        raise _Bad(where, "must not be empty; remove the key for DSH's default codes", _RETRY_HINT)
    seen: set[str] = set()
    for index, code in enumerate(codes):
        if not isinstance(code, str) or not code:
            raise _Bad(f"{where}[{index}]", "must be a non-empty string", _RETRY_HINT)
        if code in seen:
            raise _Bad(f"{where}[{index}]", f"repeats {_SHORT.repr(code)} (the codes must not contain duplicates)",
                       _RETRY_HINT)
        seen.add(code)


def _dropped_headers(profile: dict[str, Any], where: str) -> list[str]:
    """A note for each profile header DSH drops whatever its value (``adapter.ts:177-184``
    ``requestHeaders``: the attribution names, :data:`_RESERVED_HEADERS`): the route file sets it, the
    wire never shows it, and no value of it stops a request (``headers`` checked by :func:`_profile`)."""
    return [f"{where}.headers.{key}: not sent: DSH drops a route's {key.lower()} header and sends its own "
            "attribution in its place (adapter.ts requestHeaders)"
            for key in profile.get("headers") or {} if key.lower() in _RESERVED_HEADERS]


def _catalog(provider: str) -> Mapping[str, PiModel]:
    """pi-ai's catalog entries of ``provider`` (DSH ``catalogModels``): every built-in provider's,
    not only the ones :data:`~dsh_audit.wire.BUILTIN_MODELS` lists."""
    return catalog_models(provider)


def _positive(value: Any, where: str) -> int | None:
    """A count DSH's schema reads as ``z.number().step(1).min(1)``: a whole number of at least 1,
    which YAML may write as a float (``4096.0``: one JavaScript number); None when absent."""
    return _whole(value, where, 1, "must be a positive integer")


def _whole(value: Any, where: str, least: int, problem: str) -> int | None:
    """A whole number of at least ``least`` (DSH's ``z.number().step(1).min(least)``; ``z.natural()``
    is ``least`` 0), which YAML may write as a float; None when absent, else :class:`_Bad` saying
    ``problem``."""
    if value is None:
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise _Bad(where, problem)
    return value


def _route_models(provider: str, profile: dict[str, Any], where: str) -> list[PiModel]:
    catalog = _catalog(provider)
    settings = _profile(profile, where)
    api = profile.get("api")
    if api is not None and (not isinstance(api, str) or api not in _APIS):
        raise _Bad(f"{where}.api", f"unknown pi-ai api {_SHORT.repr(api)} (known: {', '.join(sorted(_APIS))})")
    entries = profile.get("models") or []
    overrides = profile.get("modelOverrides") or {}
    if not isinstance(entries, list) or not isinstance(overrides, dict):
        raise _Bad(where, "models must be a list and modelOverrides a mapping")
    if overrides and entries:
        raise _Bad(f"{where}.modelOverrides", "beside a models list; declare the fields on its entries")
    for model_id, fields in overrides.items():
        if model_id not in catalog:
            raise _Bad(f"{where}.modelOverrides.{model_id}", "the installed catalog does not describe this model")
        if fields is not None and not isinstance(fields, dict):
            raise _Bad(f"{where}.modelOverrides.{model_id}", "must be a mapping of model fields")
        if fields is not None and "id" in fields:  # DSH catalog.ts: the id lives in the dict key
            raise _Bad(f"{where}.modelOverrides.{model_id}.id", "is set, but the model's id is the modelOverrides key")
    listed = bool(entries)
    if not entries:
        entries = [{"id": model_id, **(overrides.get(model_id) or {})} for model_id in catalog]
    if not entries:
        raise _Bad(where, "resolves no models: the catalog does not describe this route, so list its models")
    paths = [f"{where}.models[{index}]" if listed or entry["id"] not in overrides
             else f"{where}.modelOverrides.{entry['id']}" for index, entry in enumerate(entries)]
    # DSH catalog.ts resolveRouteModels: every compat mapping's switch names before any API resolves
    _offered_compat(profile.get("compat"), f"{where}.compat")
    for at, entry in zip(paths, entries, strict=True):
        if isinstance(entry, dict):
            _offered_compat(entry.get("compat"), f"{at}.compat")
    shared_api = {m.api for m in catalog.values()}
    defaults = (_positive(profile.get("defaultContextWindow"), f"{where}.defaultContextWindow") or _DEFAULT_CONTEXT_WINDOW,
                _positive(profile.get("defaultMaxTokens"), f"{where}.defaultMaxTokens") or _DEFAULT_MAX_TOKENS)
    out = []
    seen: set[str] = set()
    for at, entry in zip(paths, entries, strict=True):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
            raise _Bad(at, "needs an id")
        if entry["id"] in seen:  # DSH catalog.ts resolveRouteModels
            raise _Bad(f"{at}.id", f"lists model {_SHORT.repr(entry['id'])} more than once")
        seen.add(entry["id"])
        if entry.get("name") is not None and not isinstance(entry["name"], str):
            raise _Bad(f"{at}.name", "must be a string")
        model = _model(provider, entry, catalog.get(entry["id"]), api, profile, shared_api, defaults, at, where)
        out.append(dataclasses.replace(model, profile=settings) if settings is not None else model)
    _route_compat_read(profile, out, where)
    _key_type_route(settings, out, where)
    return out


def _key_type_route(settings: RouteProfile | None, models: list[PiModel], where: str) -> None:
    """Refuse ``dshAudit: {keyType: oauth}`` (read once, into the route's ``settings``: :func:`_profile`)
    on a route with no model of Anthropic's Messages api: the kind of key changes only what pi-ai sends
    to Anthropic (an OAuth key's Claude Code identity), so on such a route it would be a setting that
    does nothing (a route serving several apis, as github-copilot does, keeps it for its Anthropic models)."""
    if not isinstance(settings, KeyedRouteProfile) or settings.key_type != "oauth":  # api-key: the default, said
        return
    other = sorted({m.api for m in models})
    if "anthropic-messages" not in other:
        raise _Bad(f"{where}.dshAudit.keyType", f"is set on a route of api {', '.join(other)}: keyType applies "
                   "only to anthropic-messages routes", "remove `dshAudit: {keyType: ...}` from this route in "
                   "the file given as --routes FILE (docs/routes.md section 7.2)")


def _profile(profile: dict[str, Any], where: str) -> RouteProfile | None:
    """The route's stream settings, checked as DSH's ``config.ts`` schema checks them; None when
    the route sets none (pi-ai's defaults apply)."""
    reasoning = profile.get("reasoning")
    if reasoning is not None and reasoning not in THINKING_LEVELS:
        raise _Bad(f"{where}.reasoning", f"is not a thinking level ({', '.join(THINKING_LEVELS)})")
    retention = profile.get("cacheRetention")
    if retention is not None and retention not in _RETENTIONS:
        raise _Bad(f"{where}.cacheRetention", f"must be one of {', '.join(_RETENTIONS)}")
    budgets = profile.get("thinkingBudgets")
    if budgets is not None and not isinstance(budgets, dict):
        raise _Bad(f"{where}.thinkingBudgets", f"must be a mapping of {', '.join(_BUDGET_LEVELS)} to token counts")
    for level, value in (budgets or {}).items():
        if level in _BUDGET_LEVELS and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise _Bad(f"{where}.thinkingBudgets.{level}", "must be a whole number of tokens")
    headers = profile.get("headers")
    if headers is not None and (not isinstance(headers, dict)
                                or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())):
        raise _Bad(f"{where}.headers", "must map header names to string values")
    # a name or value fetch refuses is DSH's too (config.ts takes any string): it fails each request of
    # the route as it is sent, so the renderers refuse those (merge_profile_headers), not the file
    try:
        image_bound = _positive(profile.get("maxRequestImageBytes"), f"{where}.maxRequestImageBytes")
    except _Bad:
        raise _Bad(f"{where}.maxRequestImageBytes", "must be a positive whole number of bytes") from None
    # config.ts ``timeoutMs: z.natural()`` (the SDK's validatePositiveInteger refuses a fraction or a negative too)
    timeout = _whole(profile.get("timeoutMs"), f"{where}.timeoutMs", 0, "must be a whole number of milliseconds")
    key_type = _key_type(profile.get("dshAudit"), f"{where}.dshAudit")
    if reasoning is None and retention is None and budgets is None and not headers and image_bound is None \
            and timeout is None and key_type is None:
        return None
    # pi-ai reads only the four levels' budgets (simple-options.js adjustMaxTokensForThinking).
    kept = {level: budgets[level] for level in _BUDGET_LEVELS if level in budgets} if budgets is not None else None
    sent = tuple((k, v) for k, v in (headers or {}).items() if k.lower() not in _RESERVED_HEADERS)
    settings = RouteProfile(reasoning=reasoning, cache_retention=retention, thinking_budgets=kept, headers=sent,
                            max_request_image_bytes=image_bound, timeout_ms=timeout)
    return settings if key_type is None else keyed_profile(settings, key_type)


def _key_type(settings: Any, where: str) -> str | None:
    """``dshAudit.keyType``, the kind of key DSH gave pi-ai on the route (None: not said, an API key).
    ``dshAudit`` is dsh-audit's own mapping, so a name in it that dsh-audit does not know is refused."""
    if settings is None:
        return None
    if not isinstance(settings, dict):
        raise _Bad(where, "must be a mapping of dsh-audit route settings (keyType)", _KEY_TYPE_HINT)
    for name in settings:
        if name != "keyType":
            raise _Bad(f"{where}.{name}", "is not a dsh-audit route setting (known: keyType)", _KEY_TYPE_HINT)
    try:
        return checked_key_type(settings.get("keyType"))
    except ValueError as exc:
        raise _Bad(f"{where}.keyType", str(exc), _KEY_TYPE_HINT) from None


def _model(provider: str, entry: dict[str, Any], base: PiModel | None, api: str | None, profile: dict[str, Any],
           shared_api: set[str], defaults: tuple[int, int], at: str, route: str) -> PiModel:
    """One model of the route at key path ``route``, its entry at ``at``."""
    model_api = api or (base.api if base else None) or (next(iter(shared_api)) if len(shared_api) == 1 else None)
    if model_api is None:
        raise _Bad(f"{at}", "needs an api: the catalog does not describe it, so set the route's api")
    # DSH catalog.ts:805, 863: request.baseURL ?? base?.baseUrl ?? providerBaseUrl (the catalog provider's;
    # an entry's empty baseUrl, as pi-ai's azure-openai-responses models have, stays: ``??``)
    base_url = profile.get("baseURL") or (base.base_url if base is not None else catalog_base_url(provider))
    if not isinstance(base_url, str):
        raise _Bad(f"{at}", "needs a baseURL: the catalog does not describe this route")
    problem = url_problem(base_url)
    if problem is not None:
        raise _Bad(f"{route}.baseURL", f"is not a URL ({problem})")
    context = _positive(entry.get("contextWindow"), f"{at}.contextWindow") or \
        (base.context_window if base else defaults[0])
    cap = _positive(entry.get("maxTokens"), f"{at}.maxTokens") or (base.max_tokens if base else defaults[1])
    reasoning, levels = _reasoning(entry, base, at)
    configured = _model_compat(profile.get("compat"), entry.get("compat"), model_api, route, at)
    # DSH catalog.ts resolveModelCompat (:744-775): with no compat configured for this model's API,
    # the catalog entry's survives through ``...base`` whatever the api; configured switches start
    # from it only while the resolved api is the entry's own (:773: an api repoint leaves it in the
    # other protocol's shape).
    inherited = base.compat if base and (not configured or base.api == model_api) else {}
    compat = {**inherited, **configured}
    declared_input = entry.get("input")
    if declared_input is not None and (not isinstance(declared_input, list)
                                       or not all(i in _MODALITIES for i in declared_input)):
        raise _Bad(f"{at}.input", "must be a list of input kinds (text, image)")
    route_input = profile.get("defaultInput")  # DSH catalog.ts: the entry's, the catalog's, then this
    if route_input is not None and (not isinstance(route_input, list) or not route_input
                                    or not all(i in _MODALITIES for i in route_input)):
        raise _Bad(f"{route}.defaultInput", "must be a non-empty list of input kinds (text, image)")
    inputs = tuple(declared_input) if declared_input else \
        (base.input if base else tuple(route_input) if route_input else _DEFAULT_INPUT)
    # ``...base``: the catalog entry's model headers reach the request as pi-ai's model.headers
    return PiModel(provider=provider, id=entry["id"], api=model_api, base_url=base_url, context_window=context,
                   max_tokens=cap, reasoning=reasoning, thinking_level_map=levels, input=inputs, compat=compat,
                   headers=base.headers if base else ())


def _compat(value: Any, where: str, *, keep_empty: bool = False) -> dict[str, Any]:
    """A ``compat`` mapping of pi-ai switch names (None: no switches), without the switches set to
    an empty mapping unless ``keep_empty``: DSH's ``configuredCompatEntries`` (``catalog.ts:464-470``)
    reads ``chatTemplateKwargs: {}`` as not set, since it sends what leaving it out sends."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise _Bad(where, "must be a mapping of pi-ai compat switch names to values")
    return dict(value) if keep_empty else {k: v for k, v in value.items() if not (isinstance(v, dict) and not v)}


#: The hint of a compat switch DSH withholds from route files (``catalog.ts`` ``assertOfferedCompatFields``).
_WITHHELD_HINT = ("name the vendor's own catalog route as the provider (its pi-ai catalog entries carry the switch), "
                  "or remove the switch from that route file")


def _offered(field: str) -> bool:
    """Whether some API's gate offers the switch ``field`` (DSH ``compatProtocols(field).length > 0``)."""
    return any(gate.get(field) for gate in COMPAT_GATES.values())


def _offered_compat(value: Any, where: str) -> None:
    """Refuse what DSH refuses in one ``compat`` mapping before any API is resolved: a value its schema
    does not take (``config.ts`` ``compatProfile``, ``chatTemplateKwarg``), then, key by key, a name
    its gates withhold or no API declares and a key with no value (``catalog.ts``
    ``assertOfferedCompatFields``: a withheld switch is one pi-ai's catalog sets for the vendors that
    need it, such as ``sendSessionAffinityHeaders``, ``openRouterRouting`` or ``zaiToolStream``)."""
    switches = _compat(value, where, keep_empty=True)
    for field, switch in switches.items():
        problem = compat_value_problem(field, switch) if _offered(field) else None
        if problem is not None:
            raise _Bad(f"{where}.{field}{problem[0]}", problem[1])
    for field, switch in switches.items():
        if not _offered(field) and compat_apis(field):
            raise _Bad(f"{where}.{field}", "is not configurable here (DSH's compat gate withholds it): pi-ai's "
                       "installed catalog sets it for the vendors that need it, so name that provider as the route "
                       "instead", _WITHHELD_HINT)
        if not _offered(field):
            offered = dict.fromkeys(name for gate in COMPAT_GATES.values() for name, offer in gate.items() if offer)
            raise _Bad(f"{where}.{field}", f"no wire protocol declares it (DSH's compat gate); the configurable "
                       f"switches are {', '.join(offered)}")
        if switch is None:
            raise _Bad(f"{where}.{field}", "has no value; give it one, or remove the key to leave the field to the "
                       "next layer (the installed catalog entry, then pi-ai's own detection)")


def _model_compat(route_value: Any, model_value: Any, api: str, route: str, at: str) -> dict[str, Any]:
    """The compat switches configured for one model of API ``api``, through DSH's compat gate
    (``catalog.ts:751-762``, ``resolveModelCompat``): a route-level switch its API does not take
    is skipped (a route default must stay settable on a route whose models speak several APIs),
    a model's own is refused; the model's win field by field.

    The names DSH refuses before any API resolves (withheld, undeclared, valueless) were refused by
    :func:`_offered_compat` already, so every name here is one some API's gate offers."""
    gate = COMPAT_GATES.get(api, {})
    configured = {k: v for k, v in _compat(route_value, f"{route}.compat").items() if gate.get(k)}
    for field, value in _compat(model_value, f"{at}.compat").items():
        takers = compat_apis(field)
        if not gate.get(field):
            offered = [name for name, offer in gate.items() if offer]
            raise _Bad(f"{at}.compat.{field}", f"the model's api is {api!r}, which does not take it (DSH's compat "
                       f"gate): that switch exists on {', '.join(takers)}, and {api!r} offers "
                       f"{', '.join(offered) if offered else 'no configurable compat'}")
        configured[field] = value
    return configured


def _route_compat_read(profile: dict[str, Any], resolved: list[PiModel], where: str) -> None:
    """Refuse a route-level switch that no model of the route can read (DSH ``catalog.ts:903-911``:
    "no model on the route speaks a protocol that takes it"); a name no API declares is left to
    :func:`_model_compat`."""
    spoken = {m.api for m in resolved}
    for field in _compat(profile.get("compat"), f"{where}.compat"):
        takers = compat_apis(field)
        if takers and spoken.isdisjoint(takers):
            raise _Bad(f"{where}.compat.{field}", f"no model on the route speaks an api that takes it (it exists on "
                       f"{', '.join(takers)}; the route's models speak {', '.join(sorted(spoken))})")


def _reasoning(entry: dict[str, Any], base: PiModel | None,
               at: str) -> tuple[bool, Mapping[str, str | None] | None]:
    if "reasoningEfforts" not in entry:
        return (base.reasoning, base.thinking_level_map) if base else (False, None)
    efforts = entry["reasoningEfforts"]
    if efforts is False:
        return False, None
    if not isinstance(efforts, dict) or not efforts:
        raise _Bad(f"{at}.reasoningEfforts", "is empty; declare the offered levels or set false")
    for level, wire in efforts.items():
        if level not in THINKING_LEVELS:
            raise _Bad(f"{at}.reasoningEfforts.{level}", f"is not a thinking level ({', '.join(THINKING_LEVELS)})")
        if wire is None and level != "off":
            raise _Bad(f"{at}.reasoningEfforts.{level}", "needs the wire value to send; only off may be empty")
        if wire is not None and (not isinstance(wire, str) or not wire):
            raise _Bad(f"{at}.reasoningEfforts.{level}", "must be a non-empty string")
    if not any(level != "off" for level in efforts):
        raise _Bad(f"{at}.reasoningEfforts", "offers no level beyond off; declare one or set false")
    levels: dict[str, str | None] = {}
    for level in THINKING_LEVELS:
        if level not in efforts:
            levels[level] = None
        elif efforts[level] is not None:
            levels[level] = efforts[level]
    return True, levels
