"""Hostile input, round 2: ``validate``, ``check``/``report`` policies and outputs, ``index``/``stats``
databases, and the Claude Code / Codex importers behind ``requests``, ``cache`` and ``breaks``.

Each case is a regression found by fuzzing those commands: exact exit codes and error lines, never
a traceback, and no write to a file that is not ours.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.fleet import index_logs
from dsh_audit.importers import load_foreign
from dsh_audit.jsjson import stringify
from _cli import chat_log, invoke

DATA = Path(__file__).resolve().parent / "data" / "importers"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"


def assert_one_error(result: tuple[int, str, list[str]], line: str) -> None:
    code, out, err = result
    assert (code, out, err) == (2, "", [line])


def dsh_log(path: Path) -> Path:
    return chat_log(path, "session-hostile-2")


# -- policy files (check and report) --------------------------------------------------------------

_POLICY_HINT = "see the Policy section of docs/ci.md"
_TABLE = ("[tool.dsh-audit] must be a table (hint: write the policy keys under a [tool.dsh-audit] header; "
          f"{_POLICY_HINT})")
_FIX = f"(hint: fix this file, or give another --policy FILE; {_POLICY_HINT})"
# each message after the file's path: its line (":2") when the error is a key's that one line
# writes, or the file's bytes are not UTF-8 from that line on
POLICY_ERRORS = [
    (b"\xff\xfe= 1\n", f":1: policy file is not UTF-8 text (byte 0) {_FIX}"),
    (b'adapter = "auto"\nadapter2 = "\xff"\n', f":2: policy file is not UTF-8 text (byte 29) {_FIX}"),
    (b"a = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", f": policy file nests arrays or tables too deeply {_FIX}"),
    (b"tool = 1\n", ":1: unknown policy key 'tool' (hint: see the Policy section of docs/ci.md)"),
    (b'tool = "x"\n', ":1: unknown policy key 'tool' (hint: see the Policy section of docs/ci.md)"),
    (b"[tool]\ndsh-audit = 3\n", f":2: {_TABLE}"),
    (b'[[tool.dsh-audit]]\nadapter = "openai"\n', f": {_TABLE}"),  # an array of tables: no one line
    (b"adapter = {a = 1}\n", ":1: policy key 'adapter' must be one of auto, deepseek, anthropic, openai, responses "
                              f"(hint: write adapter = \"auto\", say; {_POLICY_HINT})"),
    (b"fail-on-refusal = {x = true}\n", ":1: policy key 'fail-on-refusal' must be true or false (hint: write "
                                         f"fail-on-refusal = true or fail-on-refusal = false; {_POLICY_HINT})"),
    (b'ignore = [""]\n', ":1: policy key 'ignore': an empty string would match every rule (hint: give a rule id "
                         "(DSH101-DSH832) or a family such as DSH3; see docs/rules.md)"),
]


@pytest.mark.parametrize(("text", "message"), POLICY_ERRORS)
@pytest.mark.parametrize("command", ["check", "report"])
def test_bad_policy_is_one_error_line(tmp_path, monkeypatch, capsys, text, message, command):
    log = dsh_log(tmp_path / "session.jsonl")
    policy = tmp_path / "policy.toml"
    policy.write_bytes(text)
    extra = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    assert_one_error(invoke(monkeypatch, capsys, command, str(log), "--policy", str(policy), *extra),
                     f"error: {policy}{message}")
    assert not (tmp_path / "r.html").exists()


def test_broken_pyproject_found_by_search_is_one_error_line(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    (tmp_path / "pyproject.toml").write_bytes(b"[tool]\ndsh-audit = [1]\n")
    monkeypatch.chdir(tmp_path)
    assert_one_error(invoke(monkeypatch, capsys, "check", str(log)),
                     f"error: {tmp_path / 'pyproject.toml'}:2: {_TABLE}")


def test_subtables_of_other_commands_are_still_ignored(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    policy = tmp_path / "policy.toml"
    policy.write_text('[tool.dsh-audit]\nadapter = "openai"\n[tool.dsh-audit.cache]\nopenai-zero-data-retention = false\n',
                      encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy),
                            "--json-report", str(tmp_path / "r.json"))
    assert (code, err) == (0, [])
    assert json.loads((tmp_path / "r.json").read_text("utf-8"))["policy"]["adapter"] == "openai"


# -- output paths ---------------------------------------------------------------------------------


def test_validate_sarif_under_a_regular_file(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "validate", str(log), "--sarif", str(blocker / "x.sarif"))
    assert (code, out, err) == (2, "", [f"error: {blocker / 'x.sarif'}: cannot write the SARIF report: its folder "
                                        f"{blocker} is not a folder (hint: create the folder first, or name a file "
                                        "in a folder that exists)"])


def test_validate_sarif_in_a_missing_folder(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    target = tmp_path / "missing" / "x.sarif"
    code, out, err = invoke(monkeypatch, capsys, "validate", "--json", str(log), "--sarif", str(target))
    assert (code, out, err) == (2, "", [f"error: {target}: cannot write the SARIF report: its folder {target.parent} "
                                        "does not exist (hint: create the folder first, or name a file in a folder "
                                        "that exists)"])


# -- index and stats databases --------------------------------------------------------------------


def foreign_db(path: Path) -> bytes:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE contacts (name TEXT)")
    connection.execute("INSERT INTO contacts VALUES ('ada')")
    connection.commit()
    connection.close()
    return path.read_bytes()


def test_stats_and_index_leave_another_programs_database_alone(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    db = tmp_path / "other.sqlite"
    before = foreign_db(db)
    line = (f"error: {db}: not a dsh-audit index: it holds other tables "
            "(hint: give another --db file, or build one with `dsh-audit index PATH --db FILE`)")
    assert_one_error(invoke(monkeypatch, capsys, "stats", "--db", str(db)), line)
    assert_one_error(invoke(monkeypatch, capsys, "index", str(log), "--db", str(db)), line)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite", "session.jsonl"]


def test_stats_on_an_empty_file_does_not_make_it_an_index(tmp_path, monkeypatch, capsys):
    db = tmp_path / "empty.sqlite"
    db.write_bytes(b"")
    assert_one_error(invoke(monkeypatch, capsys, "stats", "--json", "--db", str(db)),
                     f"error: {db}: not a dsh-audit index: it is empty "
                     "(hint: give another --db file, or build one with `dsh-audit index PATH --db FILE`)")
    assert db.read_bytes() == b""


def test_index_into_an_empty_file_and_stats_of_an_empty_index(tmp_path, monkeypatch, capsys):
    db = tmp_path / "audit.sqlite"
    db.write_bytes(b"")
    index_logs([], db)
    code, out, err = invoke(monkeypatch, capsys, "stats", "--json", "--db", str(db))
    assert (code, err) == (0, [f"note: {db}: the index holds no request: nothing to rank (index logs with "
                               "`dsh-audit index PATH --db FILE`)"])
    document = json.loads(out)
    assert (document["totals"]["sessions"], document["totals"]["actual_hit_ratio"], document["by_model"],
            document["top_sessions"]) == (0, None, [], [])


def test_index_with_an_empty_db_path(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    assert_one_error(invoke(monkeypatch, capsys, "index", str(log), "--db", ""),
                     "error: Invalid value for '--db': empty path (name a file or folder) (hint: see "
                     "`dsh-audit index --help`)")


def test_index_of_another_layout_under_the_same_version(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    db = tmp_path / "audit.sqlite"
    index_logs([log], db)
    connection = sqlite3.connect(db)
    connection.execute("ALTER TABLE sessions DROP COLUMN options")
    connection.execute("ALTER TABLE requests DROP COLUMN lost_tokens")
    connection.commit()
    connection.close()
    hint = "(hint: give another --db file (keep this one: it may hold data), and build it with `dsh-audit index PATH --db FILE`)"
    assert_one_error(invoke(monkeypatch, capsys, "stats", "--db", str(db)),
                     f"error: {db}: not a dsh-audit index: no such column: lost_tokens {hint}")
    assert_one_error(invoke(monkeypatch, capsys, "index", str(log), "--db", str(db)),
                     f"error: {db}: not a dsh-audit index: no such column: options {hint}")


# -- validate on odd stream chunks ----------------------------------------------------------------


def test_validate_a_chunk_whose_type_is_a_list(tmp_path, monkeypatch, capsys):
    path = dsh_log(tmp_path / "session.jsonl")
    lines = path.read_text("utf-8").splitlines()
    number = next(i for i, line in enumerate(lines) if '"text-delta"' in line)
    record = json.loads(lines[number])
    record["data"]["chunk"]["type"] = ["text-delta"]
    lines[number] = stringify(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "validate", "--json", str(path))
    assert (code, out, err) == (0, '{"type":"summary","passed":true,"counts":{"error":0,"warning":0,"info":0},'
                                   '"files":1,"rules":{}}\n', [])
    code, out, err = invoke(monkeypatch, capsys, "check", str(path), "--json-report", str(tmp_path / "r.json"))
    assert code == 0
    assert json.loads((tmp_path / "r.json").read_text("utf-8"))["passed"] is True


# -- importers ------------------------------------------------------------------------------------


def edited(source: Path, target: Path, edit: Any) -> Path:
    records = [json.loads(line) for line in source.read_text("utf-8").splitlines()]
    edit(records)
    target.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return target


def test_claude_code_usage_of_the_wrong_types(tmp_path, monkeypatch, capsys):
    def edit(records):
        usage = records[4]["message"]["usage"]  # request 0's usage (line 5)
        usage.update(input_tokens="12", output_tokens=None, cache_read_input_tokens=[1], cache_creation_input_tokens=True)

    path = edited(CLAUDE, tmp_path / f"{CLAUDE.name}", edit)
    session = load_foreign(path)
    assert session.requests[0].usage is None  # damaged counts: the usage is not logged, and said
    assert session.warnings == (f"{path}:5: token counts input_tokens, output_tokens, cache_read_input_tokens, "
                                "cache_creation_input_tokens are negative, not an integer or above 2**53 - 1: this "
                                "response's usage is treated as not logged",)
    for command in (["requests", "--json", str(path)], ["cache", "--json", str(path)]):
        code, out, err = invoke(monkeypatch, capsys, *command)
        assert code == 0 and not [line for line in err if line.startswith("error")], err
        assert all(json.loads(line) for line in out.splitlines())


def codex_lines(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if isinstance(r.get("payload"), dict) and r["payload"].get("type") == kind]


@pytest.mark.parametrize("case", ["item_type_list", "item_type_object", "reasoning_not_lists", "usage_strings"])
def test_codex_records_of_the_wrong_types(tmp_path, monkeypatch, capsys, case):
    def edit(records):
        if case == "item_type_list":
            codex_lines(records, "function_call_output")[0]["payload"]["type"] = ["function_call_output"]
        elif case == "item_type_object":
            codex_lines(records, "function_call")[0]["payload"]["type"] = {"type": 1}
        elif case == "reasoning_not_lists":
            payload = codex_lines(records, "reasoning")[0]["payload"]
            payload["summary"], payload["content"] = True, 7
        else:
            codex_lines(records, "token_count")[1]["payload"]["info"]["last_token_usage"].update(
                input_tokens="x", cached_input_tokens="2026-99-99", reasoning_output_tokens=[])

    path = edited(CODEX, tmp_path / CODEX.name, edit)
    session = load_foreign(path)
    assert len(session.requests) == 4
    if case == "item_type_list":
        assert any('["function_call_output"]' in note for note in session.notes)
    if case == "reasoning_not_lists":
        assert session.requests[1].messages[-2]["content"][0] == {"type": "reasoning", "text": "",
                                                                 "encryptedContent": "gAAAAB-opaque-1"}
    if case == "usage_strings":
        assert session.requests[0].usage is None
        line = session.requests[0].extra["token_count_seq"]
        assert session.warnings == (f"{path}:{line}: token counts input_tokens, cached_input_tokens, "
                                    "reasoning_output_tokens are negative, not an integer or above 2**53 - 1: this "
                                    "response's usage is treated as not logged",)
    for command in (["requests", "--json", str(path)], ["cache", "--json", str(path)]):
        code, out, err = invoke(monkeypatch, capsys, *command)
        assert code == 0 and not [line for line in err if line.startswith("error")], err


@pytest.mark.parametrize(("source", "fmt"), [(CLAUDE, "claude-code"), (CODEX, "codex")])
def test_breaks_on_an_imported_log_is_one_clear_error(tmp_path, monkeypatch, capsys, source, fmt):
    line = (f"error: {source}:1: this is a {fmt} session, not a DSH log (hint: sessions, requests, show, render, "
            "cache, usage, diff and index import it; validate, breaks, explain, check, report, redact and watch "
            "read DSH logs only)")
    assert_one_error(invoke(monkeypatch, capsys, "breaks", str(source)), line)
    log = dsh_log(tmp_path / "session.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "breaks", "--all", "--json", str(source), str(log))
    assert (code, err) == (2, [line])
    rows = [json.loads(row) for row in out.splitlines()]
    assert [(r["session_id"], r["request"], r["verdict"]) for r in rows] == [("session-hostile-2", 0, "first")]


@pytest.mark.parametrize("table", ["dsh_audit", "dshaudit", "dsh-audits"])
def test_a_misspelt_policy_table_in_pyproject_is_an_error_not_the_defaults(tmp_path, table):
    from dsh_audit.errors import UsageError
    from dsh_audit.gate import load_policy

    (tmp_path / "pyproject.toml").write_text(f"[tool.{table}]\nrequire-capture = true\n")
    with pytest.raises(UsageError) as caught:
        load_policy(None, search_from=tmp_path)
    assert str(caught.value) == (f"{tmp_path / 'pyproject.toml'}:1: [tool.{table}] is not read: dsh-audit's table is "
                                 "[tool.dsh-audit] (hint: rename the table to [tool.dsh-audit])")
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    assert load_policy(None, search_from=tmp_path).source == "defaults"
