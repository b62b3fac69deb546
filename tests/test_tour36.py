"""A new user's tour and fuzz round 17 (session 36): tables, notes and watch lines.

1. ``cache --format csv`` wrote ``~146`` and ``?`` in count columns: a prompt the log gives no
   size for is now an empty "prompt" beside a "prompt (estimated)" column, an unknown count empty.
2. ``stats``' session ranking at 80 columns showed whole session ids and left out 8 columns while
   the next table shortened them: both shorten ids before leaving out a column with a value.
3. ``breaks --all`` drew one log boxed and the next borderless, and said "no prefix-cache breaks"
   once after the last table: a run's tables share one style, and each --all table without a
   break says so in its caption.
4. ``stats`` on an empty window printed empty tables and no note: the fleet totals, one note.
5. Eleven "one session in two files" notes before a table: one grouped note.
6. docs/cli.md's "Pager" listed commands whose help hides --pager.
7. ``stats`` left ``-wal``/``-shm`` files beside the index it only reads.
8. ``watch``: a fork child's line had no fork mark, its notes cut paths at ``/``, and its cache
   reads did not show what "lost" is measured from; an --on-break command's stdout went into the
   JSON stream, and a failed run left no ``{"type":"error"}`` line in it.
9. ``sessions --no-cost --accounting``: the hidden old spelling beat the option typed after it.

Outputs at 80 columns read copies of the corpus under short relative paths (``tmp_path`` as the
working folder), so that no line depends on where the corpus lies.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.cli import cli
from dsh_audit.cli._watch import format_watch_line
from dsh_audit.watch import WatchRequest

LIVE = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live"
SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
needs_corpus = pytest.mark.skipif(not (LIVE / "f-fork").is_dir(), reason="../shared/corpus is absent")


def _copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """The corpus folders ``names`` copied under ``tmp_path/L``, the working folder ``tmp_path``,
    80 columns."""
    for name in names:
        shutil.copytree(LIVE / name, tmp_path / "L" / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")


@needs_corpus
def test_cache_csv_counts_are_plain_numbers_or_empty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    _copy(tmp_path, monkeypatch, "a-chat")
    code, out, _ = invoke(monkeypatch, capsys, "cache", "L/a-chat", "--format", "csv")
    assert code == 0
    log = ("L/a-chat/home/sessions/--home-dev-dsh-runs-a-a-chat-ws--/session-2b096b61-0a34-4da6-abec-4e87161c2c0b/"
           "session.jsonl.zstd,session-2b096b61-0a34-4da6-abec-4e87161c2c0b")
    assert out.splitlines() == [
        "table,log,session,#,kind,turn/step/attempt,prompt,prompt (estimated),reusable,expected,actual,classification,lost,"
        "usage source",
        f"timeline,{log},0,title,-,,146,0,0,,usage_unknown,0,",
        f"timeline,{log},1,loop,1/1/1,7969,,0,0,0,as_expected,0,log",
        f"timeline,{log},2,loop,2/1/1,8027,,7936,7936,7936,as_expected,0,log"]


@needs_corpus
def test_stats_shortens_ids_in_both_rankings_and_leaves_the_folder_as_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    _copy(tmp_path, monkeypatch, "c-change", "f-fork")
    (tmp_path / "db").mkdir()
    assert invoke(monkeypatch, capsys, "index", "L", "--db", "db/a.sqlite")[0] == 0
    assert sorted(p.name for p in (tmp_path / "db").iterdir()) == ["a.sqlite"]
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", "db/a.sqlite")
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "db").iterdir()) == ["a.sqlite"]  # no -wal, no -shm
    ranking = out[out.index("sessions whose cache losses cost the most"):out.index("costliest cache breaks")]
    assert ranking.splitlines()[4:5] == [  # compact below 100 columns
        "session-da27503b         8   62.8%     48256   11968  $0.0076  ≥$0.0111  $0.0076"]  # reusable beside lost
    said = ranking.replace("\n", " ")  # the two sessions that lost $0 are none of those that cost the most (session 41)
    assert "session: shortest unique prefix (--json for whole ids)" in said
    assert "2 session(s) whose cache losses cost nothing (no token lost, or at $0) left out" in said
    assert "session-da27503b-0c2b" not in out
    invoke(monkeypatch, capsys, "stats", "--db", "db/a.sqlite", "--json")
    assert sorted(p.name for p in (tmp_path / "db").iterdir()) == ["a.sqlite"]


@needs_corpus
def test_stats_on_an_empty_window_prints_the_totals_and_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _copy(tmp_path, monkeypatch, "a-chat")
    assert invoke(monkeypatch, capsys, "index", "L", "--db", "a.sqlite")[0] == 0
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", "a.sqlite", "--since", "2030-01-01", "--sort",
                            "cost")
    assert code == 0
    assert out.splitlines()[0] == "a.sqlite: fleet totals"
    rules = [line for line in out.splitlines() if line and set(line) == {"─"}]  # compact below 100 columns
    assert len(out.splitlines()) == 12 and len(rules) == 1  # the totals alone: no empty table
    assert err == ["note: --since 2030-01-01T00:00:00Z: no request of a.sqlite was sent in that window (by the "
                   "logs' own timestamps): nothing to rank (widen or drop --since/--until)"]


@needs_corpus
def test_breaks_all_draws_one_style_and_says_no_break_per_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _copy(tmp_path, monkeypatch, "f-fork")
    code, out, _ = invoke(monkeypatch, capsys, "breaks", "L/f-fork", "--all")
    assert code == 0
    lines = [line.rstrip() for line in out.splitlines()]
    assert lines[2:9] == [  # compact below 100 columns, as every table of the run
        "#  vs                    relation  verdict            cause  evidence seqs",
        "─" * 74,
        "0  2 (session-ef87ee25)  fork      cache_safe_change  fork   44 54",
        "no prefix-cache break in this log; vs: shortest unique prefix of a parent's",
        "session id (--json for whole ids)",
        "narrow terminal: fields, first divergence (no values) not shown (widen it, or",
        "use --json)"]
    assert lines[11:] == [
        "#  vs  verdict            cause          fields",
        "─" * 72,
        "0   -  first",
        "1   -  first",
        "2   1  cache_safe_change  header_change  adapterDefaults.reasoningEffort",
        "3   2  extension",
        "4   3  extension",
        "no prefix-cache break in this log",
        "narrow terminal: first divergence (no values), relation, evidence seqs not shown",
        "(widen it, or use --json)"]  # no trailing "no prefix-cache breaks": each table said it


@needs_corpus
def test_copies_of_many_sessions_are_one_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    _copy(tmp_path, monkeypatch, "a-chat", "f-fork")
    code, _, err = invoke(monkeypatch, capsys, "sessions", "L")
    assert code == 0
    assert err == [
        "note: 3 sessions found in two files each (the same lines): each read once, from the file DSH reads; e.g. "
        "under L/a-chat/: read home/sessions/--home-dev-dsh-runs-a-a-chat-ws--/"
        "session-2b096b61-0a34-4da6-abec-4e87161c2c0b/session.jsonl.zstd, skipped "
        "session-logs/session-2b096b61-0a34-4da6-abec-4e87161c2c0b.jsonl"]
    code, _, err = invoke(monkeypatch, capsys, "sessions", "L/a-chat")  # one such note: as it was
    assert err == ["note: one session in two files under L/a-chat/: read home/sessions/"
                   "--home-dev-dsh-runs-a-a-chat-ws--/session-2b096b61-0a34-4da6-abec-4e87161c2c0b/session.jsonl.zstd, "
                   "not session-logs/session-2b096b61-0a34-4da6-abec-4e87161c2c0b.jsonl (the same lines)"]


def test_the_pager_convention_lists_the_commands_whose_help_shows_it() -> None:
    spec = importlib.util.spec_from_file_location("gen_cli_doc", SCRIPTS / "gen_cli_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pager = next(line for line in module.render().splitlines() if line.startswith("- **Pager.**"))
    listed, hidden = pager.split("`less` (")[1].split(";")[0], pager.split("never paged. ")[1].split(" print")[0]
    for name, command in cli.commands.items():
        shown = any("--pager" in p.opts and not getattr(p, "hidden", False) for p in command.params)
        assert (f"`{name}`" in listed, f"`{name}`" in hidden) == (shown, not shown), name
    assert hidden == "`watch`, `report`, `redact` and `index`"


def _watch_request(**changes: object) -> WatchRequest:
    fields: dict[str, object] = dict(
        seen=0.0, path="s.jsonl", session_id="402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", title="Review", index=7,
        kind="loop", turn=6, step=1, attempt=1, model="deepseek-v4-pro", sent=1796209398.0, prompt_tokens=7796,
        expected=512, actual=4800, classification="break_explained", cost=0.0018, verdict="break",
        cause="header_change", relation="step", previous=6, history=True, lost_tokens=2880, lost_cost=0.0018)
    fields.update(changes)
    return WatchRequest(**fields)  # type: ignore[arg-type]


def test_a_watch_line_marks_a_child_and_shows_what_lost_is_measured_from() -> None:
    line = format_watch_line(_watch_request(potential=7680), "402a1ae8", "fork")
    assert line == ("2026-12-02 11:03:18  402a1ae8  └ fork Review  #7 t6/s1/a1  deepseek-v4-pro  prompt 7796  "
                    "cache 4800 of 7680 reusable (512 expected)  $0.0018  break_explained  BREAK header_change lost "
                    "2880 ($0.0018)")


def test_a_watch_line_without_the_reusable_reads_shows_the_rest() -> None:
    line = format_watch_line(_watch_request(relation=None, title=None), "402a1ae8")
    assert "  402a1ae8  #7 t6/s1/a1  deepseek-v4-pro  prompt 7796  cache 4800 (512 expected)  $0.0018" in line


@needs_corpus
def test_watch_json_keeps_the_hooks_output_out_and_says_each_failed_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    """The hooks are real processes: file descriptors 1 and 2 are read (``capfd``), where their
    output lands. Each run's own line goes to stderr, never into the JSON lines."""
    target = tmp_path / "sessions" / "p" / "session-c" / "session.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copy(next((LIVE / "c-change" / "session-logs").glob("*.jsonl")), target)
    for hook, errors in (("echo hook-output", 0), (f"{sys.executable} -c 'print(1); raise SystemExit(3)'", 5)):
        capfd.readouterr()
        code, out, err = invoke(monkeypatch, capfd, "watch", str(tmp_path / "sessions"), "--json", "--since",
                                "100000d", "--idle-exit", "0.1", "--polling", "--on-break", hook)
        assert code == 0
        assert err.count("hook-output" if not errors else "1") == 5
        lines = [json.loads(line) for line in out.splitlines()]  # every stdout line the watch's JSON
        assert [line["type"] for line in lines].count("break") == 5
        failed = [line for line in lines if line["type"] == "error"]
        assert [line["message"] for line in failed] == [line.removeprefix("error: ") for line in err
                                                        if line.startswith("error: --on-break")]
        assert len(failed) == errors and lines[-1]["errors"] == errors
        assert all(line["session_id"] == "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824" for line in failed)


@needs_corpus
def test_the_retired_spelling_and_the_option_typed_last_wins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    _copy(tmp_path, monkeypatch, "c-change")
    rows = {}
    for order in (("--no-cost", "--accounting"), ("--accounting", "--no-cost"), ("--no-cost",), ("--accounting",)):
        code, out, _ = invoke(monkeypatch, capsys, "sessions", "L", "--format", "csv", *order)
        assert code == 0
        header, row = list(csv.reader(io.StringIO(out)))[:2]
        rows[order] = row[header.index("hit ratio")]  # read from the cache accounting: empty without it
    assert rows == {("--no-cost", "--accounting"): "0.6276797028242115", ("--accounting",): "0.6276797028242115",
                    ("--accounting", "--no-cost"): "", ("--no-cost",): ""}


@needs_corpus
def test_watch_marks_the_fork_child_and_keeps_each_note_on_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _copy(tmp_path, monkeypatch, "f-fork")
    code, out, err = invoke(monkeypatch, capsys, "watch", "L/f-fork", "--since", "100000d", "--idle-exit", "0.1",
                            "--polling")
    assert code == 0
    # folded at 80 columns between fields, none moved (review 40 B): its cost after the cache reads
    child = [line for line in out.split("\n2026-") if "402a1ae8" in line]
    assert [" ".join(line.split()).endswith("$0.0001 as_expected") for line in child] == [True]  # its cost too
    # the id whole, as every line of the watch says it (ids40: a prefix could name a later session)
    assert child[0].splitlines()[:2] == ["12-02 11:03:18  402a1ae8-7f85-40fc-b7cf-82cfc177dcd7",
                                         "  └ fork Fake session title  #0 t2/s1/a1  deepseek-v4-flash  prompt 8352"]
    assert [line for line in err if line.startswith("note:")] == [
        f"note: one session in two files under L/f-fork/: read home/sessions/--home-dev-dsh-runs-a-f-fork-ws--/{sid}/"
        f"session.jsonl.zstd, not session-logs/{sid}.jsonl (the same lines)"
        for sid in ("402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6")]
    # piped: no note wrapped, no path cut; only the legend's continuation lines are indented
    # (wrapped at COLUMNS, at spaces)
    legend = next(i for i, line in enumerate(err) if line.startswith("each line: "))
    indented = [i for i, line in enumerate(err) if line.startswith(" ")]
    assert indented == list(range(legend + 1, legend + 1 + len(indented)))
    assert "".join(err[legend:legend + 1 + len(indented)]).count("evidence seqs") == 1
