"""Fuzz 43 (re-read F of d363227): every single damage of a Codex ``token_count`` keeps the rule.

A sampled form of the re-reader's mutator (1190 variants of the Codex fixture, each compared with
the intact log): every damage type on three lines (10: the first call's end, resent whole on line
12; 15: a call's end; 16: a compaction's call, with no output item), each alone and repeated word
for word right after. The rule: the same four calls (none added, merged or split), each with its
intact usage or unpriced, and a call unpriced only with one warning naming the damaged line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from dsh_audit.importers import import_codex

CODEX = (Path(__file__).parent / "data" / "importers" / "codex"
         / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")
_BAD = (None, -1, 1.5, "12", True, 10**10, [], {}, 2**60)
_PARTS = ("total_token_usage", "last_token_usage")
Damage = Callable[[dict[str, Any]], None]


def _set(part: str, key: str, value: Any) -> Damage:
    return lambda info: info[part].__setitem__(key, value)


def _scaled(factor: int) -> Damage:
    return lambda info: info.__setitem__("last_token_usage",
                                         {key: count * factor for key, count in info["last_token_usage"].items()})


def _damages() -> list[tuple[str, Damage | Any]]:
    """Each damage: a count made wrong or deleted, a key added, a part no object or deleted, the last
    usage made the total or scaled (0, 2); or the ``info`` itself replaced (a value, not a function)."""
    out: list[tuple[str, Damage | Any]] = []
    for part in _PARTS:
        for key in _KEYS:
            out += [(f"{part}.{key}={value!r}", _set(part, key, value)) for value in _BAD]
            out.append((f"del {part}.{key}", lambda info, part=part, key=key: info[part].pop(key)))
        out += [(f"{part}={value!r}", lambda info, part=part, value=value: info.__setitem__(part, value))
                for value in (None, "x", [], 5)]
        out.append((f"del {part}", lambda info, part=part: info.pop(part)))
        out.append((f"{part}.extra_tokens=7", _set(part, "extra_tokens", 7)))
    out.append(("last=total", lambda info: info.__setitem__("last_token_usage", dict(info["total_token_usage"]))))
    out += [(f"last*={factor}", _scaled(factor)) for factor in (0, 2)]
    return out + [(f"info={value!r}", value) for value in (None, {}, "x", [])]


def _import(tmp_path: Path, records: list[dict[str, Any]], name: str) -> tuple[list[Any], list[str], list[str]]:
    path = tmp_path / f"rollout-{name}.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    session = import_codex(path)
    return [r.usage for r in session.requests], [r.kind for r in session.requests], list(session.warnings)


@pytest.mark.parametrize("line", [10, 15, 16])
def test_every_single_damage_keeps_each_call_or_leaves_it_unpriced_said_once(tmp_path: Path, line: int) -> None:
    """Before: a call priced from the totals' difference was held again by a later total (+22 %);
    a first call's last_token_usage with a key its total lacked, or a total count 1.5, added a
    fifth call; a last_token_usage of zeros was priced $0 unsaid; info null merged two calls; a
    damaged total repeated word for word was said twice (258 of 595)."""
    intact = [json.loads(text) for text in CODEX.read_text(encoding="utf-8").splitlines()]
    usages, kinds, warnings = _import(tmp_path, intact, "intact")
    assert (len(usages), warnings) == (4, [])
    for n, (name, damage) in enumerate(_damages()):
        records = json.loads(json.dumps(intact))
        if callable(damage):
            damage(records[line - 1]["payload"]["info"])
        else:
            records[line - 1]["payload"]["info"] = damage
        got = _import(tmp_path, records, f"{n}")
        records.insert(line, json.loads(json.dumps(records[line - 1])))
        again = _import(tmp_path, records, f"{n}-repeated")
        for case, (priced, kind, said) in ((name, got), (f"{name} repeated", again)):
            assert kind == kinds, case
            assert [usage in (None, whole) for usage, whole in zip(priced, usages)] == [True] * 4, case
            assert len(said) <= 1 and all(f"rollout-{n}{case[len(name):] and '-repeated'}.jsonl:{line}: " in text
                                          for text in said), (case, said)
            assert said or priced == usages, case
        assert (again[0], len(again[2])) == (got[0], len(got[2])), name


def _negated(record: dict[str, Any]) -> dict[str, Any]:
    """Every count of a ``token_count`` made ``-count - 1`` (fuzz 33's ``negative``)."""
    info = record["payload"]["info"]
    for part in _PARTS:
        info[part] = {key: -count - 1 for key, count in info[part].items()}
    return record


#: What each warning of :data:`_OUT_OF_PLACE` says, after ``warning: <file>:<line>: ``.
_HELD = ("token_count total_token_usage moved by other than its last_token_usage (Codex adds each call's to it): "
         "it adds no call unless a compacted record follows it (then the call it ends is priced from the totals' "
         "difference)")
_NEGATED = ("token_count total_token_usage input_tokens is a number -3001, not a count: the open request ends here "
            "(the event resent whole right after gives it its usage); with none open it is a call unless it repeats "
            "the last last_token_usage or has none, or a compacted record follows it",
            "token counts input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens are negative, "
            "not an integer or above 2**53 - 1: its call's usage is the one the event resent whole on line 12 logs")
#: (copied line, before line, negated line) -> (requests, tokens, $, unknown, warnings: line and text). Session 44:
#: a copied event's warning said it was priced (none was); the negated first total was kept, a base (7,542 tokens,
#: the first call unpriced though line 12 resends it whole), and line 12 said priced from the totals' difference.
_OUT_OF_PLACE = {(24, 12, None): (4, 10582, 0.00762, 0, [(12, _HELD)]),
                 (16, 11, None): (4, 10582, 0.00762, 0, [(11, _HELD)]),
                 (None, None, 10): (4, 10582, 0.00762, 0, [(10, _NEGATED[0]), (10, _NEGATED[1])])}


@pytest.mark.parametrize("case", list(_OUT_OF_PLACE))
def test_an_out_of_place_token_count_adds_no_call(tmp_path: Path, case: tuple[Any, Any, Any],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Fuzz 33 D2: a later ``token_count`` copied in after a tool's output (none open), or the first
    one negated (its resend then disagrees with it), was a fifth call priced from the totals'
    difference: 18,124 tokens, $0.01109 (+45 %); 16,994, $0.009991 (+31 %); 13,624, $0.01178 (+55 %),
    above the log's own final total. Such an event is a call only if a compacted record follows."""
    copied, before, negated = case
    records = [json.loads(text) for text in CODEX.read_text(encoding="utf-8").splitlines()]
    if negated is not None:
        _negated(records[negated - 1])
    if copied is not None:
        records.insert(before - 1, json.loads(json.dumps(records[copied - 1])))
    path = tmp_path / "rollout-x.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(path), "--json")
    totals = json.loads(out)["totals"]
    assert (code, totals["requests"], totals["tokens"]["total"], totals["cost_usd"]["total"],
            totals["usage_unknown_requests"], [(int(text.split(":")[2]), text.split(":", 3)[3][1:]) for text in err]) \
        == (0, *_OUT_OF_PLACE[case])
    assert [request.kind for request in import_codex(path).requests] == ["loop", "loop", "compaction", "loop"]
