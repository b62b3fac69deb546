"""Every command that takes ``--routes`` says, once per session, where the log's context window
contradicts the route file (the log's window is the one used); and the hints about routes name
what each command takes: ``--routes FILE``, ``--adapter NAME`` or, for check, the policy key.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.jsjson import stringify

from test_route_conflicts import CLAUDE_200K, route_file
from test_wire_switch import small_window

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
COMPAT = CORPUS / "live-pi" / "c3-openai-compat"
COMPAT_LOG = COMPAT / "session-logs" / "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016.jsonl"


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """``dsh-audit ARGS`` through the real entry point: (exit code, stdout, stderr), from a folder
    without a pyproject.toml (check's strict default policy)."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)

    def invoke(*args: object) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["dsh-audit", *map(str, args)])
        code = run_guarded(cli)
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def foreign_capture(tmp_path: Path) -> Path:
    """A capture holding one body of another session: nothing of the log is captured."""
    capture = tmp_path / "wire.jsonl"
    sent = stringify({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "Hi."}], "stream": True})
    capture.write_text(json.dumps({"seq": 1, "method": "POST", "path": "/v1/messages", "body": sent,
                                   "headers": {"x-deepseek-harness-session-id": "other"}}) + "\n")
    return capture


def conflicting(tmp_path: Path) -> tuple[Path, str, str]:
    """A claude-sonnet-4-5 session that logged a 16,000-token window, a route file that says
    200,000, and the warning line every command prints."""
    b, _ = small_window(16000)
    seq = next(e["seq"] for e in b.events if e["type"] == "request/context")
    path = b.write_jsonl(tmp_path / "session.jsonl")
    warning = (f"warning: route anthropic/claude-sonnet-4-5: the log records contextWindow 16000 (request/context at "
               f"seq {seq}), the route file (--routes) says 200000; requests that logged their window are rendered "
               "with the log's, the one DSH used")
    return path, route_file(tmp_path, CLAUDE_200K), warning


@pytest.mark.parametrize(("command", "code"), [
    (["render", "{log}", "1"], 0),
    (["diff", "{log}", "--capture", "{capture}"], 1),
    (["check", "{log}", "--capture", "{capture}"], 1),
    (["report", "{log}", "--capture", "{capture}", "-o", "{out}"], 0),
    (["cache", "{log}"], 0),
    (["cache", "{log}", "--jobs", "2"], 0),
    (["usage", "{log}"], 0),
    (["index", "{log}", "--db", "{db}"], 0),
    (["breaks", "{log}"], 0),
    (["explain", "{log}", "1"], 0),
])
def test_each_command_prints_the_window_conflict_once(tmp_path: Path, run: Run, command: list[str],
                                                      code: int) -> None:
    log, routes, warning = conflicting(tmp_path)
    args = [a.format(log=log, capture=foreign_capture(tmp_path), out=tmp_path / "report.html",
                     db=tmp_path / "audit.sqlite") for a in command]
    exit_code, _, err = run(*args, "--routes", routes)
    assert (exit_code, [line for line in err.splitlines() if line.startswith("warning:")]) == (code, [warning])
    # without the route file there is nothing to contradict
    exit_code, _, err = run(*args)
    assert (exit_code, [line for line in err.splitlines() if line.startswith("warning:")]) == (code, [])


def test_check_reports_carry_the_conflict_as_a_note(tmp_path: Path, run: Run) -> None:
    log, routes, warning = conflicting(tmp_path)
    exit_code, out, err = run("check", log, "--capture", foreign_capture(tmp_path), "--routes", routes,
                              "--json-report", "-")
    # once, then check's table and verdict: on stderr beside a report on stdout (session 40)
    assert (exit_code, err.splitlines()[:2], err.count("warning:")) == (1, [warning, "dsh-audit check"], 1)
    assert json.loads(out)["notes"] == [f"{log}: {warning.removeprefix('warning: ')}"]


def gateway(tmp_path: Path) -> tuple[Path, Path]:
    """The sample chat log with its header's provider renamed: nothing shows that route's adapter
    (docs/routes.md, section 9); and a body folder with its loop requests as DeepSeek sent them."""
    text = (Path(__file__).resolve().parents[1] / "sample_logs" / "chat" / "session.jsonl").read_text()
    log = tmp_path / "gateway.jsonl"
    log.write_text(text.replace('"config":{"provider":"deepseek-official"', '"config":{"provider":"my-gateway"'))
    bodies = tmp_path / "bodies"
    bodies.mkdir()
    for index in (1, 2):
        rendered = CliRunner().invoke(cli, ["render", str(log), str(index), "--adapter", "deepseek"])
        assert rendered.exit_code == 0
        (bodies / f"{index}.json").write_bytes(rendered.stdout_bytes)
    return log, bodies


def test_check_names_the_policy_key_where_diff_names_adapter(tmp_path: Path, run: Run) -> None:
    log, bodies = gateway(tmp_path)
    reason = ("cannot render: unknown route: provider 'my-gateway': the log shows no message from its adapter; "
              "pass --routes FILE (DSH's llm-pi-ai route configuration) or ")
    exit_code, out, _ = run("check", log, "--capture", bodies)
    assert exit_code == 1
    # the refusal names no hint of its own: the rule's generic one is the finding's
    hint = (" (hint: give what the message says rendering lacks: --routes FILE (or <home>/cordis.patch.yml in the "
            "DSH home the log was recorded in) for a route the log does not describe, --attachments DIR for a logged "
            "image's bytes, --adapter (or the policy key adapter) for an unknown route)")
    # the two requests' same finding is one line on the terminal (issue 14)
    assert [line for line in out.splitlines() if "DSH815" in line] == [
        f"{log}: DSH815 warning (fails the gate: capture-fail): 2 requests: #1, #2 are unrendered: "
        f"{reason}--adapter (or the policy key adapter){hint}"]
    exit_code, out, _ = run("diff", log, "--capture", bodies, "--json")
    assert exit_code == 1
    assert [json.loads(line)["note"] for line in out.splitlines() if json.loads(line)["index"] == 1] == \
        [f"order (no session header); {reason}--adapter"]


@pytest.mark.skipif(not COMPAT.is_dir(), reason="the live-pi corpus is not beside the project")
def test_a_forced_adapter_mismatch_names_the_option(run: Run) -> None:
    exit_code, _, err = run("render", COMPAT_LOG, "1", "--adapter", "anthropic",
                            "--routes", COMPAT / "inputs" / "pi-ai-routes.patch.yml")
    assert (exit_code, err) == (2, (
        f"error: {COMPAT_LOG}:12 seq 10: local-openai/local-coder speaks openai-completions, not anthropic-messages "
        "(hint: render openai-completions routes with --adapter openai)\n"))


@pytest.mark.skipif(not COMPAT.is_dir(), reason="the live-pi corpus is not beside the project")
def test_diff_keeps_the_routes_hint_when_model_facts_are_missing(run: Run) -> None:
    exit_code, out, _ = run("diff", COMPAT / "session-logs", "--capture", COMPAT / "wire.jsonl", "--json")
    facts = ("cannot render: no pi-ai model facts for local-openai/local-coder: a hand-declared route's models are "
             "described by DSH's route configuration, which the log does not record (hint: pass --routes FILE "
             "(DSH's llm-pi-ai route configuration), or record the log in a DSH home (<home>/sessions/...) and declare "
             "the route in <home>/cordis.patch.yml, read when no --routes is given)")  # session-logs/: in no home
    assert (exit_code, [(json.loads(line)["verdict"], json.loads(line)["note"]) for line in out.splitlines()]) == \
        (1, [("unrendered", f"order (no session header); {facts}")] * 6)
