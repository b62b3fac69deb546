"""Lone surrogates (issue 15, fuzz round 34A): ``index`` keeps one row per log even when two paths
differ only as a byte the file system holds (``\\udcff`` to Python) and the 7 characters ``\\udcff``
(R3), and an index written by the earlier, ambiguous form drops its ambiguous rows once, saying so (and
again for rows an earlier dsh-audit stores later); ``stats`` shows those paths as they are, not as stored.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.fleet import fleet_stats

from dsh_audit.gate import Policy, run_check
from dsh_audit.report import format_html
from dsh_audit.testing import LogBuilder

from _cli import chat_log, invoke


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    """``index`` with its summary line's wall time as ``T``."""
    code, out, err = invoke(monkeypatch, capsys, "index", *args)
    return code, re.sub(r" in \d+\.\d s", " in T s", out.rstrip("\n")), err


def _stored(db: Path) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(db)) as connection:
        return connection.execute("SELECT path, session_id FROM sessions ORDER BY session_id").fetchall()


def test_a_byte_and_its_escape_as_text_are_two_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Folders ``a<0xff>`` and ``a\\udcff``: two rows, each under its own stored path, counted twice,
    and both unchanged on the next run."""
    root = (tmp_path / "root").resolve()
    chat_log(root / os.fsdecode(b"a\xff") / "session.jsonl", "s-bytes")
    chat_log(root / "a\\udcff" / "session.jsonl", "s-literal")
    db = tmp_path / "i.sqlite"
    assert _run(monkeypatch, capsys, str(root), "--db", str(db)) == \
        (0, f"{db}: indexed 2, skipped 0 unchanged, of 2 log(s) in T s", [])
    assert _stored(db) == [(f"{root}/a\\udcff/session.jsonl", "s-bytes"),
                           (f"{root}/a\\\\udcff/session.jsonl", "s-literal")]
    assert _run(monkeypatch, capsys, str(root), "--db", str(db)) == \
        (0, f"{db}: indexed 0, skipped 2 unchanged, of 2 log(s) in T s", [])
    assert fleet_stats(db).totals["sessions"] == 2
    # stats shows each path as it is, not as stored: JSON's escape of the byte, the 7 characters as they are
    # (it showed a\\udcff, a folder that does not exist), and the table as every command shows a path
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--json", "--sort", "time")
    assert (code, [(r["session_id"], r["path"]) for r in json.loads(out)["top_sessions"]]) == (0, [
        ("s-literal", f"{root}/a\\udcff/session.jsonl"), ("s-bytes", f"{root}/a\udcff/session.jsonl")])
    assert (f'"{root}/a\\udcff/session.jsonl"' in out, f'"{root}/a\\\\udcff/session.jsonl"' in out) == (True, True)
    monkeypatch.setenv("COLUMNS", "220")  # the room the "reusable" column took from the path (issue 11 item 3)
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--sort", "time")
    rows = [line.split("│") for line in out.splitlines() if line.startswith("│ s-")]  # the path cut in its middle
    assert (code, [(row[1].strip(), row[2].strip().rsplit("/", 2)[1]) for row in rows]) == (
        0, [("s-literal", "a\\udcff"), ("s-bytes", "a\\xff")])


def test_an_index_of_the_earlier_form_drops_its_ambiguous_rows_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An index without the ``stored_text`` mark (as an earlier dsh-audit left it) loses the rows it
    cannot tell apart, says so in one note, reads the log again, and keeps the rest; so does one that
    an earlier dsh-audit wrote a row into since (re-read D, finding 6: it kept the mark, so the row was
    kept and its log said to be "one session in two files")."""
    root = (tmp_path / "root").resolve()
    chat_log(root / os.fsdecode(b"a\xff") / "session.jsonl", "s-bytes")
    chat_log(root / "plain" / "session.jsonl", "s-plain")
    db = tmp_path / "i.sqlite"
    assert _run(monkeypatch, capsys, str(root), "--db", str(db))[0] == 0
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("DELETE FROM meta WHERE key = 'stored_text'")
    dropped = ("note: 1 stored log(s) whose path or session id holds a \\udXXX escape dropped: an earlier "
               "dsh-audit stored it ambiguously; each is read again when given")
    assert _run(monkeypatch, capsys, str(root), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 1 unchanged, of 2 log(s) in T s", [dropped])
    assert _stored(db) == [(f"{root}/a\\udcff/session.jsonl", "s-bytes"),
                           (f"{root}/plain/session.jsonl", "s-plain")]
    assert _run(monkeypatch, capsys, str(root), "--db", str(db)) == \
        (0, f"{db}: indexed 0, skipped 2 unchanged, of 2 log(s) in T s", [])
    with closing(sqlite3.connect(db)) as connection, connection:  # an earlier dsh-audit stores it again, later
        connection.execute("UPDATE sessions SET indexed_at = indexed_at + 60 WHERE session_id = 's-bytes'")
    for said in (("indexed 1, skipped 1", [dropped]), ("indexed 0, skipped 2", [])):
        assert _run(monkeypatch, capsys, str(root), "--db", str(db)) == \
            (0, f"{db}: {said[0]} unchanged, of 2 log(s) in T s", said[1])


# Controls (NUL, BEL, ESC, C1 CSI and NEL), bidi override, isolate and marks, BOM, a tag character and a
# line separator; and each as the CLI shows it (terminal_text), the one escape form of every output.
HIDDEN = "\x00\x07\x1b]0;T\x07\x9b31m\x85\u202eRTL\u2066\u200f\u061c\ufeff\U000e0001\u2028"
SHOWN = ("\\u0000\\u0007\\u001b]0;T\\u0007\\u009b31m\\u0085\\u202eRTL\\u2066\\u200f\\u061c\\ufeff"
         "\\U000e0001\\u2028")
# Any character the page must not draw raw: a text node's or an attribute's (a pre's line breaks aside).
RAW_JS = """var raw=/[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Co}\\p{Zl}\\p{Zp}]/u,out=[];
var w=document.createTreeWalker(document.body,NodeFilter.SHOW_TEXT),n;
while((n=w.nextNode())){if(raw.test(n.data.replace(/\\n/g,""))){out.push(n.parentNode.tagName);}}
document.querySelectorAll("*").forEach(function(e){for(var a of e.attributes){if(raw.test(a.value)){out.push(a.name);}}});
return out;"""


def test_chromium_shows_a_lone_surrogate_and_control_and_bidi_characters_as_their_escapes(tmp_path: Path,
                                                                                        browser: Any) -> None:
    """R2: a title ending in a lone high surrogate (which killed this Chromium as text drawn) and a
    pair split across a prompt and its answer: the page loads, shows each lone half as ``\\udXXX``
    (the prompt in the drill-down too), keeps a real pair (an emoji) as it is, and the data it searches stays the
    log's text. Issue 15: control, C1 and bidi characters in the id, project, model and prompt are
    shown as the CLI shows them (a byte that was not UTF-8 as ``\\xff``), never drawn (a bidi override
    would reorder what a reader sees); a message keeps its line breaks, its tab and CR escaped as the
    CLI's lines show them; nothing runs, search matches ordinary text, and the data keeps every character."""
    from selenium.webdriver.common.by import By

    b = LogBuilder(session_id="s-44" + HIDDEN, id_seed="x", cwd="/p\udcff" + HIDDEN, model="m" + HIDDEN)
    with b.turn("hello\ud83d\tx" + HIDDEN + "\r\nline2"), b.step():
        b.assistant("\ude00 there")
    b.title("t \U0001f600 t\ud83d")
    log = b.write_jsonl(tmp_path / "s" / "session.jsonl")
    other = LogBuilder(session_id="s-2", id_seed="y")  # a page of two logs: it lists them, with tooltips
    with other.turn("hi"), other.step():
        other.assistant("ok")
    logs = [log, other.write_jsonl(tmp_path / "t" / "session.jsonl")]
    page = format_html(run_check(logs, policy=Policy()))
    out = tmp_path / "page.html"
    out.write_text(page, encoding="utf-8", errors="strict")
    browser.get(out.as_uri() + "#s0-request-0")
    assert browser.find_element(By.ID, "session-title").text == "t \U0001f600 t\\ud83d"
    assert browser.find_element(By.CSS_SELECTOR, '#overview tr[data-key="title"] td').text == "t \U0001f600 t\\ud83d"
    assert browser.find_element(By.CSS_SELECTOR, '#overview tr[data-key="models"] td').text == "m" + SHOWN
    assert browser.find_element(By.CSS_SELECTOR, "#session-info .ident").text == \
        f"project /p\\xff{SHOWN} · s-44{SHOWN} · {tmp_path}/s/session.jsonl"
    assert f"\nhello\\ud83d\\u0009x{SHOWN}\\u000d\nline2\n" in \
        browser.execute_script("return document.getElementById('detail').innerText")
    assert browser.execute_script(RAW_JS) == ["title", "title"]  # each name's tooltip: its two line breaks
    assert sorted(a.get_attribute("title").split("\n")
                  for a in browser.find_elements(By.CSS_SELECTOR, "#session-list a.name")) == \
        [["s-2", "s-2", str(logs[1])], ["t \U0001f600 t\\ud83d", "s-44" + SHOWN, str(log)]]
    assert browser.execute_script("return [document.title, document.scripts.length, document.images.length]") == \
        ["dsh-audit report", 2, 0]
    box = browser.find_element(By.ID, "search")
    box.send_keys("line2")  # both requests hold the prompt (the title call's too)
    assert browser.find_element(By.ID, "search-count").text == "2 of 2 request(s) match"
    box.clear()
    box.send_keys("line3")
    assert browser.find_element(By.ID, "search-count").text == "0 of 2 request(s) match"
    assert '"title":"t \\ud83d\\ude00 t\\ud83d"' in page  # the data: the log's text, as usage --json has it
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page, re.S)
    assert blob and json.loads(blob[1])["sessions"][0]["session_id"] == "s-44" + HIDDEN
