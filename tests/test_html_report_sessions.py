"""The HTML report's story across sessions: the session list (failing first, children under their
parent, filtered by the page's search), session deep links, the chart's axes, and the phone width.

The browser tests use the run's headless Chromium (``tests/conftest.py``'s ``browser`` fixture, one
per worker) and ``tests/test_html_report.py``'s helpers. Screenshots at 1400 px and at 390 px are written to ``<tmp_path>/screenshots/``
(pytest keeps the last runs' tmp folders: ``pytest --basetemp=DIR`` puts them in ``DIR``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_html_report import HOSTILE, SCRIPT_TEXT, TEXT_JS, _detail_heading, _report, _rows

from dsh_audit.gate import CheckResult, Policy, run_check
from dsh_audit.report import build_report_data, format_html
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs" / "sessions"
LIVE = ROOT.parent / "shared" / "corpus" / "live"
needs_corpus = pytest.mark.skipif(not LIVE.is_dir(), reason="shared corpus not present")

FORK_PARENT = "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6"
FORK_CHILD = "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7"
SUB_PARENT = "session-70444d8d-ee1d-43e9-8341-470b57f1019c"
SUB_CHILD = "718aabf5-ac98-48d9-87ec-fa18653fd4d4"
#: every cause the default policy allows, except resume (so session-sample-resume fails), plus unexplained
CAUSES = ("header_change", "compaction", "prune", "plugin_replace", "fork", "subagent", "retry", "unexplained")


@pytest.fixture
def chrome(browser):  # conftest.py's fixture: one headless Chromium per worker
    return browser


def _titled_log(tmp_path: Path, title: str, *, session_id: str = "session-hostile-title",
                created_at: int = 1_800_000_100_000) -> Path:
    b = LogBuilder(session_id=session_id, created_at=created_at)
    with b.turn("hello"):
        with b.step():
            b.assistant("hi")
    b.title(title)
    return b.write_jsonl(tmp_path / "titled" / "session.jsonl")


def _unexplained(result: CheckResult, session_id: str) -> CheckResult:
    """``result`` with the breaks of ``session_id`` made unexplained (no log yields one cheaply)."""
    sessions = [dataclasses.replace(s, transitions=tuple(dataclasses.replace(t, cause="unexplained")
                                                         if t.verdict == "break" else t for t in s.transitions))
                if s.session_id == session_id else s for s in result.sessions]
    return dataclasses.replace(result, sessions=tuple(sessions))


def _family_result(tmp_path: Path) -> CheckResult:
    """The sample logs, the fork and subagent scenarios and a hostile title: 13 sessions."""
    log = _titled_log(tmp_path, HOSTILE)
    result = run_check([SAMPLES, LIVE / "f-fork" / "home", LIVE / "g-subagent" / "home", log],
                       policy=Policy(allowed_break_causes=CAUSES))
    return _unexplained(result, "session-sample-retry")


#: (session id, depth, verdict) in the list's order: the failing session, the one with an
#: unexplained break, then the rest newest first, each child right under its parent
ORDER = [
    ("session-sample-resume", 0, "failed: 1 break(s) of a cause the policy does not allow"),
    ("session-sample-retry", 0, "passed: 1 unexplained break(s) the policy allows"),
    ("session-hostile-title", 0, "passed: no breaks"),
    ("session-sample-tools", 0, "passed: no breaks"),
    ("session-sample-change", 0, "passed: 4 explained break(s)"),
    ("session-sample-fork-parent", 0, "passed: no breaks"),
    ("fork-child:review", 1, "passed: no breaks"),
    ("session-sample-compaction", 0, "passed: 2 explained break(s)"),
    ("session-sample-chat", 0, "passed: no breaks"),
    (FORK_PARENT, 0, "passed: no breaks"),
    (FORK_CHILD, 1, "passed: no breaks"),
    (SUB_PARENT, 0, "passed: no breaks"),
    (SUB_CHILD, 1, "passed: 1 explained break(s)"),
]


@needs_corpus
def test_session_order_is_failing_first_with_children_under_their_parent(tmp_path):
    data = build_report_data(_family_result(tmp_path))
    sessions = data["sessions"]
    assert [(sessions[k]["session_id"], depth, sessions[k]["verdict"]) for k, depth in data["order"]] == ORDER
    by_id = {s["session_id"]: (k, s) for k, s in enumerate(sessions)}
    assert by_id[FORK_CHILD][1]["family"] == {"parent_id": FORK_PARENT, "relation": "fork", "seed": 44,
                                              "parent": by_id[FORK_PARENT][0]}
    assert by_id[SUB_CHILD][1]["family"] == {"parent_id": SUB_PARENT, "relation": "subagent", "seed": None,
                                             "parent": by_id[SUB_PARENT][0]}
    assert by_id["fork-child:review"][1]["family"] == {
        "parent_id": "session-sample-fork-parent", "relation": "fork", "seed": 28,
        "parent": by_id["session-sample-fork-parent"][0]}
    assert by_id[FORK_PARENT][1]["family"] is None
    # the first and last of the logs' own timestamps (header createdAt, event times: the dates
    # `dsh-audit sessions` shows), never a file's mtime
    assert by_id[SUB_PARENT][1]["activity"] == ["2026-12-02T11:03:08Z", "2026-12-02T11:03:09Z"]
    assert by_id[FORK_CHILD][1]["activity"] == ["2026-12-02T11:03:17Z", "2026-12-02T11:03:18Z"]
    assert by_id["session-hostile-title"][1]["activity"] == ["2027-01-15T08:01:40Z", "2027-01-15T08:01:40Z"]


@needs_corpus
def test_a_failing_child_brings_its_family_first_and_a_missing_parent_is_said():
    family = [LIVE / "f-fork" / "home", LIVE / "g-subagent" / "home"]
    allowed = tuple(c for c in Policy().allowed_break_causes if c != "subagent")
    data = build_report_data(run_check(family, policy=Policy(allowed_break_causes=allowed)))
    assert [(data["sessions"][k]["session_id"], depth) for k, depth in data["order"]] == [
        (SUB_PARENT, 0), (SUB_CHILD, 1), (FORK_PARENT, 0), (FORK_CHILD, 1)]
    # the child alone: its parent is named but is not on the page
    child = next((LIVE / "f-fork" / "home").glob(f"sessions/*/{FORK_CHILD}/session.jsonl.zstd"))
    data = build_report_data(run_check([child, ROOT / "sample_logs" / "chat"], policy=Policy()))
    assert [(data["sessions"][k]["session_id"], depth) for k, depth in data["order"]] == [
        ("session-sample-chat", 0), (FORK_CHILD, 0)]
    assert data["sessions"][0]["family"] == {"parent_id": FORK_PARENT, "relation": "fork", "seed": 44, "parent": None}


def test_parents_that_name_each_other_are_each_listed_once(tmp_path):
    logs = []
    for me, other in (("session-a", "session-b"), ("session-b", "session-a")):
        b = LogBuilder(session_id=me, parent_session=other)
        with b.turn(f"I am {me}"):
            with b.step():
                b.assistant("ok")
        logs.append(b.write_jsonl(tmp_path / me / "session.jsonl"))
    data = build_report_data(run_check(logs, policy=Policy()))
    assert [(data["sessions"][k]["session_id"], depth) for k, depth in data["order"]] == [
        ("session-a", 0), ("session-b", 1)]


def test_a_child_whose_parent_log_is_nowhere_names_it(tmp_path):
    b = LogBuilder(session_id="session-orphan", parent_session="session-gone", seed_length=3)
    with b.turn("alone"):
        with b.step():
            b.assistant("ok")
    data = build_report_data(run_check([b.write_jsonl(tmp_path / "orphan" / "session.jsonl")], policy=Policy()))
    assert data["sessions"][0]["family"] == {"parent_id": "session-gone", "relation": "fork", "seed": 3,
                                             "parent": None}


def _entries(chrome) -> list[tuple[str, ...]]:
    """Each shown entry of the session list: depth, name, relation, then its facts (dates, requests,
    breaks, cost, verdict). Read in one script: a WebDriver call per element and field took 1.3 s
    for the 13 entries (the same values, measured in session 41). Waits (10 s at most) for the page's
    script to have built the list: under load in CI it was read empty once, before the script ran."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(chrome, 10).until(
        lambda driver: driver.execute_script("return document.querySelectorAll('#session-list > li').length") > 0)
    return [tuple(entry) for entry in chrome.execute_script(TEXT_JS + """
        return Array.from(document.querySelectorAll('#session-list > li'), li => {
            const rel = li.querySelector('.rel');
            return [li.getAttribute('data-depth'), text(li.querySelector('.name')), rel ? text(rel) : '',
                    ...Array.from(li.querySelectorAll('.meta > span'), text)];
        });""")]


def _attributes(chrome, selector: str, *names: str) -> list[tuple[str | None, ...]]:
    """The attributes ``names`` of each element ``selector`` finds, in one round trip (Selenium's
    ``get_attribute`` sends a script per call: 10-15 ms each)."""
    return [tuple(found) for found in chrome.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), e => arguments[1].map(n => e.getAttribute(n)));",
        selector, list(names))]


@needs_corpus
def test_session_list_links_sections_nests_children_and_filters_inertly(tmp_path, chrome, monkeypatch):
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    from selenium.webdriver.common.by import By

    out = tmp_path / "family.html"
    result = _family_result(tmp_path)
    data = build_report_data(result)
    out.write_text(format_html(result), encoding="utf-8")
    position = {s["session_id"]: k for k, s in enumerate(data["sessions"])}
    chrome.get(out.as_uri())

    # sessions whose title call (or failed attempt) logged no usage show a lower bound (≥$: the priced
    # requests only); the sample logs' replies log cacheReadTokens as DSH's DeepSeek adapter does, so
    # they are priced; the hostile log's deepseek-official usages log none, so none of its requests is
    # priced: "$?" (docs/cache-accounting.md, "Unpriced requests": hits unknown)
    day = "2027-01-15T08:00:00Z – 2027-01-15T08:00:00Z"
    fork = "2026-12-02T11:03:17Z – 2026-12-02T11:03:18Z"
    sub = "2026-12-02T11:03:08Z – 2026-12-02T11:03:09Z"
    assert _entries(chrome) == [
        ("0", "session-sample-resume", "", day, "3 request(s)", "1 break(s)", "$0.0004",
         "failed: 1 break(s) of a cause the policy does not allow"),
        ("0", "session-sample-retry", "", day, "4 request(s)", "1 break(s) (1 unexplained)", "≥$0.0004",
         "passed: 1 unexplained break(s) the policy allows"),
        ("0", HOSTILE, "", "2027-01-15T08:01:40Z – 2027-01-15T08:01:40Z", "2 request(s)", "0 break(s)", "$?",
         "passed: no breaks"),
        ("0", "session-sample-tools", "", day, "4 request(s)", "0 break(s)", "$0.0003", "passed: no breaks"),
        ("0", "session-sample-change", "", day, "5 request(s)", "4 break(s)", "$0.0011",
         "passed: 4 explained break(s)"),
        ("0", "session-sample-fork-parent", "", day, "4 request(s)", "0 break(s)", "$0.0002", "passed: no breaks"),
        ("1", "fork-child:review", "fork at seq 28", day, "1 request(s)", "0 break(s)", "$0.000022",
         "passed: no breaks"),
        ("0", "session-sample-compaction", "", day, "4 request(s)", "2 break(s)", "$0.0003",
         "passed: 2 explained break(s)"),
        ("0", "Who are you", "", day, "3 request(s)", "0 break(s)", "≥$0.0001", "passed: no breaks"),
        ("0", "Fake session title", "", fork, "5 request(s)", "0 break(s)", "≥$0.0014", "passed: no breaks"),
        ("1", "Fake session title", "fork at seq 44", fork, "1 request(s)", "0 break(s)", "$0.0001",
         "passed: no breaks"),
        ("0", "Fake session title", "", sub, "4 request(s)", "0 break(s)", "≥$0.0013", "passed: no breaks"),
        ("1", "Count the bullet lines in", "subagent", sub, "2 request(s)", "1 break(s)", "$0.0008",
         "passed: 1 explained break(s)"),
    ]
    links = [href.rpartition("#")[2] for href, in _attributes(chrome, "#session-list .name", "href")]
    assert links == [sid for sid, _, _ in ORDER]  # each log's anchor: its session id, the same in any report
    # the page opens on the first entry: the failing session
    assert chrome.find_element(By.ID, "session-title").text == "session-sample-resume"
    assert chrome.find_element(By.CSS_SELECTOR, "#session-info .verdict").text == (
        "failed: 1 break(s) of a cause the policy does not allow")

    # a child's entry opens its section, which links back to its parent's
    chrome.find_element(By.CSS_SELECTOR, f"#session-list li[data-session='{position[FORK_CHILD]}'] .name").click()
    assert chrome.execute_script("return location.hash") == f"#{FORK_CHILD}"
    assert chrome.find_element(By.ID, f"session-{position[FORK_CHILD]}") is not None
    family = chrome.find_element(By.CSS_SELECTOR, "#session-info .family")
    assert family.text == f"fork of Fake session title ({FORK_PARENT}) at seq 44"
    assert _attributes(chrome, "#session-list li.sel", "data-session") == [(str(position[FORK_CHILD]),)]
    family.find_element(By.TAG_NAME, "a").click()
    assert chrome.execute_script("return location.hash") == f"#{FORK_PARENT}"
    assert chrome.find_element(By.CSS_SELECTOR, "#session").get_attribute("data-session") == str(position[FORK_PARENT])
    assert chrome.find_elements(By.CSS_SELECTOR, "#session-info .family") == []
    chrome.get(out.as_uri() + f"#session-{position[SUB_CHILD]}")  # an older deep link to a session: still opens it
    assert chrome.find_element(By.ID, "session-title").text == "Count the bullet lines in"
    assert chrome.find_element(By.CSS_SELECTOR, "#session-info .family").text == (
        f"subagent of Fake session title ({SUB_PARENT})")
    chrome.get(out.as_uri() + f"#s{position[SUB_CHILD]}-break-0")  # a break of that session, from a fresh load
    assert chrome.find_element(By.CSS_SELECTOR, "#detail .cause").text == "subagent"

    box = chrome.find_element(By.ID, "search")

    def shown(query: str) -> tuple[list[tuple[str, str]], str]:
        box.clear()
        if query:
            box.send_keys(query)
        else:
            chrome.execute_script("arguments[0].dispatchEvent(new Event('input'))", box)
        return (_attributes(chrome, "#session-list > li", "data-session", "class"),
                chrome.find_element(By.ID, "session-count").text)

    sub, fork = str(position[SUB_CHILD]), str(position[FORK_CHILD])
    # a child's message matches: its parent stays as context above it
    assert shown("i am the child") == ([(str(position[SUB_PARENT]), "context"), (sub, "sel child")], "1 of 13 session(s) match")
    assert shown(FORK_PARENT.upper()) == ([(str(position[FORK_PARENT]), ""), (fork, "child")], "2 of 13 session(s) match")
    # the failing session's verdict names its cause, as the page's headline does
    assert shown("cause the policy does not allow") == ([(str(position["session-sample-resume"]), "fail")],
                                                        "1 of 13 session(s) match")
    assert shown(SCRIPT_TEXT) == ([(str(position["session-hostile-title"]), "")], "1 of 13 session(s) match")
    assert shown("zzz-none") == ([], "0 of 13 session(s) match")
    assert len(shown("")[0]) == 13 and shown("")[1] == ""
    assert chrome.execute_script("return typeof window.__pwned") == "undefined"
    assert chrome.execute_script("return document.querySelectorAll('img, textarea').length") == 0


@needs_corpus
def test_a_child_without_its_parent_says_so(tmp_path, chrome):
    from selenium.webdriver.common.by import By

    child = next((LIVE / "g-subagent" / "home").glob(f"sessions/*/{SUB_CHILD}/session.jsonl.zstd"))
    out = tmp_path / "child.html"
    out.write_text(format_html(run_check([child, ROOT / "sample_logs" / "chat"], policy=Policy())), encoding="utf-8")
    chrome.get(out.as_uri() + "#session-0")
    assert chrome.find_element(By.CSS_SELECTOR, "#session-info .family").text == (
        f"subagent of {SUB_PARENT}; the parent session is not in this report")
    assert chrome.find_elements(By.CSS_SELECTOR, "#session-info .family a") == []
    assert _entries(chrome)[1][:3] == ("0", "Count the bullet lines in", f"subagent of {SUB_PARENT}")


@needs_corpus
def test_chart_axes_show_token_values_and_request_numbers(tmp_path, chrome):
    """c-change: 8 requests, the largest prompt 8818 tokens; ticks every 2500 line up with the bars."""
    from selenium.webdriver.common.by import By

    log = next((LIVE / "c-change" / "home").glob("sessions/*/*/session.jsonl.zstd"))
    chrome.get(_report(tmp_path, log).as_uri())
    ticks = chrome.find_elements(By.CSS_SELECTOR, "#timeline .yaxis .tick")
    assert [t.text for t in ticks] == ["0", "2500", "5000", "7500"]
    assert [c.text for c in chrome.find_elements(By.CSS_SELECTOR, "#timeline .req .idx")] == [
        "0", "1", "2", "3", "4", "5", "6", "7"]
    assert chrome.find_element(By.CSS_SELECTOR, "#timeline .yaxis .axis-title").text == "tokens"
    assert chrome.find_element(By.CSS_SELECTOR, "#timeline .yaxis .xtitle").text == "request"
    # a bar of v tokens reaches the height of the tick v: read a value off the chart
    bars = chrome.execute_script("""
        return Array.from(document.querySelectorAll('#timeline .req .bar.prompt')).map(function(b){
          var r=b.getBoundingClientRect();return [r.top,r.bottom];});""")
    centres = chrome.execute_script("""
        return Array.from(document.querySelectorAll('#timeline .yaxis .tick')).map(function(t){
          var r=t.getBoundingClientRect();return [Number(t.getAttribute('data-value')),(r.top+r.bottom)/2];});""")
    baseline, top = bars[5][1], bars[5][0]  # request 5: the largest prompt
    assert {bottom for _, bottom in bars} == {baseline}
    per_token = (baseline - top) / 8818
    assert [value for value, _ in centres] == [0, 2500, 5000, 7500]
    for value, centre in centres:
        assert abs(baseline - value * per_token - centre) < 1.5, (value, centre, baseline)
    title = chrome.find_element(By.ID, "request-2").get_attribute("title")
    assert title.startswith("request 2 (loop 2/1/1): prompt 7993, expected 0, actual 0, "), title


def _sized_log(tmp_path: Path, name: str, usages: list[tuple[int, int]]) -> Path:
    """A log ``session-axis-<name>`` of one request per (cache miss, cache read) usage."""
    b = LogBuilder(session_id=f"session-axis-{name}")
    for k, (miss, read) in enumerate(usages):
        with b.turn(f"question {k}"):
            with b.step():
                b.assistant(f"answer {k}", usage={"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read})
    return b.write_jsonl(tmp_path / name / "session.jsonl")


#: Each log's y-axis labels: a 1-token prompt, 6, 8 and 10 digits (10**9: the most one count holds)
AXIS_LABELS = {
    "1": ["0", "1"],
    "6": ["0", "50000", "100000"],
    "8": ["0", "25000000", "50000000", "75000000"],
    "10": ["0", "250000000", "500000000", "750000000", "1000000000"],
}
#: Each label's box against every box that clips it (overflow not visible) and the window: the parts cut off
_CUT_LABELS = """
return Array.from(document.querySelectorAll('#timeline .yaxis .tick'), t => {
  const r = t.getBoundingClientRect(), cut = [];
  if (r.left < 0 || r.right > window.innerWidth) { cut.push('window'); }
  for (let p = t.parentElement; p; p = p.parentElement) {
    const c = getComputedStyle(p), b = p.getBoundingClientRect();
    const clips = c.overflowX !== 'visible' || c.overflowY !== 'visible';
    if (clips && (r.left < b.left - 0.5 || r.right > b.right + 0.5)) {
      cut.push(p.id || p.className);
    }
  }
  return [t.textContent, t.scrollWidth <= Math.ceil(r.width), cut];
});"""


@pytest.mark.parametrize("width", [1400, 390])
def test_axis_labels_are_whole_at_every_magnitude_and_counts_print_as_the_cli_prints_them(tmp_path, chrome, width):
    """Issue 14: a fixed 58 px gutter cut "10,000,000" to "0,000,000" at the chart's scrolling
    edge; the gutter now fits its longest label, at 1400 px and on a 390 px phone. Every count
    the page shows is printed as the CLI's tables print it (no thousands separator: the session's
    8064000 stood next to the totals' 72,576,000), the embedded data keeping raw numbers."""
    from selenium.webdriver.common.by import By

    logs = [_sized_log(tmp_path, "1", [(1, 0)]), _sized_log(tmp_path, "6", [(123456, 0)]),
            _sized_log(tmp_path, "8", [(12_000_000, 0), (4_000_000, 83_654_321)]),
            _sized_log(tmp_path, "10", [(1_000_000_000, 0)])]
    out = tmp_path / "sizes.html"
    result = run_check(logs, policy=Policy())
    page = format_html(result)
    out.write_text(page, encoding="utf-8")
    data = build_report_data(result)
    assert data["totals"]["cache"]["prompt_tokens"] == 1_099_777_778  # the data: raw numbers
    # the static summary (no script) says the counts as the script does
    assert ('<tr data-key="hit"><th>hit ratio</th><td>7.6% (83654321 of 1099777778 prompt tokens)</td></tr>'
            in page)
    if width != 1400:
        chrome.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        chrome.get(out.as_uri())
        assert chrome.execute_script("return window.innerWidth") == width
        assert _rows(chrome, "#totals table.cache-totals tr[data-key]")["hit"] == (
            "7.6% (83654321 of 1099777778 prompt tokens)")
        assert _rows(chrome, "#totals table.totals tr[data-key]")["requests"] == "5"
        shown = {}
        for k, s in enumerate(data["sessions"]):
            chrome.execute_script("window.dshReport.session(arguments[0])", k)
            shown[s["session_id"].rpartition("-")[2]] = chrome.execute_script(_CUT_LABELS)
            if s["session_id"] == "session-axis-8":
                assert _rows(chrome, "#overview tr[data-key]")["hit"] == "83.9% (83654321 of 99654321 prompt tokens)"
                assert chrome.find_element(By.CSS_SELECTOR, "#timeline .req[data-request='1']").get_attribute("title").startswith(
                    "request 1 (loop 2/1/1): prompt 87654321, expected ")
        assert shown == {name: [[label, True, []] for label in labels] for name, labels in AXIS_LABELS.items()}
    finally:
        if width != 1400:
            chrome.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _long_log(tmp_path: Path) -> Path:
    """An id and a title with no place to break a line, in a deep folder."""
    long_id = "session-" + "x" * 180
    folder = tmp_path.joinpath(*["a-rather-long-folder-name-without-spaces"] * 4)
    return _titled_log(folder, "T" * 200, session_id=long_id, created_at=1_800_000_200_000)


def test_screenshots_at_1400_and_390_px_and_no_horizontal_overflow_on_a_phone(tmp_path, chrome):
    from selenium.webdriver.common.by import By

    shots = tmp_path / "screenshots"
    shots.mkdir()
    out = tmp_path / "phone.html"
    out.write_text(format_html(run_check([SAMPLES, _long_log(tmp_path)], policy=Policy())), encoding="utf-8")
    chrome.get(out.as_uri())
    assert chrome.execute_script("return window.innerWidth") == 1400
    assert chrome.find_element(By.ID, "session-title").text == "T" * 200  # the newest session opens
    name = chrome.find_element(By.CSS_SELECTOR, "#session-list .name")
    assert name.get_attribute("title") == f"{'T' * 200}\nsession-{'x' * 180}\n{_long_log(tmp_path)}"
    chrome.save_screenshot(str(shots / "report-1400.png"))

    chrome.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        chrome.get(out.as_uri() + "#s1-request-1")  # session-sample-change, its detail open
        assert chrome.execute_script("return window.innerWidth") == 390
        assert _detail_heading(chrome, "Request 1 · loop 2/1/1") == "Request 1 · loop 2/1/1"
        overflow = "return [document.documentElement.scrollWidth, window.innerWidth]"
        width, inner = chrome.execute_script(overflow)
        assert width <= inner, (width, inner)
        # the long name is cut in the list (its full text in the title) and wraps in the section
        assert chrome.execute_script(
            "var n=document.querySelector('#session-list .name');return n.scrollWidth>n.clientWidth") is True
        chrome.get(out.as_uri() + "#session-8")  # the long one: after the 8 sample logs
        assert chrome.find_element(By.ID, "session-title").text == "T" * 200
        width, inner = chrome.execute_script(overflow)
        assert width <= inner, (width, inner)
        chrome.execute_script("window.scrollTo(0, 0)")  # the list and the section's start
        chrome.save_screenshot(str(shots / "report-390.png"))
    finally:
        chrome.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert sorted(p.name for p in shots.iterdir()) == ["report-1400.png", "report-390.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in shots.iterdir())
