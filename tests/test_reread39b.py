"""Session 39, issue 11 re-read (part B): one piece of code for one job, outputs unchanged.

- ``sessions`` escapes each title once while fitting it to the column (it escaped it 4-5 times).
- The end of the year 9999 has one definition, the cache's: ``window_text`` asks the reader for it.
- ``grouped_notes`` matches each note against discovery's copy note once (it matched it twice).
- ``_body_decode`` keeps the gzip magic bytes private (no other module uses them).
- ``watch`` passes its notes through the history's hold in one helper (three copies of a loop).
- ``compare_capture`` searches a captured body for ``base64`` once (it searched it twice).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dsh_audit import _body_decode
from dsh_audit.cache import parse_instant
from dsh_audit.capture import _compare, compare_capture, load_capture
from dsh_audit.capture._types import CapturedRequest
from dsh_audit.cli import _copy_notes, _sessions_fit, _when
from dsh_audit.session import open_session, route_apis, route_renderer
from dsh_audit.watch._watch import _Watch

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "e-compaction"


# -- sessions: a title escaped once -----------------------------------------------------------------------------

_ROWS = [
    ("2026-11-01 08:30", "Fix \x1b[31mred\x1b[0m output in the [bold]table[/bold] renderer please now", "proj", "12",
     "50.0%", "1", "$0.01", "s-1"),
    ("2026-11-02 09:00", "漢字のタイトルはとても長いのでここで切られるはずです、そうですよね", None, "3", "-", "0", "$0.00",
     "s-2"),
    ("2026-11-03 10:00", "short", "p", "1", "-", "0", "-", "s-3"),
]


def test_sessions_fits_titles_escaped_once_with_the_same_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control characters, markup and wide characters: each title escaped once, cut as before."""
    monkeypatch.setenv("COLUMNS", "80")
    titles = {row[1] for row in _ROWS}
    escaped: list[object] = []
    real = _sessions_fit._shown
    monkeypatch.setattr(_sessions_fit, "_shown", lambda cell: escaped.append(cell) or real(cell))
    listed = [SimpleNamespace(session_id=row[-1], path=f"/x/{row[-1]}.jsonl") for row in _ROWS]
    rows, droppable, least, captions = _sessions_fit.narrowed(list(_ROWS), listed, set())  # type: ignore[arg-type]
    assert sorted(str(cell) for cell in escaped if cell in titles) == sorted(titles)
    assert [row[1] for row in rows] == ["Fix \\u001b[31mred\\u001b[0m…", "漢字のタイトルはとても長いの…", "short"]
    assert [row[:1] + row[2:] for row in rows] == [row[:1] + row[2:] for row in _ROWS]
    assert (droppable, least) == (("project",), {"title": 29})
    assert captions == ["title: cut to fit (--json for whole titles)"]


# -- one end of 9999 ---------------------------------------------------------------------------------------------

def test_the_end_of_9999_is_the_cache_readers_alone() -> None:
    end = parse_instant("9999-12-31", end=True)
    assert end == 253402300800.0 and not hasattr(_when, "_END_OF_9999")
    assert _when.window_text(None, end) == "--until 10000-01-01T00:00:00Z (the end of 9999-12-31)"
    assert _when.window_text(end - 1, None) == "--since 9999-12-31T23:59:59Z"


# -- copy notes: said once for many sessions where they are made, not parsed again ------------------------------

def test_copy_notes_of_two_sessions_are_one_note_that_grouped_notes_keeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery says the copies of several sessions in one note (``copy_notes``, from what it
    compared: fuzz round 23 moved it there, so that ``check`` says it too); a listing command's
    ``grouped_notes`` keeps every note as it is (it parsed each again to group them)."""
    from dsh_audit.log import copy_notes

    grouped = ["2 sessions found in two files each (the same lines): each read once, from the file DSH reads; e.g. "
               "under r/a/: read home/a.jsonl, skipped logs/a.jsonl"]
    assert copy_notes([(f"r/{n}/home/{n}.jsonl", f"r/{n}/logs/{n}.jsonl", "the same lines") for n in "ab"]) == grouped
    assert _copy_notes.grouped_notes(iter(["x", *grouped])) == ["x", *grouped]


# -- body decoding: the gzip magic is private ---------------------------------------------------------------------

def test_body_decode_exports_only_what_other_modules_use() -> None:
    assert _body_decode.__all__ == ["BodyDecodeError", "NotUndone", "UndecodableBody", "body_bytes",
                                    "content_encoding", "decoded_body", "decoded_stored", "is_gzip", "names_base64",
                                    "stored_bytes", "undo_codings"]
    assert not hasattr(_body_decode, "GZIP_MAGIC") and _body_decode._GZIP_MAGIC == b"\x1f\x8b"


# -- unpriced warnings: the price-file key and the reason of their owners (patch item1) ----------------------------

def test_unpriced_warnings_quote_keys_and_match_reasons_as_their_owners_do() -> None:
    from dsh_audit._pyproject import dotted_key
    from dsh_audit.cache import load_prices, no_price
    from dsh_audit.cli import _unpriced

    assert not hasattr(_unpriced, "_toml_key") and not hasattr(_unpriced, "_BARE_KEY")
    assert load_prices(search_from="/").quote("local-openai", "模型", 1796209398.0) == no_price("模型") == \
        "no price for model '模型'"
    assert dotted_key("models", "gpt-5.4", "模型\x1b", ascii_only=False) == 'models."gpt-5.4"."模型\\u001b"'
    assert _unpriced._price_hint(None, "模型\x1b") == (
        'no provider logged: give --prices FILE a [providers.PROVIDER.models."模型\\u001b"] table of cache_miss, '
        "cache_read and output rates")


# -- watch: one hold helper ----------------------------------------------------------------------------------------

class _History:
    """Holds every item while ``holding``; records each item it was asked to hold."""

    def __init__(self, *, holding: bool) -> None:
        self.holding, self.asked = holding, list[Any]()

    def hold(self, item: Any) -> bool:
        self.asked.append(item)
        return self.holding


def _unheld(history: _History, notes: list[Any]) -> Iterator[Any]:
    watch = object.__new__(_Watch)
    watch.history = history  # type: ignore[assignment]
    return watch.unheld(notes)


def test_watch_shows_a_note_the_history_does_not_hold_each_in_turn() -> None:
    history = _History(holding=False)
    shown = _unheld(history, ["a", "b"])
    assert history.asked == []  # nothing asked before a note is wanted: a note is held, or shown, in turn
    assert (next(shown), history.asked) == ("a", ["a"])
    assert (list(shown), history.asked) == (["b"], ["a", "b"])
    held = _History(holding=True)
    assert (list(_unheld(held, ["a", "b"])), held.asked) == ([], ["a", "b"])


# -- a damaged header: the reader's decision, validate's too (patch item7) ------------------------------------------

def test_a_damaged_header_is_refused_by_the_readers_one_decision(tmp_path: Path) -> None:
    from dsh_audit.errors import DamagedLogError
    from dsh_audit.log import header_refusal
    from dsh_audit.validate import _source

    importers = Path(__file__).parent / "data" / "importers"
    codex = (importers / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
    lines = codex.read_bytes().splitlines()
    (tmp_path / "all.jsonl").write_bytes(b"".join(line[: len(line) // 2] + b"\n" for line in lines))
    (tmp_path / "first.jsonl").write_bytes(b"".join(line + b"\n" for line in [lines[0][:9], *lines[1:]]))
    dsh = (Path(__file__).parent.parent / "sample_logs" / "chat" / "session.jsonl").read_bytes().splitlines()
    (tmp_path / "dsh.jsonl").write_bytes(b"".join(line + b"\n" for line in [dsh[0][:9], *dsh[1:]]))
    every = header_refusal(str(tmp_path / "all.jsonl"))
    assert every is not None and every[0] is None and isinstance(every[1], DamagedLogError)
    first = header_refusal(str(tmp_path / "first.jsonl"))
    assert first is not None and (first[0], first[1].message, first[1].line) == (
        "codex", "this is a codex session, not a DSH log", 1)
    assert header_refusal(str(tmp_path / "dsh.jsonl")) is None
    assert header_refusal(str(tmp_path / "gone.jsonl")) is None
    assert not any(hasattr(_source, name) for name in ("sniff_format", "_sniffed", "_refused_foreign"))


# -- capture comparison: one search for base64 ----------------------------------------------------------------------

class _Body(bytes):
    """A captured body that counts the searches for ``base64`` in it."""

    searches = 0

    def __contains__(self, item: object) -> bool:
        if item == b"base64":
            type(self).searches += 1
        return super().__contains__(item)  # type: ignore[operator]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is absent")
def test_compare_capture_searches_each_body_for_base64_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each compared body is searched once, a compaction's too (parsed for its instruction alone)."""
    session = open_session(next(CORPUS.glob("home/sessions/*/*/session.jsonl.zstd")))
    read = CapturedRequest.body.fget  # type: ignore[attr-defined]
    monkeypatch.setattr(CapturedRequest, "body", property(lambda self: _Body(read(self))))
    parsed: list[bytes] = []
    monkeypatch.setattr(_compare, "parse_json", lambda raw: parsed.append(raw) or json.loads(raw))
    monkeypatch.setattr(_Body, "searches", 0)
    rows = compare_capture(session.requests, load_capture(CORPUS / "wire.jsonl"), render=route_renderer([session]),
                           routes=route_apis([session]))
    compared = [row for row in rows if row.verdict not in ("unmatched", "foreign")]
    assert [(row.kind, row.verdict) for row in rows].count(("compaction", "identical")) == 1
    assert len(compared) == 9 and _Body.searches == 9  # one search a compared body
    assert len(parsed) == 1  # no body of this capture names base64: the compaction's alone is parsed


def test_a_title_is_cut_between_escapes_as_an_id_is() -> None:
    # sessions cut titles with its own escape pattern, which split \U and surrogate-pair escapes
    from dsh_audit.cli._sessions_fit import _title_cut

    assert [_title_cut(title, width) for title, width in (
        ("abcdef\\U0001f600xyz", 9), ("abcdef\\ud83d\\ude00xyz", 13), ("ab\\xffcdefgh", 5), ("ab\\u001bcdefgh", 9))] \
        == ["abcdef…", "abcdef…", "ab…", "ab\\u001b…"]
