"""Issues 11/15 leftovers (session 38): format detection itself tells a damaged foreign log
(:func:`dsh_audit.log._format.sniff_format`). A Codex rollout or Claude Code transcript whose first
line alone is damaged is still that agent's log: the commands that import it read it and warn of
the line as of a damaged line in the middle, the DSH-only commands refuse it as they refuse it
whole; never "corrupt session log" (the DSH reader's words, the wrong format). One every line of
which is damaged is named as such by every command. A DSH log whose first line is damaged keeps
DSH's words. Only a bounded head of each line is looked at."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from dsh_audit.log import FormatSniff, _format, detect_format, sniff_format

DATA = Path(__file__).parent / "data" / "importers"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
DSH = Path(__file__).parent.parent / "sample_logs" / "chat" / "session.jsonl"
CODEX_NAMED = ("every record of this Codex rollout is damaged: {} line(s) not JSON, the first at line 1 (hint: "
               "nothing in it can be imported; read an intact copy of the rollout: Codex keeps them under "
               "~/.codex/sessions)")
FOREIGN = ("this is a {} session, not a DSH log (hint: sessions, requests, show, render, cache, usage, diff and "
           "index import it; validate, breaks, explain, check, report, redact and watch read DSH logs only)")
NOT_JSON = "corrupt session log: header line is not valid JSON"


def _cut(line: bytes) -> bytes:
    return line[: len(line) // 2]  # a record cut short: not JSON


def _write(path: Path, lines: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _first_cut(source: Path, folder: Path) -> Path:
    lines = source.read_bytes().splitlines()
    return _write(folder / source.name, [_cut(lines[0]), *lines[1:]])


# Format detection --------------------------------------------------------------------------------

def test_a_rollout_every_line_of_which_is_cut_is_named_by_detection(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [_cut(line) for line in CODEX.read_bytes().splitlines()])
    found = sniff_format(path)
    assert (found.format, str(found.damaged)) == (None, f"{path}:1: " + CODEX_NAMED.format(24))
    assert detect_format(path) is None  # no record names it: discovery and check's foreign test are as before


def test_every_damaged_line_is_counted_past_the_sniffed_ones(tmp_path: Path) -> None:
    """The format is told from the first lines; the count is of all of them (40 > 32 sniffed)."""
    lines = [_cut(line) for line in CODEX.read_bytes().splitlines()]
    path = _write(tmp_path / "r.jsonl", (lines * 2)[:40])
    assert str(sniff_format(path).damaged) == f"{path}:1: " + CODEX_NAMED.format(40)


@pytest.mark.parametrize(("source", "fmt"), [(CODEX, "codex"), (CLAUDE, "claude-code")])
def test_a_first_line_alone_damaged_does_not_hide_the_format(tmp_path: Path, source: Path, fmt: str) -> None:
    assert sniff_format(_first_cut(source, tmp_path)) == FormatSniff(fmt)


def test_a_dsh_log_whose_header_is_cut_is_no_other_format(tmp_path: Path) -> None:
    assert sniff_format(_first_cut(DSH, tmp_path)) == FormatSniff(None)


def test_lines_led_as_no_format_are_given_up_on(tmp_path: Path) -> None:
    """100 damaged lines that begin as no record, then a rollout: not read past the 32 sniffed."""
    lines = CODEX.read_bytes().splitlines()
    path = _write(tmp_path / "r.jsonl", [b"garbage %d" % n for n in range(100)] + lines)
    assert sniff_format(path) == FormatSniff(None)
    assert sniff_format(path, max_records=200) == FormatSniff("codex")


class _Spy(io.BytesIO):
    """A file whose every read is recorded: how much was asked and given at once."""

    largest = 0

    def readline(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        assert size is not None and 0 < size <= _format._HEAD, "a line is never read whole"
        got = super().readline(size)
        _Spy.largest = max(_Spy.largest, len(got))
        return got


def test_a_long_damaged_line_is_never_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first line of 100,000 bytes (standing for a 1 GiB one) is read past in pieces of the
    head's size (256 here), never held; the rollout after it is told."""
    lines = CODEX.read_bytes().splitlines()
    path = _write(tmp_path / "r.jsonl", [b"x" * 100_000, *lines])
    monkeypatch.setattr(_format, "_HEAD", 256)

    def spied(name: str, **_: Any) -> _Spy:
        return _Spy(Path(name).read_bytes())

    monkeypatch.setattr(_format, "open_regular", spied)
    _Spy.largest = 0
    assert sniff_format(path) == FormatSniff("codex")  # line 2, longer than 256 bytes: told by its leading fields
    assert _Spy.largest == 256


def test_heads_give_each_line_once_with_its_number() -> None:
    def heads(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
        return _format._heads(io.BytesIO(data))

    assert list(heads(b'{"a":1}\n' + b"y" * (3 << 20) + b"\nz")) == [
        (1, b'{"a":1}\n', True), (2, b"y" * _format._HEAD, False), (3, b"z", True)]


# Commands on a rollout or transcript whose first line alone is damaged ---------------------------

def _both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], source: Path,
          *args: str, blank: bool = False) -> tuple[tuple[int, str, list[str]], tuple[int, str, list[str]]]:
    """``dsh-audit ARGS NAME`` on the intact log (``blank``: with its first line blank, the record
    left out) and on the one whose first line is cut, each run in its own folder under the same name."""
    lines = source.read_bytes().splitlines()
    _write(tmp_path / "intact" / source.name, [b"", *lines[1:]] if blank else lines)
    _first_cut(source, tmp_path / "cut")
    said = []
    for folder in ("intact", "cut"):
        monkeypatch.chdir(tmp_path / folder)
        said.append(invoke(monkeypatch, capsys, *args, source.name))
    return said[0], said[1]


@pytest.mark.parametrize("source", [CODEX, CLAUDE])
def test_requests_imports_it_and_warns_of_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], source: Path) -> None:
    """Read as the same log with the record left out is (a rollout's first record is its
    session_meta: its session id and instructions are lost with it), and the line said skipped."""
    left_out, cut = _both(tmp_path, monkeypatch, capsys, source, "requests", blank=True)
    assert left_out[0] == 0 and "│ 3 │" in left_out[1]
    assert cut == (0, left_out[1], [f"warning: {source.name}:1: not JSON, skipped", *left_out[2]])


@pytest.mark.parametrize("source", [CODEX, CLAUDE])
def test_cache_imports_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                          source: Path) -> None:
    """The same timeline as the log with the record left out, and the line said skipped (as
    ``requests`` says it: every command that reads the log warns of its skipped lines)."""
    left_out, cut = _both(tmp_path, monkeypatch, capsys, source, "cache", blank=True)
    assert left_out[0] == 0 and "│ 3 │" in left_out[1]
    assert cut == (0, left_out[1], [f"warning: {source.name}:1: not JSON, skipped", *left_out[2]])


@pytest.mark.parametrize(("source", "fmt"), [(CODEX, "codex"), (CLAUDE, "claude-code")])
def test_breaks_refuses_it_as_the_whole_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str], source: Path, fmt: str) -> None:
    intact, cut = _both(tmp_path, monkeypatch, capsys, source, "breaks")
    assert intact == (2, "", [f"error: {source.name}:1: " + FOREIGN.format(fmt)])
    assert cut == (2, "", [f"warning: {source.name}:1: not JSON, skipped", *intact[2]])


@pytest.mark.parametrize(("source", "fmt"), [(CODEX, "codex"), (CLAUDE, "claude-code")])
def test_validate_refuses_it_as_the_whole_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str], source: Path, fmt: str) -> None:
    intact, cut = _both(tmp_path, monkeypatch, capsys, source, "validate")
    assert intact == cut == (2, "", [f"error: {source.name}:1: " + FOREIGN.format(fmt)])


@pytest.mark.parametrize(("source", "fmt"), [(CODEX, "codex"), (CLAUDE, "claude-code")])
def test_check_refuses_it_as_the_whole_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], source: Path, fmt: str) -> None:
    intact, cut = _both(tmp_path, monkeypatch, capsys, source, "check")
    assert intact == cut == (2, "", [f"error: {source.name}:1: " + FOREIGN.format(fmt)])


# A DSH log whose header line is damaged keeps DSH's words ----------------------------------------

def test_a_dsh_log_whose_header_is_cut_is_said_in_dshs_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    _first_cut(DSH, tmp_path)
    monkeypatch.chdir(tmp_path)
    name = DSH.name
    refused = (f"error: {name}:1: {NOT_JSON} (hint: this is not a DSH session log, or its first line is damaged; "
               "nor is it a session the claude-code or codex importer recognises)")
    for command in ("requests", "breaks", "cache"):
        assert invoke(monkeypatch, capsys, command, name) == (2, "", [refused]), command
    assert invoke(monkeypatch, capsys, "validate", name) == (1, (
        f'{name}:1: DSH201 error: header line is not valid JSON (start the file with {{"type":"session",'
        '"version":0,...})\n'), ["1 error(s), 0 warning(s), 0 info in 1 file(s): DSH201 x1"])
    code, out, err = invoke(monkeypatch, capsys, "check", name)
    assert (code, err) == (1, [])
    assert out.splitlines()[-2:] == [  # validate's DSH201 is the same fault: said once, as the refusal
        f"{name}:1: DSH801 error (fails the gate: fail-on-refusal): {NOT_JSON} (hint: this is not a DSH session "
        "log, or its first line is damaged)",
        "FAILED: 1 log(s), 0 request(s), 1 error(s), 0 warning(s), 0 info, 1 failing (policy: defaults)"]


# Every line damaged: breaks and cache too (requests, check, validate: test_import_damaged37.py) ---

@pytest.mark.parametrize("command", ["breaks", "cache"])
def test_every_line_cut_is_named_by_breaks_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], command: str) -> None:
    _write(tmp_path / CODEX.name, [_cut(line) for line in CODEX.read_bytes().splitlines()])
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, command, CODEX.name) == (2, "", [
        f"error: {CODEX.name}:1: " + CODEX_NAMED.format(24)])
