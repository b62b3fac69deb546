"""Redacting a session whose capture was sent with an Anthropic OAuth key (issue 12).

The capture's bodies carry pi-ai's Claude Code identity block, a constant no log holds: ``redact``
renders each request for the capture's key type, as ``diff`` does, so the block stays itself and the
redacted copy keeps its verdicts (``tests/data/piai_oracle/oauth``: pi-ai 0.82.1's own requests).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import invoke
from test_capture_oauth import _write

IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."


def test_an_oauth_capture_redacts_with_its_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    log, wire, _ = _write(tmp_path)
    out = tmp_path / "out"
    code, _, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--capture", str(wire))
    assert code == 0, err
    records = (tmp_path / "out.wire.jsonl").read_text("utf-8").splitlines()
    bodies = [json.loads(json.loads(line)["body"]) for line in records]
    assert [b["system"][0]["text"] for b in bodies] == [IDENTITY] * 5
    assert all(b["system"][1]["text"] != "You are a helpful coding agent." for b in bodies)
    code, out_text, _ = invoke(monkeypatch, capsys, "diff", str(out), "--capture", str(tmp_path / "out.wire.jsonl"),
                               "--json")
    rows = [json.loads(line) for line in out_text.splitlines() if line.startswith("{")]
    assert code == 0
    assert [(r["index"], r["verdict"]) for r in rows if r["kind"] == "loop"] == [
        (i, "identical") for i in (0, 1, 2, 4, 6)]


ORACLE = Path(__file__).parent / "data" / "piai_oracle" / "oauth"


def _case(tmp_path: Path, case: str) -> tuple[Path, Path, Path, dict[str, object]]:
    """A pi-ai OAuth oracle case as a log, its loop requests' capture and its route file (which
    says ``dshAudit: {keyType: oauth}``), each original in a folder of its own."""
    record = json.loads((ORACLE / f"{case}.json").read_text("utf-8"))
    folder = tmp_path / "original"
    folder.mkdir()
    log, wire, routes = folder / "session.jsonl", folder / "wire.jsonl", folder / "routes.yml"
    log.write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    wire.write_text("".join(json.dumps({"seq": i + 1, "method": q["method"], "path": q["path"],
                                        "headers": dict(q["headers"]), "body": q["body"]}) + "\n"
                            for i, q in enumerate(record["requests"]) if q["kind"] == "loop"), "utf-8")
    routes.write_text(json.dumps(record["routes"]), "utf-8")
    return log, wire, routes, record["routes"]


def _verdicts(report: str) -> tuple[object, ...]:
    """What a ``check --json`` report says of its one session, without the file names it holds."""
    document = json.loads(report)
    session = document["sessions"][0]
    return (document["passed"], document["counts"], session["capture_verdicts"], session["breaks"],
            session["break_details"], session["cache"], session["cost"]["tokens"],
            [(f["rule"], f["severity"]) for f in document["findings"]])


@pytest.mark.parametrize(("case", "requests", "breaks"), [("oauth-gateway", 5, 0), ("oauth-tools", 7, 1)])
def test_an_oauth_bundle_keeps_its_key_type_and_checks_as_the_original(
        case: str, requests: int, breaks: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 12: the bundle's route file keeps each route's ``dshAudit: {keyType}``, so the redacted
    copy renders for an OAuth key as the original does (without it, its cache verdicts, estimated
    from bodies rendered for an API key, differ); ``check``, ``cache`` and ``redact --check`` on the
    bundle say what they say on the original."""
    log, wire, routes, config = _case(tmp_path, case)
    out = tmp_path / "bundle" / "session.jsonl"
    out.parent.mkdir()
    code, text, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--capture", str(wire),
                             "--routes", str(routes), "--salt", "s37")
    assert code == 0, err
    assert "verdicts of requests, breaks, cache, diff: unchanged" in text + "\n".join(err)
    bundle_routes = out.parent / "session.jsonl.routes.yml"
    written = json.loads(bundle_routes.read_text("utf-8"))["providers"]
    assert {name: route.get("dshAudit") for name, route in written.items()} == {
        name: {"keyType": "oauth"} for name in config["providers"]}  # type: ignore[index]
    code, text, err = invoke(monkeypatch, capsys, "redact", "--check", str(out))
    assert (code, text.splitlines()) == (0, [
        f"requests: match ({requests} request(s))", f"breaks: match ({requests} request(s), {breaks} break(s))",
        f"cache: match ({requests} request(s))", f"diff: match ({requests} diff row(s))",
        f"OK: every verdict of {out} matches its manifest"])
    bundle_wire = out.parent / "wire.jsonl"
    reports = []
    for args in ((str(log), "--capture", str(wire), "--routes", str(routes)),
                 (str(out), "--capture", str(bundle_wire), "--routes", str(bundle_routes))):
        code, text, _ = invoke(monkeypatch, capsys, "check", *args, "--json", "--no-pager")
        reports.append((code, _verdicts(text)))
    assert reports[0] == reports[1]
    timelines = []
    for args in ((str(log), "--routes", str(routes)), (str(out), "--routes", str(bundle_routes))):
        code, text, _ = invoke(monkeypatch, capsys, "cache", *args, "--json")
        timelines.append((code, json.loads(text)["timeline"]))
    assert timelines[0] == timelines[1]
    assert timelines[0][1][0]["counted_tokens"] > 0
