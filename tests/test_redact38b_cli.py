"""Session 38, with the CLI patch (/tmp/b38/redact2/cli_redact.patch): redact's summary names the identifying
headers it pseudonymised; ``redact --check`` of a proven bundle still says a plain OK."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from _cli import invoke
from _golden import CORPUS

from dsh_audit.capture import find_capture
from dsh_audit.redact._staging import output_targets

C_CHANGE = CORPUS / "live" / "c-change"
needs_corpus = pytest.mark.skipif(not C_CHANGE.is_dir(), reason="../shared/corpus is absent")
#: Session 42b: a salt given shorter than 16 characters is warned of, once a bundle is written (never the salt).
SHORT_SALT = ("warning: the salt given is 1 character(s) long: a short salt is recovered from any known text of the "
              "bundle by trying every salt of its length (one scrypt a guess), and undoes every "
              "placeholder: give a long random one, e.g. `openssl rand -hex 16`")


@needs_corpus
def test_the_summary_names_the_pseudonymised_headers_and_a_proven_bundle_checks_ok(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cc.jsonl"
    code, text, err = invoke(monkeypatch, capsys, "redact", str(next((C_CHANGE / "session-logs").glob("*.jsonl"))),
                             "-o", str(out), "--capture", str(C_CHANGE / "wire.jsonl"), "--salt", "s")
    assert (code, err) == (0, [SHORT_SALT])
    assert text.splitlines()[1] == (f"wrote {tmp_path / 'wire.jsonl'}: auth headers dropped: none; identifying "
                                    "headers pseudonymised: x-deepseek-harness-user-id")
    assert text.splitlines()[-1] == f"and audits it with: dsh-audit check {out} --capture {tmp_path / 'wire.jsonl'}"
    # session 42: the capture lies where the views find the copy's, so it prices as the original, no option given
    # (as OUT.wire.jsonl, usage priced the title request ≥$0.0111, its usage unknown)
    costs = []
    for log in (next((C_CHANGE / "session-logs").glob("*.jsonl")), out):
        code, usage, err = invoke(monkeypatch, capsys, "usage", "--json", str(log))
        assert (code, err) == (0, ["note: 1 request(s) priced from the capture's usage (their log holds none)"])
        costs.append({k: v for k, v in json.loads(usage)["totals"].items() if k != "key"})
    assert costs[0] == costs[1] and (costs[1]["cost_usd"]["total"], costs[1]["cost_complete"]) == (0.01109977, True)
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out)) == (
        0, "requests: match (8 request(s))\nbreaks: match (8 request(s), 5 break(s))\ncache: match (8 request(s))\n"
           f"diff: match (8 diff row(s))\nOK: every verdict of {out} matches its manifest\n", [])


@needs_corpus
def test_a_capture_written_where_the_originals_views_look_goes_beside_the_manifest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Session 42b: ``work/wire.jsonl`` (OUTPUT's folder, one above the log's) became the original log's capture
    (``check`` on it then failed DSH811); the closing line named no ``sessions``, which prices the copy too."""
    log = tmp_path / "work" / "logs" / "session.jsonl"
    log.parent.mkdir(parents=True)
    shutil.copyfile(next((C_CHANGE / "session-logs").glob("*.jsonl")), log)
    out, capture = tmp_path / "work" / "red.jsonl", tmp_path / "work" / "red.jsonl.wire.jsonl"
    monkeypatch.setenv("DSH_AUDIT_REDACT_SALT", "0123456789abcdef")  # 16 characters: no warning
    code, text, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--capture",
                             str(C_CHANGE / "wire.jsonl"))
    assert (code, err) == (0, [])
    assert text.splitlines()[1].startswith(f"wrote {capture}: ")
    assert text.splitlines()[-1] == (
        f"and prices it as the original with: --capture {capture} for each of breaks --accounting, cache, explain, "
        "index, report, requests, sessions, usage and watch (they do not find that capture by themselves)")
    assert sorted(os.listdir(out.parent)) == ["logs", "red.jsonl", "red.jsonl.manifest.json", "red.jsonl.wire.jsonl"]
    assert find_capture(log) is None  # the original's views are untouched


@pytest.mark.parametrize(("up", "beside"), [(0, False), (1, False), (4, False), (5, True), (-1, True)])
def test_the_default_capture_is_wire_jsonl_only_out_of_the_originals_capture_search(tmp_path: Path, up: int,
                                                                                     beside: bool) -> None:
    """Its folder is none of the log's folder and the 4 above it (``capture/_find.py``): ``up`` folders above the
    log's (-1: a sibling folder of the log's)."""
    log = tmp_path / "1" / "2" / "3" / "4" / "5" / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"")
    folder = log.parent.parents[up - 1] if up > 0 else log.parent if up == 0 else tmp_path / "1" / "2" / "3" / "4" / "x"
    folder.mkdir(exist_ok=True)
    source = tmp_path / "in" / "wire.jsonl"  # the capture redacted, out of the way
    source.parent.mkdir()
    source.write_bytes(b"")
    capture = output_targets((log, source, None), folder / "r.jsonl", None, force=False, routed=False)[2]
    assert capture == (folder / "wire.jsonl" if beside else folder / "r.jsonl.wire.jsonl")
