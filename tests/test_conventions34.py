"""One set of conventions across commands (issue 14; tour 33, findings 9, 14 and 19).

Before: ``show --json`` was refused (``No such option``) although ``show`` prints only JSON;
``sessions`` and ``usage`` had no ``--capture`` nor ``--openai-zdr`` although they price the same
breaks as ``cache`` and ``check`` (``usage --by request`` showed OpenAI's retention as unknown
whatever the organisation's status); the ``sessions`` table listed fork and subagent children as
top-level rows; and a price file's error named ``dsh_audit/cache/rules/prices.json`` (a path a
pip-installed user does not have) as its hint, and a TOML ``[providers.P.models.M]`` table as
``M[0]``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import click
import pytest

from dsh_audit.cache import SessionSummary, load_prices
from dsh_audit.cache import _price_memo, _prices
from dsh_audit.cli import cli
from dsh_audit.cli._sessions import _led, _nested
from dsh_audit.errors import UsageError
from dsh_audit.testing import LogBuilder

from _cli import chat_log, invoke
from _golden import CORPUS
import test_openai_breakpoints as openai_logs

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "sample_logs" / "tools" / "session.jsonl"
SHAPE = "the Price files section of docs/cache-accounting.md gives the shape"


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("DSH_AUDIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "120")


# -- 1. show --json --------------------------------------------------------------------------------

def test_show_json_is_the_requests_line_of_the_request_with_its_messages(monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "show", str(TOOLS), "2", "--json")
    assert (code, err, out.count("\n")) == (0, [], 1)
    shown = json.loads(out)
    code, listed, err = invoke(monkeypatch, capsys, "requests", str(TOOLS), "--json")
    row = json.loads(listed.splitlines()[2])
    assert list(shown) == [*row, "message_seqs", "messages"]  # led by "path", as each line of requests --json
    assert {key: shown[key] for key in row} == row
    assert (shown["path"], shown["index"], shown["message_seqs"], len(shown["messages"])) == (
        str(TOOLS), 2, [4, 22, 24, 38, 40], 5)
    # the bytes: --compact's exact JSON.stringify object, led by the log's path
    code, compact, err = invoke(monkeypatch, capsys, "show", str(TOOLS), "2", "--compact")
    assert (code, err) == (0, [])
    assert out == '{"path":' + json.dumps(str(TOOLS)) + "," + compact[1:]
    # --json wins over --compact (one line either way); the variable asks for it too
    assert invoke(monkeypatch, capsys, "show", str(TOOLS), "2", "--json", "--compact") == (0, out, [])
    monkeypatch.setenv("DSH_AUDIT_SHOW_JSON", "1")
    assert invoke(monkeypatch, capsys, "show", str(TOOLS), "2") == (0, out, [])


def test_show_help_documents_the_json_shape(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = invoke(monkeypatch, capsys, "show", "--help")
    assert (code, err) == (0, [])
    text = " ".join(out.split())
    assert ('With --json, the same object on one line, led by "path", the log it is from, as each line of '
            '`requests --json` is: that line (but for a capture\'s usage) with "message_seqs" and "messages" '
            'after it.') in text
    assert "--json One JSON object per line on stdout, for other tools. [env var: DSH_AUDIT_SHOW_JSON]" in text


# -- 2. --capture and --openai-zdr on sessions and usage ---------------------------------------------

def _option(command: str, name: str) -> click.Option:
    found = cli.get_command(click.Context(cli), command)
    assert found is not None
    (option,) = [p for p in found.params if isinstance(p, click.Option) and p.name == name]
    return option


@pytest.mark.parametrize("command", ["sessions", "usage"])
def test_sessions_and_usage_take_the_options_cache_and_check_take(command: str) -> None:
    for name, spelt in (("capture", "CAPTURE"), ("openai_zdr", "OPENAI_ZDR")):
        mine, cache, check = (_option(c, name) for c in (command, "cache", "check"))
        assert (mine.opts, mine.secondary_opts, mine.help) == (cache.opts, cache.secondary_opts, cache.help)
        assert mine.help == check.help
        assert mine.envvar == f"DSH_AUDIT_{command.upper()}_{spelt}"
    assert _option(command, "openai_zdr").opts == ["--openai-zdr"]
    assert _option(command, "openai_zdr").secondary_opts == ["--no-openai-zdr"]


@pytest.mark.parametrize(("flag", "retention"), [("--openai-zdr", [None, None]),
                                                 ("--no-openai-zdr", ["in_memory_or_24h", "in_memory_or_24h"])])
def test_usage_judges_openai_retention_with_the_stated_zdr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], flag: str,
                                                           retention: list[str | None]) -> None:
    log, routes = openai_logs._gpt_5_4(tmp_path)  # two gpt-5.4 requests two hours apart
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--routes", str(routes), "--by", "request",
                            "--json", flag)
    assert (code, err) == (0, [])
    rows = json.loads(out)["rows"]
    assert [(r["key"], r["cache_retention"], r["cache_write_rate"]) for r in rows] == [
        ("bp-gpt-5.4 #0", retention[0], None if retention[0] is None else "cache_miss"),
        ("bp-gpt-5.4 #1", retention[1], None if retention[1] is None else "cache_miss")]


@pytest.mark.parametrize("command", ["sessions", "usage"])
def test_a_bad_zdr_value_is_one_error_before_any_log_and_the_flag_wins(command: str, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-zdr")
    (tmp_path / "pyproject.toml").write_text('[tool.dsh-audit.cache]\nopenai-zero-data-retention = "yes"\n')
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, command, str(log)) == (2, "", [
        f"error: {(tmp_path / 'pyproject.toml').resolve()}:2: [tool.dsh-audit.cache] openai-zero-data-retention must "
        'be true or false, not "yes" (hint: write openai-zero-data-retention = true or false under '
        "[tool.dsh-audit.cache])"])
    code, out, err = invoke(monkeypatch, capsys, command, str(log), "--json", "--no-openai-zdr")  # the file is not read
    assert (code, err, out.count("\n")) == (0, [], 1)
    if command == "sessions":  # no cost, no cost setting read
        assert invoke(monkeypatch, capsys, command, str(log), "--no-cost", "--json")[::2] == (0, [])


@pytest.mark.parametrize("command", ["sessions", "usage"])
def test_a_capture_given_that_cannot_be_read_is_bad_input(command: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-cap")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    code, out, err = invoke(monkeypatch, capsys, command, str(log), "--capture", str(bad), "--json")
    assert (code, err) == (2, [f"error: {bad}: not a capture format dsh-audit knows (hint: expected a wire.jsonl "
                               "file, a HAR 1.2 file or a folder of *.json bodies)"])
    # the log is left out: no row of sessions; usage's total counts it among the logs not read
    assert (out == "") if command == "sessions" else (json.loads(out)["logs_failed"], json.loads(out)["rows"]) == (
        1, [])


@pytest.mark.skipif(not (CORPUS / "live" / "b-tools").is_dir(), reason="../shared/corpus is absent")
def test_sessions_counts_the_breaks_the_capture_given_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from test_one_story import _edited_capture  # b-tools, one captured body edited: 2 unrecorded_mutation breaks

    log = _edited_capture(tmp_path / "b-tools")
    alone = tmp_path / "alone" / "session.jsonl"  # no wire.jsonl beside it, nor above
    alone.parent.mkdir()
    shutil.copy(log, alone)

    def breaks(*args: str) -> list[tuple[str, int]]:
        code, out, err = invoke(monkeypatch, capsys, "sessions", str(alone), "--json", *args)
        # --capture prices the title call from the capture, and says so (as `cache` and `usage` do)
        assert (code, [line for line in err if "priced from the capture" not in line]) == (0, [])
        return [(row["session_id"], row["breaks"]) for row in map(json.loads, out.splitlines())]

    sid = "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"
    assert breaks() == [(sid, 0)]
    assert breaks("--capture", str(tmp_path / "b-tools" / "wire.jsonl")) == [(sid, 2)]
    assert breaks("--capture", str(CORPUS / "live" / "b-tools" / "wire.jsonl")) == [(sid, 0)]


# -- 3. sessions nests children under their parent ---------------------------------------------------

def _turn(b: LogBuilder, text: str) -> None:
    with b.turn(text):
        with b.step():
            b.assistant("Sure.")


def _family(root: Path) -> Path:
    """s-parent with a fork (s-fork, titled) and a subagent (s-sub) that has a fork of its own
    (s-grand); s-orphan, a subagent whose parent is not listed; s-other, no parent."""
    parent = LogBuilder(session_id="s-parent", created_at=1_800_000_000_000)
    _turn(parent, "one")
    fork = parent.fork(session_id="s-fork")
    _turn(fork, "review")
    fork.title("Review notes")
    sub = LogBuilder(session_id="s-sub", parent_session="s-parent", origin="subagent", delegation_depth=1,
                     created_at=1_800_000_100_000)
    _turn(sub, "look")
    grand = sub.fork(session_id="s-grand")
    _turn(grand, "deeper")
    orphan = LogBuilder(session_id="s-orphan", parent_session="s-gone", origin="subagent", delegation_depth=1,
                        created_at=1_800_000_200_000)
    _turn(orphan, "alone")
    other = LogBuilder(session_id="s-other", created_at=1_800_000_300_000)
    _turn(other, "other")
    for b in (parent, fork, sub, grand, orphan, other):
        b.write_jsonl(root / "sessions" / "--home-dev-p--" / b.session_id / "session.jsonl")
    return root / "sessions"


def test_the_table_lists_each_child_under_its_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(_family(tmp_path)), "--no-cost")
    assert (code, err) == (0, [])
    assert out.splitlines() == [  # boxed: "tokens" and "first (UTC)" kept, "format" left out for the boxes
        "6 session(s), newest first",
        "┏━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┓",
        "┃ when (UTC)       ┃ title               ┃ project           ┃ requests ┃ tokens ┃ first (UTC)      ┃ id       ┃",
        "┡━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━┩",
        "│ 2027-01-15 08:05 │ -                   │ /home/dev/project │        1 │      8 │ 2027-01-15 08:05 │ s-other  │",
        "│ 2027-01-15 08:03 │ -                   │ /home/dev/project │        1 │      8 │ 2027-01-15 08:03 │ s-orphan │",
        "│ 2027-01-15 08:00 │ -                   │ /home/dev/project │        1 │      8 │ 2027-01-15 08:00 │ s-parent │",
        "│ 2027-01-15 08:01 │ └ subagent          │ /home/dev/project │        1 │      8 │ 2027-01-15 08:01 │ s-sub    │",
        "│ 2027-01-15 08:01 │   └ fork            │ /home/dev/project │        1 │      8 │ 2027-01-15 08:01 │ s-grand  │",
        "│ 2027-01-15 08:00 │ └ fork Review notes │ /home/dev/project │        2 │      8 │ 2027-01-15 08:00 │ s-fork   │",
        "│ total            │                     │                   │        7 │     48 │                  │          │",
        "└──────────────────┴─────────────────────┴───────────────────┴──────────┴────────┴──────────────────┴──────────┘",
        "narrow terminal: hit ratio, breaks, cost (no values), format not shown (widen it, or use --json)"]


def test_json_and_csv_stay_flat_with_the_parent_and_relation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = _family(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(root), "--no-cost", "--json")
    assert (code, err) == (0, [])
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["session_id"], r["title"], r["parent_session_id"], r["relation"]) for r in rows] == [
        ("s-other", None, None, None), ("s-orphan", None, "s-gone", "subagent"), ("s-grand", None, "s-sub", "fork"),
        ("s-sub", None, "s-parent", "subagent"), ("s-fork", "Review notes", "s-parent", "fork"),
        ("s-parent", None, None, None)]
    assert list(rows[0])[-5:] == ["cost_complete", "parent_session_id", "relation", "notes", "warnings"]
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(root), "--no-cost", "--format", "csv")
    assert (code, err) == (0, [])
    table = list(csv.reader(io.StringIO(out)))
    assert table[0][:3] == ["table", "when (UTC)", "title"]
    assert [(row[2], row[-1]) for row in table[1:]] == [
        ("-", "s-other"), ("-", "s-orphan"), ("-", "s-grand"), ("-", "s-sub"), ("Review notes", "s-fork"),
        ("-", "s-parent")]  # no marker, no total row: the JSON's rows alone (as `requests` CSV; a consumer sums)


def _summary(session_id: str, parent: str | None, relation: str | None = "subagent") -> SessionSummary:
    return SessionSummary(f"{session_id}.jsonl", session_id, None, None, None, None, "dsh", 0, 1,
                          parent_session=parent, relation=relation if parent else None)


def test_logs_whose_parents_form_a_loop_are_each_listed_once() -> None:
    """Hostile logs naming each other as parent (or themselves) are each listed once: the first
    listed of a loop at the top, the others under it."""
    ordered = [_summary("a", "b"), _summary("self", "self"), _summary("b", "a"), _summary("c", "b")]
    assert [(s.session_id, depth) for s, depth in _nested(ordered)] == [("a", 0), ("b", 1), ("c", 2), ("self", 0)]


def test_a_chain_deeper_than_the_stack_is_listed_and_indented_up_to_eight_levels() -> None:
    chain = [_summary("n0", None)] + [_summary(f"n{i}", f"n{i - 1}") for i in range(1, 3000)]
    listed = list(_nested(list(reversed(chain))))
    assert [(s.session_id, depth) for s, depth in listed[:3]] == [("n0", 0), ("n1", 1), ("n2", 2)]
    assert (len(listed), listed[-1][1]) == (3000, 2999)
    assert [_led(chain[1], depth) for depth in (1, 2, 8, 9, 2999)] == [
        "└ subagent", "  └ subagent", " " * 14 + "└ subagent", " " * 14 + "└ subagent", " " * 14 + "└ subagent"]


# -- 4. price files: the user's file is named, never the packaged table --------------------------------

def _usage_with(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                prices: Path) -> tuple[int, str, list[str]]:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-priced")
    return invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices))


def test_an_error_in_a_toml_table_names_the_file_the_key_as_written_and_prices(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The tour's repro: a [providers.P.models.M] table was shown as M[0], with a source-tree path."""
    prices = tmp_path / "badprice2.toml"
    prices.write_text('[providers.local-openai.models.local-coder]\ncache_miss = "abc"\ncache_read = 0.04\n'
                      "output = 1.6\n")
    monkeypatch.chdir(tmp_path)
    assert _usage_with(monkeypatch, capsys, tmp_path, prices) == (2, "", [
        f"error: {prices}: price table key providers.local-openai.models.local-coder.cache_miss: \"abc\" is not a rate "
        f"(a number >= 0) (hint: fix this key in the --prices file; {SHAPE})"])


def test_a_period_of_a_list_is_named_by_its_index_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Periods are sorted by date once read: the index is still the one the file writes."""
    prices = tmp_path / "p.toml"
    prices.write_text('[[providers.local-openai.models.m]]\nfrom = "2026-06-01"\nbilled_as = "gone"\n\n'
                      '[[providers.local-openai.models.m]]\nfrom = "2026-01-01"\ncache_miss = 1\ncache_read = 0.1\n'
                      "output = 2\n")
    monkeypatch.chdir(tmp_path)
    assert _usage_with(monkeypatch, capsys, tmp_path, prices) == (2, "", [
        f"error: {prices}: price table key providers.local-openai.models.m[0].billed_as: no model \"gone\" in the "
        f"price table (hint: fix this key in the --prices file; {SHAPE})"])
    prices.write_text('[[providers.local-openai.models.m]]\nfrom = "2026-01-01"\ncache_miss = 1\ncache_read = 0.1\n'
                      'output = 2\n\n[[providers.local-openai.models.m]]\nfrom = "2026-06-01"\ncache_miss = -1\n'
                      "cache_read = 0.1\noutput = 2\n")
    assert _usage_with(monkeypatch, capsys, tmp_path, prices) == (2, "", [
        f"error: {prices}: price table key providers.local-openai.models.m[1].cache_miss: -1 is not a rate "
        f"(a number >= 0) (hint: fix this key in the --prices file; {SHAPE})"])


def test_an_unreadable_price_file_names_prices_not_the_packaged_path(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "syntax.toml"
    prices.write_text("[providers.deepseek.models.deepseek-v4-flash\ncache_miss = 1\n")
    monkeypatch.chdir(tmp_path)
    assert _usage_with(monkeypatch, capsys, tmp_path, prices) == (2, "", [
        f"error: {prices}:1: price table is not valid TOML: Expected ']' at the end of a table declaration (at line 1, "
        f"column 45) (hint: give --prices a TOML price table; {SHAPE})"])


def test_an_error_in_pyproject_names_its_table_not_prices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.dsh-audit.prices.providers.deepseek.models.x]\n'
                                             'cache_miss = 1\ncache_read = 0.1\n')
    monkeypatch.chdir(tmp_path)
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-py")
    assert invoke(monkeypatch, capsys, "sessions", str(log)) == (2, "", [
        f"error: {(tmp_path / 'pyproject.toml').resolve()}:1: [tool.dsh-audit.prices] price table key "
        "providers.deepseek.models.x.output: missing rate (hint: fix this key under [tool.dsh-audit.prices] of this "
        f"pyproject.toml, the nearest to the current folder; {SHAPE})"])


def test_the_packaged_table_is_named_by_its_path_only_when_it_is_damaged(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged install: the packaged table's own error names its installed file, and a dangling
    alias in it is blamed on it, not on the --prices file read after it."""
    packaged = json.loads((Path(_prices.__file__).parent / "rules" / "prices.json").read_text("utf-8"))
    packaged["providers"]["deepseek"]["models"]["deepseek-chat"] = [{"billed_as": "deepseek-v0"}]
    table = tmp_path / "rules" / "prices.json"
    table.parent.mkdir()
    table.write_text(json.dumps(packaged), "utf-8")
    monkeypatch.setattr(_price_memo, "resources", SimpleNamespace(files=lambda package: tmp_path))
    user = tmp_path / "mine.json"
    user.write_text('{"providers": {}}')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as raised:
        load_prices(user)
    assert str(raised.value) == (
        f"{table}: price table key providers.deepseek.models.deepseek-chat[0].billed_as: no model \"deepseek-v0\" in "
        "the price table (hint: the packaged price table is damaged: reinstall dsh-audit)")
