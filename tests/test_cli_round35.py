"""Issue 14's leftovers (session 35): ``--adapter`` on every command that renders a body (issue 12:
the route comes from the log, ``--adapter`` forces one), ``diff --since/--until/--jobs``, another
agent's log selected by ``--since`` and imported once, and a watch that looks at each file once a look.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from _cli import invoke
from _copy_log import copy_as
from dsh_audit.cli import cli
from dsh_audit.testing import LogBuilder
from test_piai_images import reply

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
DATA = Path(__file__).resolve().parent / "data" / "importers"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, standalone_mode=False)
    return result.return_value, result.stdout, result.stderr


# -- 1. --adapter forces one wire format on check, report, cache, breaks and explain -----------------

def _contradicted(tmp_path: Path) -> tuple[Path, Path]:
    """A pi-ai chat on provider ``openai`` whose envelope names ``google-vertex``: its route is
    unknown (the log contradicts pi-ai's catalog), so no body is rendered without --adapter; and a
    capture holding what ``--adapter responses`` renders for it."""
    b = LogBuilder(session_id="s-pi", provider="openai", model="gpt-4o", system="Sys.", tools=[],
                   reasoning_effort=None, max_tokens=1000, adapter_defaults={"maxTokens": True})
    with b.turn("Hi."), b.step():
        reply(b, "openai", "gpt-4o", "google-vertex", "Hello.")
    log = tmp_path / "s" / "session.jsonl"
    b.write_jsonl(log, packed=False)
    code, body, _ = _run("render", str(log), "0", "--adapter", "responses")
    assert code == 0
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps({"method": "POST", "path": "/responses", "body": body,
                                "headers": {"x-deepseek-harness-session-id": "s-pi"}}) + "\n", encoding="utf-8")
    return log, wire


def test_cache_renders_the_bodies_in_the_format_adapter_forces(tmp_path: Path) -> None:
    log, wire = _contradicted(tmp_path)

    def timeline(*args: str) -> list[tuple[Any, ...]]:
        code, out, err = _run("cache", str(log), "--capture", str(wire), "--json", *args)
        assert (code, err) == (0, "")
        return [(v["index"], v["prompt_source"], v["counted_tokens"]) for v in json.loads(out)["timeline"]]

    assert timeline() == [(0, "json", 34)]  # unknown route: the log's JSON is measured
    assert timeline("--adapter", "responses") == [(0, "wire:responses", 25)]
    assert timeline("--adapter", "auto") == timeline()
    assert "DSH_AUDIT_ADAPTER" not in os.environ  # set for the command only


@pytest.mark.parametrize("command", ["check", "report"])
def test_check_and_report_render_with_adapter_over_the_policy(command: str, tmp_path: Path) -> None:
    log, wire = _contradicted(tmp_path)
    page = tmp_path / "page.html"
    extra = ["--json"] if command == "check" else ["-o", str(page)]
    code, out, _ = _run(command, str(log), "--capture", str(wire), *extra)
    if command == "check":
        rules = [f["rule"] for s in json.loads(out)["sessions"] for f in s["findings"]]
        assert (code, rules) == (1, ["DSH815"])  # unrendered: unknown route
    assert "unknown route" in (out if command == "check" else page.read_text(encoding="utf-8"))
    code, out, _ = _run(command, str(log), "--capture", str(wire), "--adapter", "responses", *extra)
    if command == "check":
        assert (code, [f["rule"] for s in json.loads(out)["sessions"] for f in s["findings"]]) == (0, [])
    else:
        assert code == 0 and "unknown route" not in page.read_text(encoding="utf-8")
    policy = tmp_path / "policy.toml"
    policy.write_text('adapter = "openai"\n', encoding="utf-8")
    if command == "check":  # the policy's format, which this model does not speak; --adapter typed wins over it
        code, out, _ = _run(command, str(log), "--capture", str(wire), "--policy", str(policy), *extra)
        assert (code, [(f["rule"], f["message"].rpartition(": ")[2]) for s in json.loads(out)["sessions"]
                       for f in s["findings"]]) == (1, [("DSH815", "openai/gpt-4o speaks openai-responses, not "
                                                                   "openai-completions")])
        code, out, _ = _run(command, str(log), "--capture", str(wire), "--policy", str(policy),
                            "--adapter", "responses", *extra)
        assert (code, [f["rule"] for s in json.loads(out)["sessions"] for f in s["findings"]]) == (0, [])


def test_breaks_and_explain_take_adapter_and_leave_the_environment_as_it_was(tmp_path: Path) -> None:
    log, _ = _contradicted(tmp_path)
    for args in (["breaks", str(log), "--all", "--json"], ["explain", str(log), "0", "--json"]):
        assert _run(*args, "--adapter", "openai") == _run(*args)  # the first request: nothing to render
        assert "DSH_AUDIT_ADAPTER" not in os.environ


def test_a_route_decision_reads_the_adapter_the_command_forces(monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_audit.session import ADAPTER_APIS, request_route, route_for
    from dsh_audit.session._routes import ADAPTER_ENV, forced_adapter

    request = type("R", (), {"kind": "loop", "header": {"config": {"provider": "my-gateway"}}, "extra": {}})()
    assert request_route(request).adapter is None and "--adapter" in request_route(request).because
    monkeypatch.setenv(ADAPTER_ENV, "anthropic")
    assert (forced_adapter(), request_route(request).adapter, request_route(request).because) == (
        "anthropic", "anthropic", "--adapter anthropic")
    assert request_route(request, forced="openai").adapter == "openai"  # a caller's own choice wins
    monkeypatch.setenv(ADAPTER_ENV, "nope")
    assert forced_adapter() is None and route_for("my-gateway").adapter is None
    assert set(ADAPTER_APIS.values()) | {"deepseek"} == {"anthropic", "openai", "responses", "deepseek"}


# -- 2. diff --since/--until and --jobs ------------------------------------------------------------

def _captured(folder: Path, log: Path) -> Path:
    """``log`` copied into ``folder`` with a wire.jsonl beside it holding what each of its loop
    requests renders to (so diff compares it, each capture with its own log)."""
    folder.mkdir(parents=True)
    copy = folder / "session.jsonl"
    shutil.copy(log, copy)
    code, out, _ = _run("requests", str(copy), "--json")
    records = []
    for row in [r for r in map(json.loads, out.splitlines()) if r["kind"] == "loop"]:  # a title call: not captured
        body = _run("render", str(copy), str(row["index"]))[1]
        records.append({"method": "POST", "path": "/chat/completions", "body": body,
                        "headers": {"x-deepseek-harness-session-id": row["session_id"]}})
    (folder / "wire.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return copy


def test_diff_selects_logs_by_their_own_timestamps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = _captured(tmp_path / "chat", SAMPLES / "chat" / "session.jsonl")  # 2027-01-15T08:00:00Z in the log
    whole = invoke(monkeypatch, capsys, "diff", str(log), "--json")
    assert whole[0] == 0 and len(whole[1].splitlines()) == 3
    for window in (["--since", "2027-01-15T08:00:00Z"], ["--until", "2027-01-16"], ["--since", "0001-01-01"]):
        assert invoke(monkeypatch, capsys, "diff", str(log), "--json", *window) == whole, window
    assert invoke(monkeypatch, capsys, "diff", str(log), "--json", "--since", "2027-01-16") == (2, "", [
        "note: --since 2027-01-16T00:00:00Z: 1 of 1 log(s) with no activity in that window (by the logs' own "
        "timestamps) left out",
        f"error: {log}: no session log has activity in --since 2027-01-16T00:00:00Z (by the logs' own timestamps) "
        "(hint: widen or drop --since/--until)"])


def test_diff_jobs_prints_what_a_serial_run_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _captured(tmp_path / "a", SAMPLES / "chat" / "session.jsonl")
    _captured(tmp_path / "b", SAMPLES / "tools" / "session.jsonl")
    copy_as(tmp_path / "a" / "session.jsonl", tmp_path / "c" / "session.jsonl", "session-c", cut=40)  # its own session
    (tmp_path / "c" / "wire.jsonl").write_text("not json\n", encoding="utf-8")  # a capture that cannot be read
    serial = invoke(monkeypatch, capsys, "diff", str(tmp_path), "--json")
    assert serial[0] == 2 and len(serial[1].splitlines()) == 7  # 3 + 4 requests; c's capture: its error
    assert [line.split(":")[0] for line in serial[2] if line.startswith("error")] == ["error"]
    assert invoke(monkeypatch, capsys, "diff", str(tmp_path), "--json", "--jobs", "2") == serial
    table = invoke(monkeypatch, capsys, "diff", str(tmp_path))
    assert invoke(monkeypatch, capsys, "diff", str(tmp_path), "-j", "0") == table


# -- 3. another agent's log: --since reads its two ends, the run imports it once ------------------

def test_a_foreign_logs_span_is_read_from_its_ends() -> None:
    from dsh_audit.cli._logs import _log_span
    from dsh_audit.importers import record_span

    assert record_span(CLAUDE) == _log_span(CLAUDE) == (1767607200.0, 1767607564.0)  # 10:00:00 to 10:06:04
    assert record_span(CODEX) == _log_span(CODEX) == (1767607200.0, 1767607382.2)  # 10:00:00 to 10:03:02.2


def test_a_foreign_log_with_no_time_at_its_ends_is_imported_for_its_times(tmp_path: Path) -> None:
    from dsh_audit.cli._logs import _log_span
    from dsh_audit.importers import record_span

    lines = CODEX.read_text(encoding="utf-8").splitlines()
    untimed = [json.dumps({k: v for k, v in json.loads(line).items() if k != "timestamp"}) for line in lines]
    log = tmp_path / CODEX.name
    log.write_text("\n".join(untimed) + "\n", encoding="utf-8")
    assert (record_span(log), _log_span(log)) == (None, None)  # the import finds none either


@pytest.mark.parametrize("command", ["sessions", "requests", "usage"])
def test_since_imports_a_foreign_log_once(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    import dsh_audit.session._session as opened

    for source, folder in ((CLAUDE, "cc"), (CODEX, "cx")):
        (tmp_path / folder).mkdir()
        shutil.copy(source, tmp_path / folder / source.name)
    imports: list[str] = []
    load = opened.load_foreign

    def counted(path: str, **kwargs: Any) -> Any:
        imports.append(os.path.basename(path))
        return load(path, **kwargs)

    monkeypatch.setattr(opened, "load_foreign", counted)
    code, out, err = invoke(monkeypatch, capsys, command, str(tmp_path), "--json", "--since", "2026-01-05T10:05:00Z")
    assert (code, err) == (0, ["note: --since 2026-01-05T10:05:00Z: 1 of 2 log(s) with no activity in that window "
                               "(by the logs' own timestamps) left out"])
    assert out and imports == [CLAUDE.name]  # the one kept, imported by the run alone


# -- 4. a watch looks at each file once a look -------------------------------------------------------

def test_a_look_stats_each_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_audit.watch import _finder

    home = tmp_path / "sessions" / "--home-dev-p--" / "s1"
    logs = []
    for at, folder in enumerate((home, tmp_path / "export")):
        folder.mkdir(parents=True)
        b = LogBuilder(session_id="s1")
        with b.turn("Hi"), b.step():
            b.assistant("Hello")
        path = folder / "session.jsonl"
        lines = b.lines(packed=False)
        path.write_text("".join(line + "\n" for line in lines[:len(lines) - at]), encoding="utf-8")
        logs.append(str(path))
    looked: list[str] = []
    stat = _finder._stat

    def counted(path: str) -> Any:
        looked.append(path)
        return stat(path)

    monkeypatch.setattr(_finder, "_stat", counted)
    files = _finder.Sessions()
    for fresh in (True, True, False):
        looked.clear()
        grouped = files.group(logs, fresh)
        assert list(grouped) == ["s1"]
        for sid, group in grouped.items():
            if files.changed(sid, group):
                files.decide(sid, group, followed=set(), end=lambda path: None)
        assert sorted(set(looked)) == sorted(looked)  # each file at most once a look
    assert files.chosen_for == {"s1": logs[0]} and set(files.copies) == {logs[1]}


# -- 5. sessions at 80 columns: a long title keeps its room ----------------------------------------

def _long_titles(root: Path) -> Path:
    """A parent, its fork and a subagent, each with a title longer than 24 characters."""
    def turn(b: LogBuilder, text: str) -> None:
        with b.turn(text), b.step():
            b.assistant("Sure.")

    parent = LogBuilder(session_id="session-0f1e2d3c", created_at=1_800_000_000_000)
    turn(parent, "one")
    parent.title("Refactor the session listing so that titles wrap nicely")
    fork = parent.fork(session_id="session-5a6b7c8d")
    turn(fork, "review")
    fork.title("Review the narrow table layout")
    sub = LogBuilder(session_id="session-9e8d7c6b", parent_session="session-0f1e2d3c", origin="subagent",
                     delegation_depth=1, created_at=1_800_000_100_000)
    turn(sub, "look")
    sub.title("Count the bullet lines in the README")
    for b in (parent, fork, sub):
        b.write_jsonl(root / "sessions" / "--home-dev-p--" / b.session_id / "session.jsonl")
    return root / "sessions"


def _takes_least() -> bool:
    import inspect

    from dsh_audit.report.terminal import print_table

    return "least" in inspect.signature(print_table).parameters


@pytest.mark.skipif(not _takes_least(), reason="print_table has no per-column least width yet (/tmp/cli35_patches.diff)")
def test_a_long_title_keeps_twenty_columns_at_80(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(_long_titles(tmp_path)), "--no-accounting")
    assert (code, err) == (0, [])
    assert [line.rstrip() for line in out.splitlines()] == [  # compact below 100 columns
        "3 session(s), newest first",
        "when (UTC)        title                                   reqs  id",
        "─" * 80,
        "2027-01-15 08:00  Refactor the session listing so that       2  session-0f1e2d3c",
        "                  titles wrap nicely",
        "2027-01-15 08:01  └ subagent Count the bullet lines in       2  session-9e8d7c6b",
        "                  the README",
        "2027-01-15 08:00  └ fork Review the narrow table layout      2  session-5a6b7c8d",
        "total                                                        6",  # issue 14 B1: sums, no id: no session
        "narrow terminal: hit, breaks, cost (no values), format, first (UTC), tokens,",
        "project not shown (widen it, or use --json)"]
