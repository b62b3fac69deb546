"""Session 40 (fuzz 25, D2 and D6): every shortened id names one session, for the life of a run.

1. ``stats`` cut an id to a prefix unique among the rows its rankings show (``--top 1``:
   ``session-2b096b61``), which starts three sessions of the index: `show` refused it. The
   prefix is now unique among every session the index holds.
2. ``watch`` showed a session as ``session-2b096b61`` while it was the only one seen, then a
   later line of the same run named another session by a longer prefix of the same: the watch now
   shows each id whole, the same for its whole life.
3. ``usage`` keeps each copy's ``(PATH)`` beside its id (two ``session-sample-tools`` rows).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import invoke
from _copy_log import samples_differing
from click.testing import CliRunner

from dsh_audit.cli import cli

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
CHAT = (Path(__file__).resolve().parent.parent.parent / "shared/corpus/live/a-chat/session-logs/"
        "session-2b096b61-0a34-4da6-abec-4e87161c2c0b.jsonl")
#: Three sessions whose ids share their first UUID group (two their first three).
IDS = ("session-2b096b61-0a34-4da6-abec-4e87161c2c0b", "session-2b096b61-0a34-4da6-ffff-000000000001",
       "session-2b096b61-0a35-0000-0000-000000000002")
needs_corpus = pytest.mark.skipif(not CHAT.is_file(), reason="../shared/corpus is absent")


def _home(tmp_path: Path) -> Path:
    """A sessions root holding the a-chat log three times, each under one of :data:`IDS`."""
    lines = CHAT.read_text(encoding="utf-8").split("\n", 1)
    for session_id in IDS:
        folder = tmp_path / "sessions" / "--p--" / session_id
        folder.mkdir(parents=True)
        (folder / "session.jsonl").write_text(lines[0].replace(IDS[0], session_id) + "\n" + lines[1],
                                              encoding="utf-8")
    return tmp_path / "sessions"


def _run(columns: int, *args: str) -> str:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": str(columns)}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@needs_corpus
def test_stats_cuts_an_id_to_a_prefix_unique_in_the_whole_index(tmp_path: Path) -> None:
    root = _home(tmp_path)
    _run(80, "index", str(root), "--db", str(tmp_path / "idx.sqlite"))
    # --sort cost: every copy lost $0, which the ranking by losses leaves out (session 41)
    out = _run(80, "stats", "--db", str(tmp_path / "idx.sqlite"), "--top", "1", "--sort", "cost").splitlines()
    at = out.index("costliest sessions")
    assert out[at + 4] == "session-2b096b61-0a34-4da6-abec      7936         0  $0.0000  ≥$0.0013   $0.0000"


@needs_corpus
def test_watch_shows_each_id_whole_for_its_whole_life(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = _home(tmp_path)
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = invoke(monkeypatch, capsys, "watch", str(root), "--since", "100000d", "--idle-exit", "0.1",
                            "--polling")
    assert code == 0
    shown = [line.split()[2] for line in out.splitlines()]
    assert len(shown) == 9 and set(shown) == set(IDS)
    assert "session id (whole, for the life of the watch;" in " ".join(err)


def test_usage_keeps_the_path_of_each_copy_beside_its_id(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    samples_differing(tmp_path)  # session-sample-tools in two files that differ: two rows
    monkeypatch.chdir(tmp_path)
    out = _run(150, "usage", "sample_logs").splitlines()
    copies = [at for at, line in enumerate(out) if line.startswith("│ session-sample-tools ")]
    assert [out[at + 1].split("│")[1].strip() for at in copies] == [
        '(sample_logs/…n.jsonl.zstd)',
        '(sample_logs/…ession.jsonl)',
    ]
