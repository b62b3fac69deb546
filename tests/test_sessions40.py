"""Session 40: ``sessions`` at 80 columns, and one grouping of sessions by capture.

1. At COLUMNS=80 the samples' ids (``session-sample-compaction``, no UUID) were never shortened, so
   "hit ratio" and "breaks" were left out. Every id is now cut to its shortest unique prefix (a
   UUID's at the end of a group, any other with ``…``), which `show` resolves; --json and
   --format csv keep whole ids. The whole table is pinned in ``test_tour80.SAMPLE_SESSIONS``.
2. ``check`` grouped its logs by capture with a copy of the loop :mod:`dsh_audit.capture` holds; it
   now calls the public :func:`dsh_audit.capture.sessions_by_capture`.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_audit.capture import sessions_by_capture
from dsh_audit.cli import cli
from dsh_audit.gate import _compare

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _run(*args: str) -> tuple[int, str]:
    """``dsh-audit ARGS`` with the samples as the DSH home, piped at 80 columns."""
    result = CliRunner().invoke(cli, list(args), env={"DSH_HOME": str(SAMPLES), "COLUMNS": "80"},
                                catch_exceptions=False)
    return result.exit_code, result.stdout


def test_each_shortened_id_is_a_prefix_show_resolves_and_json_and_csv_keep_whole_ids():
    code, out = _run("sessions", "--json")
    whole = [json.loads(line)["session_id"] for line in out.splitlines()]
    code_csv, out_csv = _run("sessions", "--format", "csv")
    assert (code, code_csv) == (0, 0)
    rows = list(csv.DictReader(io.StringIO(out_csv)))
    assert [row["id"] for row in rows] == whole  # whole ids, as --json; no totals row (as `requests` CSV: a consumer sums)
    code, out = _run("sessions")
    shown = [line.split()[-1] for line in out.splitlines()[3:3 + len(whole)]]
    assert code == 0 and shown == [
        "session-sample-t…", "session-sample-chan…", "session-sample-f…", "fork-chi…", "session-sample-co…",
        "session-sample-res…", "session-sample-chat", "session-sample-ret…"]
    found = []
    for prefix in shown:  # as shown (pasted with its `…`) and as typed without it
        answers = {_run("show", ref, "0", "--json") for ref in (prefix, prefix.removesuffix("…"))}
        assert len(answers) == 1 and next(iter(answers))[0] == 0
        found.append(json.loads(next(iter(answers))[1])["session_id"])
    assert found == ["session-sample-tools", "session-sample-change", "session-sample-fork-parent",
                     "fork-child:review", "session-sample-compaction", "session-sample-resume", "session-sample-chat",
                     "session-sample-retry"]
    assert sorted(found) == sorted(whole)


@pytest.mark.skipif(not (CORPUS / "live" / "a-chat").is_dir(), reason="needs the shared corpus")
def test_check_groups_its_logs_by_capture_with_the_capture_packages_grouping(monkeypatch):
    seen: list[dict[Path, list[str]]] = []

    def spy(sessions, given, **kwargs):
        groups = sessions_by_capture(sessions, given, **kwargs)
        seen.append({path: [s.id for s in members] for path, members in groups.items()})
        return groups

    monkeypatch.setattr(_compare, "sessions_by_capture", spy)  # before: no such name (a loop of its own)
    result = CliRunner().invoke(cli, ["check", str(CORPUS / "live" / "a-chat"), "--format", "csv"],
                                env={"COLUMNS": "80"}, catch_exceptions=False)
    assert result.exit_code == 0
    assert seen == [{CORPUS / "live" / "a-chat" / "wire.jsonl": ["session-2b096b61-0a34-4da6-abec-4e87161c2c0b"]}]
    assert list(csv.DictReader(io.StringIO(result.stdout)))[0]["capture"] == "3/3 identical"
