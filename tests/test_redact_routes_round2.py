"""``dsh-audit redact`` and routes, round 2 (issue 17): requests it cannot render are said and recorded,
never claimed unchanged; a capture no render explains is redacted as the log renders (a tool schema's
enum value the log kept elsewhere as a structural value); captures are paired by route, as ``diff``
and ``check`` pair them; ``--keep tools`` with ``--redact-tool-names`` is refused.

The corpus tests (live-pi c3, a hand-declared ``openai-completions`` route, and every live/ and live-pi/
session with its capture) skip when ``../shared/corpus`` is absent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke, short_salt

import dsh_audit.redact._bodies as bodies_module
from dsh_audit.capture import CapturedRequest, align, compare_capture, load_capture
from dsh_audit.errors import UsageError
from dsh_audit.redact import Placeholders, Redactor, check_bundle, redact, session_verdicts
from dsh_audit.redact._bodies import LogRedactor, redact_body
from dsh_audit.redact._verdicts import digest
from dsh_audit.session import Session, open_session, route_renderer, routes_from

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
C3_ROUTES = C3 / "inputs" / "pi-ai-routes.patch.yml"
needs_corpus = pytest.mark.skipif(not C3.is_dir(), reason="../shared/corpus is absent")
SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs" / "chat" / "session.jsonl"
C3_NOTE = ("warning: 6 request(s) cannot be rendered without DSH's route configuration: give redact --routes FILE to "
           "bundle it redacted; without it their diff verdicts compared nothing, so the redacted capture is not proven "
           "to match the redacted log")


def _c3_log() -> Path:
    return next((C3 / "session-logs").glob("*.jsonl"))


def _diff_rows(log: Path, capture: Path, routes: Path | None) -> list[tuple[Any, ...]]:
    """What ``dsh-audit diff LOG --capture CAPTURE [--routes FILE]`` finds, row by row."""
    session = open_session(log, foreign=False)
    if routes is not None:
        session.use_routes(routes_from(str(routes)))
    rows = compare_capture(session.requests, load_capture(capture), render=route_renderer([session]),
                           routes=lambda r: session.route(r).api if session.route(r).adapter else None)
    return [(None if row.request is None else row.request.index, None if row.capture is None else row.capture.position,
             row.verdict, None if row.diff is None else row.diff.first_offset,
             None if row.diff is None else [d.path for d in row.diff.differences]) for row in rows]


# --- 1. unrendered requests: said, recorded, and their redacted bodies still render as the log does ----------


@needs_corpus
def test_redact_without_routes_says_what_it_could_not_render_and_the_manifest_records_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    code, text, err = invoke(monkeypatch, capsys, "redact", str(_c3_log()), "-o", str(out),
                             "--capture", str(C3 / "wire.jsonl"), "--salt", "s1")
    assert (code, err) == (0, [C3_NOTE, short_salt("s1")])
    assert text == (f"wrote {out} (format v0, plain): 206 content string(s) replaced in the log, "
                    "677 more in the capture\n"
                    f"wrote {tmp_path / 'wire.jsonl'}: auth headers dropped: none\n"
                    f"wrote {out}.manifest.json\n"
                    "secrets removed: none found\n"
                    "verdicts of requests, breaks, cache: unchanged; diff: unchanged, but 6 captured request(s) "
                    "unrendered, not compared (see the warning)\n"
                    f"a recipient verifies it with: dsh-audit redact --check {out}\n"
                    "and audits it without its capture (check would report its 6 unrendered request(s), DSH815): "
                    f"dsh-audit check {out} --no-capture\n")
    manifest = json.loads((tmp_path / "out.jsonl.manifest.json").read_text("utf-8"))
    assert (manifest["routes"], manifest["unrendered"]) == (False, {"count": 6, "requests": [0, 1, 2, 3, 4, 5]})
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out)) == (  # never a plain OK (session 38)
        0, "requests: match (6 request(s))\nbreaks: match (6 request(s), 0 break(s))\ncache: match (6 request(s))\n"
           "diff: match (6 diff row(s))\nOK for requests, breaks, cache and 0 of 6 captured request(s), 6 unrendered: "
           "not compared (the bundle needs redact --routes FILE: see the warning)\n",
        [f"warning: 6 of the 6 captured request(s) of {out} unrendered: their diff verdicts compared no rendered body, "
         "so its capture is not proven to match its log; the bundle carries no route configuration (redacted without "
         "--routes): ask its sender to redact it again with --routes FILE (DSH's llm-pi-ai route configuration), "
         "which the bundle then carries redacted"])


@needs_corpus
def test_a_bundle_made_without_routes_renders_with_them_as_the_original_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The defect: ``check`` of the bundle with --routes found 5 x DSH811 different
    (``tools[0].function.parameters.properties.sandbox_permissions.enum[0]``...): "workspace-write" is
    kept in the log as a structural value (``"mode"``, ``"preset"``) and replaced as the tool schema's
    enum value, and the unrendered captured body kept it because it was kept elsewhere."""
    result = redact(_c3_log(), tmp_path / "out.jsonl", capture=C3 / "wire.jsonl", salt="s1")
    assert result.mismatched == () and len(result.unrendered) == 6
    original = _diff_rows(_c3_log(), C3 / "wire.jsonl", C3_ROUTES)
    assert [row[2] for row in original] == ["identical"] * 6
    assert result.capture == tmp_path / "wire.jsonl"
    assert _diff_rows(result.output, result.capture, C3_ROUTES) == original
    code, text, err = invoke(monkeypatch, capsys, "check", str(result.output), "--capture",
                             str(result.capture), "--routes", str(C3_ROUTES))
    assert (code, err, text.splitlines()[-1]) == (  # its title call is priced from the capture
        0, ["note: 1 request(s) priced from the capture's usage (their log holds none)"], "PASSED: 1 log(s), 6 request(s), 0 error(s), 0 warning(s), 0 info, 0 failing (policy: defaults)")


@needs_corpus
def test_redact_with_routes_renders_every_request_and_claims_every_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    code, text, err = invoke(monkeypatch, capsys, "redact", str(_c3_log()), "-o", str(out), "--capture",
                             str(C3 / "wire.jsonl"), "--salt", "s1", "--routes", str(C3_ROUTES))
    assert (code, err) == (0, [short_salt("s1")])
    assert text.splitlines()[-3] == "verdicts of requests, breaks, cache, diff: unchanged"
    manifest = json.loads((tmp_path / "out.jsonl.manifest.json").read_text("utf-8"))
    assert (manifest["routes"], manifest["unrendered"]) == (True, {"count": 0, "requests": []})
    assert _diff_rows(out, tmp_path / "wire.jsonl", C3_ROUTES) == _diff_rows(_c3_log(), C3 / "wire.jsonl", C3_ROUTES)


def test_a_text_the_log_kept_and_replaced_is_redacted_by_where_it_stands_in_an_unrendered_body() -> None:
    redactor = LogRedactor(Placeholders(b"salt"))
    log = redactor.record({"type": "x", "mode": "workspace-write",
                           "tools": [{"parameters": {"enum": ["workspace-write", "danger-full-access"]}}]})
    assert log["mode"] == "workspace-write"
    enum = redactor.placeholders.text("workspace-write")
    assert log["tools"][0]["parameters"]["enum"][0] == enum != "workspace-write"
    redactor.reading_log = False
    body = b'{"mode":"workspace-write","tools":[{"parameters":{"enum":["workspace-write"]}}],"x":"workspace-write"}'
    assert redact_body(body, redactor, {}, {}) == (
        b'{"mode":"workspace-write","tools":[{"parameters":{"enum":["' + enum.encode() + b'"]}}],"x":"'
        + enum.encode() + b'"}')
    # a text the log only replaced is replaced wherever it stands
    assert redact_body(b'{"reasoning":{"effort":"danger-full-access"}}', redactor, {}, {}) == (
        b'{"reasoning":{"effort":"' + redactor.placeholders.text("danger-full-access").encode() + b'"}}')
    # a text the log only kept stays wherever it stands (a structural value under a key the wire names
    # otherwise: OpenAI Responses' ``reasoning.effort``), as before
    kept_only = LogRedactor(Placeholders(b"salt"))
    kept_only.record({"type": "x", "reasoningEffort": "medium"})
    kept_only.reading_log = False
    assert redact_body(b'{"reasoning":{"effort":"medium"}}', kept_only, {}, {}) == b'{"reasoning":{"effort":"medium"}}'


def test_a_kept_part_keeps_a_text_the_log_also_replaced_elsewhere() -> None:
    redactor = LogRedactor(Placeholders(b"salt"), keep=frozenset({"tools"}))
    log = redactor.record({"type": "x", "tools": [{"enum": ["pending"]}], "text": "pending"})
    new = redactor.placeholders.text("pending")
    assert (log["tools"][0]["enum"][0], log["text"]) == ("pending", new)
    redactor.reading_log = False
    assert redact_body(b'{"tools":[{"enum":["pending"]}],"messages":[{"content":"pending"}]}', redactor, {}, {}) == (
        b'{"tools":[{"enum":["pending"]}],"messages":[{"content":"' + new.encode() + b'"}]}')


def test_a_plain_redactor_keeps_what_the_log_kept_wherever_it_stands() -> None:
    """Without :class:`LogRedactor` nothing says the log replaced a kept text too: it stays (the rule
    before, for callers of :func:`redact_body` with their own :class:`Redactor`)."""
    redactor = Redactor(Placeholders(b"salt"))
    redactor.record({"type": "x", "mode": "workspace-write", "enum": ["workspace-write"]})
    assert redact_body(b'{"enum":["workspace-write"]}', redactor, {}, {}) == b'{"enum":["workspace-write"]}'


# --- 2. contradictory options ----------------------------------------------------------------------------


def test_keep_tools_with_redact_tool_names_is_refused_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    assert invoke(monkeypatch, capsys, "redact", str(SAMPLE), "-o", str(out), "--keep", "tools",
                  "--redact-tool-names") == (
        2, "", ["error: --keep tools and --redact-tool-names contradict each other (the tools kept verbatim hold "
                "their names) (hint: drop one of them)"])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(UsageError, match="^--keep tools and --redact-tool-names contradict each other"):
        redact(SAMPLE, out, keep=("tools",), tool_names=False)
    # each alone is fine
    assert invoke(monkeypatch, capsys, "redact", str(SAMPLE), "-o", str(out), "--keep", "tools", "--salt", "s")[0] == 0
    assert json.loads(Path(f"{out}.manifest.json").read_text("utf-8"))["kept"] == ["tools", "tool names"]
    assert invoke(monkeypatch, capsys, "redact", str(SAMPLE), "-o", str(out), "--force", "--redact-tool-names",
                  "--salt", "s")[0] == 0
    assert json.loads(Path(f"{out}.manifest.json").read_text("utf-8"))["kept"] == []


# --- 3. pairing by route ---------------------------------------------------------------------------------


def _stray_and_sent(tmp_path: Path) -> tuple[Session, Path]:
    """A one-request DeepSeek session (no assistant message shows its route yet) and a capture without
    DSH's session header: first a stray ``/v1/messages`` send of the same model, then the request's own."""
    session = open_session(chat_log(tmp_path / "in" / "session.jsonl", "pair-by-route"))
    body = route_renderer([session])(session.requests[0], {})
    stray = json.dumps({"model": json.loads(body)["model"], "max_tokens": 64,
                        "messages": [{"role": "user", "content": "Hi"}]}).encode()
    wire = tmp_path / "in" / "wire.jsonl"
    wire.write_text("".join(json.dumps({"method": "POST", "path": path, "headers": {}, "body": b.decode()}) + "\n"
                            for path, b in (("/v1/messages", stray), ("/chat/completions", body))), "utf-8")
    return session, wire


def test_redact_verdicts_pair_captures_by_route_as_diff_does(tmp_path: Path) -> None:
    session, wire = _stray_and_sent(tmp_path)
    captures = load_capture(wire)
    # by what the log's messages show, the request's route is unknown and it takes the first send
    assert [(p.request is not None, p.capture.position if p.capture else None) for p in align(session.requests, captures)] == [
        (True, 0), (False, 1)]
    assert session_verdicts(session, captures)["diff"] == [
        [0, 1, "loop", "identical", None, [], []], [None, 0, "loop", "unmatched", None, None, None]]
    (tmp_path / "out").mkdir()
    result = redact(session.path, tmp_path / "out" / "session.jsonl", capture=wire, salt="s")
    assert result.mismatched == ()
    check = check_bundle(result.output)
    assert check.ok and check.found["diff"] == digest(session_verdicts(session, captures)["diff"])


def test_the_capture_rewriting_pairs_by_route_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session, wire = _stray_and_sent(tmp_path)
    given: list[list[str | None]] = []

    def spy(requests: Sequence[Any], captures: Sequence[CapturedRequest], *,
            routes: Callable[[Any], str | None] | None = None) -> Any:
        given.append([None if routes is None else routes(r) for r in requests])
        return align(requests, captures, routes=routes)

    monkeypatch.setattr(bodies_module, "align", spy)
    (tmp_path / "out").mkdir()
    result = redact(session.path, tmp_path / "out" / "session.jsonl", capture=wire, salt="s")
    assert given == [["deepseek-chat-completions"]]
    redacted = open_session(result.output)
    assert load_capture(tmp_path / "out" / "wire.jsonl")[1].body == route_renderer([redacted])(redacted.requests[0], {})


# --- every corpus session with its capture ------------------------------------------------------------


def _corpus_sessions() -> list[tuple[Path, Path, Path | None]]:
    if not C3.is_dir():
        return []
    found: list[tuple[Path, Path, Path | None]] = []
    for folder in sorted([*(CORPUS / "live").iterdir(), *(CORPUS / "live-pi").iterdir()]):
        for log in sorted((folder / "session-logs").glob("*.jsonl")) if (folder / "wire.jsonl").is_file() else ():
            found.append((log, folder / "wire.jsonl", None))
            if folder == C3:
                found.append((log, folder / "wire.jsonl", C3_ROUTES))
    return found


@needs_corpus
@pytest.mark.parametrize("log,capture,routes", _corpus_sessions(),
                         ids=lambda v: v.parent.parent.name + "/" + v.name[:16] if isinstance(v, Path) else str(v))
def test_every_corpus_session_keeps_its_verdicts_with_its_capture(tmp_path: Path, log: Path, capture: Path,
                                                                   routes: Path | None) -> None:
    result = redact(log, tmp_path / log.name, capture=capture, salt="corpus", routes=routes, alone=True)
    assert result.mismatched == ()
    check = check_bundle(result.output, routes=routes)
    assert (check.ok, sorted(check.found)) == (True, ["breaks", "cache", "diff", "requests"])
    # the redacted pair diffs as the original pair, with the route file too when there is one
    for config in {routes, C3_ROUTES if log.parent.parent == C3 else None}:
        assert _diff_rows(result.output, tmp_path / "wire.jsonl", config) == \
            _diff_rows(log, capture, config)
