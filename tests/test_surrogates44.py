"""Lone surrogates (issue 15, fuzz round 34A): ``index`` keeps one row per log even when two paths
differ only as a byte the file system holds (``\\udcff`` to Python) and the 7 characters ``\\udcff``
(R3), and an index written by the earlier, ambiguous form drops its ambiguous rows once, saying so.
"""

from __future__ import annotations

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


def test_an_index_of_the_earlier_form_drops_its_ambiguous_rows_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An index without the ``stored_text`` mark (as an earlier dsh-audit left it) loses the rows it
    cannot tell apart, says so in one note, reads the log again, and keeps the rest."""
    root = (tmp_path / "root").resolve()
    chat_log(root / os.fsdecode(b"a\xff") / "session.jsonl", "s-bytes")
    chat_log(root / "plain" / "session.jsonl", "s-plain")
    db = tmp_path / "i.sqlite"
    assert _run(monkeypatch, capsys, str(root), "--db", str(db))[0] == 0
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("DELETE FROM meta WHERE key = 'stored_text'")
    assert _run(monkeypatch, capsys, str(root), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 1 unchanged, of 2 log(s) in T s",
         ["note: 1 stored log(s) whose path or session id holds a \\udXXX escape dropped: an earlier dsh-audit "
          "stored it ambiguously; each is read again when given"])
    assert _stored(db) == [(f"{root}/a\\udcff/session.jsonl", "s-bytes"),
                           (f"{root}/plain/session.jsonl", "s-plain")]
    assert _run(monkeypatch, capsys, str(root), "--db", str(db)) == \
        (0, f"{db}: indexed 0, skipped 2 unchanged, of 2 log(s) in T s", [])


def test_chromium_shows_a_lone_surrogate_as_its_escape(tmp_path: Path, browser: Any) -> None:
    """R2: a title ending in a lone high surrogate (which killed this Chromium as text drawn) and a
    pair split across a prompt and its answer: the page loads, shows each lone half as ``\\udXXX``
    (the prompt in the drill-down too), keeps a real pair (an emoji) as it is, and the data it searches stays the
    log's text."""
    from selenium.webdriver.common.by import By

    b = LogBuilder(session_id="s-44", id_seed="x")
    with b.turn("hello\ud83d"), b.step():
        b.assistant("\ude00 there")
    b.title("t \U0001f600 t\ud83d")
    page = format_html(run_check([b.write_jsonl(tmp_path / "s" / "session.jsonl")], policy=Policy()))
    out = tmp_path / "page.html"
    out.write_text(page, encoding="utf-8", errors="strict")
    browser.get(out.as_uri() + "#request-0")
    assert browser.find_element(By.ID, "session-title").text == "t \U0001f600 t\\ud83d"
    assert browser.find_element(By.CSS_SELECTOR, '#overview tr[data-key="title"] td').text == "t \U0001f600 t\\ud83d"
    assert "\nhello\\ud83d\n" in browser.execute_script("return document.getElementById('detail').innerText")
    assert browser.execute_script("return /[\\ud800-\\udfff]/u.test(document.body.innerText)") is False
    assert '"title":"t \\ud83d\\ude00 t\\ud83d"' in page  # the data: the log's text, as usage --json has it
