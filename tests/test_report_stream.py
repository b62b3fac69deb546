"""`report LOG` on a root log given alone (no fork or subagent child, no capture beside it) keeps no
request: the page's data is made while the log is replayed (``run_check(record=SessionPages())``, its
texts spooled to a temporary file), and the page is byte for byte the one made from the whole
session's requests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.gate import RequestOutline, run_check
from dsh_audit.report import SessionPage, SessionPages, format_html, iter_html
from dsh_audit.report._html_texts import _Run
from dsh_audit.session import Session, open_group

from _golden import CORPUS

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "sessions" / "--home-dev-projects-demo--" / "session-sample-compaction" / \
    "session.jsonl.zstd"
LOGS = sorted({*(CORPUS / "live").glob("*/session-logs/*.jsonl"),
               *(CORPUS / "fixtures").glob("headless-snapshots/*/session*.jsonl"),  # .expected: times 0
               *(CORPUS / "live").glob("*/home/sessions/*/*/session.jsonl.zstd")})


def _alone(path: Path, folder: Path) -> Path:
    """``path`` copied alone into ``folder`` (no capture beside it)."""
    folder.mkdir(parents=True)
    copy = folder / path.name
    shutil.copyfile(path, copy)
    return copy


def _roots(tmp_path: Path) -> list[Path]:
    """Each root corpus log that replays, copied alone into its own folder (a ``session.jsonl``'s
    group is its folder's parent: one more level, so that each copy is a group of its own)."""
    copies = []
    for k, path in enumerate(LOGS):
        session = open_group([path], lenient=True).given[0]
        if isinstance(session, Session) and not session.header.parent_session:
            copies.append(_alone(path, tmp_path / f"log{k}" / "s"))
    return copies


def _pages(log: Path) -> tuple[str, str, SessionPage]:
    """The page of ``log`` made from the whole session, the page made while it was replayed, and
    the streamed check's page data."""
    whole = run_check([log], lenient=True)
    assert whole.sessions[0].record is None and whole.sessions[0].error is None, log
    streamed = run_check([log], lenient=True, record=SessionPages())
    check = streamed.sessions[0]
    assert isinstance(check.record, SessionPage), log  # the streamed path ran
    assert check.requests == tuple(map(RequestOutline.of, whole.sessions[0].requests)), log
    return format_html(whole), format_html(streamed), check.record


@pytest.mark.skipif(not LOGS, reason="../shared/corpus is absent")
def test_report_of_each_root_corpus_log_alone_is_made_while_replayed_byte_for_byte(tmp_path: Path) -> None:
    compared = 0
    copies = _roots(tmp_path)
    for copy in copies:
        whole, streamed, page = _pages(copy)
        assert streamed == whole, copy
        assert isinstance(page.records, _Run) and isinstance(page.messages.texts, _Run)  # no text in memory
        compared += 1
    assert compared >= 20, compared
    # one page of every log, each in its own folder: the pages share the two spooled files
    together = run_check(copies, lenient=True, record=SessionPages())
    assert all(isinstance(check.record, SessionPage) for check in together.sessions)
    assert len({check.record.records.spool for check in together.sessions}) == 1
    assert format_html(together) == format_html(run_check(copies, lenient=True))


def test_report_of_a_sample_log_alone_is_made_while_replayed_byte_for_byte(tmp_path: Path) -> None:
    log = _alone(SAMPLE, tmp_path / "alone")
    whole, streamed, page = _pages(log)
    assert streamed == whole
    assert page.count == 4 and '"requests":4,' in streamed  # a compaction: the history is not one extension
    result = run_check([log], lenient=True, record=SessionPages())
    assert "".join(iter_html(result)) == "".join(iter_html(result)) == whole  # the spool reads back again


def test_report_command_writes_the_streamed_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI hands a SessionPage to each log given alone; a fork child and its parent, one
    group, are read whole (a spy counts the pages made)."""
    import dsh_audit.cli._check as command

    made: list[SessionPage] = []

    class Spy(SessionPages):
        def __call__(self) -> SessionPage:
            made.append(super().__call__())
            return made[-1]

    monkeypatch.setattr(command, "SessionPages", Spy)
    log = _alone(SAMPLE, tmp_path / "alone")
    out = tmp_path / "page.html"
    result = CliRunner().invoke(cli, ["report", str(log), "-o", str(out)])
    assert (result.exit_code, result.output) == (
        0, f"wrote {out}: 1 log(s), 4 request(s), check passed: 2 explained break(s)\n")
    assert len(made) == 1 and made[0].count == 4
    assert out.read_text(encoding="utf-8") == format_html(run_check([log]))

    fork = ROOT / "sample_logs" / "generated"  # a parent and its fork child: one group, read whole
    made.clear()
    result = CliRunner().invoke(cli, ["report", str(fork), "-o", str(out)])
    assert result.exit_code == 0 and made == []
    assert out.read_text(encoding="utf-8") == format_html(run_check([fork]))


def test_a_log_refused_midway_gives_the_whole_sessions_page(tmp_path: Path) -> None:
    """A log DSH refuses after some of its requests were handed to the page: those are dropped
    and the page shows the log's error, as the whole-session path's."""
    made: list[SessionPage] = []
    pages = SessionPages()

    def page() -> SessionPage:
        made.append(pages())
        return made[-1]

    folder = tmp_path / "alone"
    folder.mkdir()
    log = folder / "session.jsonl"  # decompressed, then an event DSH refuses (a retired header delta)
    with SAMPLE.open("rb") as packed:
        text = zstandard.ZstdDecompressor().stream_reader(packed, read_across_frames=True).read()
    log.write_bytes(text + b'{"type":"request/header-delta","seq":50,"time":1800000000051,"data":{}}\n')
    whole = run_check([log], lenient=True)
    streamed = run_check([log], lenient=True, record=page)
    check = streamed.sessions[0]
    assert check.error == f'{log}:46 seq 50: session "session-sample-compaction" contains unsupported legacy ' \
        "request/header-delta event at seq 50 (hint: header deltas were retired before format v0 was frozen; " \
        "DSH cannot load this log)"
    assert (check.record, check.requests, len(made), made[0].count) == (None, (), 1, 4)
    assert format_html(streamed) == format_html(whole)
    assert '"error":' in format_html(whole) and '"requests":[]}]}' in format_html(whole)


def test_a_temporary_file_that_cannot_be_made_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """No temporary folder to spool to: `report` says so on one line, exits 2 and writes no page
    (the log itself is not blamed: its check went on)."""
    import sys
    import tempfile

    from dsh_audit.cli._common import run_guarded

    log = _alone(SAMPLE, tmp_path / "alone")
    out = tmp_path / "page.html"
    missing = tmp_path / "no-such-folder"
    monkeypatch.setattr(tempfile, "tempdir", str(missing))
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "report", str(log), "-o", str(out)])
    code = run_guarded(cli)
    captured = capsys.readouterr()
    assert (code, captured.out, out.exists()) == (2, "", False)
    assert captured.err == (f"error: {missing}: cannot write the page's temporary file: No such file or directory "
                            "(hint: free space there, or point TMPDIR at a folder with room, and run report again)\n")
