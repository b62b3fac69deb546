"""The ``pyproject.toml`` a command reads its ``[tool.dsh-audit]`` tables from (the nearest one),
read by the one bounded reader of every file a user configures (:mod:`dsh_audit._config_read`).

A folder named ``pyproject.toml`` is not one: the search goes on above it, as pip
(``os.path.isfile``) and black (``Path.is_file``) skip it. Anything else at that name is the
nearest ``pyproject.toml`` and must be a regular file: a FIFO, a device, a socket, a symlink loop
or a dangling symlink is an error, never read and never waited on (skipping it would silently
apply a ``pyproject.toml`` further up, or the defaults).

The sub-tables of ``[tool.dsh-audit]`` that commands read are :data:`TOOL_TABLES`; any other, an
unknown key in one of them, or a key of ``[tool.dsh-audit]`` itself that is no policy key, is an
error (:func:`check_tool_tables`; ``dsh_audit.gate`` checks them with the policy, the price
table's and the ZDR status's readers by :func:`checked_tool_table`), and so is a table named close to
``[tool.dsh-audit]`` or a ``dsh-audit`` key that is no table (:func:`tool_table`): a misspelt table
or key would otherwise be ignored in silence, the gate run with weaker settings or the user's
prices dropped. Every command that reads the file words each error the same way, on the line
that writes the key when one line does (:func:`key_line`).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import stat
import sys
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from ._config_read import ConfigFileError, read_bytes, read_toml
from ._show import cut
from ._stamp import Stamp, file_stamp
from .errors import UsageError, closest, did_you_mean
from .log import special_kind

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["POLICY_HINT", "POLICY_KEYS", "TOOL_TABLES", "check_tool_table", "check_tool_tables", "checked_tool_table",
           "dotted_key", "find_pyproject", "key_line", "said", "table_parts", "tool_table",
           "unknown_key", "unknown_table"]

_HINT = "dsh-audit reads the nearest pyproject.toml: make it a regular file, or remove it"
#: The sub-tables of ``[tool.dsh-audit]`` a command reads: each one's keys (None: its own reader
#: refuses an unknown key, as the price table's does, whose keys depend on its providers) and the
#: hint an unknown key in it gets, naming the docs section and the option that says the same.
TOOL_TABLES: dict[str, tuple[tuple[str, ...] | None, str]] = {
    "cache": (("openai-zero-data-retention",), "its one key is openai-zero-data-retention, as --openai-zdr / "
              "--no-openai-zdr say; see 'Stating the ZDR status' in docs/cache-accounting.md"),
    "check": (("baseline",), "its one key is baseline, as --baseline FILE says; see the Baseline section of docs/ci.md"),
    "prices": (None, "a price table, as --prices FILE gives; see the Price files section of docs/cache-accounting.md"),
}
#: The keys of ``[tool.dsh-audit]`` itself: the gate's policy (``dsh_audit.gate.Policy``, whose fields
#: a test keeps them equal to), which no sub-table holds.
POLICY_KEYS = ("adapter", "allowed-break-causes", "capture-fail", "capture-kinds", "fail-on-refusal",
               "fail-on-unexplained-break", "ignore", "min-cache-hit-ratio", "require-capture",
               "validation-fail-severity")
#: The hint of an error in a policy key or its value: where the keys and their forms are described.
POLICY_HINT = "see the Policy section of docs/ci.md"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
#: The longest text read from a configuration file that an error quotes whole (:func:`said`, :func:`_key_said`).
_LONGEST_SAID = 60


def said(text: str) -> str:
    """``text``, read from a configuration file or an option (a rule id, a key, a value), as an
    error line quotes it: its repr (control characters escaped), cut after :data:`_LONGEST_SAID`
    characters (:func:`~dsh_audit._show.cut`), so a 5,000-character id is no message.

    Example:
        >>> said("DSH9"), said("D" * 100) == repr("D" * 59 + "…")
        ("'DSH9'", True)
    """
    return repr(cut(text, longest=_LONGEST_SAID))


def found_hint(table: str) -> str:
    """The hint of an error in the nearest ``pyproject.toml``, which the user did not name (its
    ``[<table>]`` is read): the one wording of every command that reads one of its tables.

    Example:
        >>> found_hint("tool.dsh-audit")
        'fix or move this pyproject.toml (the nearest to the current folder): dsh-audit reads its [tool.dsh-audit] table'
    """
    return f"fix or move this pyproject.toml (the nearest to the current folder): dsh-audit reads its [{table}] table"


def dotted_key(*parts: str, ascii_only: bool = True) -> str:
    """The TOML dotted key of ``parts``: each part bare when TOML allows it, else a quoted string
    with every control character escaped, and every non-ASCII one too unless ``ascii_only`` is
    False (text the CLI escapes as it prints it: the name stays one inert line either way).

    Example:
        >>> dotted_key("tool", "dsh-audit", "check", "baselin"), dotted_key("a b", "caf\u00e9")
        ('tool.dsh-audit.check.baselin', '"a b"."caf\\\\u00e9"')
        >>> dotted_key("models", "caf\u00e9", ascii_only=False)
        'models."caf\u00e9"'
    """
    return ".".join(part if _BARE_KEY.fullmatch(part) else json.dumps(part, ensure_ascii=ascii_only) for part in parts)


def table_parts(name: str) -> tuple[str, ...]:
    """The keys of the dotted table name ``name`` (``()``: the top level, ``name`` empty), as
    :func:`key_line` and :func:`dotted_key` take them: the one split of a table's name in messages.

    Example:
        >>> table_parts("tool.dsh-audit"), table_parts("")
        (('tool', 'dsh-audit'), ())
    """
    return tuple(name.split(".")) if name else ()


def _table_name(name: str, key: str) -> str:
    """``[tool.dsh-audit.<key>]`` (``[<key>]`` at a plain policy file's top level, ``name`` empty), quoted as TOML would."""
    return f"[{_key_said(*table_parts(name), key)}]"


def _key_said(*parts: str) -> str:
    """The dotted key of ``parts`` (:func:`dotted_key`) as an error line quotes it: cut as
    :func:`said` cuts, so a 10 KB key read from the file is no message.

    Example:
        >>> _key_said("tool", "dsh-audit", "check", "b" * 100) == "tool.dsh-audit.check." + "b" * 38 + "…"
        True
    """
    return cut(dotted_key(*parts), longest=_LONGEST_SAID)


def unknown_table(key: str, *, source: str, name: str = "tool.dsh-audit") -> UsageError:
    """The error for the sub-table ``key`` of the table ``name`` (``""``: a plain policy file's top
    level, where ``[check]`` is the only one read) that no command reads, with the closest one.

    Example:
        >>> str(unknown_table("chekc", source="pyproject.toml")).split(" (hint")[0]
        'pyproject.toml: [tool.dsh-audit.chekc] is not a table dsh-audit reads (did you mean [tool.dsh-audit.check]?)'
    """
    tables = sorted(TOOL_TABLES) if name else ["check"]
    near = did_you_mean(key, tables, shown=lambda table: _table_name(name, table))
    names = [_table_name(name, table) for table in tables]
    read = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    where = f"in [{name}] itself" if name else "at the top level"
    return UsageError(f"{_table_name(name, key)} is not a table dsh-audit reads{near}", path=source,
                      line=key_line(source, (*table_parts(name), key), None),
                      hint=f"dsh-audit reads {read}; the policy keys go {where}: {POLICY_HINT}")


def unknown_key(key: str, *, source: str, name: str = "tool.dsh-audit",
                known: Collection[str] = POLICY_KEYS, value: Any = None) -> UsageError:
    """The error for the key ``key`` of the table ``name`` (``""``: a plain policy file's top
    level) that is no policy key (``known``) and no table a command reads: the one wording of the
    policy's reader and of every command that checks the file without it, with the closest key,
    or the sub-table a key of one belongs in; at the line that writes it ``= value``
    (:func:`key_line`), when one line does.

    Example:
        >>> str(unknown_key("requre-capture", source="p")).split(" (hint")[0]
        "p: unknown policy key 'requre-capture' (did you mean 'require-capture'?)"
        >>> str(unknown_key("baseline", source="p")).split(" (hint")[0]
        "p: unknown policy key 'baseline' (a key of [tool.dsh-audit.check])"
    """
    home = next((table for table, (keys, _) in TOOL_TABLES.items() if keys and key in keys), None)
    near = f" (a key of {_table_name(name, home)})" if home else did_you_mean(key, known)
    return UsageError(f"unknown policy key {said(key)}{near}", path=source,
                      line=key_line(source, table_parts(name), key, value), hint=POLICY_HINT)


def check_tool_table(key: str, value: Any, *, source: str, name: str = "tool.dsh-audit",
                     policy_keys: Collection[str] = POLICY_KEYS) -> None:
    """Refuse the sub-table ``key`` of :data:`TOOL_TABLES` when it is not a table, when a plain
    policy file holds it (``name`` empty: only ``check`` is read there), or when it holds a key
    its reader does not know (a key of ``policy_keys`` is said to belong in the table ``name``).

    Raises:
        UsageError: one line naming the key's dotted name and the closest known key, at the line
            of the file ``source`` that writes it, when one line does (:func:`key_line`).
    """
    keys, hint = TOOL_TABLES[key]
    table = _table_name(name, key)
    if not name and key != "check":
        raise UsageError(f"{table} is not read from a policy file", path=source, line=key_line(source, (key,), None),
                         hint=f"dsh-audit reads [tool.dsh-audit.{key}] of the nearest pyproject.toml only: {hint}")
    if not isinstance(value, dict):
        raise UsageError(f"{table} must be a table", path=source, line=key_line(source, table_parts(name), key, value),
                         hint=f"{table}: {hint}")
    if keys is None:  # the price table: its reader checks its keys
        return
    home, where = (f"[{name}]", f"in [{name}]") if name else ("the top level", "at the top level of the policy file")
    for item in value:
        if item in keys:
            continue
        dotted = _key_said(*table_parts(name), key, item)
        line = key_line(source, (*table_parts(name), key), item, value[item])
        if item in policy_keys:
            raise UsageError(f"{dotted} is a policy key, read only {where}", path=source, line=line,
                             hint=f"move it to {home}, above {table}: {POLICY_HINT}")
        near = did_you_mean(item, keys)
        if not near:  # a misspelt policy key in the wrong table: name both mistakes
            near = did_you_mean(item, policy_keys,
                                shown=lambda policy: f"the policy key {policy!r}, read only {where}")
        raise UsageError(f"unknown key {dotted}{near}", path=source, line=line, hint=f"{table}: {hint}")


def check_tool_tables(table: Mapping[str, Any], *, source: str) -> None:
    """Refuse, in the ``[tool.dsh-audit]`` table of the ``pyproject.toml`` at ``source``, each
    sub-table no command reads (:func:`unknown_table`), each unknown key in one a command reads
    (:func:`check_tool_table`) and each key of its own that is no policy key (:func:`unknown_key`),
    as the gate's policy refuses them: the one check of a command that reads the file without the
    policy (its policy keys' values are the policy's to check).

    Example:
        >>> check_tool_tables({"cache": {"openai-zero-data-retention": True}, "ignore": []}, source="p")
        >>> check_tool_tables({"cache": {"openai-zero-data-retenton": True}}, source="p")
        Traceback (most recent call last):
        ...
        dsh_audit.errors.UsageError: p: unknown key tool.dsh-audit.cache.openai-zero-data-retenton (did you mean ...
    """
    for key, value in table.items():
        if key in TOOL_TABLES:
            check_tool_table(key, value, source=source)
        elif isinstance(value, dict) and key not in POLICY_KEYS:
            raise unknown_table(key, source=source)
        elif key not in POLICY_KEYS:
            raise unknown_key(key, source=source, value=value)


def tool_table(document: Mapping[str, Any], *, source: str) -> dict[str, Any] | None:
    """The ``[tool.dsh-audit]`` table of the TOML ``document`` read from ``source``, or None when
    it has none. A table named close to it (``[tool.dsh_audit]``) is refused, as is a
    ``dsh-audit`` key of ``[tool]`` that is no table: either would otherwise be ignored in silence,
    by every command that reads the file (the policy, the prices, the ZDR status).

    Example:
        >>> tool_table({"tool": {"dsh-audit": {"ignore": []}}}, source="p")
        {'ignore': []}
        >>> try:
        ...     tool_table({"tool": {"dsh_audit": {}}}, source="p")
        ... except UsageError as exc:
        ...     print(exc.message)
        [tool.dsh_audit] is not read: dsh-audit's table is [tool.dsh-audit]
        >>> try:
        ...     tool_table({"tool": {"DSH-AUDIT": {}}}, source="p")
        ... except UsageError as exc:
        ...     print(exc.message)
        [tool.DSH-AUDIT] is not read: dsh-audit's table is [tool.dsh-audit]
    """
    tool = document.get("tool")
    if not isinstance(tool, dict):
        return None
    if "dsh-audit" not in tool:
        # compared without case: [tool.DSH-AUDIT] is as near a miss as [tool.Dsh-Audit] (issue 15)
        names = {str(key).lower(): str(key) for key in reversed(list(tool))}
        near = names.get(closest("dsh-audit", names, cutoff=0.75) or "")
        if near is not None:
            raise UsageError(f"[{dotted_key('tool', near)}] is not read: dsh-audit's table is [tool.dsh-audit]",
                             path=source, line=key_line(source, ("tool", near), None),
                             hint="rename the table to [tool.dsh-audit]")
        return None
    table = tool["dsh-audit"]
    if not isinstance(table, dict):
        raise UsageError("[tool.dsh-audit] must be a table", path=source,
                         line=key_line(source, ("tool",), "dsh-audit", table),
                         hint=f"write the policy keys under a [tool.dsh-audit] header; {POLICY_HINT}")
    return table


def checked_tool_table(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``[tool.dsh-audit]`` table of the ``pyproject.toml`` at ``path`` (:func:`tool_table`),
    its sub-tables and keys checked (:func:`check_tool_tables`), or None when it has none: the
    check every command that reads the file makes, read once per version of the file
    (:func:`~dsh_audit._stamp.file_stamp`), but for one written in the last 2 s, read on every call
    (a same-size edit could keep its stamp).

    Raises:
        ConfigFileError: the file cannot be read or is not TOML (the caller words it).
        UsageError: a misspelt or misplaced table or key.
    """
    name = os.fspath(path)
    stamp = file_stamp(name)
    if stamp is None:  # gone since the search (the reader says why), or written too recently to tell
        return _read_tool_table(name)
    return _remembered_tool_table(name, stamp)


@functools.lru_cache(maxsize=8)
def _remembered_tool_table(path: str, _stamp: Stamp) -> dict[str, Any] | None:
    """:func:`_read_tool_table` of one version of a file (``_stamp``: the key only)."""
    return _read_tool_table(path)


def _read_tool_table(path: str) -> dict[str, Any] | None:
    """:func:`checked_tool_table` read now. A file that cannot be read is worded as the
    ``pyproject.toml`` it is (``pyproject.toml is not valid TOML``), with the hint every command
    gives: a broken one may hold no table the command reads, but which it holds is unknown."""
    try:
        document = read_toml(path)
    except ConfigFileError as exc:
        exc.hint = exc.hint or found_hint("tool.dsh-audit")
        raise
    table = tool_table(document, source=path)
    if table is not None:
        check_tool_tables(table, source=path)
    return table


_HEADER = re.compile(r"\s*\[(?!\[)(.*)\]\s*(?:#.*)?")  # fullmatch: a [table] header line


def key_line(path: str, table: tuple[str, ...], key: str | None, value: Any = None) -> int | None:
    """The 1-based line of the TOML file at ``path`` that writes ``key = value`` right in the table
    ``table`` (``()``: the top level), when exactly one line does, read as TOML reads it; else None.
    ``key`` None: the first header of the table or of a sub-table of it, when no other line names
    its last part. tomllib gives no position of a value, so a message that refuses one finds its
    line so, or names none: a file with a multi-line string, or a value written over several
    lines or by several dotted keys, gets None, never a guess.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        ...     _ = f.write('[tool.dsh-audit]\\n# ignore = []\\nignore = "DSH100"\\n')
        >>> key_line(f.name, ("tool", "dsh-audit"), "ignore", "DSH100"), key_line(f.name, (), "ignore", "DSH100")
        (3, None)
        >>> os.remove(f.name)
    """
    try:
        text = read_bytes(path, what="TOML file").decode("utf-8")
    except (ConfigFileError, UnicodeDecodeError):
        return None
    if '"""' in text or "'''" in text:  # a line inside one could read as a key
        return None
    current: tuple[str, ...] | None = ()
    found = []
    # split at "\n" alone, as TOML ends a line (CRLF too): splitlines() would also split at a
    # U+2028 or U+0085 that a TOML string or comment holds, and shift every line number after it
    for number, line in enumerate((line.removesuffix("\r") for line in text.split("\n")), 1):
        if line.lstrip().startswith("["):
            current = _header(line)
            if key is None and current is not None and current[:len(table)] == table:
                found.append(number)
            continue
        if key is None and table[-1] in line:  # written as a dotted key too: its first place is unknown
            return None
        if key is not None and current == table and _line_value(line, key) == repr(value):
            found.append(number)
    return found[0] if len(found) == 1 or (key is None and found) else None


def _header(line: str) -> tuple[str, ...] | None:
    """The dotted name of the ``[table]`` header ``line``, or None (an array of tables, or a line
    of a multi-line array, which ends what :func:`key_line` can place)."""
    if _HEADER.fullmatch(line) is None:
        return None
    try:
        level: Any = tomllib.loads(line)
    except ValueError:
        return None
    parts: list[str] = []
    while isinstance(level, dict) and len(level) == 1:
        name, level = next(iter(level.items()))
        parts.append(name)
    return tuple(parts) if level == {} else None


def _line_value(line: str, key: str) -> str | None:
    """The repr of the value ``line`` gives ``key`` alone, as a whole ``key = value`` line (an inline
    table, or a dotted key of it, that the line writes whole); None when it gives none."""
    try:
        document = tomllib.loads(line)
    except ValueError:
        return None
    return repr(document[key]) if list(document) == [key] else None


def find_pyproject(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` (default: the current folder) or above.

    Only a file's kind is looked at (``stat``): nothing is opened or read.

    Raises:
        ConfigFileError: the nearest ``pyproject.toml`` is not a regular file (a FIFO, a device,
            a socket) or cannot be looked at (a symlink loop, a dangling symlink, no permission).

    Example:
        >>> find_pyproject("/") in (None, Path("/pyproject.toml"))
        True
    """
    folder = Path(start or os.getcwd()).resolve()
    for candidate in (above / "pyproject.toml" for above in (folder, *folder.parents)):
        try:
            mode = os.stat(candidate).st_mode
        except (FileNotFoundError, NotADirectoryError):
            if not os.path.islink(candidate):
                continue  # nothing there
            raise ConfigFileError("cannot open: dangling symlink", path=str(candidate), reason="open",
                                  hint=_HINT) from None
        except OSError as exc:
            reason = "symlink loop" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
            raise ConfigFileError(f"cannot open: {reason}", path=str(candidate), reason="open", hint=_HINT) from None
        if stat.S_ISDIR(mode):
            continue  # not a pyproject.toml, as for pip and black
        if not stat.S_ISREG(mode):
            kind = special_kind(candidate) or "not a regular file"
            raise ConfigFileError(f"is {kind}, not a pyproject.toml", path=str(candidate), reason="open", hint=_HINT)
        return candidate
    return None
