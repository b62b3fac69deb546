"""Session 41's tour of a new user's CI gate and cost questions: one usage for every view (the
capture's, marked, where the log holds none), what each token bucket cost beside the tokens, hint
commands that GitHub shows as code, a way forward from `report`, and ids cut before headers."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.report._markdown import _hint_md
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
A_CHAT = CORPUS / "live" / "a-chat"
C3 = CORPUS / "live-pi" / "c3-openai-compat" / "session-logs"
needs_corpus = pytest.mark.skipif(not A_CHAT.is_dir() or not C3.is_dir(), reason="../shared/corpus is absent")
BUCKETS = ["cache miss cost", "cache read cost", "cache write cost", "output cost"]


@needs_corpus
def test_requests_counts_the_title_call_as_usage_does(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Before: #0 "?" and totals 8060 in / 47 out, while `usage --by request` priced 140 / 5 from
    the wire.jsonl beside the log (totals 8200 / 52)."""
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = invoke(monkeypatch, capsys, "requests", str(A_CHAT))
    lines = out.splitlines()
    assert code == 0 and len(err) == 1 and err[0].startswith("note: one session in two files")
    assert [line.split() for line in lines[5:9]] == [
        ["│", "0", "│", "-", "│", "title", "│", "-", "│", "1", "│", "140*", "│", "0*", "│", "5*", "│", "│"],
        ["│", "1", "│", "1/1/1", "│", "loop", "│", "10", "initial", "│", "2", "│", "7969", "│", "0", "│", "29", "│",
         "stop", "│"],
        ["│", "2", "│", "2/1/1", "│", "loop", "│", "36", "change", "│", "4", "│", "91", "│", "7936", "│", "18", "│",
         "stop", "│"],
        ["│", "│", "total", "│", "│", "│", "│", "8200", "│", "7936", "│", "52", "│", "│"]]
    assert lines[-1] == "*: the capture's usage (the log holds none), as usage prices the request"
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(A_CHAT), "--by", "request", "--json")
    priced = [(r["usage_source"], r["tokens"]) for r in json.loads(out)["rows"]]
    code, out, _ = invoke(monkeypatch, capsys, "requests", str(A_CHAT), "--json")
    shown = [(r["usage_source"], r.get("tokens")) for r in map(json.loads, out.splitlines())]  # before: "capture" only
    assert shown[0] == priced[0] == ("capture", {"cache_miss": 140, "cache_read": 0, "cache_write": 0, "output": 5,
                                                 "reasoning": 0, "total": 145})
    assert [source for source, _ in shown] == [source for source, _ in priced] == ["capture", "log", "log"]
    code, out, _ = invoke(monkeypatch, capsys, "requests", str(A_CHAT), "--no-capture", "--format", "csv")
    assert [row[8:12] for row in csv.reader(io.StringIO(out))][1] == ["", "", "", ""]  # the log alone: not logged


@needs_corpus
def test_requests_json_is_the_logs_whether_a_capture_is_found(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Before: aligning the capture lent the title call its route's context, and its line had
    extra.routeContext, which --no-capture's has not; and a request with no usage had no
    usage_source, where `usage --by request --json` says null."""
    lines = {}
    for flags in ((), ("--no-capture",)):
        code, out, _ = invoke(monkeypatch, capsys, "requests", "--json", str(C3.parent / "home"), *flags)
        lines[flags] = [json.loads(line) for line in out.splitlines()]
    found, alone = lines[()], lines[("--no-capture",)]
    assert [(r["kind"], r["usage_source"]) for r in alone] == [("title", None)] + [("loop", "log")] * 5
    assert found[0]["usage_source"] == "capture" and found[0]["tokens"]["output"] > 0
    assert [{k: v for k, v in r.items() if k not in ("usage_source", "tokens")} for r in found] == \
        [{k: v for k, v in r.items() if k != "usage_source"} for r in alone]


def test_requests_refuses_a_capture_it_cannot_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Before: exit 0 and "?" for the title call; `usage` says why and exits 2."""
    (tmp_path / "bad.jsonl").write_text("garbage\n")
    code, out, err = invoke(monkeypatch, capsys, "requests", str(_priced_home(tmp_path)),
                            "--capture", str(tmp_path / "bad.jsonl"))
    assert (code, out, err) == (2, "", [f"error: {tmp_path / 'bad.jsonl'}: not a capture format dsh-audit knows "
                                        "(hint: expected a wire.jsonl file, a HAR 1.2 file or a folder of *.json "
                                        "bodies)"])


@needs_corpus
def test_requests_warns_of_a_capture_of_another_session_as_usage_does(monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Before: exit 0, the title row "?" and nothing said; `usage` warns that the capture matched no
    request of the session. Once for each session it matched none of (not a-chat's, which it prices)."""
    b_tools = next((CORPUS / "live" / "b-tools" / "session-logs").glob("*.jsonl"))
    warned = "warning: 1 request(s) unpriced: usage not logged; the capture matched no request of this session"
    capture = str(A_CHAT / "wire.jsonl")
    for flags in ((), ("--json",)):
        code, out, err = invoke(monkeypatch, capsys, "requests", "--capture", capture, str(b_tools), *flags)
        assert (code, err) == (0, [warned]) and out
        assert invoke(monkeypatch, capsys, "usage", "--capture", capture, str(b_tools), *flags)[::2] == (0, [warned])
    code, out, err = invoke(monkeypatch, capsys, "requests", "--capture", capture, str(b_tools), str(A_CHAT),
                            "--json")
    assert code == 0 and len(err) == 2 and err[0].startswith("note: one session in two files") and err[1] == warned
    assert [(r["kind"], r["usage_source"]) for r in map(json.loads, out.splitlines())][::9] == [
        ("title", None), ("title", "capture")]  # b-tools' nine requests, then a-chat's priced title call


@needs_corpus
def test_requests_passes_no_capture_to_its_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """--no-capture reaches a remote worker as an argument: its environment is its own."""
    from dsh_audit.capture import NO_CAPTURE_ENV
    from dsh_audit.cli._requests import _session_view

    monkeypatch.delenv(NO_CAPTURE_ENV, raising=False)
    log = str(next((C3.parent / "home").rglob("session.jsonl.zstd")))
    kept = {found: [json.loads(line) for line in _session_view(log, as_json=True, lenient=False, max_version=4,
                                                              ignore_found=found).lines] for found in (True, False)}
    assert [r["usage_source"] for r in kept[True]][:2] == [None, "log"]
    assert [r["usage_source"] for r in kept[False]][:2] == ["capture", "log"]


def _priced_home(tmp_path: Path) -> Path:
    b = LogBuilder(session_id="s-bucket", created_at=1_800_000_000_000, model="deepseek-v4-flash")
    with b.turn("Hi"), b.step():
        b.assistant("Hello", usage={"inputTokens": 1000, "outputTokens": 100, "cacheReadTokens": 2000})
    return b.write_jsonl(tmp_path / "session.jsonl")


# 160: before, only from 174 (the columns that say nothing, a DeepSeek log's cache writes, were measured)
@pytest.mark.parametrize(("columns", "shown"), [(80, False), (160, True), (250, True)])
def test_usage_says_what_each_bucket_cost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], columns: int, shown: bool) -> None:
    """Only --json had cost_usd.cache_miss: CSV and Markdown have every bucket, a table when it has
    the room (a narrow one leaves them out first, unsaid, as a request's details)."""
    log = str(_priced_home(tmp_path))
    monkeypatch.setenv("COLUMNS", str(columns))
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--json")
    usd = json.loads(out)["totals"]["cost_usd"]
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    at = rows[0].index("cost") + 1
    assert rows[0][at:at + 4] == BUCKETS and rows[-1][at - 1:at + 4] == [
        format(usd[key], "f").rstrip("0").rstrip(".") if usd[key] else "0"
        for key in ("total", "cache_miss", "cache_read", "cache_write", "output")]
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--format", "markdown")
    assert all(f" {name} |" in out.splitlines()[2] for name in BUCKETS)
    _, out, _ = invoke(monkeypatch, capsys, "usage", log)
    assert ("$0.000012" in out) is shown and "cache read cost" not in out.splitlines()[-1]  # the cache reads' $
    assert format(usd["cache_read"], "f").rstrip("0") == "0.000012"


def test_usage_help_says_one_rule_for_what_a_loss_cost(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = invoke(monkeypatch, capsys, "usage", "--help")
    said = " ".join(out.split())
    assert "extra cache-miss tokens" not in said  # before: the summary said misses, the columns writes first
    assert "bills a lost prefix as the request's cache writes (Anthropic" in said
    assert "one that bills no writes as cache misses (DeepSeek)" in said


@pytest.mark.parametrize(("hint", "markdown"), [
    ("run `dsh-audit cache` for the requests that missed and why",
     "run `dsh-audit cache` for the requests that missed and why"),
    # a span no template named (a log's folder, here beside the command the hint names) stays inert
    ("declare it in a`b|c `dsh-audit x` <i>*_d/cordis.patch.yml; run `dsh-audit cache`",
     "declare it in a\\`b\\|c \\`dsh-audit x\\` \\<i\\>\\*\\_d/cordis.patch.yml; run `dsh-audit cache`"),
    # a log's path in the command (a shell word): a backtick in it closes no span, the fence is longer
    ("run `dsh-audit diff 'logs/a`b.jsonl' --capture wire.jsonl` for the JSON paths",
     "run ``dsh-audit diff 'logs/a`b.jsonl' --capture wire.jsonl`` for the JSON paths"),
    ("run `dsh-audit diff $'x`\\x1b.jsonl' --capture 'w` `x'` now",
     "run ``dsh-audit diff $'x`\\x1b.jsonl' --capture 'w` `x'`` now"),
    # a path outside a command opens no span; markup stays inert
    ("declare the route in r/`home`/<b>cordis.patch.yml</b>",
     "declare the route in r/\\`home\\`/\\<b\\>cordis.patch.yml\\</b\\>"),
    ("run `dsh-audit validate` then `x`", "run `dsh-audit validate` then \\`x\\`"),
    ("run `dsh-audit diff 'never closed", "run \\`dsh-audit diff 'never closed"),
])
def test_a_hint_names_its_command_as_code_and_keeps_log_text_inert(hint: str, markdown: str) -> None:
    named = re.findall(r"run `(dsh-audit (?:cache|validate|diff 'logs/a`b.jsonl' --capture wire.jsonl|"
                       r"diff \$'x`\\x1b.jsonl' --capture 'w` `x'))`", hint)
    assert _hint_md(hint, named) == markdown


@needs_corpus
def test_check_markdown_shows_no_code_span_a_folder_name_makes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the DSH815 hint's route file path, under a folder named as below, showed
    `dsh-audit x` as code (a span our templates never named)."""
    folder = tmp_path / "a`b|c `dsh-audit x` <i>*_d"
    shutil.copytree(C3.parent / "home", folder / "home")
    shutil.copy(C3.parent / "wire.jsonl", folder)
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(monkeypatch, capsys, "check", "--markdown", "-", folder.name)
    hints = {line for line in out.splitlines() if line.startswith("  - hint: ")}
    assert code == 1 and hints == {
        "  - hint: pass --routes FILE (DSH's llm-pi-ai route configuration), or declare the route in "
        "a\\`b\\|c \\`dsh-audit x\\` \\<i\\>\\*\\_d/home/cordis.patch.yml (the patch layer of the DSH home the log "
        "was recorded in, read when no --routes is given)"}


@needs_corpus
def test_report_gives_the_way_forward_check_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "report", str(C3), "-o", str(tmp_path / "page.html"))
    assert code == 0 and out == (f"wrote {tmp_path / 'page.html'}: 1 log(s), 6 request(s), "
                                 "check failed: 6 unrendered request(s)\n")
    assert err == ["note: 1 request(s) priced from the capture's usage (their log holds none)",
                   "note: 6 failing finding(s) (DSH815, 1 log(s)); hint: pass --routes FILE (DSH's llm-pi-ai route "
                   "configuration), or record the log in a DSH home (<home>/sessions/...) and declare the route in "
                   "<home>/cordis.patch.yml, read when no --routes is given"]


def test_check_cuts_ids_before_it_shortens_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """At 110 columns: whole 44-character ids under "reqs", "brks", "hit", "finds"; now the ids'
    prefixes under the headers' own words."""
    for k in range(4):
        sid = f"session-{k}1b2c3d4-0a34-4da6-abec-4e87161c2c0{k}"
        b = LogBuilder(session_id=sid, created_at=1_800_000_000_000 + k * 60_000, model="deepseek-v4-flash")
        with b.turn("Hi"), b.step():
            b.assistant("Hello", usage={"inputTokens": 131, "outputTokens": 8, "cacheReadTokens": 0})
        b.write_jsonl(tmp_path / "sessions" / "--home-dev-some-project--" / sid / "session.jsonl", packed=False)
    monkeypatch.setenv("COLUMNS", "110")
    code, out, _ = invoke(monkeypatch, capsys, "check", str(tmp_path / "sessions"))
    lines = out.splitlines()
    assert code == 0
    assert lines[2].split("┃")[1:-1] == [" status ", " log ", " session          ", " requests ", " capture ",
                                          " breaks ", " hit ratio ", "      cost ", " findings "]
    assert lines[4].split("│")[3] == " session-01b2c3d4 "
    assert "session: shortest unique prefix" in out
