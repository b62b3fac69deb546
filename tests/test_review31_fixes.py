"""Session 31's review fixes.

1. ``validate`` with another agent's log among DSH logs: that log is one error line, the other
   logs' findings and the summary are still reported (--json ends with its summary object), exit 2.
2. (``validate --rule`` runs every rule and filters: measured no slower, so nothing to test here.)
3. A capture carrying this session's DSH header is this session's LLM call, whatever its body,
   only when it is a POST to an endpoint an LLM call is sent to: a ``GET /models`` is not one.
4. A price file's number outside a rate field is shown as a rate's is ("a N-digit number"), never
   as Python's ``inf`` nor as a thousand digits.
5. ``LazyModule`` survives ``copy``, ``hasattr`` of a dunder and ``repr`` without importing.
6. ``requests`` on a log of no request prints no ``total`` row.
7. A redacted log's lone surrogate is escaped by ``dumps_line``: the UTF-8 encode needs no
   ``surrogatepass``.
8. A body folder too large for memory is named as the user gave it, not by the file in it.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke

import dsh_audit.capture._align as align_module
import dsh_audit.capture._reading as reading_module  # the capture readers open files here (session 35)
from dsh_audit._lazy import LazyModule
from dsh_audit.capture import CapturedRequest
from dsh_audit.capture._align import too_large
from dsh_audit.redact._log import LogRewriter
from dsh_audit.testing import LogBuilder

CODEX = (Path(__file__).resolve().parent / "data" / "importers" / "codex"
         / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
REFUSED = (f"error: {CODEX}:1: this is a codex session, not a DSH log (hint: sessions, requests, show, render, cache, "
           "usage, diff and index import it; validate, breaks, explain, check, report, redact and watch read DSH "
           "logs only)")
TOO_LARGE = "the capture does not fit in memory (hint: compare a smaller capture, e.g. one session's requests)"


# -- 1. a foreign log hides no other log's findings ---------------------------------------------------

def _two_findings(tmp_path: Path) -> Path:
    """A one-turn chat whose assistant/message (line 14, seq 12) has an unsafe time (DSH111, an
    error) and names turn "two" (DSH405, a warning)."""
    log = chat_log(tmp_path / "a" / "session.jsonl", "s1")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert records[13]["type"] == "assistant/message"
    records[13]["time"] = 2**60
    records[13]["data"]["turn"] = "two"
    log.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return log


def test_a_foreign_log_is_one_line_beside_the_other_logs_findings(tmp_path, monkeypatch, capsys):
    log = _two_findings(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "validate", str(log), str(CODEX))
    assert (code, out.splitlines(), err) == (2, [
        f"{log}:14: seq 12: DSH111 error: time 1152921504606846976 is not a safe integer (write Date.now() "
        "milliseconds and the position as integers)",
        f'{log}:14: seq 12: DSH405 warning: assistant/message names turn "two"/step 1 but turn 1/step 1 is open '
        "(write turn and step of the step they belong to)",
    ], [REFUSED, "1 error(s), 1 warning(s), 0 info in 1 file(s): DSH111 x1, DSH405 x1"])


def test_a_foreign_log_keeps_the_json_summary_last(tmp_path, monkeypatch, capsys):
    log = _two_findings(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "validate", str(CODEX), str(log), "--json", "--ignore", "DSH405")
    assert (code, [json.loads(line) for line in out.splitlines()], err) == (2, [
        {"rule": "DSH111", "severity": "error", "message": "time 1152921504606846976 is not a safe integer",
         "path": str(log), "line": 14, "seq": 12, "hint": "write Date.now() milliseconds and the position as integers"},
        {"type": "summary", "passed": False, "counts": {"error": 1, "warning": 0, "info": 0}, "files": 1,
         "rules": {"DSH111": 1}, "ignored": 1},
    ], [REFUSED])


def test_a_foreign_log_alone_still_ends_the_json_with_a_summary(monkeypatch, capsys):
    code, out, err = invoke(monkeypatch, capsys, "validate", str(CODEX), "--json")
    assert (code, [json.loads(line) for line in out.splitlines()], err) == (2, [
        {"type": "summary", "passed": False, "counts": {"error": 0, "warning": 0, "info": 0}, "files": 0,
         "rules": {}}], [REFUSED])


def test_a_foreign_log_alone_has_no_text_summary(monkeypatch, capsys):
    # every file refused as bad input: its error is the whole story, not "... in 0 file(s)" (nor
    # what --ignore hid of nothing); the JSON stream above still ends with its summary object
    code, out, err = invoke(monkeypatch, capsys, "validate", str(CODEX), str(CODEX), "--ignore", "DSH405")
    assert (code, out, err) == (2, "", [REFUSED])


# -- 3. this session's header alone does not make an LLM call -----------------------------------------

def _wire(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return wire


def _rows(out: str) -> list[tuple[Any, ...]]:
    return [(row["index"], row["verdict"], row["capture_position"], row["note"])
            for row in map(json.loads, out.splitlines())]


HEADER = {"x-deepseek-harness-session-id": "s1"}


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/models", None),  # what a client asks before it sends: no LLM call
    ("GET", "/chat/completions", None),  # the endpoint, but not a send
    ("POST", "/v1/files", "x"),  # a POST to no endpoint an LLM call is sent to
])
def test_a_session_capture_that_is_no_llm_call_is_not_paired(method: str, path: str, body: str | None,
                                                            tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    wire = _wire(tmp_path, [{"method": method, "path": path, "headers": HEADER, "body": body}])
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json")
    note = (f"note: no request matched: {wire} holds no LLM call (nothing a request could be paired with): give the "
            "capture of s1's run with --capture FILE")
    assert (code, err, _rows(out)) == (1, [note], [
        (0, "unmatched", None, "no captured loop send of this session left on its route "
                               "(deepseek-chat-completions, model deepseek-v4-flash)"),
        (None, "foreign", 0, "not an LLM call (kind other)"),
    ])


def test_a_session_post_to_an_llm_endpoint_is_still_paired(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    wire = _wire(tmp_path, [{"method": "POST", "path": "/v1/chat/completions?beta=1", "headers": HEADER,
                             "body": None}])
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json")
    assert (code, err, _rows(out)) == (1, [], [
        (0, "different", 0, "session header and order; the captured request has no body")])


# -- 4. a price file's numbers, shown as a rate's -----------------------------------------------------

_MODEL = "providers.deepseek.models.deepseek-v4-flash[0]"
_SHAPE = ("(hint: fix this key in the --prices file; "
          "the Price files section of docs/cache-accounting.md gives the shape)")


def _prices(tmp_path: Path, monkeypatch, capsys, document: str) -> tuple[int, str, list[str], str]:
    prices = tmp_path / "prices.json"
    prices.write_text(document, encoding="utf-8")
    log = chat_log(tmp_path / "session.jsonl", "digits")
    return (*invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices)), str(prices))


def _tier(above: str, model: str = "") -> str:
    return ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": 0.3, "cache_read": 0.03, '
            '"output": 0.5, ' + model + '"tiers": [{"prompt_tokens_above": ' + above
            + ', "cache_miss": 0.6, "cache_read": 0.06, "output": 1.0}]}]}}}}')


@pytest.mark.parametrize(("document", "message"), [
    (_tier("1" + "0" * 4999), f"{_MODEL}.tiers[0].prompt_tokens_above: a 5000-digit number is not a token count "
                              "(a whole number >= 0)"),
    (_tier("-" + "9" * 1000), f"{_MODEL}.tiers[0].prompt_tokens_above: a negative 1000-digit number is not a token "
                              "count (a whole number >= 0)"),
    (_tier("-" + "9" * 5000), f"{_MODEL}.tiers[0].prompt_tokens_above: a negative 5000-digit number is not a token "
                              "count (a whole number >= 0)"),
    (_tier("1e400"), f"{_MODEL}.tiers[0].prompt_tokens_above: 1e400 is not a token count (a whole number >= 0)"),
    (_tier("-7"), f"{_MODEL}.tiers[0].prompt_tokens_above: -7 is not a token count (a whole number >= 0)"),
    ('{"per_tokens": 1' + "0" * 4999 + ', "providers": {}}',
     "per_tokens: a 5000-digit number is not the packaged table's 1000000: every rate is read per 1000000 tokens "
     "(leave it out and give the rates per 1000000 tokens)"),
    ('{"per_tokens": 1234567, "providers": {}}',
     "per_tokens: 1234567 is not the packaged table's 1000000: every rate is read per 1000000 tokens "
     "(leave it out and give the rates per 1000000 tokens)"),
    ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": ' + "9" * 500
     + ', "cache_read": 0.03, "output": 0.5}]}}}}', f"{_MODEL}.cache_miss: a 500-digit number is above 1e+09, "
                                                    "not a price"),
])
def test_a_price_file_number_is_shown_as_a_rate_is(document: str, message: str, tmp_path, monkeypatch, capsys):
    code, out, err, prices = _prices(tmp_path, monkeypatch, capsys, document)
    assert (code, out, err) == (2, "", [f"error: {prices}: price table key {message} {_SHAPE}"])


def test_a_repeated_tier_of_many_digits_is_named_by_its_size(tmp_path, monkeypatch, capsys):
    above = "1" + "0" * 100
    document = _tier(above).replace('"tiers": [{', '"tiers": [{"prompt_tokens_above": ' + above
                                    + ', "cache_miss": 0.6, "cache_read": 0.06, "output": 1.0}, {')
    code, out, err, prices = _prices(tmp_path, monkeypatch, capsys, document)
    assert (code, out, err) == (2, "", [
        f"error: {prices}: price table key {_MODEL}.tiers[1].prompt_tokens_above: a tier above a 101-digit number "
        f"tokens is already declared {_SHAPE}"])


# -- 5. LazyModule ------------------------------------------------------------------------------------

def test_a_lazy_module_copies_and_answers_dunder_probes_without_importing() -> None:
    json_module = LazyModule("json")
    assert (repr(copy.copy(json_module)), repr(copy.deepcopy(json_module))) == ("LazyModule('json')",) * 2
    assert copy.copy(json_module).dumps([1]) == "[1]"
    missing = LazyModule("dsh_audit_no_such_module")
    assert (hasattr(missing, "__deepcopy__"), hasattr(missing, "__wrapped__"), repr(missing)) == (
        False, False, "LazyModule('dsh_audit_no_such_module')")
    with pytest.raises(AttributeError):
        missing.__dict__  # noqa: B018  (slots: no instance dictionary)
    with pytest.raises(ModuleNotFoundError):  # an ordinary name imports it: a missing module is said
        missing.anything  # noqa: B018


# -- 6. requests on a log of no request ---------------------------------------------------------------

def test_requests_on_a_log_of_no_request_prints_no_total(tmp_path, monkeypatch, capsys):
    log = tmp_path / "session.jsonl"
    log.write_text(LogBuilder(session_id="s0").lines(packed=False)[0] + "\n", encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "120")
    code, out, err = invoke(monkeypatch, capsys, "requests", str(log))
    assert (code, err) == (0, [])
    assert out.splitlines() == [
        f"{log}  session s0",
        "┏━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━┳━━━━━━━━┳━━━━━━┳━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━┓",
        "┃ # ┃ turn/step/attempt ┃ kind ┃ header ┃ msgs ┃ input ┃ cache read ┃ output ┃ finish ┃",
        "┡━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━╇━━━━━━━━╇━━━━━━╇━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━┩",
        "└───┴───────────────────┴──────┴────────┴──────┴───────┴────────────┴────────┴────────┘",
    ]


# -- 7. a lone surrogate in a redacted log --------------------------------------------------------------

def test_a_kept_lone_surrogate_is_written_escaped_without_surrogatepass() -> None:
    out = io.BytesIO()
    rewriter = LogRewriter(out, lambda record: record, path="log.jsonl")
    rewriter.feed(b'{"type":"x\\ud800y","k":"\\udfff","pair":"\\ud83d\\ude00"}\n')
    assert (rewriter.finish(), out.getvalue()) == (
        [], b'{"type":"x\\ud800y","k":"\\udfff","pair":"\xf0\x9f\x98\x80"}\n')


# -- 8. a body folder too large for memory is named as given ----------------------------------------------

def _body(source: str, locator: str) -> CapturedRequest:
    return CapturedRequest(position=0, method="POST", path="/chat/completions", headers={}, body=b"{}", time=None,
                           source=source, locator=locator, kind="loop")


def test_too_large_names_the_folder_of_a_body_folder_of_one_file() -> None:
    assert [too_large(captures).path for captures in (
        [_body("cap/bodies/1.json", "")], [_body("cap/bodies/1.json", ""), _body("cap/bodies/2.json", "")],
        [_body("cap/wire.jsonl", "line 1")], [])] == ["cap/bodies", "cap/bodies", "cap/wire.jsonl", "."]


class _Huge(io.BytesIO):
    def read(self, size: int | None = -1) -> bytes:
        raise MemoryError


def test_a_body_file_too_large_to_read_names_its_folder(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    folder = tmp_path / "bodies"
    folder.mkdir()
    (folder / "1.json").write_bytes(b"{}")
    opened = reading_module.open_regular
    monkeypatch.setattr(reading_module, "open_regular",
                        lambda path, **kw: _Huge() if Path(path).name == "1.json" else opened(path, **kw))
    for command in ("diff", "check"):
        assert invoke(monkeypatch, capsys, command, str(log), "--capture", str(folder)) == (
            2, "", [f"error: {folder}: {TOO_LARGE}"]), command


def test_a_body_folder_of_one_file_too_large_to_align_names_the_folder(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    folder = tmp_path / "bodies"
    folder.mkdir()
    (folder / "1.json").write_bytes(b"{}")

    def no_room(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(align_module, "_align", no_room)
    assert invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(folder)) == (
        2, "", [f"error: {folder}: {TOO_LARGE}"])
