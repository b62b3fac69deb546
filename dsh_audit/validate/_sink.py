"""Where checks put what they find: rule selection, lenient downgrades, locations."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .._pyproject import said
from ..errors import UsageError, closest
from ._catalogue import RULES
from ._model import Finding, Severity

__all__ = ["Sink", "checked_rule_ids", "select_rules"]


#: a rule id (``DSH301``) or a family prefix of one (``DSH3``, ``DSH30``): "DSH" and 1-3 digits
_RULE_PATTERN = re.compile(r"DSH[0-9]{1,3}")
_LOOKALIKE = str.maketrans("OIL", "011")


def checked_rule_ids(ids: Iterable[str], known: Iterable[str], *, what: str, path: str | None = None
                     ) -> tuple[str, ...]:
    """``ids`` upper-cased, each checked to name a rule of ``known`` or a family of them.

    An entry is a rule id (``DSH301``) or a prefix of at least one digit (``DSH3`` names the
    ``DSH3xx`` family, ``DSH30`` ``DSH300``-``DSH309``) that matches some rule. Anything else
    (``""``, ``"D"``, ``"DSH"``: every rule; ``"XYZ"``, ``"DSH9"``: none) is refused, so that
    a typo in ``--ignore`` or a policy's ``ignore`` cannot silently drop every finding or
    none. Shared by ``validate --rule/--ignore`` and the gate's policy (``what`` names the
    option or key, ``path`` the file it came from).

    Raises:
        UsageError: an entry names no rule or family.

    Example:
        >>> checked_rule_ids(["dsh4", "DSH305"], RULES, what="--ignore")
        ('DSH4', 'DSH305')
    """
    rules = sorted(set(known))
    out: list[str] = []
    for rid in ids:
        wanted = rid.upper()
        if _RULE_PATTERN.fullmatch(wanted) and any(r.startswith(wanted) for r in rules):
            out.append(wanted)
            continue
        close = _near(wanted, rules)
        if not wanted:
            problem = "an empty string would match every rule"
        elif wanted.startswith("DSH") and wanted[3:].isdigit() and len(wanted) <= 6:
            problem = f"{said(rid)} names no rule"
        elif "DSH".startswith(wanted):
            problem = f"{said(rid)} would match every rule"
        else:
            problem = f"{said(rid)} is not a rule id"
        raise UsageError(f"{what}: {problem}" + (f" (did you mean {close!r}?)" if close else ""), path=path,
                         hint=f"give a rule id ({rules[0]}-{rules[-1]}) or a family such as DSH3; see docs/rules.md")
    return tuple(out)


def _near(wanted: str, rules: list[str]) -> str | None:
    """The rule or family ``wanted`` was probably meant to be: its letters O, I and L read as
    digits and separators dropped (``DSH4O1``, ``DSH-3``), or an id one keystroke away (``DSH3011``)."""
    digits = re.sub(r"[^A-Z0-9]", "", wanted[3:].translate(_LOOKALIKE)) if wanted.startswith("DSH") else ""
    fixed = "DSH" + digits
    if fixed != wanted and _RULE_PATTERN.fullmatch(fixed) and any(r.startswith(fixed) for r in rules):
        return fixed
    if len(wanted) > 6:
        return closest(wanted, rules, cutoff=0.9)
    return None


def select_rules(rules: Iterable[str] | None, ignore: Iterable[str] | None) -> frozenset[str]:
    """The rule ids to report: ``rules`` (default every rule) minus ``ignore``.

    An id may be a family prefix (``DSH3`` selects every surface rule). Raises UsageError on an
    id that names no rule or family (:func:`checked_rule_ids`).
    """
    def expand(ids: Iterable[str], what: str) -> set[str]:
        prefixes = checked_rule_ids(ids, RULES, what=what)
        return {r for r in RULES if r.startswith(prefixes)}

    chosen = expand(rules, "--rule") if rules else set(RULES)
    return frozenset(chosen - (expand(ignore, "--ignore") if ignore else set()))


class Sink:
    """Collects the findings of one log."""

    def __init__(self, path: str, selected: frozenset[str]) -> None:
        self.path = path
        self.selected = selected
        self.findings: list[Finding] = []
        #: the log's format version once its header is read: a rule DSH refuses from some version
        #: on (:attr:`Rule.refused_from`) is an error in a log of that version or newer
        self.version = 0

    def add(self, rule: str, message: str, *, line: int | None = None, seq: int | None = None,
            severity: Severity | None = None, hint: str | None = None, foreign: str | None = None) -> None:
        """Record one finding of ``rule`` (its catalogue severity and hint unless ``severity`` or
        ``hint`` overrides: a case the rule's general hint does not fit; ``foreign``: see
        :class:`Finding`; a rule refused from :attr:`version` on is an error)."""
        meta = RULES[rule]
        if rule not in self.selected:
            return
        if severity is None and meta.refused_from is not None and self.version >= meta.refused_from:
            severity = "error"
        self.findings.append(Finding(rule=rule, severity=severity or meta.severity, message=message,
                                     path=self.path, line=line, seq=seq, hint=hint or meta.hint, foreign=foreign))
