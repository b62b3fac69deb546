"""One read for the session and the validation rules (issue 11): the findings the rules give over
the lines of the session's own read (``open_group``/``read_session``/``open_session`` with
``validate=True``, fed through the reader's ``tee``) are exactly :func:`validate`'s, which reads
the file on its own: same rules, messages, lines, seqs and order, for every corpus log and for
damaged, refused and hostile files built here."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import pytest
import zstandard

from dsh_audit.errors import UnreadableError, UsageError
from dsh_audit.log import Line, TornTail, discover, iter_lines, open_regular, read_log
from dsh_audit.session import Failure, Session, family_groups, open_group, open_session, read_session
from dsh_audit.validate import Finding, LineValidator, validate

from test_bad_input import event_line, plain_lines, tools_builder, write

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"


def one_pass(item: Session | Failure) -> list[Finding]:
    assert item.validation is not None, item
    return list(item.validation)


def rules(findings: Sequence[Finding]) -> list[tuple[str, int | None]]:
    return [(f.rule, f.line) for f in findings]


# -- every corpus log ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_logs() -> list[Path]:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    return discover([CORPUS, ROOT / "sample_logs"])


def test_corpus_groups_find_what_validate_finds(corpus_logs: list[Path]) -> None:
    """Read as ``check`` reads them: a folder's logs together, parents found beside children."""
    assert len(corpus_logs) > 200
    checked = differ = 0
    for group in family_groups(corpus_logs):
        opened = open_group(group, validate=True, foreign=False)
        for path, item in zip(group, opened.given):
            expected = validate(path)
            found = one_pass(item)
            differ += found != expected
            assert found == expected, path
            checked += 1
        assert [a.validation for a in opened.ancestors] == [None] * len(opened.ancestors)  # read, not checked
    assert (checked, differ) == (len(corpus_logs), 0)


def test_corpus_sessions_find_what_validate_finds_leniently(corpus_logs: list[Path]) -> None:
    with_findings = 0
    for path in corpus_logs:
        item = read_session(path, lenient=True, validate=True)
        expected = validate(path, lenient=True)
        assert one_pass(item) == expected, path
        with_findings += bool(expected)
    assert with_findings > 0  # the corpus holds logs with findings, so the equality says something


# -- damaged, refused and hostile files ----------------------------------------------------------


def _second_turn_lines() -> list[str]:
    builder = tools_builder()
    builder.start_turn("One more thing.")
    builder.start_step()
    builder.user("first")
    return builder.lines(packed=False)


def _torn_zstd(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(tools_builder().zstd_bytes()[:-7])  # the last frame is cut off
    return path


def _garbage_line(tmp_path: Path) -> Path:
    lines = plain_lines()
    lines[10] = "{not json"  # before a turn/end: DSH refuses the log at the turn/end
    return write(tmp_path / "session.jsonl", lines)


def _blank_run(tmp_path: Path) -> Path:
    lines = _second_turn_lines()
    return write(tmp_path / "session.jsonl", [*lines[:-1], "", "", "", "", lines[-1]])  # a dropped tail


def _refused_early(tmp_path: Path) -> Path:
    """A seq gap the reader refuses at line 11 (the turn/end after it), then more problems the
    reader never reaches: validation still reports them, from the one read."""
    lines = _second_turn_lines()
    del lines[10]
    seq = json.loads(lines[-1])["seq"] + 1
    lines.append(event_line(seq, "plugin/thing", {}))
    lines.append("{not json")
    lines.append(event_line(seq + 2, "turn/end", {"turn": 2, "reason": {"kind": "completed"}}))
    return write(tmp_path / "session.jsonl", lines)


def _refused_header(tmp_path: Path) -> Path:
    lines = plain_lines()
    lines[0] = lines[0].replace('"type":"session"', '"type":"sesion"', 1)
    lines[12] = lines[12].replace('"seq":11', '"seq":"11"', 1)
    return write(tmp_path / "session.jsonl", lines)


def _corrupt_frame(tmp_path: Path) -> Path:
    """A zstd log whose third frame is damaged inside (corrupt data, not a torn tail)."""
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    text = tools_builder().jsonl_bytes(packed=False).splitlines(keepends=True)
    damaged = bytearray(compressor.compress(b"".join(text[6:12])))
    damaged[-6] ^= 0xFF  # inside the frame's last block
    frames = [compressor.compress(text[0]), compressor.compress(b"".join(text[1:6])), bytes(damaged),
              compressor.compress(b"".join(text[12:]))]
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(b"".join(frames))
    return path


def _bomb(tmp_path: Path) -> Path:
    header = CHAT.read_bytes().split(b"\n", 1)[0] + b"\n"
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(compressor.compress(header) + compressor.compress(b"\n" * (16 << 20)))
    return path


def _not_utf8(tmp_path: Path) -> Path:
    lines = plain_lines()
    path = write(tmp_path / "session.jsonl", lines)
    data = path.read_bytes().split(b"\n")
    data[7] = data[7].replace(b'"seq"', b'"s\xffeq"', 1)
    path.write_bytes(b"\n".join(data))
    return path


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    return path


def _chat(tmp_path: Path) -> Path:
    return CHAT


# the reader refuses the seq gap at line 11; the rules go on to the end of the file
# (the seq line 86 held is no gap at line 87: session 40)
REFUSED_EARLY = [("DSH107", 11), ("DSH310", 23), ("DSH506", 85), ("DSH104", 86), ("DSH402", 87)]
# (rule, line) of every finding: exact, so that each case is the damage it says it is
CASES = {
    "torn zstd tail": (_torn_zstd, [("DSH407", 58), ("DSH103", 59)]),
    "garbage line": (_garbage_line, [("DSH104", 11)]),  # its event's seq is no gap, its chunk no DSH310
    "blank run": (_blank_run, [("DSH407", 84), ("DSH106", 85)]),
    "refused early": (_refused_early, REFUSED_EARLY),
    "refused header": (_refused_header, [("DSH202", 1), ("DSH111", 13), ("DSH310", 24)]),
    "corrupt frame": (_corrupt_frame, [("DSH101", 7)]),
    "decompression bomb": (_bomb, [("DSH101", 2)]),
    "not utf-8": (_not_utf8, [("DSH102", 8)]),
    "empty file": (_empty, [("DSH201", 1)]),
    "clean": (_chat, []),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_damaged_logs_find_what_validate_finds(tmp_path: Path, case: str) -> None:
    make, expected = CASES[case]
    path = make(tmp_path)
    found = validate(path)
    assert rules(found) == expected
    group = open_group([path], validate=True, foreign=False)
    assert one_pass(group.given[0]) == found
    assert one_pass(read_session(path, validate=True, foreign=False)) == found


def test_a_refused_log_is_a_failure_carrying_every_finding(tmp_path: Path) -> None:
    path = _refused_early(tmp_path)
    item = open_group([path], validate=True).given[0]
    assert isinstance(item, Failure)
    assert (item.error.line, item.error.seq) == (11, 10)  # where DSH stops: the record's own seq (session 40)
    assert item.validation is not None and rules(item.validation) == REFUSED_EARLY  # read on for the rules


def test_open_session_validates_in_its_read(tmp_path: Path) -> None:
    path = _blank_run(tmp_path)
    session = open_session(path, validate=True)
    assert rules(one_pass(session)) == [("DSH407", 84), ("DSH106", 85)]
    assert open_session(path).validation is None
    with pytest.raises(UsageError, match="needs a path"):
        open_session(read_log(path), validate=True)


def test_an_unopenable_log_has_no_validation(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    item = open_group([fifo], validate=True).given[0]
    assert isinstance(item, Failure) and item.validation is None
    assert "is a FIFO" in item.error.message
    with pytest.raises(UnreadableError, match="is a FIFO"):
        validate(fifo)  # validate raises the same error, so check stops at it either way


# -- the tee ---------------------------------------------------------------------------------------


class Recorder:
    """A tee that keeps what it is given (wanting at most ``limit`` lines)."""

    def __init__(self, limit: int | None = None) -> None:
        self.lines: list[int] = []
        self.ended: list[TornTail] | None = None
        self.error: UnreadableError | None = None
        self.limit = limit

    def feed(self, line: Line) -> bool:
        self.lines.append(line.number)
        return self.limit is None or len(self.lines) < self.limit

    def fail(self, error: UnreadableError) -> None:
        self.error = error

    def end(self, torn: Sequence[TornTail]) -> None:
        self.ended = list(torn)


def _numbers(path: Path) -> list[int]:
    with open_regular(path) as stream:
        return [line.number for line in iter_lines(stream, os.fspath(path), [])]


@pytest.mark.parametrize("stop", ["refused", "break"])
def test_the_tee_sees_every_line_when_the_reader_stops_early(tmp_path: Path, stop: str) -> None:
    """Refused, or stopped by a consumer on purpose: the tee has the whole log before the log is closed
    (review C of session 45, F3: after a ``break`` the validator's ``finish()`` raised until ``close()``)."""
    path = _refused_early(tmp_path)
    tee = Recorder()
    log = read_log(path, tee=tee)
    if stop == "refused":
        with pytest.raises(Exception, match="seq gap"):
            list(log.events())
    else:
        for _ in log.events():
            break
    assert tee.lines == _numbers(path) == list(range(1, 88))
    assert (tee.ended, tee.error) == ([], None)


def test_the_tee_sees_a_refused_header_and_the_rest(tmp_path: Path) -> None:
    path = _refused_header(tmp_path)
    tee = Recorder()
    with pytest.raises(Exception, match="session header"):
        read_log(path, tee=tee)
    assert tee.lines == _numbers(path) and len(tee.lines) == len(plain_lines())
    assert tee.ended == []


def test_the_tee_is_told_of_torn_tails_and_decoding_errors(tmp_path: Path) -> None:
    tee = Recorder()
    list(read_log(_torn_zstd(tmp_path), tee=tee).events())
    assert tee.ended is not None and [t.reason.split(" (")[0] for t in tee.ended] == [
        f"zstd frame {1 + len(tools_builder().batches())} is cut off at end of file"]
    tee = Recorder()
    log = read_log(_corrupt_frame(tmp_path), tee=tee)
    with pytest.raises(UnreadableError):
        list(log.events())
    assert (tee.lines, tee.ended) == ([1, 2, 3, 4, 5, 6], None)
    assert tee.error is not None and tee.error.line == 7


def test_a_tee_that_wants_no_more_is_not_fed(tmp_path: Path) -> None:
    path = _garbage_line(tmp_path)
    tee = Recorder(limit=3)
    log = read_log(path, tee=tee)
    with pytest.raises(Exception, match="unparsable"):
        list(log.events())
    assert (tee.lines, tee.ended) == ([1, 2, 3], None)


def test_findings_are_asked_for_only_after_the_whole_file(tmp_path: Path) -> None:
    checker = LineValidator(CHAT)
    log = read_log(CHAT, tee=checker)
    with pytest.raises(RuntimeError, match="before the end of the log"):
        checker.finish()
    session = open_session(log)
    assert checker.finish() == [] and len(session.requests) == 3

