"""DSH's YAML readers, as dsh-audit reads a route file, a patch layer or a settings document.

Every file is read as DSH's own YAML readers read it: js-yaml's ``JSON_SCHEMA`` (patch layers) or
the ``yaml`` package's YAML 1.2 core schema (the settings document): YAML 1.2 scalars, no merge
keys, a key named twice refused. A parsed file is kept while it is unchanged (:class:`_Memo`).
"""

from __future__ import annotations

import collections
import functools
import math
import re
import reprlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from .._config_read import ConfigFileError, read_bytes
from .._stamp import file_stamp
from ..errors import UsageError

if TYPE_CHECKING:
    import yaml

__all__ = ["MAX_ROUTE_FILE", "YamlDialect"]

#: A route-file value in an error, described by its first items only: YAML aliases can make a
#: one-line value name a billion strings (``api: *bomb``).
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 2, 4, 4, 60, 60
#: Largest route file read (DSH's route configurations are a few KiB; PyYAML reads about 1 MiB/s).
MAX_ROUTE_FILE = 1 << 20

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
_MEMO = _Memo(_MEMO_BYTES)


def _read_yaml(name: str, hint: str, *, what: str = "route file", dialect: YamlDialect = "js-yaml") -> Any:
    """The parsed YAML of the route file (or other file ``what``) ``name``, read as DSH's reader
    of ``dialect`` reads it; parsed again only when the file changed (:class:`_Memo`).

    Raises:
        UsageError: the file cannot be read or is not YAML (a key named twice included).
    """
    stamp = file_stamp(name)
    if stamp is None:  # not there (reading it says why), or written too recently to tell
        return _parse_yaml(name, hint, what=what, dialect=dialect)
    key = (name, dialect, what, hint)
    found, outcome = _MEMO.get(key, stamp)
    if not found:
        try:
            outcome = _parse_yaml(name, hint, what=what, dialect=dialect)
        except UsageError as exc:
            outcome = exc
        _MEMO.put(key, stamp, outcome, max(stamp[0], 1))  # its size
    if isinstance(outcome, UsageError):
        raise outcome.with_traceback(None)
    return outcome


def _parse_yaml(name: str, hint: str, *, what: str, dialect: YamlDialect) -> Any:
    """:func:`_read_yaml` without the memo."""
    try:
        raw = read_bytes(name, what=what, limit=MAX_ROUTE_FILE)  # a FIFO would hang: refused
    except ConfigFileError as exc:
        raise UsageError(_worded(exc, what), path=name, hint=exc.hint or hint) from None
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


def _worded(error: ConfigFileError, what: str) -> str:
    """The message of a route file :func:`~dsh_audit._config_read.read_bytes` could not read, as
    the route readers word it: the size a route file has, and "the" before the file a read failed
    on, said with the system's words of the failed read (``error.detail``), never by rewording
    the message."""
    if error.reason == "size":
        return f"{error.message}; a route configuration is a few KiB"
    if error.reason == "read" and error.detail:
        return f"cannot read the {what}: {error.detail}"
    return error.message
