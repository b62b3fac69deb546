"""Session 46 (issue 14, brief m14b): narrow terminals and the progress of one long session.

- `sessions`' progress bar moved with the bytes read alone: on one long log it stood full, its clock
  stopped, while the cache accounting ran for seconds. A log that is no child nor parent, with no capture,
  is now accounted as it is read (brief f14), so the bar moves with its bytes; the logs of a group read
  whole, then accounted, count a third of their bytes (the rest when the rows are made); the bar shows its
  percentage and clock, no byte figure (brief m17: it said 13.3/40.0 MB of a 40 MB log read whole).
- A JSON evidence string folded at its ``-`` (``"deepseek-`` / ``official"``); a session id in
  `watch`'s folded line at its ``-`` (``session-…-4444-`` / ``555566667777``): a token is never split.
- `usage`'s hint cut the TOML key a user copies (``[providers.local-op….models.local-coder]``).
- `diff`'s and `validate`'s summary lines did not wrap where captions do.
"""

from __future__ import annotations

import os
import re
import shutil
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner

from _cli import invoke, mixed_home
from _terminal import DRAWING, in_terminal, run_dsh_audit
from dsh_audit.cache import summary_group
from dsh_audit.cli import cli
from dsh_audit.log._progress import READ_HOOK, read_progress, read_share
from dsh_audit.report.terminal import fit_lines, long_words_cut
from dsh_audit.session import run_groups

ROOT = Path(__file__).resolve().parent.parent
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"
CHANGE = ROOT / "sample_logs" / "sessions" / "--home-dev-projects-demo--" / "session-sample-change" / "session.jsonl.zstd"
HOME = ROOT / "sample_logs" / "sessions" / "--home-dev-projects-demo--"
FORK = [HOME / name / "session.jsonl.zstd" for name in ("session-sample-fork-parent", "fork-child~003Areview")]
C_CHANGE = Path(os.environ.get("DSH_AUDIT_CORPUS", ROOT.parent / "shared" / "corpus")) / "live" / "c-change"
LONG_ID = "session-aaaa1111-2222-3333-4444-555566667777"


def test_read_share_reports_a_share_of_the_bytes_read_adding_up() -> None:
    seen: list[int] = []
    with read_progress(seen.append), read_share(1 / 3):
        hook = READ_HOOK.get()
        assert hook is not None
        for size in (1, 1, 1, 3000, 2):
            hook(size)
    assert seen == [1, 1000]  # 1 and 2 bytes: 0; 3: 1; 3003: 1001; 3005: 1001 (nothing new)


def test_a_read_share_changed_counts_the_bytes_read_from_then_on_at_the_new_share() -> None:
    seen: list[int] = []
    with read_progress(seen.append), read_share(1) as share:
        hook = READ_HOOK.get()
        assert hook is not None
        hook(10)
        share.share = 1 / 3
        hook(30)
        hook(2)
        share.share = 1
        hook(5)
    assert seen == [10, 10, 5]  # 10 whole; 30 and 2 at a third (10.67: 10); then 5 whole (25.67: 25)
    with read_share(1 / 3) as share:  # no hook in effect: nothing to report to
        assert READ_HOOK.get() is None and share.hook is None


@pytest.mark.parametrize("accounting", [True, False])
def test_a_lone_sessions_bar_moves_with_the_bytes_read_while_it_is_accounted(accounting: bool) -> None:
    """Brief m14b: (8246, 8246) once the log was read, the accounting still to run (the bar full, its clock
    stopped); then (2748, 8246), a third, the read weighed. Now it is accounted as it is read: its bytes
    move the bar as they are read, the accounting with them."""
    assert CHAT.stat().st_size == 8246
    reports: list[tuple[int, int]] = []
    found = run_groups([CHAT], partial(summary_group, accounting=accounting),
                       progress=lambda done, total: reports.append((done, total)))
    assert [type(item).__name__ for item in found] == ["SessionSummary"]
    assert reports == [(0, 8246), (8246, 8246), (8246, 8246)]  # the log read (and accounted); the task done


def test_a_group_read_whole_then_accounted_counts_a_third_of_its_bytes_until_its_rows_are_made() -> None:
    """A fork child and its parent are read whole, then accounted together: their reads move the bar a
    third of their bytes (3482 / 3, then 2841 / 3), the rows made the rest."""
    assert [path.stat().st_size for path in FORK] == [3482, 2841]
    reports: list[tuple[int, int]] = []
    found = run_groups(FORK, summary_group, progress=lambda done, total: reports.append((done, total)))
    assert [type(item).__name__ for item in found] == ["SessionSummary", "SessionSummary"]
    assert reports == [(0, 6323), (1160, 6323), (2107, 6323), (6323, 6323)]


def _sessions_frames(*extra: str) -> tuple[int, list[str]]:
    """`sessions` of the chat log with stderr a terminal, its bar drawn at once: the exit code and the
    bar's states as drawn, in order, each once, its elapsed time left out."""
    env = {**os.environ, "DSH_AUDIT_PROGRESS_DELAY": "0", "PYTHONPATH": str(ROOT)}
    code, _, err = run_dsh_audit(["sessions", str(CHAT), "--json", *extra], tty=True, env=env, cwd=ROOT)
    shown = [DRAWING.sub(b"", frame).decode() for frame in err.split(b"\r")]
    return code, list(dict.fromkeys(re.sub(r"\d+:\d\d:\d\d$", "", f).rstrip() for f in shown if f.strip()))


def test_a_sessions_bar_that_may_weigh_its_reads_shows_no_byte_figure() -> None:
    """Before (brief m14b): ``sessions  33% 2.7/8.2 kB`` with the whole log read, and 13.3/40.0 MB of a
    40 MB log: a third of the bytes, as if read. The percentage of the work stays, its clock running; a lone
    log, accounted as it is read, goes from its start to its end with its bytes (brief f14: no stop at 33%)."""
    assert _sessions_frames() == (0, ["sessions", "sessions    0%", "sessions  100%"])


def test_without_accounting_a_sessions_bar_is_the_bytes_read() -> None:
    assert _sessions_frames("--no-cost") == (0, ["sessions   0/? bytes", "sessions    0% 0.0/8.2 kB",
                                                 "sessions  100% 8.2/8.2 kB"])


EVIDENCE = ['  seq 20 request/header', '    {"reason":"change",', '    "config":{"provider":', '    "deepseek-official",',
            '    "model":"deepseek-v4-pro",', '    "reasoningEffort":"high",', '    "maxTokens":65536},',
            '    "adapterDefaults":null,', '    "system_chars":31,"tools":3}']


def test_a_json_string_is_never_split_at_its_hyphen() -> None:
    """Before: ``"deepseek-`` / ``official",``, and ``"model":"deepseek-`` / ``v4-pro"}}``."""
    assert fit_lines('  x {"config":{"provider":"deepseek-official","model":"deepseek-v4-pro"}}', 30) == [
        '  x', '    {"config":{"provider":', '    "deepseek-official",', '    "model":', '    "deepseek-v4-pro"}}']


def test_explain_at_40_columns_keeps_each_evidence_string_whole() -> None:
    """Before: ``"config":{"provider":"deepseek-`` / ``official","model":"deepseek-v4-pro",``."""
    result = CliRunner().invoke(cli, ["explain", str(CHANGE), "1"], env={"COLUMNS": "40"}, catch_exceptions=False)
    lines = result.output.splitlines()
    assert (result.exit_code, lines[lines.index("evidence:") + 1:]) == (0, EVIDENCE)


def _long_id_home(tmp_path: Path) -> Path:
    log = tmp_path / "sessions" / "p" / "s1" / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(CHAT.read_text(encoding="utf-8").replace("session-sample-chat", LONG_ID), encoding="utf-8")
    return tmp_path / "sessions"


def test_watch_at_40_columns_cuts_a_long_session_id_never_splits_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``  session-aaaa1111-2222-3333-4444-`` then ``  555566667777``."""
    monkeypatch.setenv("COLUMNS", "40")
    code, out, _ = invoke(monkeypatch, capsys, "watch", str(_long_id_home(tmp_path)), "--since", "100000d",
                          "--idle-exit", "0.1", "--polling")
    assert (code, out.splitlines()[:6]) == (0, [
        "2027-01-15 08:00:00", "  session-aaaa1111-2222-3333-4444-55556…", "  Who are you  #0 title",
        "  deepseek-v4-flash  prompt ?", "  cache ? of 0 reusable (0 expected)  $?", "  usage_unknown"])
    assert [line for line in out.splitlines() if len(line) > 40] == []


def test_a_toml_key_a_hint_names_is_never_cut() -> None:
    key = "[providers.local-openai.models.local-coder]"
    assert long_words_cut(f"give --prices FILE a {key} table", 20) == f"give --prices FILE a {key} table"
    assert long_words_cut(f"a {key}, then", 20) == f"a {key}, then"
    huge = f"[providers.x.models.{'m' * 600}]"  # past _TOML_KEY_MOST: one line's room, not 15 lines
    assert long_words_cut(huge, 40) == huge[:19] + "…" + huge[-20:]


def test_usage_at_40_columns_prints_the_prices_table_key_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``give --prices FILE a [providers.deepse….models.local-coder] table``."""
    mixed_home(tmp_path, monkeypatch, columns=40)
    code, _, err = invoke(monkeypatch, capsys, "usage")
    hint = [line for line in err if "local-coder" in line]
    assert (code, hint) == (0, [
        "warning: 1 request(s) unpriced: no price for model 'local-coder' (provider deepseek-official: give "
        "--prices FILE a [providers.deepseek.models.local-coder] table of cache_miss, cache_read and output rates)"])


def test_validate_says_its_summary_wrapped_on_a_40_column_terminal(tmp_path: Path) -> None:
    """Before: ``0 error(s), 0 warning(s), 0 info in 1 file(s)``, 45 columns on a 40-column terminal."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES") and not k.startswith("DSH_AUDIT_")}
    env.update(PYTHONPATH=str(ROOT), TERM="xterm")
    code, shown, _ = in_terminal(["validate", str(CHAT)], columns=40, env=env, cwd=tmp_path, stderr_too=True)
    assert (code, shown.splitlines()) == (0, ["0 error(s), 0 warning(s), 0 info in 1", "  file(s)"])


@pytest.mark.skipif(not C_CHANGE.is_dir(), reason="the shared corpus is absent")
def test_diffs_summary_wraps_as_a_caption_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Before: ``8 request(s): 8 identical; 0 capture(s) unexplained, 0 foreign: OK``, 63 columns of 60."""
    shutil.copytree(C_CHANGE, tmp_path / "c")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = invoke(monkeypatch, capsys, "diff", "c/home/sessions")
    assert (code, out.splitlines()[-2:]) == (0, ["8 request(s): 8 identical; 0 capture(s) unexplained, 0",
                                                 "  foreign: OK"])
