"""Round 34, task C: a baseline bounded like every configuration file (fuzz round 14 D6), a
``baseURL``'s problem said in the project's words (D12), one spelling of numbers in every
``--json`` (``dumps_pretty`` writes them as ``JSON.stringify`` does), and one sentence for an empty
path, whether the CLI or the library refuses it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_audit.cache import load_prices
from dsh_audit.errors import UsageError
from dsh_audit.fleet import connect_index
from dsh_audit.gate import load_baseline
from dsh_audit.gate._baseline import _placed
from dsh_audit.jsjson import js_number
from dsh_audit.redact import redact
from dsh_audit.report import dumps_line, dumps_pretty
from _cli import chat_log, invoke

ROOT = Path(__file__).resolve().parent.parent
CHANGE = ROOT / "sample_logs" / "sessions" / "--home-dev-projects-demo--" / "session-sample-change"
HINT = "(hint: write the baseline with `dsh-audit check PATHS --json-report FILE` and pass that FILE)"
REPORT = {"schema_version": 1, "tool": {"name": "dsh-audit"}, "findings": []}


# -- check --baseline: bounded, parsed by orjson, keyed by a plain scan (D6) ---------------------

def _log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chat_log(tmp_path / "s" / "session.jsonl", "s-base")
    monkeypatch.chdir(tmp_path)


def test_a_baseline_over_16_mib_is_refused_unparsed_and_one_of_16_mib_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """256 MiB were allowed: 117 MB of tiny findings took 1.3 GB. The bound is every configuration
    file's (policy, price table): 16 MiB, said in the same words."""
    _log(tmp_path, monkeypatch)
    text = json.dumps(REPORT).encode()
    (tmp_path / "full.json").write_bytes(text + b" " * ((16 << 20) - len(text)))
    assert invoke(monkeypatch, capsys, "check", "s", "--baseline", "full.json")[0] == 0
    (tmp_path / "b.json").write_bytes(text + b" " * ((16 << 20) - len(text) + 1))
    code, out, err = invoke(monkeypatch, capsys, "check", "s", "--baseline", "b.json", "--sarif", "r.sarif")
    assert (code, out, err) == (2, "", [f"error: b.json: baseline is larger than 16 MiB {HINT}"])
    assert not (tmp_path / "r.sarif").exists()


@pytest.mark.parametrize(("configured", "hint"), [
    (False, "give --baseline a report of fewer findings, or run where more memory is allowed (ulimit -v)"),
    (True, "check without the policy's baseline with --no-baseline, or give --baseline a report of fewer findings"),
])
def test_a_baseline_that_does_not_fit_in_memory_is_one_line_naming_baseline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], configured: bool,
        hint: str) -> None:
    """Under ``ulimit -v`` the parse ran out of memory: exit 3 naming ``json/decoder.py`` and a hint
    about logs. It is bad input (exit 2), one line naming the option."""
    _log(tmp_path, monkeypatch)
    (tmp_path / "b.json").write_text(json.dumps(REPORT), "utf-8")
    (tmp_path / "policy.toml").write_text('[tool.dsh-audit.check]\nbaseline = "b.json"\n', "utf-8")

    def no_room(raw: Any) -> None:
        raise MemoryError("parsing 40 bytes of JSON needs about 900 MiB of memory, 12 MiB are left under the limit")

    monkeypatch.setattr("dsh_audit.gate._baseline.ensure_room", no_room)
    given_by = ["--policy", "policy.toml"] if configured else ["--baseline", "b.json"]
    code, out, err = invoke(monkeypatch, capsys, "check", "s", *given_by)
    assert (code, out, err) == (2, "", [f"error: b.json: the baseline does not fit in memory (hint: {hint})"])


_OLD_BEFORE, _OLD_AFTER = r"(?<![^\s'\"`(\[])", r"(?![^\s'\"`)\]:,;])"


def _old_placed(text: str, path: str, placeholder: str, *, whole: bool = True) -> str:
    """The regex ``_placed`` was before (one pattern compiled per path: 100 s for 50,000 paths)."""
    return re.sub(_OLD_BEFORE + re.escape(path) + (_OLD_AFTER if whole else ""), lambda _: placeholder, text)


_PIECES = st.sampled_from(["a", "b", "/", ".", " ", ":", ",", ";", "(", ")", "[", "]", "'", '"', "`", "\t",
                           "\n", "\x1c", "\x85", "\u2003", "\u00a0", "é", "-", "<"])


@given(text=st.lists(_PIECES, max_size=40).map("".join), path=st.lists(_PIECES, min_size=1, max_size=4).map("".join),
       whole=st.booleans())
def test_the_plain_scan_places_a_path_where_the_regex_did(text: str, path: str, whole: bool) -> None:
    for haystack in (text, path + text + path, text.replace("b", path)):
        assert _placed(haystack, path, "<log>", whole=whole) == _old_placed(haystack, path, "<log>", whole=whole)


def test_a_baseline_of_long_distinct_paths_is_keyed_as_before(tmp_path: Path) -> None:
    paths = [f"d{i:04d}/{'x' * 1000}/session.jsonl" for i in range(300)]
    findings = [{"rule": "DSH810", "message": f"{p}: cut vs {p[:-13]}wire.jsonl line 3 (in {p})", "path": p,
                 "session_id": f"s{i}", "request": i, "seq": None} for i, p in enumerate(paths)]
    (tmp_path / "b.json").write_text(json.dumps({**REPORT, "findings": findings}), "utf-8")
    assert load_baseline(tmp_path / "b.json").keys == tuple(
        ("DSH810", f"s{i}", i, None, "<log>: cut vs <dir>/wire.jsonl line 3 (in <log>)") for i in range(300))


def test_what_orjson_refuses_in_a_baseline_is_read_as_python_reads_it(tmp_path: Path) -> None:
    """A UTF-16 report (PowerShell's ``>``), NaN, a lone surrogate, an integer past 64 bits:
    orjson refuses each, and the reader before it read each."""
    finding = '{"rule": "R\\ud800", "message": "m", "request": NaN, "seq": 18446744073709551616}'
    text = '{"schema_version": 1, "tool": {"name": "dsh-audit"}, "findings": [%s]}' % finding
    (tmp_path / "b.json").write_bytes(text.encode("utf-16"))
    assert load_baseline(tmp_path / "b.json").keys == (("R\ud800", None, None, 18446744073709551616, "m"),)
    (tmp_path / "b.json").write_bytes(b"[1")
    with pytest.raises(UsageError) as caught:
        load_baseline(tmp_path / "b.json")
    assert caught.value.message == "baseline is not valid JSON: Expecting ',' delimiter: line 1 column 3 (char 2)"


# -- route files: a baseURL's problem in the project's words (D12) --------------------------------

SHAPE_HINT = "(hint: see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models)"


@pytest.mark.parametrize(("base_url", "problem"), [
    # an escape sequence: "Invalid IPv6 URL" (urlsplit read its "]" as a host's bracket)
    ('"http://gw.corp\\e]0;PWN\\a.example/v1"', "it holds a control character"),
    ('"http://gw.corp/v1\\x7f"', "it holds a control character"),
    ('"http://[::1/v1"', "its host has a [ without a ] or a ] without a ["),
    ('"http://gw]corp/v1"', "its host has a [ without a ] or a ] without a ["),
    ('"http://[1.2.3.4]/v1"', "the host in brackets is not an IPv6 address"),
    ('"http://[gw.corp]:8080/v1"', "the host in brackets is not an IPv6 address"),
    ('"http://gw\\u2100corp/v1"', "its host holds a character that Unicode normalisation turns into / ? # @ or :"),
])
def test_a_base_url_that_is_no_url_says_why_in_the_projects_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], base_url: str,
        problem: str) -> None:
    log = chat_log(tmp_path / "session.jsonl", "s-url")
    routes = tmp_path / "routes.yml"
    routes.write_text("- id: llm-pi-ai\n  config:\n    providers:\n      local-openai:\n"
                      f"        api: openai-completions\n        baseURL: {base_url}\n"
                      "        models:\n          - id: local-coder\n", "utf-8")
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes)) == (2, "", [
        f"error: {routes}: route file: providers.local-openai.baseURL: is not a URL ({problem}) {SHAPE_HINT}"])


# -- one spelling of numbers in every --json ----------------------------------------------------

def test_indented_json_spells_numbers_as_javascript_does() -> None:
    value = {"ttl": 300.0, "cost": 2.3808e-05, "tiny": 9.15e-6, "small": 1e-7, "big": 1e21, "wide": 1e16,
             "past_double": 2**60, "zero": -0.0, "inf": float("inf"), "text": "1.0e-05", "n": [1.5, 0.0001],
             "e": {}, 7: [], None: True}
    assert dumps_pretty(value) == "\n".join([
        "{",
        '  "ttl": 300,',
        '  "cost": 0.000023808,',
        '  "tiny": 0.00000915,',
        '  "small": 1e-7,',
        '  "big": 1e+21,',
        '  "wide": 10000000000000000,',
        '  "past_double": 1152921504606847000,',
        '  "zero": 0,',
        '  "inf": null,',
        '  "text": "1.0e-05",',
        '  "n": [',
        "    1.5,",
        "    0.0001",
        "  ],",
        '  "e": {},',
        '  "7": [],',
        '  "null": true',
        "}"])


def _compact(text: str) -> str:
    """JSON ``text`` with the whitespace between its tokens taken out."""
    return re.sub(r'("(?:[^"\\]|\\.)*")|[ \n]+', lambda m: m.group(1) or "", text)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20)


@given(value=_JSON)
def test_indented_json_is_the_compact_json_with_whitespace(value: Any) -> None:
    """``show`` and ``show --compact`` (and every other ``--json``) write each value alike."""
    assert _compact(dumps_pretty(value)) == dumps_line(value)


def test_show_writes_a_request_as_its_compact_form_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "session.jsonl", "s-numbers")
    log.write_text(log.read_text("utf-8").replace(
        '"maxTokens":65536}', '"maxTokens":65536,"temperature":1.0,"topP":1e-05,"seed":1152921504606846976}'), "utf-8")
    code, pretty, _ = invoke(monkeypatch, capsys, "show", str(log), "0")
    assert code == 0
    config = pretty[pretty.index('    "config": {'):]
    assert config[:config.index("}") + 1] == "\n".join([
        '    "config": {',
        '      "provider": "deepseek-official",',
        '      "model": "deepseek-v4-flash",',
        '      "reasoningEffort": "high",',
        '      "maxTokens": 65536,',
        '      "temperature": 1,',
        '      "topP": 0.00001,',
        '      "seed": 1152921504606847000',
        "    }"])
    code, compact, _ = invoke(monkeypatch, capsys, "show", str(log), "0", "--compact")
    assert (code, _compact(pretty)) == (0, compact.rstrip("\n"))


_TOKEN = re.compile(r'("(?:[^"\\]|\\.)*")|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')


def _numbers(text: str) -> list[str]:
    """Every number of JSON ``text`` (none inside a string), as written."""
    return [m.group(0) for m in _TOKEN.finditer(text) if m.group(1) is None]


@pytest.mark.parametrize(("args", "written"), [
    (["sessions", str(CHANGE), "--json"], ['"total":0.001112692']),
    (["cache", str(CHANGE), "--json"], ["0.000005632", "0.00003408"]),
    (["usage", str(CHANGE), "--json", "--by", "request"], ['"output":0.0000024', '"output":0.00000792']),
    (["check", str(CHANGE), "--json"], ['"min-cache-hit-ratio":0,', '"cache_read":0.000005632,',
                                        '"output":0.00003408,']),  # one compact line (session 44)
    (["check", str(CHANGE), "--json-report", "-"], ['"min-cache-hit-ratio": 0,', '"cache_read": 0.000005632,',
                                                    '"output": 0.00003408,']),  # indented
    (["check", str(CHANGE), "--sarif", "-"], []),
    (["breaks", str(CHANGE), "--json"], ['"evidence_seqs":[20]']),
    (["explain", str(CHANGE), "1", "--json"], []),
    (["show", str(CHANGE), "1"], ['"first_chunk_seq": ']),
])
def test_every_json_output_spells_numbers_as_javascript_does(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str],
        written: list[str]) -> None:
    """Python writes ``5.632e-06``, ``0.0`` and ``1e-05``; ``JSON.stringify`` ``0.000005632``, ``0`` and
    ``0.00001``: every number any ``--json`` writes is JavaScript's spelling of its value."""
    code, out, err = invoke(monkeypatch, capsys, *args)
    # a report FILE of '-' leaves check's table and verdict on stderr (session 40); --json: nothing
    assert (code, err[:1]) == (0, ["dsh-audit check"] if args[-1] == "-" else [])
    numbers = _numbers(out)
    assert numbers and all(js_number(float(n) if re.search("[.eE]", n) else int(n)) == n for n in numbers)
    assert [w for w in written if w not in out] == []


# -- an empty path: one sentence from the CLI and the library ----------------------------------

@pytest.mark.parametrize(("args", "call"), [
    (["cache", "{log}", "--prices", ""], lambda log: load_prices("")),
    (["stats", "--db", ""], lambda log: connect_index("")),
    (["redact", "{log}", "-o", "", "--salt", "x"], lambda log: redact(log, "", salt="x")),
    (["redact", "{log}", "-o", "r.jsonl", "--capture-output", "", "--salt", "x"],
     lambda log: redact(log, "r.jsonl", capture_output="", salt="x")),
])
def test_an_empty_path_is_one_sentence_from_the_cli_and_the_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str],
        call: Any) -> None:
    log = chat_log(tmp_path / "session.jsonl", "s-empty")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        call(log)
    said = str(caught.value)
    assert said.startswith("Invalid value for '") and said.endswith("': empty path (name a file or folder)")
    code, out, err = invoke(monkeypatch, capsys, *(a.format(log=log) for a in args))
    assert (code, out, err) == (2, "", [f"error: {said} (hint: see `dsh-audit {args[0]} --help`)"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]
