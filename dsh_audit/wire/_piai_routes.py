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

A route file is one of DSH's inputs; :func:`load_home_routes` composes the configuration the way
DSH composes it under its home (a profile's patch layer, the home's, the settings document's
section), and every file is read as DSH's own YAML readers read it (YAML 1.2 scalars, no merge
keys, a key named twice refused).
"""

from __future__ import annotations

import collections
import dataclasses
import errno
import functools
import json
import math
import os
import re
import reprlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, overload

from .._json import refuse_constant
from .._urls import url_problem
from ..errors import UnreadableError, UsageError
from ..log import open_regular
from ._piai_catalog import catalog_base_url, catalog_models
from ._piai_facts import THINKING_LEVELS, PiModel, RouteProfile
from ._piai_js import js_truthy

if TYPE_CHECKING:
    import yaml

__all__ = ["MAX_COMPARED_PROFILES", "PATCH_FILE", "PROFILES_DIR", "PROFILE_HINT", "SETTINGS_FILE", "PiRoutes",
           "YamlDialect", "check_profile", "home_profiles", "home_route_files",
           "load_home_routes", "load_routes", "parse_routes"]

#: A route-file value in an error, described by its first items only: YAML aliases can make a
#: one-line value name a billion strings (``api: *bomb``).
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 2, 4, 4, 60, 60

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
_FILE_HINT = "give --routes a YAML file with DSH's llm-pi-ai route configuration"
_CONFIG_HINT = "see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models"
#: Largest route file read (DSH's route configurations are a few KiB; PyYAML reads about 1 MiB/s).
MAX_ROUTE_FILE = 1 << 20
#: Profile fields DSH no longer reads and refuses (``config.ts`` ``rejectRemovedFields``).
_REMOVED_FIELDS = {"provider": "the route is the providers key", "maxRetries": "compose recovery with dsh-llm-retry",
                   "maxRetryDelayMs": "compose recovery with dsh-llm-retry"}
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_APIS = frozenset({"anthropic-messages", "openai-completions", "openai-responses", "azure-openai-responses",
                   "openai-codex-responses", "bedrock-converse-stream", "google-generative-ai", "google-vertex",
                   "mistral-conversations"})

#: DSH's compat gates (``llm-pi-ai/src/catalog.ts:235-320``, ``COMPAT_GATES``): the compat fields
#: pi-ai's compat type of each API declares, ``True`` where a route may set it ("offer"), ``False``
#: where pi-ai's catalog sets it for the vendors that need it ("withhold"). The three Responses
#: APIs share one type; an API missing here (Google's, Mistral's) takes no compat at all.
_COMPLETIONS_COMPAT: Mapping[str, bool] = MappingProxyType({
    **dict.fromkeys(("supportsStore", "supportsDeveloperRole", "supportsReasoningEffort", "supportsUsageInStreaming",
                     "maxTokensField", "requiresToolResultName", "requiresAssistantAfterToolResult",
                     "requiresThinkingAsText", "requiresReasoningContentOnAssistantMessages", "thinkingFormat",
                     "chatTemplateKwargs", "supportsStrictMode", "cacheControlFormat",
                     "supportsLongCacheRetention"), True),
    **dict.fromkeys(("openRouterRouting", "vercelGatewayRouting", "zaiToolStream", "supportsOpenAIGrammarTools",
                     "sendSessionAffinityHeaders", "deferredToolsMode", "sessionAffinityFormat"), False)})
_RESPONSES_COMPAT: Mapping[str, bool] = MappingProxyType({
    **dict.fromkeys(("supportsDeveloperRole", "supportsStrictMode", "supportsLongCacheRetention"), True),
    **dict.fromkeys(("sessionAffinityFormat", "supportsOpenAIGrammarTools", "supportsToolSearch",
                     "supportsExplicitPromptCacheMode"), False)})
_ANTHROPIC_COMPAT: Mapping[str, bool] = MappingProxyType({
    **dict.fromkeys(("supportsEagerToolInputStreaming", "supportsLongCacheRetention", "supportsCacheControlOnTools",
                     "supportsTemperature", "forceAdaptiveThinking", "allowEmptySignature", "supportsStrictTools"),
                    True),
    **dict.fromkeys(("sendSessionAffinityHeaders", "supportsToolReferences"), False)})
_COMPAT_GATES: Mapping[str, Mapping[str, bool]] = MappingProxyType({
    "openai-completions": _COMPLETIONS_COMPAT, "openai-responses": _RESPONSES_COMPAT,
    "azure-openai-responses": _RESPONSES_COMPAT, "openai-codex-responses": _RESPONSES_COMPAT,
    "anthropic-messages": _ANTHROPIC_COMPAT,
    "bedrock-converse-stream": MappingProxyType({"supportsStrictMode": True})})


def _compat_apis(field: str) -> tuple[str, ...]:
    """The APIs whose compat type declares ``field``, in DSH's gate order (empty: no API's does).

    Example:
        >>> _compat_apis("supportsTemperature")
        ('anthropic-messages',)
        >>> _compat_apis("supportsDeveloperRole")
        ('openai-completions', 'openai-responses', 'azure-openai-responses', 'openai-codex-responses')
    """
    return tuple(api for api, gate in _COMPAT_GATES.items() if field in gate)


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


#: The implicit tags of PyYAML's SafeLoader that DSH's YAML readers do not have: js-yaml's
#: ``JSON_SCHEMA`` (patch layers: vendored include ``src/index.ts:23``) and the ``yaml`` package's
#: YAML 1.2 core schema (the settings document) resolve ``<<`` and ``2024-01-01`` as strings.
_NOT_DSH_TAGS = frozenset({"tag:yaml.org,2002:bool", "tag:yaml.org,2002:merge", "tag:yaml.org,2002:timestamp",
                           "tag:yaml.org,2002:value", "tag:yaml.org,2002:yaml",  # ``=``, ``!``: strings to both
                           "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})  # YAML 1.1's: _NUMBER_FORMS instead
#: Which of DSH's YAML readers a file is read as: ``js-yaml`` 4.2.0 (patch layers, app-boot
#: ``src/index.ts:13, 320-339``) or ``yaml`` 2.9.0 (``settings.yaml``, settings-file ``src/index.ts:15, 278``).
YamlDialect = Literal["js-yaml", "yaml"]

#: The plain scalars each of DSH's YAML readers takes as a number, as (tag, pattern) in the order
#: it tries them (a scalar no pattern matches is a string). js-yaml 4.2.0's JSON_SCHEMA
#: (``lib/type/int.js`` ``resolveYamlInteger``: a sign on every base, ``0b``/``0x``/``0o`` in lower
#: case, no ``_``; ``lib/type/float.js`` ``YAML_FLOAT_PATTERN``: exponents without a dot, ``.5`` but
#: not ``+.5``); the ``yaml`` package 2.9.0's core schema (``dist/schema/core/int.js``: ``0o`` and
#: ``0x`` without a sign, no ``0b``; ``float.js``: ``floatNaN``, ``floatExp``, ``float``). PyYAML's
#: YAML 1.1 forms differ on most of these: ``1e3`` a string, ``017`` octal, ``1_000`` and
#: ``1:20`` (sexagesimal) numbers.
_NUMBER_FORMS: Mapping[str, tuple[tuple[str, re.Pattern[str]], ...]] = MappingProxyType({
    "js-yaml": (
        ("tag:yaml.org,2002:int", re.compile(r"[-+]?(?:0b[01]+|0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)\Z")),
        ("tag:yaml.org,2002:float", re.compile(r"(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
                                               r"|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"))),
    "yaml": (
        ("tag:yaml.org,2002:int", re.compile(r"(?:0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+)\Z")),
        ("tag:yaml.org,2002:float", re.compile(r"(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN"
                                               r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+"
                                               r"|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))\Z"))),
})
_JS_SAFE = 2 ** 53


def _js_number(value: float) -> int | float:
    """A JavaScript number as dsh-audit holds it: a whole number within 2**53 an int (JavaScript has
    one number type: ``4096.0`` and ``4096`` are one value), anything else the double."""
    return int(value) if value.is_integer() and abs(value) <= _JS_SAFE else value


def _number(dialect: YamlDialect, refused: type[yaml.MarkedYAMLError]) -> Callable[[yaml.SafeLoader, yaml.Node], Any]:
    """The constructor of a plain scalar that ``dialect``'s number pattern matched: its value as a
    JavaScript number (``parseInt`` by base, ``parseFloat``). js-yaml keeps a scalar whose value is
    not finite (``1`` and 400 zeros) as a string (``Number.isFinite`` in both resolvers); ``yaml``
    gives it Infinity. A scalar tagged ``!!int`` or ``!!float`` that is no such number is ``refused``."""

    forms = dict(_NUMBER_FORMS[dialect])

    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
        if not forms[node.tag].match(text):  # an explicit ``!!int abc``: js-yaml "cannot resolve a node"
            raise refused(None, None, f"{_SHORT.repr(text)} is not a YAML {node.tag[18:]}", node.start_mark)
        digits = text.lstrip("+-").lower()
        negative = text.startswith("-")
        if digits in (".inf", ".nan"):
            value = math.nan if digits == ".nan" else -math.inf if negative else math.inf
            return value
        if digits[:2] in ("0b", "0o", "0x"):  # bases 2, 8 and 16 are exact at any length
            whole = int(digits[2:], {"b": 2, "o": 8, "x": 16}[digits[1]])
            try:
                value = float(-whole if negative else whole)
            except OverflowError:
                value = -math.inf if negative else math.inf
        else:
            value = float(text)  # decimal: the nearest double, as parseInt and parseFloat round
        if not math.isfinite(value):
            return text if dialect == "js-yaml" else value
        return _js_number(value) if value or not negative else 0  # -0 is 0 wherever DSH uses it

    return construct


def _js_string(value: Any) -> Any:
    """``String(key)``: the name js-yaml gives a mapping key, by which it finds a duplicate
    (``lib/loader.js`` ``storeMappingPair``): ``1`` and ``"1"``, ``true`` and ``True`` are one key."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, (_JsExpression, dict)):
        return "[object Object]"
    if isinstance(value, (list, tuple)):  # unhashable: PyYAML refuses it (and a str() of aliases may not end)
        return ("node", id(value))
    return str(value)


def _yaml_identity(value: Any) -> Any:
    """The ``yaml`` package's key identity (``uniqueKeys``: ``a.value === b.value`` of two scalars):
    ``1`` and ``1.0`` are one key, ``1`` and ``"1"`` two, NaN never equal to itself."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return ("number", float(value) if abs(value) < 1 << 53 else value)
    return ("node", id(value))


@functools.cache
def _yaml12_loader(dialect: YamlDialect = "js-yaml") -> type[yaml.SafeLoader]:
    """The YAML loader that reads as DSH's reader of ``dialect`` does: YAML 1.2 booleans, so
    ``off``, ``on``, ``yes`` and ``no`` are strings (``reasoningEfforts: {off: , high: high}`` has a
    level named ``off``); no merge keys or timestamps; a mapping that names one key twice refused
    (js-yaml 4.2.0 ``lib/loader.js:440-446`` "duplicated mapping key" unless its ``json`` option,
    which DSH does not pass; ``yaml`` 2.9.0 ``uniqueKeys: true`` by default, ``DUPLICATE_KEY``).
    Made when the first route file is read: yaml is imported only then (most commands read none)."""
    import yaml

    identity = _js_string if dialect == "js-yaml" else _yaml_identity

    class Yaml12Loader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    name = identity(key)
                    hash(name)
                except TypeError:  # an unhashable key: PyYAML's own error says so
                    continue
                if name in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicated mapping key {_SHORT.repr(key)} (DSH's YAML reader refuses it)",
                        key_node.start_mark)
                seen.add(name)
            return super().construct_mapping(node, deep=deep)

    Yaml12Loader.yaml_implicit_resolvers = {
        key: [(tag, regex) for tag, regex in resolvers if tag not in _NOT_DSH_TAGS]
        for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    for first in "tTfF":
        Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:bool",
                                           re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), [first])
    for tag, pattern in _NUMBER_FORMS[dialect]:
        Yaml12Loader.add_implicit_resolver(tag, pattern, list("0123456789+-."))
        Yaml12Loader.add_constructor(tag, _number(dialect, yaml.constructor.ConstructorError))
    if dialect == "js-yaml":
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
    data = _read_yaml(name, _FILE_HINT)
    try:
        if layer:
            data = _layer_config(data)
            if data is None:
                return None
        return dataclasses.replace(parse_routes(data), source=name)
    except _Bad as exc:
        raise UsageError(f"route file: {exc}", path=name, hint=_CONFIG_HINT) from None


class _Memo:
    """Parsed YAML files, by (path, dialect, what, hint): the file's (size, mtime, ctime, inode,
    device) when it was read and what reading it gave (its value, or the UsageError it raised).
    A file is parsed once per process while it stays unchanged (a home's layers are composed for
    each session of the home); past :data:`_MEMO_BYTES` bytes of files the least recently read go.
    A parsed value is shared: no caller changes one."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total = limit, 0
        self.entries: collections.OrderedDict[tuple[str, ...], tuple[tuple[int, ...], Any, int]] = \
            collections.OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[str, ...], stamp: tuple[int, ...]) -> tuple[bool, Any]:
        with self.lock:
            known = self.entries.get(key)
            if known is None or known[0] != stamp:
                return False, None
            self.entries.move_to_end(key)
            return True, known[1]

    def put(self, key: tuple[str, ...], stamp: tuple[int, ...], outcome: Any, size: int) -> None:
        with self.lock:
            old = self.entries.pop(key, None)
            self.total += size - (old[2] if old is not None else 0)
            self.entries[key] = (stamp, outcome, size)
            while len(self.entries) > 1 and self.total > self.limit:
                self.total -= self.entries.popitem(last=False)[1][2]


#: The bytes of files whose parsed YAML :func:`_read_yaml` keeps.
_MEMO_BYTES = 16 << 20
#: How recently modified a file is not memoised (git's "racy" entries): a file system stamps a
#: write with a coarse clock (a few ms; 2 s on FAT), so a same-size edit just after a read could
#: keep its stamp.
_RACY_NS = 2_000_000_000
_MEMO = _Memo(_MEMO_BYTES)


def _read_yaml(name: str, hint: str, *, what: str = "route file", dialect: YamlDialect = "js-yaml") -> Any:
    """The parsed YAML of the route file (or other file ``what``) ``name``, read as DSH's reader
    of ``dialect`` reads it; parsed again only when the file changed (:class:`_Memo`).

    Raises:
        UsageError: the file cannot be read or is not YAML (a key named twice included).
    """
    try:
        info = os.stat(name)
    except (OSError, ValueError):  # not there, or no such name: reading it says why
        return _parse_yaml(name, hint, what=what, dialect=dialect)
    key = (name, dialect, what, hint)
    stamp = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)
    if time.time_ns() - info.st_mtime_ns < _RACY_NS:
        return _parse_yaml(name, hint, what=what, dialect=dialect)  # see _RACY_NS
    found, outcome = _MEMO.get(key, stamp)
    if not found:
        try:
            outcome = _parse_yaml(name, hint, what=what, dialect=dialect)
        except UsageError as exc:
            outcome = exc
        _MEMO.put(key, stamp, outcome, max(info.st_size, 1))
    if isinstance(outcome, UsageError):
        raise outcome.with_traceback(None)
    return outcome


def _parse_yaml(name: str, hint: str, *, what: str, dialect: YamlDialect) -> Any:
    """:func:`_read_yaml` without the memo."""
    try:
        with open_regular(name, what=what) as handle:  # a FIFO would hang: refused
            raw = handle.read(MAX_ROUTE_FILE + 1)
    except UnreadableError as exc:
        raise UsageError(exc.message, path=name, hint=exc.hint or hint) from None
    except OSError as exc:
        raise UsageError(f"cannot read the {what}: {exc.strerror or exc}", path=name, hint=hint) from None
    if len(raw) > MAX_ROUTE_FILE:
        raise UsageError(f"{what} is larger than {MAX_ROUTE_FILE >> 20} MiB; a route configuration is a few KiB",
                         path=name, hint=hint)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} is not UTF-8 text (byte {exc.start})", path=name, hint=hint) from None
    import yaml  # here, not at the top: see _yaml12_loader

    try:
        return yaml.load(text, Loader=_yaml12_loader(dialect))  # noqa: S506 - a SafeLoader subclass
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (NUL, C0 and C1 controls)
        line = text.count("\n", 0, exc.position) + 1
        raise UsageError(f"{what} is not valid YAML at line {line}: {exc.reason} (U+{exc.character:04X})",
                         path=name, hint=hint) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise UsageError(f"{what} is not valid YAML{where}: {problem}", path=name, hint=hint) from None
    except RecursionError:
        raise UsageError(f"{what} nests mappings or lists too deeply", path=name, hint=hint) from None
    except ValueError as exc:  # an integer past Python's digit limit
        problem = str(exc).splitlines()[0].split("; use ")[0]
        raise UsageError(f"{what} is not valid YAML: {problem}", path=name, hint=hint) from None


def _layer_config(data: Any) -> Any:
    """The ``llm-pi-ai`` row's ``config`` a DSH patch layer sets, None when it sets none. A patch
    row replaces each key it names (the vendored include's ``applyEntryPatches`` assigns
    ``target[key] = value``), so the last row setting ``config`` wins whole."""
    rows = [r for r in _patch_rows(data) if r.get("id") == "llm-pi-ai" and "config" in r]
    return rows[-1]["config"] if rows else None


# --- the layers DSH composes under its home ----------------------------------------------------
#
# DSH composes a profile's tree as patch layers over an empty entry list (``apps/cli/src/
# profile-boot.ts:122-151``): the bundles' layers (shipped with DSH: dsh-base mounts the llm-pi-ai
# row with no routes, ``packages/bundle/base/cordis.patch.yml:88-96``), the profile's own
# ``<home>/profiles/<name>/cordis.patch.yml`` (read when it exists, app-boot ``src/profile.ts:398-401``),
# the home's ``<home>/cordis.patch.yml`` (absent only when not there, app-boot ``src/index.ts:278-287``),
# then the launch's ``--patch`` overlays, which no file records. A patch replaces each key it names,
# ``config`` whole (vendored include ``src/index.ts:121-124``). The llm-pi-ai plugin then lays the
# ``llm-pi-ai`` section of the settings document (``<home>/settings.yaml``, what the web Models page
# writes) over that config (``llm-pi-ai/src/index.ts:284``, ``settings/src/index.ts:863-874``): plain
# objects merge key by key, anything else (a list included) replaces (``settings/src/index.ts:297-305``).

#: DSH's patch layer file, a profile's own and the home's (``PROFILE_PATCH_FILENAME``, app-boot
#: ``src/profile.ts:39``; ``homePatchPath``, ``apps/cli/src/profile-boot.ts:49-51``).
PATCH_FILE = "cordis.patch.yml"
#: DSH's settings document under its home (settings-file ``src/index.ts:56``).
SETTINGS_FILE = "settings.yaml"
#: The folder of a DSH home holding its profiles (``PROFILES_DIR``, app-boot ``src/profile.ts:36``).
PROFILES_DIR = "profiles"
#: What settles the profile a session ran under: its log does not record it (the header holds
#: version, id, createdAt, cwd, parentSession, seedLength, origin, delegationDepth, agentPreset:
#: ``session-persistence-jsonl/src/format.ts:51-64``), and DSH takes it per launch (``dsh --profile
#: NAME``, ``dsh web``: ``apps/cli/src/args.ts:131-144, 156-169``).
PROFILE_HINT = ("name the DSH profile the session ran under (its dsh --profile NAME) with --profile NAME "
                "(or $DSH_AUDIT_PROFILE)")
#: The most profiles with a patch layer that :func:`load_home_routes` parses to learn whether they
#: all compose alike when no profile is named; a home with more is not compared (a layer may be up
#: to :data:`MAX_ROUTE_FILE`, and every command composing the home would parse them all): a note
#: says the profile is not known, and the home's own layers only are read.
MAX_COMPARED_PROFILES = 16
#: The rows the route configuration depends on, and the plugin dsh-base mounts in each.
_ROWS = {"llm-pi-ai": "@deepseek-ai/dsh-llm-pi-ai", "settings": "@deepseek-ai/dsh-settings-file"}
_UNSET: Any = object()


@dataclass
class _Row:
    """A row of DSH's composed tree, as far as the route configuration depends on it."""

    name: Any
    config: Any = _UNSET
    disabled: Any = None
    source: str | None = None  # the layer that set its config


def _fresh_rows() -> dict[str, _Row]:
    return {row_id: _Row(name) for row_id, name in _ROWS.items()}


def _inserted(rows: dict[str, _Row], entries: list[Any], source: str) -> None:
    """Rows an ``insert`` adds: one of an id tracked becomes the row its later patches target (the
    include indexes what it inserts, group rows' children too)."""
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("id"), str) and entry["id"] in _ROWS:
            rows[entry["id"]] = _Row(entry.get("name"), entry.get("config", _UNSET), entry.get("disabled"),
                                     source if "config" in entry else None)
        if js_truthy(entry.get("group")) and isinstance(entry.get("config"), list):
            _inserted(rows, entry["config"], source)


def _apply_patches(rows: dict[str, _Row], patches: list[dict[str, Any]], source: str) -> None:
    """One layer's patch rows applied as the vendored include's ``applyEntryPatches`` applies them
    (``src/index.ts:77-125``): an ``insert`` adds rows, a patch whose ``name`` is not its row's
    plugin is skipped, and each other key a patch names replaces the row's."""
    for patch in patches:
        insert = patch.get("insert")
        if js_truthy(insert):
            if isinstance(insert, list):
                _inserted(rows, insert, source)
            continue
        row_id = patch.get("id")
        row = rows.get(row_id) if isinstance(row_id, str) else None
        if row is None or (js_truthy(patch.get("name")) and patch.get("name") != row.name):
            continue
        if "config" in patch:
            row.config, row.source = patch["config"], source
        if "disabled" in patch:
            row.disabled = patch["disabled"]


def _patch_rows(data: Any) -> list[dict[str, Any]]:
    """A patch layer's rows, shaped as DSH's ``parsePatchList`` requires (app-boot ``src/index.ts:320-339``)."""
    if not isinstance(data, list):
        raise _Bad("rows", "a patch layer must be a top-level YAML list of patch rows")
    for index, row in enumerate(data):
        if not isinstance(row, dict):
            raise _Bad(f"rows[{index}]", "must be a mapping (a patch row)")
    return data


def _read_layer(path: str) -> list[dict[str, Any]]:
    """A patch layer's rows, worded as a route file's (``--routes FILE`` overrides every layer)."""
    try:
        return _patch_rows(_read_yaml(path, _FILE_HINT))
    except _Bad as exc:
        raise UsageError(f"route file: {exc}", path=path, hint=_CONFIG_HINT) from None


def _present(path: str) -> bool:
    """Whether DSH reads the file at ``path`` as a layer: it is skipped only when not there (a file
    that cannot be looked at is read, and its error reported)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno not in (errno.ENOENT, errno.ENOTDIR)
    except ValueError:  # a NUL byte: no such file
        return False
    return True


def home_profiles(home: str | os.PathLike[str]) -> list[str]:
    """The profiles of the DSH home ``home``: the folders under ``<home>/profiles`` holding a
    ``package.json`` (what DSH loads as a profile, app-boot ``src/profile.ts:375-385``), DSH's
    ``node_modules`` fallback excepted; sorted."""
    folder = os.path.join(os.fspath(home), PROFILES_DIR)
    try:
        names = sorted(os.listdir(folder))
    except (OSError, ValueError):
        return []
    return [name for name in names
            if name != "node_modules" and os.path.isfile(os.path.join(folder, name, "package.json"))]


#: The profiles DSH creates on first use from a shipped template when they are not there (app-boot
#: ``src/profile.ts`` ``PROFILE_TEMPLATES``), their patch layer an empty list: naming one that is
#: absent is no mistake, and it composes the home's own layers.
_PROFILE_TEMPLATES = frozenset({"web", "headless"})


def check_profile(name: str) -> None:
    """DSH's ``resolveProfileDir`` refusals (app-boot ``src/profile.ts:104-111``)."""
    if name in ("", ".", "..", "node_modules") or "/" in name or "\\" in name or "\0" in name:
        raise UsageError(f"invalid DSH profile name {_SHORT.repr(name)}", hint=PROFILE_HINT)


def home_route_files(home: str | os.PathLike[str], *, profile: str | None = None) -> list[str]:
    """The files under the DSH home ``home`` that :func:`load_home_routes` reads with ``profile``,
    that are there (what an index hashes to notice an edit): the profile's patch layer (without one named: each profile's, unless more than
    :data:`MAX_COMPARED_PROFILES` have one, as then none is read), the home's, the settings document.

    Example:
        >>> home_route_files("/home/me/.dsh", profile="web")  # doctest: +SKIP
        ['/home/me/.dsh/profiles/web/cordis.patch.yml', '/home/me/.dsh/cordis.patch.yml']
    """
    base = os.fspath(home)
    if profile is not None:
        try:
            check_profile(profile)
        except UsageError:  # load_home_routes refuses it, reading nothing
            return []
        layered = _layered(base, [profile])
    else:
        layered = _layered(base, home_profiles(base))
        layered = layered if len(layered) <= MAX_COMPARED_PROFILES else []
    return layered + _home_files(base)


def _layered(home: str, profiles: list[str]) -> list[str]:
    """The patch layers of ``profiles`` that are there (DSH: ``existsSync``, then read)."""
    found = [os.path.join(home, PROFILES_DIR, name, PATCH_FILE) for name in profiles]
    return [path for path in found if os.path.exists(path)]


def _home_files(home: str) -> list[str]:
    return [path for path in (os.path.join(home, PATCH_FILE), os.path.join(home, SETTINGS_FILE)) if _present(path)]


def _composed(home: str, profile: str | None, home_patches: list[dict[str, Any]] | None) -> dict[str, _Row]:
    rows = _fresh_rows()
    if profile is not None:
        path = os.path.join(home, PROFILES_DIR, profile, PATCH_FILE)
        if os.path.exists(path):  # DSH: existsSync, then read
            _apply_patches(rows, _read_layer(path), path)
    if home_patches is not None:
        _apply_patches(rows, home_patches, os.path.join(home, PATCH_FILE))
    return rows


def _settled(rows: dict[str, _Row]) -> tuple[Any, ...]:
    return tuple((row.config, row.disabled) for row in rows.values())


def _alike(a: Any, b: Any, seen: set[tuple[int, int]] | None = None) -> bool:
    """``a == b`` for parsed YAML values, which aliases may make share or hold themselves (``&r
    {self: *r}``, which DSH's YAML readers read too): each pair of containers is compared once, and a
    pair met again inside itself is alike, so an alias bomb in two layers costs its text, not 9**9
    comparisons, and a value that holds itself is no RecursionError."""
    if a is b:
        return True
    if type(a) is not type(b) or not isinstance(a, (dict, list, tuple)):
        return bool(a == b)
    seen = set() if seen is None else seen
    pair = (id(a), id(b))
    if pair in seen:
        return True
    seen.add(pair)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_alike(value, b[key], seen) for key, value in a.items())
    return len(a) == len(b) and all(_alike(x, y, seen) for x, y in zip(a, b))


def _profile_rows(home: str, profile: str | None, home_patches: list[dict[str, Any]] | None,
                  notes: list[str]) -> dict[str, _Row]:
    """The rows DSH composed for the profile ``profile``; without one, for the home's only profile,
    or the one every profile composes; else the home layer's alone, with a note saying so."""
    if profile is not None:
        check_profile(profile)
        if profile not in _PROFILE_TEMPLATES and not os.path.isfile(os.path.join(home, PROFILES_DIR, profile,
                                                                                   "package.json")):
            known = home_profiles(home)  # DSH: "profile ... does not exist" (app-boot src/profile.ts:376-384)
            shown = ", ".join(known[:12]) + (f", ... ({len(known)} in all)" if len(known) > 12 else "")
            folder = os.path.join(home, PROFILES_DIR, profile)
            why = (f"{folder} is not a DSH profile: a profile is a folder with a package.json, and this one has "
                   "none; ") if os.path.isdir(folder) else ""
            raise UsageError(f"DSH profile {profile!r} does not exist in this DSH home", path=home,
                             hint=why + (f"its profiles: {shown}" if known else
                                         ("the home has none" if why else "it has none")
                                         + ": leave out --profile and $DSH_AUDIT_PROFILE"))
        return _composed(home, profile, home_patches)
    profiles = home_profiles(home)
    if not profiles:
        return _composed(home, None, home_patches)
    layered = [name for name in profiles if _layered(home, [name])]
    if len(layered) > MAX_COMPARED_PROFILES:  # too many to parse for every command (home_route_files alike)
        notes.append(f"DSH home {home} has {len(layered)} profiles with a patch layer, more than the "
                     f"{MAX_COMPARED_PROFILES} compared, and the log does not record which one ran: the profile "
                     "is not known and the home's own layers only are read; " + PROFILE_HINT)
        return _composed(home, None, home_patches)
    candidates, unreadable = [], []
    if len(layered) < len(profiles):  # a profile without a layer composes the home's layers alone
        candidates.append(_composed(home, None, home_patches))
    for name in layered:
        try:
            candidates.append(_composed(home, name, home_patches))
        except UsageError:
            unreadable.append(name)
    if not unreadable and all(_alike(_settled(rows), _settled(candidates[0])) for rows in candidates):
        return candidates[0]  # one profile, or every profile composes the same rows
    named = ", ".join(profiles[:MAX_COMPARED_PROFILES]) + (f", ... ({len(profiles)} in all)"
                                                           if len(profiles) > MAX_COMPARED_PROFILES else "")
    notes.append(f"the profiles of DSH home {home} ({named}) compose different llm-pi-ai routes "
                 "and the log does not record which one ran: the home's own layers only are read; " + PROFILE_HINT)
    return _composed(home, None, home_patches)


def _settings_path(home: str, row: _Row, notes: list[str]) -> str | None:
    """The settings document DSH read (settings-file ``resolveSpec``, ``src/index.ts:55-60``):
    ``<home>/settings.yaml`` unless the ``settings`` row names another; None when the row is
    disabled or names one that cannot be told from here (a relative path, an expression)."""
    if js_truthy(row.disabled):
        return None
    config = row.config if isinstance(row.config, dict) else {}
    for key, tail in (("path", None), ("dshHome", SETTINGS_FILE)):
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, str) and os.path.isabs(value):
            return value if tail is None else os.path.join(value, tail)
        notes.append(f"DSH's settings document is placed by the settings row's config.{key} {_SHORT.repr(value)} "
                     f"({row.source}), which does not say where from here: its llm-pi-ai section is not read")
        return None
    return os.path.join(home, SETTINGS_FILE)


def _json_int(text: str) -> int | float:
    """``JSON.parse``'s number for an integer literal: the nearest double, at any length (Python's
    ``int`` refuses more than 4,300 digits; ``1`` and 400 zeros is Infinity)."""
    return _js_number(float(text))


def _settings_section(path: str) -> Any:
    """The ``llm-pi-ai`` section of the settings document at ``path`` (``_UNSET`` when it has none),
    read as settings-file reads it (``src/index.ts:170-181, 272-295``)."""
    hint = "see DSH's settings document: a map of namespace sections, llm-pi-ai: {providers: ...}"
    if path.endswith(".json"):  # JSON.parse: a key named twice is its last value
        try:
            with open_regular(path, what="settings file") as handle:
                raw = handle.read(MAX_ROUTE_FILE + 1)
            if len(raw) > MAX_ROUTE_FILE:
                raise ValueError(f"larger than {MAX_ROUTE_FILE >> 20} MiB")
            text = raw.decode("utf-8")
            document = json.loads(text, parse_int=_json_int, parse_constant=refuse_constant) if text.strip() else {}
        except (OSError, UnreadableError, ValueError, RecursionError) as exc:
            reason = exc.message if isinstance(exc, UnreadableError) else \
                "it nests objects or arrays too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0]
            raise UsageError(f"cannot read the settings file as JSON: {_SHORT.repr(reason)}", path=path,
                             hint=hint) from None
    elif path.endswith((".yaml", ".yml")):
        document = _read_yaml(path, hint, what="settings file", dialect="yaml")
        document = {} if document is None else document
    else:
        raise UsageError("settings file is neither .yaml, .yml nor .json, which DSH refuses", path=path, hint=hint)
    if not isinstance(document, dict):
        raise UsageError("settings file must be a map of namespace sections", path=path, hint=hint)
    section = document.get("llm-pi-ai")
    return _UNSET if section is None else section


def _merge_layers(under: Any, over: Any, done: dict[tuple[int, int], Any] | None = None) -> Any:
    """DSH settings' ``mergeLayers``: plain objects merge key by key, anything else replaces.

    Two YAML documents that alias one mapping under many keys (an alias bomb in each) would meet
    the same pair of mappings exponentially often: each pair is merged once (``done``) and its
    result shared, as the aliases share their mappings."""
    if not isinstance(under, dict) or not isinstance(over, dict):
        return over
    done = {} if done is None else done
    pair = (id(under), id(over))
    if pair in done:
        return done[pair]
    merged = done[pair] = dict(under)
    for key, value in over.items():
        merged[key] = _merge_layers(merged[key], value, done) if key in merged else value
    return merged


def load_home_routes(home: str | os.PathLike[str], *, profile: str | None = None) -> PiRoutes | None:
    """The ``llm-pi-ai`` route configuration DSH composed under the DSH home ``home``, from the
    layers DSH reads there, in its order and with its merge rules (see the comment above
    :data:`PATCH_FILE`): the profile's patch layer, the home's, then the settings document's
    ``llm-pi-ai`` section. ``profile`` names the profile (the log does not record it); without
    one, the home's only profile is the one, else the one every profile composes alike; when the
    profiles compose different routes, or more than :data:`MAX_COMPARED_PROFILES` of them have a
    patch layer (they are then not parsed), only the home's own layers are read and
    :attr:`PiRoutes.notes` says so. None when no layer sets a route configuration (and nothing
    is left unsettled). ``--patch`` overlays (per launch, recorded nowhere) are not read. Each
    file is parsed once while it is unchanged (:class:`_Memo`).

    Raises:
        UsageError: a layer that DSH reads cannot be read, is not YAML (a key named twice
            included), or composes a route DSH would refuse; the message names the file.

    Example:
        >>> routes = load_home_routes("~/.dsh", profile="web")  # doctest: +SKIP
        >>> routes.layers  # doctest: +SKIP
        ('/home/me/.dsh/cordis.patch.yml', '/home/me/.dsh/settings.yaml')
    """
    base, notes = os.fspath(home), list[str]()
    home_layer = os.path.join(base, PATCH_FILE)
    home_patches = _read_layer(home_layer) if _present(home_layer) else None
    rows = _profile_rows(base, profile, home_patches, notes)
    settings = _settings_path(base, rows["settings"], notes)
    section = _settings_section(settings) if settings is not None and _present(settings) else _UNSET
    row = rows["llm-pi-ai"]
    layers = tuple(path for path, used in ((row.source, row.config is not _UNSET), (settings, section is not _UNSET))
                   if used and path is not None)
    if row.config is _UNSET and section is _UNSET:
        return PiRoutes(MappingProxyType({}), MappingProxyType({}), notes=tuple(notes)) if notes else None
    config = row.config if section is _UNSET else _merge_layers(None if row.config is _UNSET else row.config, section)
    try:
        routes = parse_routes(config)
    except _Bad as exc:
        where = " + ".join(layers)
        raise UsageError(f"route configuration composed from {where}: {exc}" if len(layers) > 1
                         else f"route configuration: {exc}", path=layers[-1] if layers else base,
                         hint=_CONFIG_HINT) from None
    return dataclasses.replace(routes, source=layers[-1] if layers else "", layers=layers, notes=tuple(notes))


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


def _catalog(provider: str) -> Mapping[str, PiModel]:
    """pi-ai's catalog entries of ``provider`` (DSH ``catalogModels``): every built-in provider's,
    not only the ones :data:`~dsh_audit.wire.BUILTIN_MODELS` lists."""
    return catalog_models(provider)


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
    _route_compat_read(profile, out, where)
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


def _compat(value: Any, where: str) -> dict[str, Any]:
    """A ``compat`` mapping of pi-ai switch names (None: no switches), without the switches set to
    an empty mapping: DSH's ``configuredCompatEntries`` (``catalog.ts:464-470``) reads
    ``chatTemplateKwargs: {}`` as not set, since it sends what leaving it out sends."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise _Bad(where, "must be a mapping of pi-ai compat switch names to values")
    return {k: v for k, v in value.items() if not (isinstance(v, dict) and not v)}


def _model_compat(route_value: Any, model_value: Any, api: str, route: str, at: str) -> dict[str, Any]:
    """The compat switches configured for one model of API ``api``, through DSH's compat gate
    (``catalog.ts:751-762``, ``resolveModelCompat``): a route-level switch its API does not take
    is skipped (a route default must stay settable on a route whose models speak several APIs),
    a model's own is refused; the model's win field by field.

    DSH refuses more than this before any API resolves (``assertOfferedCompatFields``,
    ``catalog.ts:517-560``): a name no API declares, and a name its gate withholds (the fields pi-ai's
    catalog sets for the vendors that need them, such as ``openRouterRouting`` or
    ``sendSessionAffinityHeaders``). dsh-audit reads both: a withheld one applies to the APIs
    that declare it, so a route file can state the compat pi-ai's own catalog entries carry, and
    a name no API declares is kept and read by no renderer."""
    gate = _COMPAT_GATES.get(api, {})
    configured = {k: v for k, v in _compat(route_value, f"{route}.compat").items() if k in gate or not _compat_apis(k)}
    for field, value in _compat(model_value, f"{at}.compat").items():
        takers = _compat_apis(field)
        if takers and field not in gate:
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
        takers = _compat_apis(field)
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
