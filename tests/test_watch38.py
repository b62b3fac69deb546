"""``dsh-audit watch --until WHEN`` (issue 14 leftovers, session 38): `watch` had --since but no
--until. Now the requests sent at or after WHEN, by their log's own timestamps (as `sessions` and
`usage` read --until), are left out, history and new alike; the same forms as --since, refused the
same way. Real file watching, as ``test_watch_fixes.py``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.testing import LogBuilder
from dsh_audit.watch import WatchItem, WatchNote, WatchRequest, watch

START = 1_800_000_000_000  # 2027-01-15 08:00 UTC, in ms
UNTIL = "2027-01-15T08:15"  # between the second turn (08:10) and the third (08:20)


def _turns(count: int) -> list[bytes]:
    """A chat of ``count`` turns ten minutes apart by the log's own clock (08:00, 08:10, ...), one
    request each, as the bytes each turn adds (the header with the first)."""
    b = LogBuilder(session_id="session-w38", created_at=START)
    pieces, written = [], 0
    for turn in range(count):
        b.clock.now = START + turn * 600_000
        with b.turn(f"turn {turn}"), b.step():
            b.assistant(f"answer {turn}", usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0})
        lines = b.lines(packed=False)
        pieces.append("".join(line + "\n" for line in lines[written:]).encode())
        written = len(lines)
    return pieces


def _log(tmp_path: Path) -> Path:
    path = tmp_path / "sessions" / "--p--" / "session-w38" / "session.jsonl"
    path.parent.mkdir(parents=True)
    return path


def test_until_leaves_out_the_history_sent_at_or_after_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _log(tmp_path).write_bytes(b"".join(_turns(3)))
    monkeypatch.setenv("COLUMNS", "200")
    args = ("watch", str(tmp_path / "sessions"), "--since", "100000d", "--until", UNTIL, "--idle-exit", "0.3",
            "--polling")
    code, out, err = invoke(monkeypatch, capsys, *args, "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and err == []
    assert [(line["index"], line["sent_at"]) for line in lines if line["type"] == "request"] == [
        (0, "2027-01-15T08:00:00Z"), (1, "2027-01-15T08:10:00Z")]  # not #2, sent 08:20
    assert (lines[-1]["type"], lines[-1]["requests"], lines[-1]["cost_usd"]["total"]) == ("summary", 2, 0.000072)
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert code == 0 and out.splitlines() == [
        "2027-01-15 08:00:00  session-w38  #0 t1/s1/a1  deepseek-v4-flash  prompt 100  cache 0 of 0 reusable "
        "(0 expected)  $0.000036  as_expected",
        "2027-01-15 08:10:00  session-w38  #1 t2/s1/a1  deepseek-v4-flash  prompt 100  cache 0 of 0 reusable "
        "(0 expected)  $0.000036  as_expected"]
    assert err[-1] == "watched 1 session(s): 2 request(s), 0 break(s), $0.0001"


@pytest.mark.parametrize("notifications", [False, True])
@pytest.mark.parametrize(("until", "expected"), [(UNTIL, [(1, False)]), (None, [(1, False), (2, False)])])
def test_until_leaves_out_new_requests_sent_after_it(tmp_path: Path, notifications: bool, until: str | None,
                                                     expected: list[tuple[int, bool]]) -> None:
    """A real watch over a folder: the first turn is there before the watch (no --since: not shown),
    the second is written while watching (sent 08:10: shown), then the third (sent 08:20: left out;
    without --until, shown: the watch reads it before it ends)."""
    from dsh_audit.cli._when import parse_when

    first, second, third = _turns(3)
    log = _log(tmp_path)
    log.write_bytes(first)
    stop, items = threading.Event(), list[WatchItem]()
    moment = None if until is None else parse_when(until, option="--until", end=True)
    for item in watch([tmp_path / "sessions"], stop=stop, until=moment,
                      poll=0.02, idle_exit=1.0, exit_after=30, notifications=notifications):
        items.append(item)
        if isinstance(item, WatchNote) and item.level == "watching":
            with open(log, "ab") as handle:
                handle.write(second)
        elif isinstance(item, WatchRequest) and item.index == 1:
            with open(log, "ab") as handle:  # read before the watch goes idle (a second with no growth)
                handle.write(third)
    shown = [(item.index, item.history) for item in items if isinstance(item, WatchRequest)]
    assert shown == expected
    assert not [item for item in items if isinstance(item, WatchNote) and item.level in ("error", "warning")]


def test_a_bad_until_is_one_line_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path), "--until", "soon")
    assert (code, out, err) == (2, "", [
        "error: Invalid value for '--until': cannot read --until 'soon' (give a date (2026-11-01), today or "
        "yesterday (UTC days), a date-time (2026-11-01T08:30, or with an offset such as +01:00 or Z; UTC when "
        "none) or an age such as 90s, 30m, 12h, 7d or 2w) (hint: see `dsh-audit watch --help`)"])
    # an empty window, refused as every command refuses it
    code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path), "--since", "2027-01-16", "--until",
                            "2027-01-15")
    assert (code, out, err) == (2, "", [
        "error: --since must be before --until: --since 2027-01-16T00:00:00Z --until 2027-01-16T00:00:00Z is an "
        "empty window (hint: --until WHEN ends the window, and a date there includes that whole day: give a "
        "--since before it, or swap the two)"])


def test_help_says_what_until_leaves_out(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "2000")
    code, out, _ = invoke(monkeypatch, capsys, "watch", "--help")
    assert code == 0
    lines = out.splitlines()
    at = next(k for k, line in enumerate(lines) if line.lstrip().startswith("--until WHEN"))
    end = next(k for k in range(at + 1, len(lines)) if lines[k].startswith("  --"))  # the next option
    assert " ".join(" ".join(lines[at:end]).split()[2:]) == (
        "Leave out the requests sent at or after WHEN by their log's own timestamps (as `sessions` and `usage` "
        "read --until; when the watch saw it, for a log that records none), history and new alike, and their "
        "breaks: not printed, not counted in the summary, no --on-break run; a date includes that whole day. "
        "Same forms as --since. The watch goes on (Ctrl-C, --idle-exit or --exit-after ends it). "
        "[env var: DSH_AUDIT_WATCH_UNTIL]")
