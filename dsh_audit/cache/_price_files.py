"""Reading a price document: a ``--prices`` file (JSON or TOML) or the nearest ``pyproject.toml``'s
``[tool.dsh-audit.prices]`` table, read as ``JSON.parse`` reads a number past the double range or
Python's digit limit (:func:`_as_written`), so that an error can quote it as the file writes it
(:func:`_shown`); and the hints of an error in each layer of a price table.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._literals import holds_float
from .._config_read import ConfigFileError, read_bytes, read_json, read_toml
from .._json_keys import loads_unique
from .._pyproject import checked_tool_table, dotted_key, tool_table
from .._stamp import Stamp, file_stamps
from ..errors import UsageError

#: Where a price table's shape is described, for the hint of an error in a user's price file
#: (the packaged table's own path means nothing to a user of an installed dsh-audit).
_SHAPE = "the Price files section of docs/cache-accounting.md gives the shape"
#: The hint of an error in each layer of the table: the packaged table (a damaged install), the
#: nearest pyproject.toml's [tool.dsh-audit.prices] (the user did not name it), a --prices file.
_PACKAGED_HINT = "the packaged price table is damaged: reinstall dsh-audit"
_PYPROJECT_HINT = (f"fix this key under [tool.dsh-audit.prices] of this pyproject.toml, the nearest to the current "
                   f"folder; {_SHAPE}")
_PRICES_HINT = f"fix this key in the --prices file; {_SHAPE}"
def _read(path: Path) -> Any:
    """The price table at ``path``: a duplicate key (:func:`~dsh_audit._json_keys.loads_unique`) and
    a leading byte order mark refused in JSON as in TOML (:func:`~dsh_audit._config_read.read_json`)."""
    kind = "TOML" if _is_toml(os.fspath(path)) else "JSON"
    other = " (or a TOML one, named *.toml)" if kind == "JSON" else ""  # the suffix chose JSON: TOML is read too
    hint = f"give --prices a {kind} price table{other}; {_SHAPE}"
    try:
        data = (read_toml(path, what="price table") if kind == "TOML"
                else read_json(path, what="price table", loads=loads_unique, bom=False))
    except ConfigFileError as exc:  # "objects": a price table may be JSON
        message, line = ("price table nests arrays or objects too deeply", None) if exc.reason == "nesting" \
            else (exc.message, exc.line)
        if kind == "JSON" and exc.reason == "syntax":
            # Python's parser refuses an integer past its digit limit, which JSON.parse reads (as
            # infinity): read so, the file is a price table or fails where it is not valid JSON
            try:
                return _as_written(path, kind)
            except ValueError as again:  # a JSONDecodeError: bytes that are not UTF-8 were refused first
                message = f"price table is not valid JSON: {str(again).splitlines()[0]}"
                line = getattr(again, "lineno", None)  # a duplicate key's, too
            except RecursionError:
                message, line = "price table nests arrays or objects too deeply", None
        elif kind == "TOML" and exc.reason == "syntax" and "integer string conversion" in exc.message:
            # the same integer in TOML (tomllib has no integer hook): read as JSON reads it, so the
            # rate's key says it is no price (``a N-digit number is above 1e+09``)
            try:
                return _as_written(path, kind)
            except ValueError as again:  # another syntax error, in tomllib's words
                message, line = f"price table is not valid TOML: {str(again).splitlines()[0]}", None
        raise UsageError(message, path=exc.path, line=line, hint=exc.hint or hint) from None
    return _as_written(path, kind) if _unbounded(data) else data


def _is_toml(name: str) -> bool:
    """Whether the price layer named ``name`` (a file's path, or :attr:`PriceBook.files`' name of a
    ``pyproject.toml``'s table) is TOML: a file named ``*.toml`` (any other is read as JSON)."""
    return name.endswith(_PYPROJECT_LAYER) or Path(name).suffix == ".toml"


class _Written(float):
    """A number a price file writes past the double range (``1e400``, read as infinity), with
    its text, so an error can say it as written."""

    written: str

    def __new__(cls, text: str) -> _Written:
        number = super().__new__(cls, text)
        number.written = text
        return number


class _Constant(_Written):
    """JSON's ``NaN``, ``Infinity`` or ``-Infinity`` in a price file: not JSON (``JSON.parse``
    refuses them; Python's parser reads them). A rate that is one is refused by its key as the
    number it is, in its own spelling (``NaN is not a rate``); one anywhere else by
    :meth:`_Parser.constants`, in that spelling too (:attr:`literal`).

    Example:
        >>> number = _Constant("-Infinity")
        >>> number, _shown(number), number.literal
        (-inf, '-Infinity', '-Infinity')
    """

    literal: str

    def __new__(cls, text: str) -> _Constant:
        number = float.__new__(cls, text)
        number.written = number.literal = text
        return number


def _whole(text: str) -> int | float:
    """A JSON integer literal: an ``int``, or past Python's digit limit for ``int()`` (4,300
    digits, far past the double range) the number ``JSON.parse`` reads, infinity, with its text
    (:class:`_Written`), where Python's parser would refuse the file in its own words.

    Example:
        >>> _whole("12"), _whole("1" + "0" * 5000), len(_whole("1" + "0" * 5000).written)
        (12, inf, 5001)
    """
    try:
        return int(text)
    except ValueError:  # the digit limit: the scanner hands over only well-formed literals
        return _Written(text)


def _shown(value: Any, *, toml: bool = False) -> str:
    """``value`` as an error quotes it: as the file's language writes it (JSON, or TOML with
    ``toml``: ``true``, ``NaN`` or ``nan``, ``"x"``), never as Python's repr (``True``, ``'x'``),
    which names no value the user could find in the file. A number as the file writes it, up to 40
    characters (one past the double range, read as infinity, by its text: :class:`_Written`; a float
    by :func:`_float_text`), a longer integer by its size; anything else cut to 60 characters (a
    file's whole nested array is no message).

    Example:
        >>> _shown(1000), _shown(1e308), _shown(_Written("1e400")), _shown(_whole("9" * 5000))
        ('1000', '1e+308', '1e400', 'a 5000-digit number')
        >>> _shown(-10**999), _shown(_Written("1" * 50 + ".5")), _shown(True), _shown("x" * 70)[-4:]
        ('a negative 1000-digit number', '1111111111111111111111111111111111111...', 'true', 'x...')
        >>> _shown(float("nan")), _shown(float("nan"), toml=True), _shown({"a b": [1, "c"]}, toml=True)
        ('NaN', 'nan', '{"a b" = [1, "c"]}')
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        text = _spelling(value, toml, 60)
        return text if len(text) <= 60 else text[:57] + "..."
    text = _number(value, toml)
    if len(text) <= 40:
        return text
    digits = text.lstrip("+-")
    if digits.isdigit():
        return f"a {'negative ' if text.startswith('-') else ''}{len(digits)}-digit number"
    return text[:37] + "..."


def _number(value: int | float, toml: bool) -> str:
    """A number as the file wrote it (:func:`_shown`): its text when kept (:class:`_Written`), an
    infinity or NaN as the language spells one (JSON's ``Infinity``, TOML's ``inf``)."""
    written = getattr(value, "written", None)
    if isinstance(written, str):
        return written
    if isinstance(value, float) and not math.isfinite(value):
        sign = "-" if value < 0 else ""
        return ("nan" if toml else "NaN") if math.isnan(value) else sign + ("inf" if toml else "Infinity")
    return _float_text(value) if isinstance(value, float) else str(value)


def _spelling(value: Any, toml: bool, room: int) -> str:
    """``value`` in JSON (or TOML with ``toml``), as :func:`_shown` quotes it, written only until
    it is past ``room`` characters: each level of a nested array adds one, so a document nested
    deeper than Python's stack is cut, never recursed through."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return _number(value, toml)
    if isinstance(value, str):
        return _quoted(value, toml)
    if isinstance(value, (datetime.date, datetime.time)):  # TOML's own (and RFC 3339's) spelling
        return value.isoformat()
    if isinstance(value, (list, dict)):
        items = value.items() if isinstance(value, dict) else ((None, item) for item in value)
        parts: list[str] = []
        used = 1
        for key, item in items:
            if used > room:
                parts.append("...")
                break
            name = "" if key is None else (dotted_key(str(key)) + " = " if toml else _quoted(str(key), False) + ": ")
            parts.append(name + _spelling(item, toml, room - used - len(name)))
            used += len(parts[-1]) + 2
        return ("{%s}" if isinstance(value, dict) else "[%s]") % ", ".join(parts)
    return f"a {type(value).__name__}"  # never read from a JSON or TOML file


def _quoted(text: str, toml: bool) -> str:
    """``text`` as a JSON (or TOML basic) string: the escapes both share (``\\n``, ``\\u001b``),
    and every other character that is not printable escaped too, so that no file's text acts on
    a terminal (TOML's ``\\U`` past the BMP; JSON's surrogate pair)."""
    inner = json.dumps(text, ensure_ascii=False)[1:-1]
    return '"' + "".join(char if char.isprintable() else
                         (f"\\U{ord(char):08x}" if toml and ord(char) > 0xFFFF else
                          json.dumps(char)[1:-1] if ord(char) > 0xFFFF else f"\\u{ord(char):04x}")
                         for char in inner) + '"'


def _float_text(value: float) -> str:
    """A float as the file wrote it, as near as its value tells: the shorter of its 6 significant
    digits, when they read back as the same number, and the fewest digits that do (a subnormal
    ``1e-320`` is no ``9.99989e-321``, which reads back as it too), never in the form of an integer
    (``2.0`` is no ``2``, which an error would say is not ``2``).

    Example:
        >>> _float_text(0.25), _float_text(1e-320), _float_text(1000.0), _float_text(0.1 + 0.2), _float_text(1e10)
        ('0.25', '1e-320', '1000.0', '0.30000000000000004', '1e+10')
    """
    text, shortest = f"{value:.6g}", repr(value)
    text = text if float(text) == value and len(text) <= len(shortest) else shortest
    return f"{text}.0" if text.lstrip("-").isdigit() else text


def _unbounded(value: Any) -> bool:
    """Whether a parsed document holds an infinite number or a NaN anywhere."""
    return holds_float(value, lambda item: not math.isfinite(item))


#: A TOML decimal integer past Python's digit limit for ``int()`` (4,300 digits), which tomllib
#: refuses in Python's words: digits and underscores, not part of a float, a key or a date.
_LONG_INT = re.compile(rb"(?<![\w.+-])[+-]?[0-9][0-9_]{4299,}(?![\w.:-])")
_MARK = "e0"  # appended to such an integer so that tomllib hands it to ``parse_float``


def _toml_number(text: str) -> float:
    """A TOML float as :class:`_Written`; an integer :data:`_LONG_INT` marked as a float, as
    :func:`_whole` reads it (its text without the mark)."""
    whole = text.removesuffix(_MARK).replace("_", "")
    if text.endswith(_MARK) and whole.lstrip("+-").isdigit():
        number = _whole(whole)
        if isinstance(number, _Written):
            return number
    return _Written(text)


def _as_written(path: Path, kind: str) -> Any:
    """The document at ``path``, parsed again with every decimal number a float that keeps its
    text (:class:`_Written`), for the error that refuses one past the double range; an integer
    past Python's digit limit is read as ``JSON.parse`` reads it (:func:`_whole`: in TOML, marked
    as a float first, :data:`_LONG_INT`); JSON's ``NaN``, ``Infinity`` and ``-Infinity`` are each
    a :class:`_Constant`, which a rate refuses by its key and :meth:`_Parser.constants` anywhere else."""
    raw = read_bytes(path, what="price table")
    if kind == "TOML":
        text = _LONG_INT.sub(lambda found: found.group(0) + _MARK.encode(), raw).decode("utf-8")
        return tomllib.loads(text, parse_float=_toml_number)
    return loads_unique(raw, parse_float=_Written, parse_int=_whole, parse_constant=_Constant)


#: How :attr:`PriceBook.files` names a ``pyproject.toml``'s table, after the file's path.
_PYPROJECT_LAYER = " [tool.dsh-audit.prices]"


def _pyproject(candidate: Path | None) -> tuple[str, Any] | None:
    """The ``[tool.dsh-audit.prices]`` table of the nearest ``pyproject.toml`` (``candidate``:
    :func:`~dsh_audit._pyproject.find_pyproject`'s answer), if any, with its layer's name."""
    found = None if candidate is None else _pyproject_table(candidate)
    return None if found is None else (f"{candidate}{_PYPROJECT_LAYER}", found)


def _pyproject_table(candidate: Path) -> Any | None:
    """The ``[tool.dsh-audit.prices]`` table of the ``pyproject.toml`` at ``candidate``, if it has
    one: of its ``[tool.dsh-audit]`` table as every command reads it (:func:`checked_tool_table`:
    one read per version of the file, a misspelt ``[tool.dsh_audit]`` refused). A file that cannot
    be read is worded as the ``pyproject.toml`` it is, never as a price table it may not hold, unless
    its prices are what tomllib refuses (:func:`_past_digit_limit`); one is read again only to quote
    a price past the double range as written (:func:`_as_written`)."""
    try:
        table = checked_tool_table(candidate)
    except ConfigFileError as exc:
        prices = _past_digit_limit(candidate)
        if prices is None:
            raise exc from None
        return prices  # refused at its key, as a --prices file's is
    prices = None if table is None else table.get("prices")
    if prices is None or not _unbounded(prices):
        return prices
    return _prices_of(_as_written(candidate, "TOML"), candidate)


def _past_digit_limit(candidate: Path) -> Any | None:
    """The ``[tool.dsh-audit.prices]`` table of the ``pyproject.toml`` at ``candidate``, which
    tomllib refuses, when what it refuses is an integer past Python's digit limit in that table
    (read as ``JSON.parse`` reads it: :func:`_read`); None when the file fails for another reason."""
    try:
        prices = _prices_of(_read(candidate), candidate)
    except UsageError:
        return None
    return prices if prices is not None and _unbounded(prices) else None


def _prices_of(document: Any, candidate: Path) -> Any | None:
    """The ``[tool.dsh-audit.prices]`` table of the TOML ``document`` read from ``candidate``, if any."""
    table = tool_table(document, source=os.fspath(candidate))
    return None if table is None else table.get("prices")


def _layer_stamps(files: Iterable[str]) -> tuple[Stamp, ...] | None:
    """:func:`~dsh_audit._stamp.file_stamps` of the files of the layers named as
    :attr:`PriceBook.files` names them (read by :func:`_named_layers`; ``packaged`` apart)."""
    return file_stamps(name.removesuffix(_PYPROJECT_LAYER) for name in files if name != "packaged")


def _named_layers(files: Iterable[str]) -> list[tuple[str, Any, str]]:
    """The layers of a price table by the names :attr:`PriceBook.files` gives them, each read
    again now, as (name, document, the hint of its errors): a ``pyproject.toml``'s table by
    ``PATH [tool.dsh-audit.prices]`` (read and checked as :func:`_pyproject` reads it:
    :func:`_pyproject_table`), a ``--prices`` file by its path; ``packaged`` (the first
    layer of every table) is read apart."""
    layers: list[tuple[str, Any, str]] = []
    for name in files:
        if name == "packaged":
            continue
        if name.endswith(_PYPROJECT_LAYER):
            candidate = name.removesuffix(_PYPROJECT_LAYER)
            table = _pyproject_table(Path(candidate))
            if table is None:
                raise UsageError("holds no [tool.dsh-audit.prices] table any more", path=candidate,
                                 hint=_PYPROJECT_HINT)
            layers.append((name, table, _PYPROJECT_HINT))
        else:
            layers.append((name, _read(Path(name)), _PRICES_HINT))
    return layers
