"""The validation fast paths (a plain ``assistant/chunk``, a packed row checked as one) give exactly
the findings of the full per-event checks: each case below breaks what a fast path assumes, and
the expected findings are those of the per-event engine before the fast paths existed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.testing import LogBuilder
from dsh_audit.validate import LineValidator, validate
from dsh_audit.log import iter_lines

Found = list[tuple[str, int | None, int | None, str]]


def _base() -> list[str]:
    """38 lines: two turns with packed reasoning/text rows, a manual compaction between them."""
    b = LogBuilder(session_id="fast")
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello there, friend!", reasoning="Greet back politely.", delta_size=4)
    b.compaction("the greeting")
    with b.turn("Again"):
        with b.step():
            b.assistant("Hello again!", delta_size=4)
    return b.lines()


def _edit(number: int, change: Callable[[dict[str, Any]], None]) -> Callable[[list[str]], None]:
    """Change the JSON value of physical line ``number`` (1-based)."""
    def apply(lines: list[str]) -> None:
        value = json.loads(lines[number - 1])
        change(value)
        lines[number - 1] = json.dumps(value)
    return apply


def _set(number: int, *path_and_value: Any) -> Callable[[list[str]], None]:
    *path, value = path_and_value

    def change(target: dict[str, Any]) -> None:
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return _edit(number, change)


def _replace(first: int, last: int, text: str) -> Callable[[list[str]], None]:
    def apply(lines: list[str]) -> None:
        lines[first - 1:last] = [text]
    return apply


def _version(version: int) -> Callable[[list[str]], None]:
    return _set(1, "version", version)


_OWED_ROW = json.dumps({"type": "text-chunks", "seq0": 29, "time0": 1800000000030,
                        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}})

# line 9: block-start 0 (reasoning); line 10: reasoning row seqs 8-12; line 12: text row 14-18;
# line 22: compaction/summary seq 28; lines 23-24: checkpoint 29, compaction/end 30; line 31:
# block-start seq 37; line 32: text row seqs 38-40.
CASES: dict[str, Callable[[list[str]], None]] = {
    "row-block-not-open": _set(12, "data", "index", 5),
    "row-turn-mismatch": _set(10, "data", "turn", 2),
    "row-seq-gap": _set(32, "seq0", 39),
    "row-float-seq0": _set(32, "seq0", 38.0),
    "row-float-time0": _set(32, "time0", 1800000000039.0),
    "row-after-summary": _replace(23, 24, _OWED_ROW),
    "row-unreadable-before": _replace(11, 11, "{oops"),
    "chunk-extra-key": _set(31, "x", 1),
    "chunk-float-time": _set(31, "time", 1.5),
    "chunk-integral-float-time": _set(31, "time", 1800000000038.0),
    "chunk-ignorable-false": _set(31, "ignorable", False),
    "chunk-surface-op": _set(31, "surfaceOp", "append"),
    "chunk-source-seqs": _set(31, "sourceEventSeqs", [36]),
    "chunk-data-not-object": _set(31, "data", [1]),
    "chunk-wrong-step": _set(31, "data", "step", 2),
    "chunk-after-finish": _set(35, "data", "chunk", {"type": "text-delta", "index": 0, "text": "x"}),
    "v2-chunks-unknown": _version(2),
}

EXPECTED: dict[str, Found] = {
    'chunk-after-finish': [
        ('DSH421', 35, 43, 'text-delta at index 0 needs an open text block, but no block is open there'),
        ('DSH425', 36, 44, 'attempt starting at seq 37 has no finish chunk'),
    ],
    'chunk-data-not-object': [
        ('DSH405', 31, 37, 'assistant/chunk names no turn/no step but turn 2/step 1 is open'),
        ('DSH425', 32, 38, 'attempt starting at seq 37 has no finish chunk'),
        ('DSH421', 32, 38, 'text-delta at index 0 needs an open text block, but no block is open there'),
        ('DSH422', 33, 41, 'block-end index 0 has no open block'),
        ('DSH310', 36, 44, "sourceEventSeqs [37..43] (7) are not the attempt's chunks [38..43] (6)"),
    ],
    'chunk-extra-key': [
        ('DSH110', 31, 37, 'unknown envelope key(s) x'),
    ],
    'chunk-float-time': [
        ('DSH111', 31, 37, 'time 1.5 is not a safe integer'),
    ],
    'chunk-ignorable-false': [
        ('DSH113', 31, 37, 'ignorable is false, not true'),
    ],
    'chunk-integral-float-time': [
    ],
    'chunk-source-seqs': [
        ('DSH301', 31, 37, 'session event "assistant/chunk" is not surface-eligible and cannot carry sourceEventSeqs'),
    ],
    'chunk-surface-op': [
        ('DSH301', 31, 37, 'session event "assistant/chunk" is not surface-eligible and cannot carry surfaceOp'),
    ],
    'chunk-wrong-step': [
        ('DSH405', 31, 37, 'assistant/chunk names turn 2/step 2 but turn 2/step 1 is open'),
        ('DSH425', 32, 38, 'attempt starting at seq 37 has no finish chunk'),
        ('DSH421', 32, 38, 'text-delta at index 0 needs an open text block, but no block is open there'),
        ('DSH422', 33, 41, 'block-end index 0 has no open block'),
        ('DSH310', 36, 44, "sourceEventSeqs [37..43] (7) are not the attempt's chunks [38..43] (6)"),
    ],
    'row-after-summary': [
        ('DSH405', 23, 29, 'assistant/chunk names turn 1/step 1 but no turn is open'),
        ('DSH421', 23, 29, 'text-delta at index 0 needs an open text block, but no block is open there'),
        ('DSH320', 23, 29, 'assistant/chunk follows the compaction/summary at seq 28; its user/message surface replace must come immediately after it'),
        ('DSH327', 26, 33, 'turn/start crosses the open compaction "f55a3da2-19a2-4b37-95a9-cfd96dbbbab2" (compaction/start seq 27)'),
        ('DSH327', 37, 46, 'turn/end crosses the open compaction "f55a3da2-19a2-4b37-95a9-cfd96dbbbab2" (compaction/start seq 27)'),
        ('DSH326', None, None, 'log ends inside compaction "f55a3da2-19a2-4b37-95a9-cfd96dbbbab2" (compaction/start seq 27 has no compaction/end)'),
    ],
    'row-block-not-open': [
        ('DSH421', 12, 14, 'text-delta at index 5 needs an open text block, but no block is open there'),
    ],
    'row-float-seq0': [
    ],
    'row-float-time0': [
    ],
    'row-seq-gap': [
        ('DSH107', 32, 39, 'seq gap: expected 38, got 39'),
        ('DSH108', 33, 41, 'seq 41 repeats or goes backwards (expected 42)'),
        ('DSH426', 35, 43, 'stop finish with 1 open block(s)'),
        ('DSH310', 36, 44, "sourceEventSeqs [37..43] (7) are not the attempt's chunks [37..43] (6): 38 is not a chunk "
                           "of the attempt"),
    ],
    'row-turn-mismatch': [
        ('DSH405', 10, 8, 'assistant/chunk names turn 2/step 1 but turn 1/step 1 is open'),
        ('DSH425', 10, 8, 'attempt starting at seq 7 has no finish chunk'),
        ('DSH421', 10, 8, 'reasoning-delta at index 0 needs an open reasoning block, but no block is open there'),
        ('DSH425', 11, 13, 'attempt starting at seq 8 has no finish chunk'),
        ('DSH422', 13, 19, 'block-end index 0 has no open block'),
        ('DSH310', 17, 23, "sourceEventSeqs [7..22] (16) are not the attempt's chunks [13..22] (10)"),
    ],
    'row-unreadable-before': [  # what the line held is lost: no seq gap, stream or DSH310 finding after it
        ('DSH104', 11, 13, 'line is not valid JSON'),
    ],
    'v2-chunks-unknown': [
        # (no DSH206 of the v0 file name nor DSH216 of the missing isSeeded: they say DSH114's mismatch again)
        # the first chunk is where the v0 body shows: one finding, not one DSH506 per chunk
        ('DSH114', 9, 7, 'header version 2 does not fit this record: an assistant/chunk event is written only '
                         'by version 0 or 1 (v2+ keeps the chunks in data.stream)'),
    ],
}


def _findings(tmp_path: Path, case: str) -> tuple[Found, bytes]:
    lines = _base()
    CASES[case](lines)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    checker = LineValidator(path, lineage=True)
    with path.open("rb") as stream:
        for line in iter_lines(stream, str(path), []):
            assert checker.feed(line)
    checker.end()
    found = [(f.rule, f.line, f.seq, f.message) for f in checker.finish()]
    assert found == [(f.rule, f.line, f.seq, f.message) for f in validate(path)]
    assert checker.chain is not None
    return found, bytes(checker.chain.links)


def test_base_log_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(_base()) + "\n", encoding="utf-8")
    assert validate(path) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_paths_find_what_the_full_checks_find(tmp_path: Path, case: str) -> None:
    found, _ = _findings(tmp_path, case)
    assert found == EXPECTED[case]


# The chain of running hashes (fork lineage, DSH603): a row's events hashed by line and place; events
# released after a damaged line hashed as JSON. (sha256 of SeedChain.links, events * 8 bytes.)
CHAINS = {
    "chunk-extra-key": (47, "d34cf5d821c8d5703a78e71090a12abd39898d6e71fc8b7ab81ab3018d317858"),
    "row-unreadable-before": (46, "9d905e0ae1218618b110ccf237644ffc16b4384899ad0943d677343561fbfe19"),
}


@pytest.mark.parametrize("case", sorted(CHAINS))
def test_chain_of_running_hashes(tmp_path: Path, case: str) -> None:
    _, links = _findings(tmp_path, case)
    assert (len(links) // 8, hashlib.sha256(links).hexdigest()) == CHAINS[case]
