"""``redact --routes FILE`` and ``redact --check --routes FILE`` from the command line, and a salt
variable that is set but empty (click takes an empty variable as unset: it was a random salt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import invoke, short_salt

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
needs_corpus = pytest.mark.skipif(not C3.is_dir(), reason="../shared/corpus is absent")


@needs_corpus
def test_a_hand_declared_route_is_redacted_and_checked_with_its_route_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((C3 / "session-logs").glob("*.jsonl"))
    routes = str(C3 / "inputs" / "pi-ai-routes.patch.yml")
    out = tmp_path / "out.jsonl"
    code, text, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--routes", routes,
                             "--salt", "s1")
    assert (code, err) == (0, [f"note: the capture {C3 / 'wire.jsonl'}, which `check` finds for this log, was not "
                               f"redacted: pass --capture {C3 / 'wire.jsonl'} to include it", short_salt("s1")])
    assert text.endswith(f"verdicts of requests, breaks, cache: unchanged (the log alone, without the capture beside "
                         f"it)\n"
                         f"a recipient verifies it with: dsh-audit redact --check {out}\n"
                         f"and audits it with: dsh-audit check {out} --routes {out}.routes.yml\n")
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out), "--routes", routes) == (
        0, "requests: match (6 request(s))\nbreaks: match (6 request(s), 0 break(s))\ncache: match (6 request(s))\n"
           f"OK: every verdict of {out} matches its manifest\n", [])
    # the bundle carries the route file, redacted: the recipient checks it with nothing else
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out)) == (
        0, "requests: match (6 request(s))\nbreaks: match (6 request(s), 0 break(s))\ncache: match (6 request(s))\n"
           f"OK: every verdict of {out} matches its manifest\n",
        [f"note: rendered with the bundle's redacted route configuration {out}.routes.yml"])


def test_an_empty_salt_variable_is_refused_not_a_random_salt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_REDACT_SALT", "")
    log = Path(__file__).resolve().parent.parent / "sample_logs" / "chat" / "session.jsonl"
    out = tmp_path / "out.jsonl"
    assert invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out)) == (
        2, "", ["error: DSH_AUDIT_REDACT_SALT is set but empty (hint: give it a non-empty salt, or unset it for a "
                "random one)"])
    assert not out.exists()


@needs_corpus
def test_redacting_a_hand_declared_route_without_its_route_file_says_the_capture_is_unproven(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --routes every request is unrendered on both sides, so the verdicts match but prove
    nothing of the capture: redact says so (how many, why, the flag). (Updated, session 29: the note
    said the recipient may see the redacted pair differ once rendered, which was the defect of issue
    17 that tests/test_redact_routes_round2.py now checks is gone.)"""
    log = next((C3 / "session-logs").glob("*.jsonl"))
    code, _, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "out.jsonl"),
                          "--capture", str(C3 / "wire.jsonl"), "--salt", "s1")
    assert (code, err) == (0, [  # a warning, not a note (session 38): the bundle is unproven; one line (session 40)
        "warning: 6 request(s) cannot be rendered without DSH's route configuration: give redact --routes FILE to "
        "bundle it redacted; without it their diff verdicts compared nothing, so the redacted capture is not proven "
        "to match the redacted log", short_salt("s1")])
