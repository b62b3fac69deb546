"""Which findings fail the build: the :class:`Policy`, read from TOML.

Where the policy comes from (first that applies):

1. ``--policy FILE``: a TOML file holding either a ``[tool.dsh-audit]`` table (so a
   ``pyproject.toml`` can be given) or the keys at top level (a ``dsh-audit.toml``).
2. the nearest ``pyproject.toml`` in the current folder or above; its ``[tool.dsh-audit]`` table
   (the search stops at the first ``pyproject.toml`` found, as ruff and black do; a folder of that
   name is passed over, a FIFO or other special file is an error: see ``dsh_audit._pyproject``).
3. the strict defaults below.

Keys (kebab-case, as TOML tools spell them) and strict defaults::

    [tool.dsh-audit]
    fail-on-refusal = true                 # DSH801/DSH802: a log DSH refuses or that cannot be rebuilt
    validation-fail-severity = "error"     # validation findings at or above this fail: error|warning|info|never
    capture-fail = ["different", "equivalent", "unmatched", "unexplained", "unrendered"]
    capture-kinds = ["loop", "compaction", "title"]   # request kinds whose capture verdicts count
    require-capture = false                # DSH810 fails when a log has no capture
    fail-on-unexplained-break = true       # DSH821
    allowed-break-causes = ["header_change", "compaction", "prune", "plugin_replace",
                            "resume", "fork", "subagent", "retry", "title_input",
                            "search_input"]                      # DSH822 for any other cause
    min-cache-hit-ratio = 0.0              # DSH831 below this actual ratio (0 turns it off)
    ignore = []                            # rule ids or families ("DSH4", "DSH81") whose findings are dropped
    adapter = "auto"                       # wire format for capture comparison: auto (each request's route
                                           # from the log)|deepseek|anthropic|openai|responses

``[tool.dsh-audit.check] baseline = "FILE"`` names check's baseline (``check --baseline``, which
wins over it): a JSON report of ``check``, relative to the folder of the TOML file that names it.
An unknown key is an error (a misspelt key would silently weaken the gate), and so is an ``ignore``
entry that names no rule or family, or every rule (``"D"``, ``"DSH"``). So is a sub-table no command
reads (``[tool.dsh-audit.chekc]``), or an unknown key in one a command reads
(:data:`~dsh_audit._pyproject.TOOL_TABLES`: ``check``, ``cache``, ``prices``; the price table's keys
are checked by its reader), a policy key among them too (``[tool.dsh-audit.check]
min-cache-hit-ratio``): each error names the key's dotted name, with the closest known one. A
``--policy`` file is either a plain policy (keys at top level, ``[check]`` its one sub-table besides
the tables of pyproject.toml's own specifications, such as ``[tool.ruff]``) or pyproject-style (a
``[tool.dsh-audit]`` table): keys at top level beside that table would be ignored, so they are an
error too. A ``--policy`` file holding neither (empty, or only other tools' tables) is an error as
well (an empty ``[tool.dsh-audit]`` table states the defaults); a ``pyproject.toml`` found, not
named, may hold no table (the defaults apply).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .._config_read import ConfigFileError, read_toml
from .._pyproject import (POLICY_HINT, TOOL_TABLES, check_tool_table, checked_tool_table, dotted_key, find_pyproject,
                          key_line, said, table_parts, tool_table, unknown_key, unknown_table)
from ..errors import UnreadableError, UsageError, did_you_mean
from ..validate import RULES, checked_rule_ids
from ._rules import GATE_RULES

__all__ = ["CAPTURE_VERDICTS", "Policy", "find_pyproject", "load_policy"]

#: Capture verdicts a policy can fail on (``unexplained``: a capture no request explains).
CAPTURE_VERDICTS = ("different", "equivalent", "unmatched", "unexplained", "unrendered")
_SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
_THRESHOLDS = ("error", "warning", "info", "never")
_KINDS = ("loop", "compaction", "title")
#: The tables pyproject.toml's specifications define (PEP 518, 621, 735): in a plain policy file
#: (a pyproject.toml with no [tool.dsh-audit] table too) they are other tools', never read.
_PYPROJECT_TABLES = ("build-system", "dependency-groups", "project", "tool")
_CAUSES = ("header_change", "compaction", "prune", "plugin_replace", "resume", "fork", "subagent", "retry",
           "title_input", "search_input", "unexplained", "unrecorded_mutation")


@dataclass(frozen=True, slots=True)
class Policy:
    """Which findings fail the build. Every field has the strict default the module lists."""

    fail_on_refusal: bool = True
    validation_fail_severity: str = "error"
    capture_fail: tuple[str, ...] = CAPTURE_VERDICTS
    capture_kinds: tuple[str, ...] = _KINDS
    require_capture: bool = False
    fail_on_unexplained_break: bool = True
    allowed_break_causes: tuple[str, ...] = ("header_change", "compaction", "prune", "plugin_replace", "resume",
                                             "fork", "subagent", "retry", "title_input", "search_input")
    min_cache_hit_ratio: float = 0.0
    ignore: tuple[str, ...] = ()
    adapter: str = "auto"
    source: str = "defaults"
    baseline: str | None = None

    def validation_fails(self, severity: str) -> bool:
        """Whether a validation finding of ``severity`` fails the build."""
        if self.validation_fail_severity == "never":
            return False
        return _SEVERITY_RANK.get(severity, 0) >= _SEVERITY_RANK[self.validation_fail_severity]

    def ignored(self, rule: str) -> bool:
        return any(rule.upper().startswith(prefix.upper()) for prefix in self.ignore)

    def to_json(self) -> dict[str, Any]:
        """The policy as TOML keys (kebab-case) plus ``source`` (and ``baseline`` when one is named)."""
        out: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "baseline" and value is None:
                continue
            out[item.name.replace("_", "-")] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_mapping(cls, table: dict[str, Any], *, source: str, name: str = "tool.dsh-audit") -> Policy:
        """Build a policy from a ``[tool.dsh-audit]`` table; raises UsageError on a bad key or value.

        ``name`` is the table's dotted name in messages (``""``: the top level of a plain policy
        file, where ``[check]`` is the only sub-table read). A sub-table is an error unless a command
        reads it (:data:`~dsh_audit._pyproject.TOOL_TABLES`), and so is an unknown key in one.
        """
        known = {f.name.replace("_", "-"): f.name for f in fields(cls) if f.name not in ("source", "baseline")}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key in TOOL_TABLES:
                check_tool_table(key, value, source=source, name=name, policy_keys=known)
            elif key in known:
                values[known[key]] = _located(key, value, source, name)
            elif not name and key in _PYPROJECT_TABLES and isinstance(value, dict):
                continue  # another tool's table, in a pyproject.toml given as a plain policy
            elif isinstance(value, dict):
                raise unknown_table(key, source=source, name=name)
            else:
                raise unknown_key(key, source=source, name=name, known=known, value=value)
        return cls(**values, source=source, baseline=_baseline(table.get("check"), source, name))


def _located(key: str, value: Any, source: str, name: str) -> Any:
    """The policy key ``key``'s ``value`` as the policy holds it (:func:`_checked`); its error names
    the line of the file ``source`` that writes it, when one line exactly does (:func:`key_line`)."""
    try:
        return _checked(key, value, source)
    except UsageError as exc:
        if exc.line is None and exc.path == source:
            exc.line = key_line(source, table_parts(name), key, value)
        raise


def _baseline(check: Any, source: str, name: str) -> str | None:
    """The ``baseline`` of the ``[tool.dsh-audit.check]`` table ``check`` (``[check]`` of a plain
    policy file: ``name`` empty), resolved against the folder of the TOML file ``source`` (None: no
    table, or no such key); its error at the line that writes it, as every policy key's."""
    if not isinstance(check, dict) or "baseline" not in check:
        return None
    value = check["baseline"]
    if not isinstance(value, str) or not value:
        table = (*table_parts(name), "check")
        raise UsageError(f"[{dotted_key(*table)}] key 'baseline' must be a file name", path=source,
                         line=key_line(source, table, "baseline", value),
                         hint="a JSON report written by `dsh-audit check --json-report FILE`")
    return os.path.join(os.path.dirname(source), value)


def _strings(key: str, value: Any, source: str, allowed: tuple[str, ...] | None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"policy key {key!r} must be a list of strings", path=source,
                         hint=f'write {key} = ["..."]; {POLICY_HINT}')
    if allowed is None:  # rule ids: each names a rule or a family of them, as validate's --ignore
        checked_rule_ids(value, [*RULES, *GATE_RULES], what=f"policy key {key!r}", path=source)
        return tuple(value)
    for item in value:
        if item not in allowed:
            raise UsageError(f"policy key {key!r}: unknown value {said(item)}{_near(item, allowed)}", path=source,
                             hint=f"allowed: {', '.join(allowed)}; {POLICY_HINT}")
    return tuple(value)


def _near(value: Any, allowed: tuple[str, ...]) -> str:
    """The ``(did you mean 'x'?)`` of a misspelt ``value`` of the ``allowed`` ones (none for a
    value that is no string): a value is refused as a misspelt key is, since either weakens the gate.

    Example:
        >>> _near("eror", _THRESHOLDS), _near("header-change", _CAUSES), _near(3, _THRESHOLDS)
        (" (did you mean 'error'?)", " (did you mean 'header_change'?)", '')
    """
    return did_you_mean(value, allowed) if isinstance(value, str) else ""


def _checked(key: str, value: Any, source: str) -> Any:
    lists = {"capture-fail": CAPTURE_VERDICTS, "capture-kinds": _KINDS,
             "allowed-break-causes": _CAUSES, "ignore": None}
    if key in lists:
        return _strings(key, value, source, lists[key])
    if key in ("fail-on-refusal", "require-capture", "fail-on-unexplained-break"):
        if not isinstance(value, bool):
            raise UsageError(f"policy key {key!r} must be true or false", path=source,
                             hint=f"write {key} = true or {key} = false; {POLICY_HINT}")
        return value
    if key == "min-cache-hit-ratio":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise UsageError(f"policy key {key!r} must be a number from 0 to 1", path=source,
                             hint=f"write {key} = 0.5, say (0 turns the rule off); {POLICY_HINT}")
        return float(value)
    choices = {"validation-fail-severity": _THRESHOLDS, "adapter": ("auto", "deepseek", "anthropic", "openai", "responses")}[key]
    if value not in choices:
        raise UsageError(f"policy key {key!r} must be one of {', '.join(choices)}{_near(value, choices)}", path=source,
                         hint=f'write {key} = "{choices[0]}", say; {POLICY_HINT}')
    return value


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML document of the ``--policy`` file ``path``, its errors worded for a policy file:
    at the line tomllib names (or of the byte that is not UTF-8), with a hint to fix the file."""
    try:
        return read_toml(path, what="policy file")
    except ConfigFileError as exc:
        if exc.reason == "open":  # missing, a folder, a FIFO: unreadable, as any input file would be
            raise UnreadableError(exc.message, path=exc.path, hint=exc.hint) from None
        raise UsageError(exc.message, path=exc.path, line=exc.line,
                         hint=f"fix this file, or give another --policy FILE; {POLICY_HINT}") from None


def load_policy(path: str | os.PathLike[str] | None = None, *, search_from: str | os.PathLike[str] | None = None
                ) -> Policy:
    """Read the policy: from ``path`` when given, else the nearest ``pyproject.toml``, else defaults.

    Example:
        >>> load_policy(None, search_from="/").source in ("defaults", "/pyproject.toml")
        True
    """
    if path is not None:
        source = os.fspath(path)
        document = _read_toml(Path(path))
        tool = tool_table(document, source=source)
        if tool is None and all(isinstance(value, dict) and key in _PYPROJECT_TABLES
                                for key, value in document.items()):
            # named, yet holding nothing dsh-audit reads (empty, or only [tool.black]): never the defaults in silence
            raise UsageError("has no [tool.dsh-audit] table (nor a policy key at its top level)", path=source,
                             hint="give the policy file meant, or write its keys under [tool.dsh-audit] (an empty "
                                  f"table keeps the defaults on purpose); {POLICY_HINT}")
        if tool is None:
            return Policy.from_mapping(document, source=source, name="")
        beside = [str(key) for key, value in document.items() if not isinstance(value, dict)]
        if beside:  # a plain policy and a pyproject-style one mixed: the top-level keys would not be read
            raise UsageError(f"top-level key(s) {', '.join(map(repr, beside))} beside [tool.dsh-audit] would be "
                             "ignored", path=source,
                             hint="move them into [tool.dsh-audit], or drop the table and keep the keys at top level")
        return Policy.from_mapping(tool, source=source)
    found = find_pyproject(search_from)
    if found is None:
        return Policy()
    # read once per version of the file, as the price and ZDR readers read it, and worded alike
    # (``pyproject.toml is not valid TOML``): it need not hold a policy
    tool = checked_tool_table(found)
    if tool is None:
        return Policy()
    return Policy.from_mapping(tool, source=str(found))
