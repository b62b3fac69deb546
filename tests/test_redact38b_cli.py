"""Session 38, with the CLI patch (/tmp/b38/redact2/cli_redact.patch): redact's summary names the identifying
headers it pseudonymised; ``redact --check`` of a proven bundle still says a plain OK."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import invoke
from _golden import CORPUS

C_CHANGE = CORPUS / "live" / "c-change"
needs_corpus = pytest.mark.skipif(not C_CHANGE.is_dir(), reason="../shared/corpus is absent")


@needs_corpus
def test_the_summary_names_the_pseudonymised_headers_and_a_proven_bundle_checks_ok(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cc.jsonl"
    code, text, err = invoke(monkeypatch, capsys, "redact", str(next((C_CHANGE / "session-logs").glob("*.jsonl"))),
                             "-o", str(out), "--capture", str(C_CHANGE / "wire.jsonl"), "--salt", "s")
    assert (code, err) == (0, [])
    assert text.splitlines()[1] == (f"wrote {out}.wire.jsonl: auth headers dropped: none; identifying headers "
                                    "pseudonymised: x-deepseek-harness-user-id")
    assert text.splitlines()[-1] == f"and audits it with: dsh-audit check {out} --capture {out}.wire.jsonl"
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out)) == (
        0, "requests: match (8 request(s))\nbreaks: match (8 request(s), 5 break(s))\ncache: match (8 request(s))\n"
           f"diff: match (8 diff row(s))\nOK: every verdict of {out} matches its manifest\n", [])
