"""A request refused at render is placed where ``render`` places it (issue 12, session 39).

``render`` names the event a refusal is about: the header whose route has no facts, the logged
message holding what pi-ai cannot send. ``check`` names the same line and seq for the request's
``DSH815`` finding (unrendered) on the terminal, in its JSON report and in its Markdown summary, not
the request's first chunk. Each case is a recorded live-pi session copied and changed to refuse:

- ``c3-openai-compat`` without its route file: its hand-declared route has no model facts, so every
  request is refused at its header (the title call's own event, it has no header);
- the same session as an OpenAI Responses route (its envelopes and route file say
  ``openai-responses``), where pi-ai ``JSON.parse``s a same-model thinking signature: every recorded
  signature but the last replayed one is made a reasoning item, so only the last request is refused,
  at the ``assistant/message`` that holds the block;
- ``c1-anthropic-tools`` whose second header names a provider no route serves: both its requests are
  refused at that header.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from _golden import CORPUS

LIVE_PI = CORPUS / "live-pi"
C1 = LIVE_PI / "c1-anthropic-tools"
C3 = LIVE_PI / "c3-openai-compat"

pytestmark = pytest.mark.skipif(not LIVE_PI.is_dir(), reason="the live-pi corpus is not here")

NO_FACTS = ("no pi-ai model facts for local-openai/local-coder: a hand-declared route's models are described by "
            "DSH's route configuration, which the log does not record")
NO_FACTS_HINT = ("pass --routes FILE (DSH's llm-pi-ai route configuration), or record the log in a DSH home "
                 "(<home>/sessions/...) and declare the route in <home>/cordis.patch.yml, read when no --routes is "
                 "given")
NOT_JSON = ("a reasoning block's thinking signature is not JSON: pi-ai's openai-responses conversion JSON.parses it "
            "to replay the reasoning item and throws, so DSH could not have sent this request")
DAMAGED = "the log was edited or damaged; `dsh-audit validate` lists what else is wrong in it"
#: A thinking signature pi-ai's Responses conversion replays: a reasoning item, as JSON text.
ITEM = json.dumps(json.dumps({"type": "reasoning", "id": "rs_1", "summary": []}, separators=(",", ":")))


def _copy(tmp_path: Path, case: Path, change: Callable[[dict[str, Any], str], str] = lambda r, t: t) -> None:
    """The log of live-pi ``case`` as ``s.jsonl`` and its capture as ``wire.jsonl`` in ``tmp_path``,
    each log line (its record and its text) through ``change``: every other byte as recorded."""
    (log,) = sorted((case / "session-logs").glob("*.jsonl"))
    lines = log.read_text("utf-8").splitlines()
    (tmp_path / "s.jsonl").write_text("".join(change(json.loads(t), t) + "\n" for t in lines), "utf-8")
    shutil.copyfile(case / "wire.jsonl", tmp_path / "wire.jsonl")


def _findings(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
              *options: str) -> tuple[list[tuple[Any, ...]], str]:
    """check's JSON report findings as (rule, request, line, seq), and its Markdown summary."""
    code, out, _ = invoke(monkeypatch, capsys, "check", "s.jsonl", "--capture", "wire.jsonl", *options,
                          "--json-report", "-")
    assert code == 1
    report = json.loads(out)
    code, markdown, _ = invoke(monkeypatch, capsys, "check", "s.jsonl", "--capture", "wire.jsonl", *options,
                               "--markdown", "-")
    assert code == 1
    return [(f["rule"], f["request"], f["line"], f["seq"]) for f in report["findings"]], markdown


def _render_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], index: int,
                  *options: str) -> list[str]:
    code, out, err = invoke(monkeypatch, capsys, "render", "s.jsonl", str(index), *options)
    assert (code, out) == (2, "")
    return err


# --- c3 without its route file: refused at the header ---------------------------------------------------------


def test_a_route_without_facts_is_refused_at_its_header_by_render_and_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _copy(tmp_path, C3)
    monkeypatch.chdir(tmp_path)
    # the loop requests' header is seq 10 on line 12; the title call has none: its own event, seq 12 on line 14
    assert _render_error(monkeypatch, capsys, 1) == [f"error: s.jsonl:12 seq 10: {NO_FACTS} (hint: {NO_FACTS_HINT})"]
    assert _render_error(monkeypatch, capsys, 0) == [f"error: s.jsonl:14 seq 12: {NO_FACTS} (hint: {NO_FACTS_HINT})"]
    findings, markdown = _findings(monkeypatch, capsys)
    assert findings == [("DSH815", 0, 14, 12)] + [("DSH815", i, 12, 10) for i in range(1, 6)]
    assert (f"- **DSH815** warning: loop request 3 is unrendered vs wire.jsonl line 4: cannot render: {NO_FACTS} "
            "— s.jsonl:12 seq 10 request 3") in markdown.splitlines()
    assert (f"- **DSH815** warning: title request 0 is unrendered vs wire.jsonl line 2: cannot render: {NO_FACTS} "
            "— s.jsonl:14 seq 12 request 0") in markdown.splitlines()


# --- c3 as a Responses route: refused at the message holding the signature ----------------------------------------


def _responses(record: dict[str, Any], text: str) -> str:
    """c3's line as recorded on an ``openai-responses`` route: each envelope's api says so, and each
    reasoning block before the reply to request 4 (seq 92, 93) replays a reasoning item."""
    text = text.replace('"api":"openai-completions"', '"api":"openai-responses"')
    if record.get("seq", 0) < 92:
        text = text.replace('"thinkingSignature":"reasoning_content"', f'"thinkingSignature":{ITEM}')
    return text


def _as_responses(tmp_path: Path) -> None:
    _copy(tmp_path, C3, _responses)
    routes = (C3 / "inputs" / "pi-ai-routes.patch.yml").read_text("utf-8")
    assert routes.count("api: openai-completions") == 1
    (tmp_path / "routes.yml").write_text(routes.replace("api: openai-completions", "api: openai-responses"), "utf-8")
    wire = (tmp_path / "wire.jsonl").read_text("utf-8")  # sent to the Responses endpoint
    (tmp_path / "wire.jsonl").write_text(wire.replace('"path": "/v1/chat/completions"', '"path": "/v1/responses"'),
                                         "utf-8")


def test_a_responses_signature_that_is_not_json_is_refused_at_its_message_by_render(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _as_responses(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "render", "s.jsonl", "4", "--routes", "routes.yml")
    assert (code, err) == (0, [])  # its history's signatures are reasoning items: replayed
    items, replayed = json.loads(out)["input"], {"type": "reasoning", "id": "rs_1", "summary": []}
    assert [i for i in items if i.get("type") == "reasoning"] == [replayed] * 3  # the replies to requests 1-3
    assert items[3] == replayed  # the first reply's first item
    # the reply to request 4, replayed by request 5 only: assistant/message seq 93 on line 74
    assert _render_error(monkeypatch, capsys, 5, "--routes", "routes.yml") == [
        f"error: s.jsonl:74 seq 93: {NOT_JSON} (hint: {DAMAGED})"]


def test_a_responses_signature_that_is_not_json_is_refused_at_its_message_by_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _as_responses(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "s.jsonl", "--capture", "wire.jsonl", "--routes",
                            "routes.yml", "--format", "csv")
    assert code == 1
    refused = [line for line in err if "DSH815" in line]
    assert refused == [f"s.jsonl:74: seq 93: request 5: DSH815 warning (fails the gate: capture-fail): loop request 5 "
                       f"is unrendered vs wire.jsonl line 6: cannot render: {NOT_JSON} (hint: {DAMAGED})"]
    findings, markdown = _findings(monkeypatch, capsys, "--routes", "routes.yml")
    assert [f for f in findings if f[0] == "DSH815"] == [("DSH815", 5, 74, 93)]
    assert (f"- **DSH815** warning: loop request 5 is unrendered vs wire.jsonl line 6: cannot render: {NOT_JSON} "
            "— s.jsonl:74 seq 93 request 5") in markdown.splitlines()


# --- c1 with a provider no route serves: refused at the header that names it ---------------------------------------


def _acme(record: dict[str, Any], text: str) -> str:
    """c1's second header (seq 179, line 141) naming provider ``acme``: its requests 9 and 10 have no route."""
    return text.replace('"provider":"anthropic"', '"provider":"acme"', 1) if record.get("seq") == 179 else text


def test_an_unknown_route_is_refused_at_its_header_by_render_and_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _copy(tmp_path, C1, _acme)
    monkeypatch.chdir(tmp_path)
    err = _render_error(monkeypatch, capsys, 9)
    assert [line.split(": request 9 cannot", 1)[0] for line in err] == ["error: s.jsonl:141 seq 179"]
    findings, markdown = _findings(monkeypatch, capsys)
    assert [f for f in findings if f[0] == "DSH815"] == [("DSH815", 9, 141, 179), ("DSH815", 10, 141, 179)]
    assert [line.rsplit(" — ", 1)[1] for line in markdown.splitlines() if line.startswith("- **DSH815**")] == [
        "s.jsonl:141 seq 179 request 9", "s.jsonl:141 seq 179 request 10"]
