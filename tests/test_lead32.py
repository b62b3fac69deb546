"""Lead's fixes of session 32: a dsh-audit bug met in one log of many exits 3 (the README's exit
codes), after the other logs are reported."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke

import dsh_audit.cli._requests as requests_cli
from dsh_audit.errors import InternalError
from dsh_audit.runner import SessionTaskError


def test_a_bug_in_one_log_of_two_exits_3_after_the_other_is_listed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = chat_log(tmp_path / "a" / "session.jsonl", "s-good"), chat_log(tmp_path / "b" / "session.jsonl", "s-bad")
    view = requests_cli._session_view

    def broken(path: str, **options: Any) -> Any:
        if path == str(bad):
            raise KeyError("planted")
        return view(path, **options)

    monkeypatch.setattr(requests_cli, "_session_view", broken)
    code, out, err = invoke(monkeypatch, capsys, "requests", "--json", str(good), str(bad))
    assert code == 3
    assert [line.split('"path":')[1].split(",")[0] for line in out.splitlines()] == [f'"{good}"']
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: unexpected KeyError: 'planted'")
    # a log the command refuses is still bad input (2), not a bug
    monkeypatch.setattr(requests_cli, "_session_view", view)
    bad.write_text("not json\n", "utf-8")
    assert invoke(monkeypatch, capsys, "requests", "--json", str(good), str(bad))[0] == 2


def test_a_task_error_is_a_bug() -> None:
    assert issubclass(SessionTaskError, InternalError)


LIVE = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"
needs_corpus = pytest.mark.skipif(not (LIVE / "a-chat").is_dir(), reason="../shared/corpus is absent")


@needs_corpus
def test_diff_finds_the_capture_beside_each_log_as_check_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a-chat", "b-tools"):
        shutil.copytree(LIVE / name / "session-logs", tmp_path / "rec" / name / "session-logs")
        shutil.copy(LIVE / name / "wire.jsonl", tmp_path / "rec" / name / "wire.jsonl")
    lone = chat_log(tmp_path / "rec" / "lone" / "session.jsonl", "s-lone")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "diff", "rec", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert Counter((row["capture_source"].split(" line ")[0], row["verdict"]) for row in rows) == {
        ("rec/a-chat/wire.jsonl", "identical"): 3, ("rec/b-tools/wire.jsonl", "identical"): 9}
    assert err == [f"note: {lone.relative_to(tmp_path)}: no capture given or found beside the log (wire.jsonl): "
                   "not compared",
                   "note: capture rec/a-chat/wire.jsonl found beside 1 log(s) (--capture FILE names another)",
                   "note: capture rec/b-tools/wire.jsonl found beside 1 log(s) (--capture FILE names another)"]
    code, out, err = invoke(monkeypatch, capsys, "diff", "rec/lone")
    assert (code, out, err) == (2, "", ["error: rec/lone: no capture given or found beside the log (wire.jsonl) "
                                        "(hint: pass --capture FILE: a wire.jsonl, a HAR 1.2 file or a folder of "
                                        "JSON bodies)"])


@pytest.mark.parametrize(("args", "what"), [
    (["report", "LOG", "-o", "nodir/x.html"], "HTML report"),
    (["check", "LOG", "--junit", "nodir/j.xml"], "JUnit report"),
    (["check", "LOG", "--json-report", "nodir/r.json"], "JSON report"),
    (["validate", "LOG", "--sarif", "nodir/s.sarif"], "SARIF report"),
    (["index", "LOG", "--db", "nodir/i.sqlite"], "index")])
def test_an_output_in_a_missing_folder_is_refused_before_any_log_is_read(
        args: list[str], what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("not a log\n", "utf-8")  # read first, it would be the error said
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, *[str(log) if a == "LOG" else a for a in args])
    assert (code, out, err) == (2, "", [f"error: nodir/{args[-1].split('/')[-1]}: cannot write the {what}: its folder "
                                        "nodir does not exist (hint: create the folder first, or name a file in a "
                                        "folder that exists)"])
    (tmp_path / "adir").mkdir()
    code, out, err = invoke(monkeypatch, capsys, *[str(log) if a == "LOG" else a for a in args[:-1]], "adir")
    assert code == 2 and err[-1].startswith(("error: adir: cannot write the", "error: Invalid value"))
