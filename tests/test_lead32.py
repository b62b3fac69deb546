"""Lead's fixes of session 32: a dsh-audit bug met in one log of many exits 3 (the README's exit
codes), after the other logs are reported."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke

import dsh_audit.cli._requests as requests_cli
from dsh_audit.errors import InternalError
from dsh_audit.gate._baseline import finding_key
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
                   "not compared",  # the captures found: one note a run (views33), not one a capture
                   "note: capture found beside 2 log(s): 2 files (wire.jsonl), each compared with the logs beside "
                   "or below it (--capture FILE names one for all)"]
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


@needs_corpus
def test_report_prices_a_log_with_a_capture_with_the_prices_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A log with a capture beside it is read whole by the check: the page priced it with the
    packaged table whatever --prices said, so its costs and totals disagreed with usage's."""
    shutil.copytree(LIVE / "c-change" / "session-logs", tmp_path / "c" / "session-logs")
    shutil.copy(LIVE / "c-change" / "wire.jsonl", tmp_path / "c" / "wire.jsonl")
    (tmp_path / "contract.json").write_text(json.dumps({"providers": {"deepseek": {"models": {
        "deepseek-v4-flash": [{"from": "2026-01-01", "cache_miss": 1.0, "cache_read": 0.1, "output": 2.0}],
        "deepseek-v4-pro": [{"from": "2026-01-01", "cache_miss": 3.0, "cache_read": 0.3, "output": 6.0}]}}}}))
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(monkeypatch, capsys, "usage", "c", "--prices", "contract.json", "--json")
    usage = json.loads(out.splitlines()[-1])["totals"]
    code, _, err = invoke(monkeypatch, capsys, "report", "c", "--prices", "contract.json", "-o", "page.html")
    data = json.loads(re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>',
                                (tmp_path / "page.html").read_text("utf-8"), re.S).group(1))
    # the title call, whose usage the log lacks, priced from the capture's (as usage prices it)
    assert (code, err) == (0, ["note: 1 request(s) priced from the capture's usage (their log holds none)"])
    assert data["totals"]["total"]["cost_usd"] == usage["cost_usd"] == {
        "cache_miss": 0.048555, "cache_read": 0.010848, "cache_write": 0.0, "output": 0.000574, "total": 0.059977}
    assert [r["cost"]["total"] if r["cost"] else None for r in data["sessions"][0]["requests"]] == [
        0.000144, 0.007969, 0.024087, 0.0027738, 0.0078432, 0.003276, 0.00333, 0.010554]



def test_a_short_capture_name_is_taken_out_only_where_it_stands_as_a_path() -> None:
    """A capture named ``e`` took the ``e`` out of every word, so the key depended on how
    --capture was spelled (review of session 32)."""
    said = "loop request 1 is different vs {} line 1 at byte 80 (messages[0].content)"
    short = finding_key("DSH811", "s", 1, 2, said.format("e"), "s.jsonl", "e")
    assert short == finding_key("DSH811", "s", 1, 2, said.format("/tmp/x/e"), "s.jsonl", "/tmp/x/e")
    assert short[-1] == said.format("<capture>")


def test_report_of_an_id_with_a_non_ascii_character_and_a_lone_surrogate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "ODD")
    log.write_text(log.read_text("utf-8").replace('"ODD"', '"session-\\u00e9\\udc80"'), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "report", str(log), "-o", str(tmp_path / "r.html"))
    data = json.loads(re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>',
                                (tmp_path / "r.html").read_text("utf-8"), re.S).group(1))
    assert (code, err) == (0, [])
    assert [s["anchor"] for s in data["sessions"]] == ["session-\u00e9\\udc80~1"]


@pytest.mark.parametrize(("option", "left_out"), [("--exit-after", "to watch until Ctrl-C"),
                                                  ("--rescan", "for its default, 1 s"),
                                                  ("--settle", "for its default, 10 s")])
def test_a_watch_time_that_is_not_finite_says_what_leaving_it_out_does(
        option: str, left_out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(monkeypatch, capsys, "watch", str(tmp_path), option, "nan") == (2, "", [
        f"error: Invalid value for '{option}': 'nan' is not a finite number of seconds (leave the option out "
        f"{left_out}) (hint: see `dsh-audit watch --help`)"])
