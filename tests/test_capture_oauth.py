"""A capture sent with an Anthropic OAuth key (issue 12): ``diff`` names the route setting.

pi-ai writes another body for an OAuth key (``dsh_audit.wire._anthropic_oauth``), and the log does
not record the key: rendered for an API key, an OAuth capture is ``different``, never without the
hint that renders it (``dshAudit: {keyType: oauth}`` in the route file), and with the setting it
is ``identical``. The captures are pi-ai 0.82.1's own requests (``tests/data/piai_oracle/oauth``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import invoke

CASE = Path(__file__).parent / "data" / "piai_oracle" / "oauth" / "oauth-tools.json"
NOTE = ("order (no session header); sent with another Anthropic key type (hint: the capture was sent with an "
        "Anthropic OAuth token (the Claude Code identity block, anthropic-beta oauth-2025-04-20), rendered for an API "
        "key: give --routes FILE the route's `dshAudit: {keyType: oauth}`, or record the log in a DSH home "
        "(<home>/sessions/...) and declare the route in <home>/cordis.patch.yml, read when no --routes is given)")


def _write(tmp_path: Path) -> tuple[Path, Path, Path]:
    record = json.loads(CASE.read_text("utf-8"))
    log = tmp_path / "session.jsonl"
    log.write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps({"seq": i + 1, "method": q["method"], "path": q["path"],
                                        "headers": dict(q["headers"]), "body": q["body"]}) + "\n"
                            for i, q in enumerate(record["requests"]) if q["kind"] == "loop"), "utf-8")
    routes = tmp_path / "routes.yml"
    routes.write_text("providers:\n  anthropic:\n    dshAudit:\n      keyType: oauth\n", "utf-8")
    return log, wire, routes


def test_an_oauth_capture_is_rendered_for_its_key_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The capture's key type wins (docs/routes.md section 7.2); with --adapter forcing the API-key
    rendering, each request is ``different`` with the hint, and the route file's setting settles it."""
    log, wire, routes = _write(tmp_path)

    def loop_rows(*options: str) -> tuple[int, list[tuple[int, str, str]]]:
        code, out, _ = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json", *options)
        rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return code, [(r["index"], r["verdict"], r["note"]) for r in rows if r["kind"] == "loop"]

    assert loop_rows() == (0, [(i, "identical", "order (no session header); OAuth key from capture")
                               for i in (0, 1, 2, 4, 6)])
    assert loop_rows("--adapter", "anthropic") == (1, [(i, "different", NOTE) for i in (0, 1, 2, 4, 6)])
    assert loop_rows("--adapter", "anthropic", "--routes", str(routes)) == (
        0, [(i, "identical", "order (no session header)") for i in (0, 1, 2, 4, 6)])