"""Fuzz round 29's count and refusal defects (D5, D6; D3 is in ``test_piai_catalog_all.py``'s header rows).

D5: a usage count written ``100.0`` (or ``-0.0``) passed ``validate --strict`` (JavaScript's JSON.parse
makes it the number 100, and DSH sums it so) but `usage` left its request unpriced ("usage without a
valid outputTokens"): one rule of a count now, an integer as JavaScript reads it, its value an int.
D6: `check` listed a log's version-mismatch refusal twice, as DSH801 and as the DSH114 of the same
line, seq and message, and counted 2 errors where `validate` counts 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _cli import invoke

from dsh_audit._usage_rule import MAX_SAFE, MAX_TOKENS, count_of, is_count, js_integer, logged_cache_read
from dsh_audit.cache import Tokens, response_tokens
from dsh_audit.log import is_safe_int
from dsh_audit.testing import LogBuilder

#: Values a log may hold for a count, and what each is: (JavaScript's integer, a safe one, a count
#: as validate checks it, a count the ledger prices).
_NUMBERS: list[tuple[Any, int | None, bool, bool, bool]] = [
    (100, 100, True, True, True), (100.0, 100, True, True, True), (-0.0, 0, True, True, True),
    (0, 0, True, True, True), (-1, -1, True, False, False), (-1.0, -1, True, False, False),
    (1.5, None, False, False, False), (MAX_TOKENS + 1.0, MAX_TOKENS + 1, True, True, False),
    (float(MAX_SAFE), MAX_SAFE, True, True, False), (2.0**53, 2**53, False, False, False),
    (2**53, 2**53, False, False, False), (1e300, int(1e300), False, False, False),
    (float("inf"), None, False, False, False), (float("nan"), None, False, False, False),
    (True, None, False, False, False), ("100", None, False, False, False), (None, None, False, False, False),
]


def test_one_rule_says_what_a_count_is_for_validate_and_the_ledger() -> None:
    """``is_safe_int`` (validate's DSH701) and ``count_of`` (the ledger's) read a number by the one
    definition, :func:`js_integer`; the ledger bounds it by MAX_TOKENS, and its value is an int."""
    read = [(js_integer(v), is_safe_int(v), count_of(v, most=MAX_SAFE) is not None, count_of(v) is not None)
            for v, *_ in _NUMBERS]
    assert read == [tuple(expected) for _, *expected in _NUMBERS]
    assert [type(count_of(v)) for v in (100.0, -0.0, 7)] == [int, int, int]
    assert [str(count_of(v)) for v in (100.0, -0.0)] == ["100", "0"]
    assert [is_count(v) for v, *_ in _NUMBERS] == [count_of(v) is not None for v, *_ in _NUMBERS]
    read = response_tokens({"usage": {"input_tokens": 10.0, "output_tokens": 5.0}})  # a capture: the SDK's reading
    assert (read, type(read.cache_miss), type(read.output)) == (Tokens(10, output=5), int, int)
    # a logged cache read is read by it too, on every route (re-read D: past MAX_TOKENS it was a read,
    # and on pi-ai "100", 1.5 or true a made-up 0; fuzz 30a: a logged null too); only a bucket not logged
    # at all is pi-ai's 0 (tests/test_requests42.py)
    routes = [{"config": {"provider": name}} for name in ("anthropic", "deepseek-official")]
    reads = [[logged_cache_read(SimpleNamespace(usage={"inputTokens": 5, "cacheReadTokens": v}, message_usage=None,
                                                header=route, kind="loop", extra={})) for route in routes]
             for v, *_ in _NUMBERS]
    assert reads == [[count_of(v), count_of(v)] for v, *_ in _NUMBERS]


def _float_count_log(tmp_path: Path) -> Path:
    """The fuzz repro: request 1's usage (chunk and message) logs ``outputTokens`` as ``100.0`` and
    ``cacheReadTokens`` as ``-0.0``; request 0's is written as DSH writes it."""
    b = LogBuilder(session_id="s-float", model="deepseek-v4-flash")
    for text, output in (("Hi", 5), ("Again", 100)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": 100, "outputTokens": output, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / "session.jsonl")
    text = log.read_text(encoding="utf-8")
    assert text.count('"outputTokens":100,"cacheReadTokens":0') == 2
    floats = text.replace('"outputTokens":100,"cacheReadTokens":0', '"outputTokens":100.0,"cacheReadTokens":-0.0')
    log.write_text(floats, encoding="utf-8")
    return log


def test_a_count_written_as_a_float_is_priced_as_the_integer_dsh_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: validate passed the log, and `usage` said "1 request(s) unpriced: usage without a valid
    outputTokens", its output total 5 (CSV unpriced 1)."""
    log = str(_float_count_log(tmp_path))
    assert invoke(monkeypatch, capsys, "validate", log, "--strict") == (
        0, "", ["0 error(s), 0 warning(s), 0 info in 1 file(s)"])
    code, out, err = invoke(monkeypatch, capsys, "usage", log, "--by", "request", "--json", "--no-capture")
    rows = [(r["usage_source"], r["tokens"], r["unpriced_requests"]) for r in json.loads(out)["rows"]]
    assert (code, err, rows) == (0, [], [
        ("log", {"cache_miss": 100, "cache_read": 0, "cache_write": 0, "output": 5, "reasoning": 0, "total": 105}, 0),
        ("log", {"cache_miss": 100, "cache_read": 0, "cache_write": 0, "output": 100, "reasoning": 0, "total": 200},
         0)])
    code, out, err = invoke(monkeypatch, capsys, "usage", log, "--format", "csv", "--no-capture")
    assert (code, err, out.splitlines()[1:]) == (0, [], [
        "usage by session,s-float,2,200,0,0,0,0,0,105,0.000186,0.00006,0,0,0.000126,0.000186,0.000093,0",
        "usage by session,total,2,200,0,0,0,0,0,105,0.000186,0.00006,0,0,0.000126,0.000186,0.000093,0"])
    monkeypatch.setenv("COLUMNS", "80")  # `requests` shows the counts `usage` prices, as ints (it showed ? then)
    code, out, err = invoke(monkeypatch, capsys, "requests", log, "--no-capture")
    assert (code, err, out.splitlines()[-5:]) == (0, [], [
        "#  turn/step/attempt  kind  header     msgs  input  cache read  output  finish", "─" * 78,
        "0  1/1/1              loop  5 initial     1    100           0       5  stop",
        "1  2/1/1              loop  5 initial     3    100           0     100  stop",
        "   total                                       200           0     105"])
    code, out, err = invoke(monkeypatch, capsys, "requests", log, "--no-capture", "--format", "csv")
    assert (code, err, out.splitlines()[1:]) == (0, [], [
        f"requests,{log},s-float,0,1/1/1,loop,5 initial,1,100,0,5,stop",
        f"requests,{log},s-float,1,2/1/1,loop,5 initial,3,100,0,100,stop"])


def _body_older_than_header(tmp_path: Path, name: str) -> Path:
    """A v0 log (its request/header carries ``header.system``) whose header says version 4, as a
    port that bumped the version alone writes it, in the file ``name``."""
    b = LogBuilder(session_id="s-v4", model="deepseek-v4-flash")
    with b.turn("Hi"), b.step():
        b.assistant("Hi", usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / name)
    first, rest = log.read_text(encoding="utf-8").split("\n", 1)
    log.write_text(first.replace('"version":0,', '"version":4,"isSeeded":false,') + "\n" + rest, encoding="utf-8")
    return log


_MISMATCH = ("header version 4 does not fit this record: a request/header carrying header.system is written only "
             "by version 0-2 (v3+ keeps the system prompt as system/message events)")


@pytest.mark.parametrize(("name", "found", "validated"), [
    # the reader refuses the record in DSH114's own words
    ("session.v4.jsonl", ("DSH801", 7, 5, _MISMATCH), "DSH114"),
    # the reader refuses the header against the file name; its hint names DSH114 for the record
    ("session.jsonl",
     ("DSH801", 1, None, "header says log format v4 but the file name session.jsonl is generation v0"), "DSH114"),
    # a header alone (no body record to misfit): validate's fault is the pair, DSH206, which the hint names too
    ("empty/session.jsonl",
     ("DSH801", 1, None, "header says log format v4 but the file name session.jsonl is generation v0"), "DSH206"),
])
def test_check_lists_a_version_mismatch_refusal_once(
        tmp_path: Path, name: str, found: tuple[object, ...], validated: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Before: DSH801 and DSH114 (for ``session.v4.jsonl`` on the same line and seq with the same
    message), 2 errors; `validate` counts 1, DSH114. A header alone was DSH801 and DSH206 (the
    fold paired the refusal with DSH114 only)."""
    if name.startswith("empty/"):
        (tmp_path / "empty").mkdir()
        (tmp_path / name).write_text('{"type":"session","version":4,"id":"s-v4","createdAt":0,"isSeeded":false,'
                                     '"delegationDepth":0}\n', encoding="utf-8")
        log = str(tmp_path / name)
    else:
        log = str(_body_older_than_header(tmp_path, name))
    code, out, _ = invoke(monkeypatch, capsys, "check", log, "--no-capture", "--json")
    report = json.loads(out)
    findings = [(f["rule"], f["line"], f["seq"], f["message"]) for f in report["findings"]]
    assert (code, findings, report["counts"]) == (1, [found], {
        "error": 1, "warning": 0, "info": 0, "failing": 1, "sessions": 1, "requests": 0, "logs_not_checked": 0})
    assert invoke(monkeypatch, capsys, "validate", log)[2][-1] == (
        f"1 error(s), 0 warning(s), 0 info in 1 file(s): {validated} x1")
