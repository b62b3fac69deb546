"""The HTML forensics page, opened in a real headless Chromium (Debian's ``chromium`` package).

Skips only when Chromium, its driver or Selenium is absent. Never downloads a browser: the driver
is Debian's ``chromium-driver`` at /usr/bin/chromedriver.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.gate import Policy, run_check
from dsh_audit.report import build_report_data, format_html
from dsh_audit.testing import LogBuilder

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SCRIPT_TEXT = "<script>window.__pwned=1</script>"
TEXTAREA_TEXT = "</textarea><img src=x onerror=window.__pwned=2>"
HOSTILE = f"Look at this: {SCRIPT_TEXT} and {TEXTAREA_TEXT} &amp; done"


def _hostile_log(tmp_path: Path) -> Path:
    """Turn 1 carries hostile text; a system prompt change before turn 2 breaks the prefix cache."""
    b = LogBuilder(session_id="session-hostile", cwd="/home/dev/project", system="You are a coding agent.")
    with b.turn(HOSTILE):
        with b.step():
            b.assistant(f"Echo: {TEXTAREA_TEXT}")
    b.configure(system="You are a coding agent in plan mode.")
    with b.turn("Second question"):
        with b.step():
            b.assistant("Second answer.")
    return b.write_jsonl(tmp_path / "hostile" / "session.jsonl")


def test_html_is_self_contained_and_embeds_log_text_only_as_escaped_json(tmp_path):
    log = _hostile_log(tmp_path)
    result = run_check([log], policy=Policy())
    page = format_html(result)
    assert SCRIPT_TEXT not in page and "</textarea>" not in page and "<img" not in page
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page), "the page must load nothing"
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in blob and ">" not in blob and "&" not in blob
    assert json.loads(blob) == json.loads(json.dumps(build_report_data(result)))
    assert page.count("<script") == 2 and "innerHTML" not in page


def _driver(user_data: Path):
    if not CHROMIUM.exists() or not Path(CHROMEDRIVER).exists():
        pytest.skip("Chromium or chromedriver is not installed (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={user_data}", "--window-size=1400,900"):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    return webdriver.Chrome(options=options, service=service)


@pytest.fixture
def browser(tmp_path):
    driver = _driver(tmp_path / "chrome-profile")
    yield driver
    driver.quit()


def test_report_in_chromium_timeline_break_cause_and_inert_hostile_text(tmp_path, browser):
    from selenium.webdriver.common.by import By

    log = _hostile_log(tmp_path)
    out = tmp_path / "report.html"
    run = CliRunner().invoke(cli, ["report", str(log), "-o", str(out)], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    browser.get(out.as_uri())

    timeline = browser.find_element(By.ID, "timeline")
    columns = timeline.find_elements(By.CSS_SELECTOR, ".req")
    assert [c.get_attribute("data-request") for c in columns] == ["0", "1"]
    markers = timeline.find_elements(By.CSS_SELECTOR, ".break-marker")
    assert [m.get_attribute("data-request") for m in markers] == ["1"]

    markers[0].click()
    detail = browser.find_element(By.ID, "detail")
    assert detail.find_element(By.TAG_NAME, "h2").text == "Request 1 · loop 2/1/1"
    assert detail.find_element(By.CSS_SELECTOR, ".cause").text == "header_change"
    evidence = detail.find_elements(By.CSS_SELECTOR, ".evidence li b")
    assert evidence and all(e.text.endswith("request/header") for e in evidence)
    fields = [row.find_elements(By.TAG_NAME, "td")[0].text
              for row in detail.find_elements(By.CSS_SELECTOR, "table.fields tr")[1:]]
    assert fields == ["system"]

    columns[0].click()
    texts = [p.text for p in browser.find_elements(By.CSS_SELECTOR, "#detail .messages pre.text")]
    assert HOSTILE in texts and f"Echo: {TEXTAREA_TEXT}" not in texts  # request 0 has only the prompt
    columns[1].click()
    texts = [p.text for p in browser.find_elements(By.CSS_SELECTOR, "#detail .messages pre.text")]
    assert texts == [HOSTILE, f"Echo: {TEXTAREA_TEXT}", "Second question"]
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('img, textarea').length") == 0
    assert browser.execute_script("return document.scripts.length") == 2
    assert browser.get_screenshot_as_png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_large_log_is_paged(tmp_path, browser):
    from selenium.webdriver.common.by import By

    b = LogBuilder(session_id="session-long")
    with b.turn("Count to 450, one step each."):
        for n in range(450):
            with b.step():
                b.assistant(f"{n}")
    log = b.write_jsonl(tmp_path / "long" / "session.jsonl")
    out = tmp_path / "long.html"
    out.write_text(format_html(run_check([log], policy=Policy())), encoding="utf-8")
    browser.get(out.as_uri())
    assert len(browser.find_elements(By.CSS_SELECTOR, "#timeline .req")) == 200
    browser.find_element(By.ID, "next-page").click()
    browser.find_element(By.ID, "next-page").click()
    columns = browser.find_elements(By.CSS_SELECTOR, "#timeline .req")
    assert [c.get_attribute("data-request") for c in columns] == [str(n) for n in range(400, 450)]
    columns[-1].click()
    assert browser.find_element(By.CSS_SELECTOR, "#detail h2").text == "Request 449 · loop 1/450/1"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#detail .messages pre.text")) == 30
