"""Session 32 (issue 15, bounded memory): one JSON line reader, one ``NaN`` refusal, and a room
check that counts only the JSON structure.

* The importers parse a line with :func:`dsh_audit.log.parse_json`, the log reader's own (they kept
  a copy that read integers and huge lines differently).
* ``NaN``, ``Infinity`` and ``-Infinity`` are refused by one function, :func:`dsh_audit._json.refuse_constant`,
  with one message, wherever JSON is read as ``JSON.parse`` reads it.
* ``ensure_room`` (the check before orjson parses a long text, which it cannot survive running out
  of memory on) counted every ``{``, ``[``, ``,`` and ``:``, those inside strings too: a 4 MiB line
  of prose full of commas asked for 256 MiB where orjson takes about 52. It now asks for no count
  when even every byte taken as structure fits, then counts them all at C speed, and counts only
  those outside strings when that would refuse.
* ``jsjson``'s walk before orjson writes under a limit gives the same answers, with less work per value.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

import dsh_audit
from dsh_audit import _json, jsjson, log
from dsh_audit.errors import UnreadableError, UsageError
from dsh_audit.importers import _model
from dsh_audit.log import _json_line, _json_room
from dsh_audit.wire import _piai_home, _piai_js as _piai

ROOT = Path(dsh_audit.__file__).resolve().parent.parent
needs_proc = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="the address-space limit is measured from /proc (Linux)")


def test_one_refusal_of_nan_and_infinity_everywhere(tmp_path: Path) -> None:
    assert _piai.refuse_constant is _piai_home.refuse_constant is _json_line.refuse_constant is _json.refuse_constant
    settings = tmp_path / "settings.json"
    for literal in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(ValueError) as by_log:
            log.parse_json(f"[{literal}]".encode())
        with pytest.raises(ValueError) as by_piai:
            _piai.js_parse(f"[{literal}]")
        settings.write_text(f'{{"llm-pi-ai": {literal}}}', encoding="utf-8")
        with pytest.raises(UsageError) as by_routes:
            _piai_home._settings_section(str(settings))
        assert (str(by_log.value), str(by_piai.value), by_routes.value.message) == (
            f"{literal} is not JSON", f"{literal} is not JSON",
            f"cannot read the settings file as JSON: '{literal} is not JSON'")


def test_importers_read_lines_with_the_log_readers_parser(tmp_path: Path) -> None:
    """An integer of 5,000 digits is Infinity to JSON.parse and to the log reader; the importers'
    copy of the parser called the line not JSON. A lone surrogate is kept; NaN is not JSON; a line
    nested too deep is one error, as in a DSH log."""
    assert _model.parse_json is log.parse_json
    path = tmp_path / "foreign.jsonl"
    path.write_text('{"n": 1' + "0" * 5000 + ', "m": 18446744073709551616}\n'
                    '{"s": "\\ud800"}\n'
                    '{"x": NaN}\n'
                    '[1]\n'
                    + "[" * 513 + "]" * 513 + "\n", encoding="utf-8")
    warnings: list[str] = []
    records = _model.read_jsonl(path, warnings)
    assert next(records) == (1, {"n": float("inf"), "m": 18446744073709551616.0})
    assert next(records) == (2, {"s": "\ud800"})
    with pytest.raises(UnreadableError) as caught:
        next(records)
    assert (str(caught.value), warnings) == (
        f"{path}:5: line nests JSON arrays or objects more than 512 levels deep; dsh-audit cannot process it "
        "(hint: the agent that wrote it may still read it; dsh-audit's recursive serialisers stop here)",
        [f"{path}:3: not JSON, skipped", f"{path}:4: not a JSON object, skipped"])


# A line whose strings hold 8 of the characters counted, and whose structure holds 10: an escaped
# backslash that ends a string, and an escaped quote followed by ``,:[{`` inside one.
LINE = rb'{"text":"a, b: [c] {d}","n":[1,2],"e":"\\","q":"\",:[{"}'


def test_the_structure_count_is_exact_where_every_count_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    assert json.loads(LINE) == {"text": "a, b: [c] {d}", "n": [1, 2], "e": "\\", "q": '",:[{'}
    assert (_json_room._structure_count(LINE), _json_room._item_bound(LINE)) == (10, 18)
    text = LINE.decode().replace("a, b", "é, 😀")
    assert (_json_room._structure_count(text), _json_room._item_bound(text)) == (10, 18)
    counts = set()
    for piece in range(1, 12):  # every piece edge: inside a string, an escape, a run of backslashes
        monkeypatch.setattr(_json_room, "_COUNT_PIECE", piece)
        counts |= {_json_room._structure_count(LINE), _json_room._structure_count(text),
                   _json_room._structure_count(LINE.replace(b'"\\\\"', b'"\\\\\\\\\\\\\\\\"'))}
    assert counts == {10}


def _structure(value: Any) -> int:
    """The ``{``, ``[``, ``,`` and ``:`` a JSON writer puts around ``value``."""
    if isinstance(value, dict):
        return 1 + max(2 * len(value) - 1, 0) + sum(map(_structure, value.values()))
    if isinstance(value, list):
        return 1 + max(len(value) - 1, 0) + sum(map(_structure, value))
    return 0


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice([1, -2.5, None, True, "".join(rng.choices('ab,:{[\\"é😀\n', k=rng.randrange(12)))])
    if roll < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {"".join(rng.choices('k,:["\\', k=rng.randrange(4))): _value(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_the_structure_count_of_random_json_in_pieces_of_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(32)
    lines = []
    for _ in range(150):
        value = _value(rng)
        raw = json.dumps(value, ensure_ascii=rng.random() < 0.5, separators=rng.choice([(",", ":"), (", ", ": ")]))
        lines.append((raw, _structure(value)))
    for piece in (1, 2, 3, 5, 8, 1 << 18):
        monkeypatch.setattr(_json_room, "_COUNT_PIECE", piece)
        wrong = [(raw, count) for raw, count in lines
                 if (_json_room._structure_count(raw), _json_room._structure_count(raw.encode())) != (count, count)]
        assert wrong == [], piece


def test_room_is_asked_for_the_structure_only_and_counted_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    prose = orjson.dumps({"a": "x," * (2 << 20)})  # 4 MiB of text holding two million commas
    numbers = orjson.dumps([1] * (2 << 20))  # as long, two million elements
    counted: list[str] = []
    for name in ("_item_bound", "_structure_count"):
        count = getattr(_json_room, name)
        monkeypatch.setattr(_json_room, name, lambda raw, count=count, name=name: counted.append(name) or count(raw))
    left = [1 << 30]
    monkeypatch.setattr(_json_room, "memory_limited", lambda: True)
    monkeypatch.setattr(_json_room, "fits_in_memory", lambda need: need <= left[0])
    monkeypatch.setattr(_json_room, "memory_left", lambda: left[0])
    _json_room.ensure_room(prose)
    _json_room.ensure_room(numbers)
    assert counted == []  # 112 bytes a byte fit: nothing counted
    left[0] = 150 << 20
    _json_room.ensure_room(prose)  # 64 MiB: it was refused (256 MiB, commas counted in the string)
    assert counted == ["_item_bound", "_structure_count"]
    with pytest.raises(MemoryError) as caught:
        _json_room.ensure_room(numbers)
    assert str(caught.value) == f"parsing {len(numbers)} bytes of JSON needs about 256 MiB of memory, " \
                                "150 MiB are left under the limit"
    counted.clear()
    _json_room.ensure_room(prose.decode())  # a str of ASCII: as many bytes as characters
    assert counted == ["_item_bound", "_structure_count"]


# Parses two 4 MiB lines under a real address-space limit of the interpreter plus 150 MiB: the line of
# numbers is refused (it needs about 256 MiB), the line of prose is parsed (orjson takes about 52).
_UNDER_A_LIMIT = """
import resource, sys
import orjson
from dsh_audit.log import parse_json
prose, numbers = orjson.dumps({"a": "x," * (2 << 20)}), orjson.dumps([1] * (2 << 20))
size = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + (150 << 20), size + (150 << 20)))
for raw in (numbers, prose):
    try:
        value = parse_json(raw)
        print("parsed", len(value) if isinstance(value, list) else len(value["a"]))
    except MemoryError as exc:
        print("MemoryError", str(exc).split(",")[0])
"""


@needs_proc
@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_AS is POSIX")
def test_a_line_of_prose_full_of_commas_parses_under_a_limit() -> None:
    done = subprocess.run([sys.executable, "-c", _UNDER_A_LIMIT], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stderr, done.stdout.splitlines()) == (0, "", [
        "MemoryError parsing 4194305 bytes of JSON needs about 256 MiB of memory", "parsed 4194304"])


def test_the_write_check_walks_to_the_end_and_reads_the_limit_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbers add their 24 bytes without a check each: the check at the end still sees them."""
    reads: list[int] = []
    value = [1] * 200_000
    need = (200_002 + 24 * 200_000 + 128 * 200_000) * 9 // 4
    for left, expected in ((need - 1, need), (need, None)):
        monkeypatch.setattr(jsjson, "memory_left", lambda left=left: reads.append(left) or left)
        assert jsjson._too_big_to_write(value) == expected
    text = "é" * 100_000  # 2 bytes of UTF-8 a character, read from its storage
    need = (4 + 3 + 3 + 200_002 + 8 * 200_000) * 9 // 4  # the object, its key, the array, the text
    for left, expected in ((need - 1, need), (need, None)):
        monkeypatch.setattr(jsjson, "memory_left", lambda left=left: reads.append(left) or left)
        assert jsjson._too_big_to_write({"k": [text]}) == expected
    monkeypatch.setattr(jsjson, "memory_left", lambda: reads.append(-1) or None)
    assert jsjson._too_big_to_write([[]] * 100_000) is None  # no limit measurable: fits
    assert len(reads) == 5
