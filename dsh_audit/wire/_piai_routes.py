"""DSH's ``llm-pi-ai`` route configuration: the facts a hand-declared route's requests need.

A DSH deployment names its pi-ai routes in configuration (``config.providers`` of the
``llm-pi-ai`` row; ``live-pi/*/inputs/*.patch.yml`` show the shape): catalog routes that keep
pi-ai's installed catalog and override fields such as ``contextWindow``, and hand-declared routes
with their own ``api``, ``baseURL`` and model entries. The log records none of it, so a route
file is the input that settles it. Each model resolves the way DSH's ``catalog.ts``
``resolveRouteModels`` does (DSH 0.1.0-rc.8): the model entry, then the installed catalog entry,
then the route's defaults; ``reasoningEfforts`` becomes pi-ai's ``thinkingLevelMap`` (a declared
level carries its wire value, an undeclared one is pinned unsupported, a bare ``off`` stays out).
The route's stream settings (``reasoning``, ``cacheRetention``, ``thinkingBudgets``, ``headers``;
DSH ``config.ts`` and ``adapter.ts`` ``profileOptions``/``requestHeaders``) and its request image
bound (``maxRequestImageBytes``) are read into a :class:`~dsh_audit.wire.RouteProfile` carried by
each of its models.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import reprlib
from urllib.parse import urlsplit
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, overload

from ..errors import UnreadableError, UsageError
from ..log import open_regular
from ._piai_models import BUILTIN_MODELS, THINKING_LEVELS, PiModel, RouteProfile

if TYPE_CHECKING:
    import yaml

__all__ = ["PiRoutes", "load_routes", "parse_routes"]

#: A route-file value in an error, described by its first items only: YAML aliases can make a
#: one-line value name a billion strings (``api: *bomb``).
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 2, 4, 4, 60, 60

# DSH's llm-pi-ai defaults (config.ts DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_TOKENS, DEFAULT_INPUT).
_DEFAULT_CONTEXT_WINDOW = 262_144
_DEFAULT_MAX_TOKENS = 32_768
_DEFAULT_INPUT = ("text",)
_RETENTIONS = ("none", "short", "long")
_BUDGET_LEVELS = ("minimal", "low", "medium", "high")
#: DSH's attribution header names, which a profile's headers cannot set (``attribution.ts``).
_RESERVED_HEADERS = frozenset({"user-agent"})
#: Largest route file read (DSH's route configurations are a few KiB; PyYAML reads about 1 MiB/s).
MAX_ROUTE_FILE = 1 << 20
#: Profile fields DSH no longer reads and refuses (``config.ts`` ``rejectRemovedFields``).
_REMOVED_FIELDS = {"provider": "the route is the providers key", "maxRetries": "compose recovery with dsh-llm-retry",
                   "maxRetryDelayMs": "compose recovery with dsh-llm-retry"}
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_APIS = frozenset({"anthropic-messages", "openai-completions", "openai-responses", "azure-openai-responses",
                   "openai-codex-responses", "bedrock-converse-stream", "google-generative-ai", "google-vertex",
                   "mistral-conversations"})


@dataclass(frozen=True, slots=True)
class PiRoutes:
    """A route configuration, resolved.

    Attributes:
        apis: provider id -> the pi-ai API its models speak (when they all speak one).
        models: (provider, model id) -> :class:`PiModel` for every model the file serves.
        source: the file it was read from.
    """

    apis: Mapping[str, str]
    models: Mapping[tuple[str, str], PiModel]
    source: str = ""


@functools.cache
def _yaml12_loader() -> type[yaml.SafeLoader]:
    """The YAML loader that reads as DSH's does: YAML 1.2 booleans, so ``off``, ``on``, ``yes``
    and ``no`` are strings (``reasoningEfforts: {off: , high: high}`` has a level named ``off``).
    Made when the first route file is read: yaml is imported only then (most commands read none)."""
    import yaml

    class Yaml12Loader(yaml.SafeLoader):
        pass

    Yaml12Loader.yaml_implicit_resolvers = {
        key: [(tag, regex) for tag, regex in resolvers if tag != "tag:yaml.org,2002:bool"]
        for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    for first in "tTfF":
        Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:bool",
                                           re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), [first])
    Yaml12Loader.add_constructor("tag:yaml.org,2002:js", _js_expression)
    return Yaml12Loader


@dataclass(frozen=True, slots=True)
class _JsExpression:
    """A ``!!js`` scalar of DSH's patch dialect (the vendored include's ``entryListSchema``), kept
    unevaluated: no route field may be one."""

    text: str

    def __repr__(self) -> str:
        return f"!!js {self.text!r}"


def _js_expression(loader: yaml.SafeLoader, node: yaml.Node) -> _JsExpression:
    return _JsExpression(str(loader.construct_scalar(node)))  # type: ignore[arg-type]


class _Bad(Exception):
    """One problem in a route file: the key path it is at and what is wrong."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")


@overload
def load_routes(path: str | os.PathLike[str], *, layer: Literal[False] = False) -> PiRoutes: ...
@overload
def load_routes(path: str | os.PathLike[str], *, layer: Literal[True]) -> PiRoutes | None: ...


def load_routes(path: str | os.PathLike[str], *, layer: bool = False) -> PiRoutes | None:
    """Read a route file (YAML: DSH's config rows, the ``llm-pi-ai`` row's ``config``, or its
    ``providers`` mapping).

    With ``layer``, the file is one of DSH's patch layers (a ``cordis.patch.yml``: a top-level
    list of patch rows, each a mapping, as DSH's app-boot ``parsePatchList`` requires), and None
    when no row of it sets the ``llm-pi-ai`` row's ``config`` (such a layer leaves the route
    configuration as the layers below it made it). ``!!js`` expressions, which DSH's patch dialect
    allows, are read as opaque values: one in the route configuration is refused as a wrong type.

    Raises:
        UsageError: the file cannot be read, is not YAML, or declares a route DSH would refuse;
            the message names the file and the key.

    Example:
        >>> routes = load_routes("inputs/pi-ai-routes.patch.yml")  # doctest: +SKIP
        >>> routes.apis["local-openai"]  # doctest: +SKIP
        'openai-completions'
    """
    name = os.fspath(path)
    hint = "give --routes a YAML file with DSH's llm-pi-ai route configuration"
    data = _read_yaml(name, hint)
    try:
        if layer:
            data = _layer_config(data)
            if data is None:
                return None
        return dataclasses.replace(parse_routes(data), source=name)
    except _Bad as exc:
        raise UsageError(f"route file: {exc}", path=name,
                         hint="see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models") from None


def _read_yaml(name: str, hint: str) -> Any:
    """The parsed YAML of the route file ``name``.

    Raises:
        UsageError: the file cannot be read or is not YAML.
    """
    try:
        with open_regular(name, what="route file") as handle:  # a FIFO would hang: refused
            raw = handle.read(MAX_ROUTE_FILE + 1)
    except UnreadableError as exc:
        raise UsageError(exc.message, path=name, hint=exc.hint or hint) from None
    except OSError as exc:
        raise UsageError(f"cannot read the route file: {exc.strerror or exc}", path=name, hint=hint) from None
    if len(raw) > MAX_ROUTE_FILE:
        raise UsageError(f"route file is larger than {MAX_ROUTE_FILE >> 20} MiB; a route configuration is a few KiB",
                         path=name, hint=hint)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"route file is not UTF-8 text (byte {exc.start})", path=name, hint=hint) from None
    import yaml  # here, not at the top: see _yaml12_loader

    try:
        return yaml.load(text, Loader=_yaml12_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (NUL, C0 and C1 controls)
        line = text.count("\n", 0, exc.position) + 1
        raise UsageError(f"route file is not valid YAML at line {line}: {exc.reason} (U+{exc.character:04X})",
                         path=name, hint=hint) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise UsageError(f"route file is not valid YAML{where}: {problem}", path=name, hint=hint) from None
    except RecursionError:
        raise UsageError("route file nests mappings or lists too deeply", path=name, hint=hint) from None
    except ValueError as exc:  # an integer past Python's digit limit
        problem = str(exc).splitlines()[0].split("; use ")[0]
        raise UsageError(f"route file is not valid YAML: {problem}", path=name, hint=hint) from None


def _layer_config(data: Any) -> Any:
    """The ``llm-pi-ai`` row's ``config`` a DSH patch layer sets, None when it sets none. A patch
    row replaces each key it names (the vendored include's ``applyEntryPatches`` assigns
    ``target[key] = value``), so the last row setting ``config`` wins whole."""
    if not isinstance(data, list):
        raise _Bad("rows", "a patch layer must be a top-level YAML list of patch rows")
    for index, row in enumerate(data):
        if not isinstance(row, dict):
            raise _Bad(f"rows[{index}]", "must be a mapping (a patch row)")
    rows = [r for r in data if r.get("id") == "llm-pi-ai" and "config" in r]
    return rows[-1]["config"] if rows else None


def _providers(data: Any) -> Mapping[str, Any]:
    if isinstance(data, list):  # DSH config rows: find the llm-pi-ai row
        rows = [r for r in data if isinstance(r, dict) and r.get("id") == "llm-pi-ai"]
        if not rows:
            raise _Bad("rows", "no row with id 'llm-pi-ai'")
        data = rows[-1].get("config")
    if isinstance(data, dict) and "config" in data and "providers" not in data:
        data = data["config"]
    providers = data.get("providers") if isinstance(data, dict) else None
    if not isinstance(providers, dict) or not providers:
        raise _Bad("providers", "no providers mapping")
    return providers


def parse_routes(data: Any) -> PiRoutes:
    """Resolve a parsed route configuration (see :func:`load_routes`).

    Raises:
        ValueError: (a subclass) a route DSH would refuse, naming its key path.
    """
    apis: dict[str, str] = {}
    models: dict[tuple[str, str], PiModel] = {}
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
        resolved = _route_models(str(provider), profile, where)
        models.update(((m.provider, m.id), m) for m in resolved)
        shared = {m.api for m in resolved}
        if len(shared) == 1:
            apis[str(provider)] = shared.pop()
    return PiRoutes(MappingProxyType(apis), MappingProxyType(models))


def _catalog(provider: str) -> dict[str, PiModel]:
    return {model_id: model for (p, model_id), model in BUILTIN_MODELS.items() if p == provider}


def _positive(value: Any, where: str) -> int | None:
    """A count DSH's schema reads as ``z.number().step(1).min(1)``: a whole number of at least 1,
    which YAML may write as a float (``4096.0``: one JavaScript number); None when absent."""
    if value is None:
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise _Bad(where, "must be a positive integer")
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
    if not entries:
        entries = [{"id": model_id, **(overrides.get(model_id) or {})} for model_id in catalog]
    if not entries:
        raise _Bad(where, "resolves no models: the catalog does not describe this route, so list its models")
    shared_api = {m.api for m in catalog.values()}
    defaults = (_positive(profile.get("defaultContextWindow"), f"{where}.defaultContextWindow") or _DEFAULT_CONTEXT_WINDOW,
                _positive(profile.get("defaultMaxTokens"), f"{where}.defaultMaxTokens") or _DEFAULT_MAX_TOKENS)
    out = []
    for index, entry in enumerate(entries):
        at = f"{where}.models[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
            raise _Bad(at, "needs an id")
        model = _model(provider, entry, catalog.get(entry["id"]), api, profile, shared_api, defaults, at)
        out.append(dataclasses.replace(model, profile=settings) if settings is not None else model)
    return out


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
    for key, value in (headers or {}).items():
        # what fetch's Headers refuses: a name that is not an HTTP token, a value with CR, LF or NUL,
        # or one that is no ByteString (a character past U+00FF: webidl's ByteString conversion)
        if not _TOKEN.fullmatch(key) or any(c in value for c in "\r\n\0"):
            raise _Bad(f"{where}.headers.{key}",
                       "is not a valid HTTP header (a token name; no CR, LF or NUL in the value)")
        if any(ord(c) > 0xFF for c in value):
            raise _Bad(f"{where}.headers.{key}", "holds a character past U+00FF, which fetch cannot send")
    try:
        image_bound = _positive(profile.get("maxRequestImageBytes"), f"{where}.maxRequestImageBytes")
    except _Bad:
        raise _Bad(f"{where}.maxRequestImageBytes", "must be a positive whole number of bytes") from None
    if reasoning is None and retention is None and budgets is None and not headers and image_bound is None:
        return None
    # pi-ai reads only the four levels' budgets (simple-options.js adjustMaxTokensForThinking).
    kept = {level: budgets[level] for level in _BUDGET_LEVELS if level in budgets} if budgets is not None else None
    sent = tuple((k, v) for k, v in (headers or {}).items() if k.lower() not in _RESERVED_HEADERS)
    return RouteProfile(reasoning=reasoning, cache_retention=retention, thinking_budgets=kept, headers=sent,
                        max_request_image_bytes=image_bound)


def _model(provider: str, entry: dict[str, Any], base: PiModel | None, api: str | None, profile: dict[str, Any],
           shared_api: set[str], defaults: tuple[int, int], at: str) -> PiModel:
    model_api = api or (base.api if base else None) or (next(iter(shared_api)) if len(shared_api) == 1 else None)
    if model_api is None:
        raise _Bad(f"{at}", "needs an api: the catalog does not describe it, so set the route's api")
    route = at[: at.rindex(".models[")]  # the route's own key path
    base_url = profile.get("baseURL") or (base.base_url if base else None)
    if not isinstance(base_url, str):
        raise _Bad(f"{at}", "needs a baseURL: the catalog does not describe this route")
    try:
        urlsplit(base_url)
    except ValueError as exc:
        raise _Bad(f"{route}.baseURL", f"is not a URL ({exc})") from None
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in base_url):
        raise _Bad(f"{route}.baseURL", "is not a URL (it holds a control character)")
    context = _positive(entry.get("contextWindow"), f"{at}.contextWindow") or \
        (base.context_window if base else defaults[0])
    cap = _positive(entry.get("maxTokens"), f"{at}.maxTokens") or (base.max_tokens if base else defaults[1])
    reasoning, levels = _reasoning(entry, base, at)
    compat = {**(base.compat if base and base.api == model_api else {}),
              **_compat(profile.get("compat"), f"{route}.compat"),
              **_compat(entry.get("compat"), f"{at}.compat")}
    declared_input = entry.get("input")
    if declared_input is not None and (not isinstance(declared_input, list)
                                       or not all(isinstance(i, str) for i in declared_input)):
        raise _Bad(f"{at}.input", "must be a list of input kinds (text, image)")
    route_input = profile.get("defaultInput")  # DSH catalog.ts: the entry's, the catalog's, then this
    if route_input is not None and (not isinstance(route_input, list) or not route_input
                                    or not all(isinstance(i, str) for i in route_input)):
        raise _Bad(f"{route}.defaultInput", "must be a non-empty list of input kinds (text, image)")
    inputs = tuple(declared_input) if declared_input else \
        (base.input if base else tuple(route_input) if route_input else _DEFAULT_INPUT)
    return PiModel(provider=provider, id=entry["id"], api=model_api, base_url=base_url, context_window=context,
                   max_tokens=cap, reasoning=reasoning, thinking_level_map=levels, input=inputs, compat=compat)


def _compat(value: Any, where: str) -> dict[str, Any]:
    """A ``compat`` mapping of pi-ai switch names (None: no switches)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise _Bad(where, "must be a mapping of pi-ai compat switch names to values")
    return value


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
