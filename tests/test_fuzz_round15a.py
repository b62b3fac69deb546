"""Fuzz round 15 (issue 15), defects D1, D4, D5 and D7 of ``/tmp/fuzz15/REPORT.md``.

- D1: a gate key under ``[tool.dsh-audit.check]``, a misspelt sub-table or an unknown key in a
  table dsh-audit reads was dropped in silence (the gate passed): each is one error line, exit 2.
- D4: ``check``'s Markdown summary capped rows, not bytes: a long id made it larger than the
  1 MiB GitHub accepts for a step summary. Cells are cut; rows stop before :data:`MAX_BYTES`.
- D5: the HTML page's caveat line carried a price table's control and bidi characters raw.
- D7: a send time of 9999-12-31T23:59:59Z was "standard" (its +08:00 wall clock overflowed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import chat_log, invoke
from dsh_audit.cache import load_prices
from dsh_audit.cache._price_window import _Window
from dsh_audit.errors import UsageError
from dsh_audit.gate import CheckResult, Finding, Policy, SessionCheck, load_policy
from dsh_audit.report import format_markdown
from dsh_audit.report._html import _caveat_lines
from dsh_audit.report._markdown import ID_WIDTH, MAX_BYTES, _md
from dsh_audit.report.terminal import id_prefixes
from dsh_audit.testing import LogBuilder

SAMPLE_CHAT = Path(__file__).resolve().parents[1] / "sample_logs" / "chat" / "session.jsonl"
POLICY_HINT = "see the Policy section of docs/ci.md"
CHECK_HINT = "[tool.dsh-audit.check]: its one key is baseline, as --baseline FILE says; see the Baseline section of docs/ci.md"
CACHE_HINT = ("[tool.dsh-audit.cache]: its one key is openai-zero-data-retention, as --openai-zdr / --no-openai-zdr "
              "say; see 'Stating the ZDR status' in docs/cache-accounting.md")
TABLES_HINT = ("dsh-audit reads [tool.dsh-audit.cache], [tool.dsh-audit.check] and [tool.dsh-audit.prices]; the "
               f"policy keys go in [tool.dsh-audit] itself: {POLICY_HINT}")


# -- D1: a typo or a misplaced key in a pyproject.toml table ---------------------------------------

PYPROJECT_ERRORS = [
    ("[tool.dsh-audit.check]\nmin-cache-hit-ratio = 0.99\n",
     "2: tool.dsh-audit.check.min-cache-hit-ratio is a policy key, read only in [tool.dsh-audit] (hint: move it to "
     f"[tool.dsh-audit], above [tool.dsh-audit.check]: {POLICY_HINT})"),
    ("[tool.dsh-audit]\n[tool.dsh-audit.chekc]\nmin-cache-hit-ratio = 0.99\n",
     f"2: [tool.dsh-audit.chekc] is not a table dsh-audit reads (did you mean [tool.dsh-audit.check]?) (hint: {TABLES_HINT})"),
    ("[tool.dsh-audit.fleet]\njobs = 4\n", f"1: [tool.dsh-audit.fleet] is not a table dsh-audit reads (hint: {TABLES_HINT})"),
    ('[tool.dsh-audit.check]\nbaselin = "b.json"\n',
     f"2: unknown key tool.dsh-audit.check.baselin (did you mean 'baseline'?) (hint: {CHECK_HINT})"),
    ("[tool.dsh-audit.check]\nmin-cache-hit-ration = 0.99\n",
     "2: unknown key tool.dsh-audit.check.min-cache-hit-ration (did you mean the policy key 'min-cache-hit-ratio', "
     f"read only in [tool.dsh-audit]?) (hint: {CHECK_HINT})"),
    ("[tool.dsh-audit.cache]\nopenai-zero-data-retension = true\n",
     "2: unknown key tool.dsh-audit.cache.openai-zero-data-retension (did you mean 'openai-zero-data-retention'?) "
     f"(hint: {CACHE_HINT})"),
    ("[tool.dsh-audit]\ncheck = \"b.json\"\n", f"2: [tool.dsh-audit.check] must be a table (hint: {CHECK_HINT})"),
    # a table or key name holding a control character is named in TOML's quoted form: one inert line
    ('[tool.dsh-audit."chec\\u001bk"]\nbaseline = "b.json"\n',
     '1: [tool.dsh-audit."chec\\u001bk"] is not a table dsh-audit reads (did you mean [tool.dsh-audit.check]?) '
     f"(hint: {TABLES_HINT})"),
    ('[tool.dsh-audit.check]\n"a b\\u202e" = 1\n', f'2: unknown key tool.dsh-audit.check."a b\\u202e" (hint: {CHECK_HINT})'),
    # a 10 KB table or key name is cut as every quoted key is (_pyproject.said): no 10 KB error line
    (f"[tool.dsh-audit.{'t' * 10_000}]\n",
     f"1: [tool.dsh-audit.{'t' * 44}…] is not a table dsh-audit reads (hint: {TABLES_HINT})"),
    (f"[tool.dsh-audit.check]\n{'k' * 10_000} = 1\n",
     f"2: unknown key tool.dsh-audit.check.{'k' * 38}… (hint: {CHECK_HINT})"),
]


@pytest.mark.parametrize(("text", "message"), PYPROJECT_ERRORS)
def test_a_pyproject_table_or_key_no_command_reads_is_one_error(text: str, message: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-policy")
    (tmp_path / "pyproject.toml").write_text(text, "utf-8")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "check", str(log)) == (
        2, "", [f"error: {(tmp_path / 'pyproject.toml').resolve()}:{message}"])


def test_the_gate_key_fails_the_gate_where_it_belongs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The same bound in [tool.dsh-audit] fails the gate (DSH831, exit 1); under [tool.dsh-audit.check]
    it used to pass (exit 0): now exit 2 (above)."""
    (tmp_path / "pyproject.toml").write_text("[tool.dsh-audit]\nmin-cache-hit-ratio = 0.99\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", str(SAMPLE_CHAT), "--json")
    assert (code, [f["rule"] for f in json.loads(out)["findings"] if f["fails"]]) == (1, ["DSH831"])


PLAIN_ERRORS = [
    ("[check]\nmin-cache-hit-ratio = 0.99\n",
     "2: check.min-cache-hit-ratio is a policy key, read only at the top level of the policy file (hint: move it to "
     f"the top level, above [check]: {POLICY_HINT})"),
    ('[chekc]\nbaseline = "b.json"\n', "1: [chekc] is not a table dsh-audit reads (did you mean [check]?) (hint: "
     f"dsh-audit reads [check]; the policy keys go at the top level: {POLICY_HINT})"),
    ("[check]\nbaselin = 'b.json'\n", f"2: unknown key check.baselin (did you mean 'baseline'?) (hint: [check]: its one "
     "key is baseline, as --baseline FILE says; see the Baseline section of docs/ci.md)"),
    ("[prices.providers.deepseek.models.m]\ncache_miss = 1\n", "1: [prices] is not read from a policy file (hint: "
     "dsh-audit reads [tool.dsh-audit.prices] of the nearest pyproject.toml only: a price table, as --prices FILE "
     "gives; see the Price files section of docs/cache-accounting.md)"),
    ("[cache]\nopenai-zero-data-retention = true\n", "1: [cache] is not read from a policy file (hint: dsh-audit reads "
     "[tool.dsh-audit.cache] of the nearest pyproject.toml only: its one key is openai-zero-data-retention, as "
     "--openai-zdr / --no-openai-zdr say; see 'Stating the ZDR status' in docs/cache-accounting.md)"),
]


@pytest.mark.parametrize(("text", "message"), PLAIN_ERRORS)
def test_a_plain_policy_file_reads_check_alone(text: str, message: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-plain")
    policy = tmp_path / "p.toml"
    policy.write_text(text, "utf-8")
    assert invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy)) == (
        2, "", [f"error: {policy}:{message}"])


def test_the_tables_commands_read_and_other_tools_tables_still_load(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\n[build-system]\nrequires = []\n[tool.ruff]\nline-length = 1\n'
                         '[tool.dsh-audit]\nrequire-capture = true\n[tool.dsh-audit.check]\nbaseline = "b.json"\n'
                         '[tool.dsh-audit.cache]\nopenai-zero-data-retention = false\n'
                         '[tool.dsh-audit.prices.providers.deepseek.models.m]\ncache_miss = 1\n', "utf-8")
    policy = load_policy(pyproject)
    assert (policy.require_capture, policy.baseline) == (True, str(tmp_path / "b.json"))
    plain = tmp_path / "dsh-audit.toml"  # a pyproject.toml's own tables beside a plain policy are other tools'
    plain.write_text('ignore = ["DSH81"]\n[check]\nbaseline = "b.json"\n[project]\nname = "x"\n[tool.ruff]\nx = 1\n',
                     "utf-8")
    assert (load_policy(plain).ignore, load_policy(plain).baseline) == (("DSH81",), str(tmp_path / "b.json"))
    with pytest.raises(UsageError, match=r"^p\.toml: unknown policy key 'tool'"):  # not a table: a key, as before
        Policy.from_mapping({"tool": 1}, source="p.toml", name="")


# -- D4: the step summary's size --------------------------------------------------------------------


def test_a_long_session_id_is_its_unique_prefix_in_the_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    b = LogBuilder(session_id="session-" + "x" * 20_000)
    with b.turn("Hi"), b.step():
        b.assistant("Hello")
    b.write_jsonl(tmp_path / "long.jsonl", packed=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    code, out, err = invoke(monkeypatch, capsys, "check", "long.jsonl", "--markdown", "summary.md")
    assert (code, err) == (0, [])
    summary = (tmp_path / "summary.md").read_text("utf-8")
    assert summary.splitlines()[6] == (f"| ✅ pass | long.jsonl | session-{'x' * 64}… | 1 | none | 0 | n/a | "
                                       "\\$? (1 unpriced) | \\$? | \\$? | 1 |")
    # fix W: each bare "$?" cell gains a "\\" (4), the cost cells too (2, session 43); the heading the page's
    # verdict words, "passed: no breaks" (11, session 46)
    assert len(summary.encode("utf-8")) == 806


def test_ids_are_cut_to_a_prefix_no_other_id_shares() -> None:
    long, uuid = "s-" + "y" * 100, "86ef2d28-6e7a-4b1c-9d2e-0123456789ab"
    ids = [long + "a" + "q" * 50, long + "b" + "q" * 50, long, "s-short", "t-" + "w" * 100, "z" * 300 + "1" + "q" * 30,
           "z" * 300 + "2" + "q" * 30, "y" * 100 + "-" + uuid]
    result = CheckResult(sessions=tuple(SessionCheck(path=f"{n}.jsonl", session_id=i) for n, i in enumerate(ids)),
                         findings=(), policy=Policy())
    cells = [line.split(" | ")[2] for line in format_markdown(result).splitlines()[6:6 + len(ids)]]
    # the whole of an id another one starts with; two that share 300 characters whole up to where
    # they differ, never cut again in their middle (a middle cut names no session); a UUID's cut
    # marked too: a summary has no caption saying its ids are prefixes
    assert cells == [long + "a…", long + "b…", long, "s-short", "t-" + "w" * 62 + "…", "z" * 300 + "1…",
                     "z" * 300 + "2…", "y" * 100 + "-86ef2d28…"]
    assert id_prefixes(ids, least=ID_WIDTH, mark="…")[ids[-1]] == "y" * 100 + "-86ef2d28"  # the rule's own cut


def test_a_cut_keeps_every_escape_whole() -> None:
    # the cut falls on either side of the ESC and the ampersand, never inside their escapes
    text = "a" * 98 + "\x1b" + "|" + "b" * 300 + "&"
    assert _md(text) == "a" * 98 + "\\\\u001b…" + "b" * 99 + "\\&"
    assert _md("\x1b" * 5, limit=4) == "\\\\u001b…\\\\u001b\\\\u001b"


def _huge_result() -> CheckResult:
    """250 logs whose paths and ids are long, 300 failing findings whose message and hint are
    escapes (each character seven bytes of Markdown), 300 passing ones, 900 price notes."""
    sessions = tuple(SessionCheck(path="&" * 300 + f"/{n}.jsonl", session_id=f"session-{'y' * 100}{n:04d}")
                     for n in range(250))
    failing = tuple(Finding(rule="DSH811", severity="error", message="\x1b" * 5000, path="p.jsonl", fails=True,
                            hint="\u202e" * 3000) for _ in range(300))
    passing = tuple(Finding(rule="DSH810", severity="info", message="m", path="p.jsonl") for _ in range(300))
    return CheckResult(sessions=sessions, findings=failing + passing, policy=Policy(),
                       caveats=tuple(f"note {n}: " + "<" * 2000 for n in range(900)))


def test_the_summary_stays_under_github_s_cap_and_says_what_it_left_out() -> None:
    summary = format_markdown(_huge_result())
    lines = summary.splitlines()
    assert len(summary.encode("utf-8")) == 999_266 and MAX_BYTES == 1_000_000
    # the notes take at most a tenth; the logs stop at 200 rows, the failing findings and the
    # passing ones at the byte cap (one fewer since the heading says what failed, session 46)
    assert [line for line in lines if "not shown" in line] == [
        "_50 more log(s) not shown (in the total); see the JSON report._",
        "_851 more note(s) not shown; check prints each on stderr._",
        "- _244 more not shown; see the JSON report._", "- _257 more not shown; see the JSON report._"]
    assert [sum(1 for line in lines if line.startswith(lead)) for lead in ("| ✅ pass |", "Note: ", "- **DSH811**",
                                                                            "- **DSH810**")] == [200, 49, 56, 43]
    assert lines[2] == ("250 log(s), 0 request(s); findings: 300 error(s), 0 warning(s), 300 info; 300 failing "
                        "(policy: defaults).")
    assert lines[6].startswith("| ✅ pass | " + "\\&" * 99 + "…" + "\\&" * 92 + "/0.jsonl | ")
    assert f"| session-{'y' * 100}0000 | 0 | none |" in lines[6]  # its shortest unique prefix is all of it
    assert [line for line in lines if line.startswith("| **total**")] == [
        "| **total** | 250 log(s) | | 0 | | 0 | | $0.0000 | $0.0000 | $0.0000 | 600 |"]
    assert "### Failing findings (300)" in lines and "<details><summary>Other findings (300)</summary>" in lines


# -- D5: the HTML caveat line -------------------------------------------------------------------------


def test_the_page_s_caveat_shows_a_price_table_s_controls_as_escapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    b = LogBuilder(session_id="s-2028", created_at=1_830_567_600_000, model="m1")  # 2028: no holiday list covers it
    with b.turn("hi"), b.step():
        b.assistant("hello", usage={"inputTokens": 1000, "outputTokens": 10, "cacheReadTokens": 0})
    b.write_jsonl(tmp_path / "s28.jsonl", packed=False)
    name = "gol\u202eTXT.exe\x1b]0;PWN\x07\x85"
    window = {"from": "2026-01-01T00:00:00Z", "utc_offset": "+08:00", "peak_hours": ["00:00-24:00"],
              "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "holidays": ["2026-10-01"]}
    rates = {"cache_miss": 1, "cache_read": 0.1, "output": 2}
    (tmp_path / "p.json").write_text(json.dumps({"providers": {name: {"windows": [window], "models": {"m1": rates}}}}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    code, out, err = invoke(monkeypatch, capsys, "report", "s28.jsonl", "--prices", "p.json", "-o", "r.html")
    assert code == 0
    page = (tmp_path / "r.html").read_text("utf-8")
    shown = "gol\\u202eTXT.exe\\u001b]0;PWN\\u0007\\u0085"
    line = page[page.index('<p class="muted caveat">'):]
    assert line[:line.index("</p>") + 4] == (
        f'<p class="muted caveat">note: the {shown} price table lists no holidays of 2028 (its holiday list covers '
        "2026): requests of 2028 are priced by the weekday rule alone, a public holiday at the peak rate; give the "
        f'holidays of 2028 with --prices FILE (the "holidays" of the {shown} window)</p>')
    assert not any(char in page for char in "\x1b\x07\x85\u202e")


def test_caveat_lines_escape_html_after_controls() -> None:
    assert _caveat_lines(["a <b> & \x1b\u2066"]) == '<p class="muted caveat">note: a &lt;b&gt; &amp; \\u001b\\u2066</p>'


# -- D7: wall clocks past year 9999 and before year 1 -------------------------------------------------

# DeepSeek's window, at +08:00: Monday to Friday, 09:00 to 18:00 (minutes of the local day)
WEEKDAYS = _Window(0.0, 480, ((540, 1080),), frozenset(range(5)), frozenset({"2026-10-01"}))
EVERY_DAY = _Window(0.0, 480, ((0, 1440),), frozenset(range(7)), frozenset({"2026-10-01"}))
LAST = 253_402_300_799.0  # 9999-12-31T23:59:59Z, a Friday; at +08:00 10000-01-01 07:59:59, a Saturday


def test_the_last_second_datetime_holds_is_placed_on_the_local_calendar() -> None:
    assert (WEEKDAYS.at(LAST), WEEKDAYS.unknown_year(LAST)) == ("off-peak", 10000)
    assert (EVERY_DAY.at(LAST), EVERY_DAY.span(LAST)) == ("peak", (LAST - 7 * 3600 - 59 * 60 - 59 + 0.001,
                                                                    LAST - 7 * 3600 - 59 * 60 - 59 + 86400 - 0.001))
    assert (WEEKDAYS.at(LAST - 8 * 3600), WEEKDAYS.span(LAST - 8 * 3600)) == (  # 23:59:59 local, Friday: in range
        "off-peak", (LAST - 8 * 3600 - 5 * 3600 - 59 * 60 - 59 + 0.001, LAST - 8 * 3600 + 1 - 0.001))
    # past year 9999 in UTC: no command can show the time; no window places it
    assert (WEEKDAYS.at(LAST + 1), WEEKDAYS.span(LAST + 1), WEEKDAYS.unknown_year(LAST + 1)) == ("standard", (0.0, 0.0),
                                                                                                 None)


def test_year_one_west_of_utc_and_times_before_the_epoch() -> None:
    first = -62_135_596_800.0  # 0001-01-01T00:00:00Z; at -05:00 0000-12-31 19:00, a Sunday
    west = _Window(-1e12, -300, ((1140, 1200),), frozenset({6}), frozenset({"2026-10-01"}))
    assert (west.at(first), west.unknown_year(first), west.span(first)) == ("peak", 0, (first + 0.001, first + 3600 - 0.001))
    assert west.at(first + 3600) == "off-peak" and west.at(first - 1) == "standard"
    utc = _Window(-1e12, 0, ((1380, 1440),), frozenset({2}), frozenset())  # Wednesdays from 23:00
    assert (utc.at(-0.5), utc.span(-0.5), utc.at(-3600.5)) == ("peak", (-3600 + 0.001, -0.001), "off-peak")


def test_a_request_sent_at_the_last_second_is_priced_off_peak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    b = LogBuilder(session_id="s-9999", created_at=253_402_300_799_000, model="deepseek-v4-flash", clock_step_ms=0)
    with b.turn("hi"), b.step():
        b.assistant("hello", usage={"inputTokens": 1000, "outputTokens": 10, "cacheReadTokens": 0})
    b.write_jsonl(tmp_path / "y.jsonl", packed=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "usage", "y.jsonl", "--by", "request", "--json")
    assert (code, err) == (0, [])
    row = json.loads(out)["rows"][0]
    assert (row["sent_at"], row["window"], row["cost_usd"]["total"], row["off_peak_cost_usd"]) == (
        "9999-12-31T23:59:59Z", "off-peak", 0.000156, 0.000156)
    book = load_prices(search_from=tmp_path)
    assert [book.window("deepseek", when) for when in (LAST, LAST - 8 * 3600, LAST + 1)] == [
        "off-peak", "off-peak", "standard"]
