"""Session 35: a price table's ``schema`` and ``providers`` (fuzz round 16, D7), another agent's
log refused in one message by every command that reads DSH logs only (F7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.cache import load_prices
from dsh_audit.errors import UsageError
from dsh_audit.log import foreign_refusal

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "sample_logs" / "tools" / "session.jsonl"
CLAUDE = ROOT / "tests" / "data" / "importers" / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
CODEX = (ROOT / "tests" / "data" / "importers" / "codex"
         / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
PRICES_HINT = ("(hint: fix this key in the --prices file; the Price files section of docs/cache-accounting.md "
               "gives the shape)")
PYPROJECT_HINT = ("(hint: fix this key under [tool.dsh-audit.prices] of this pyproject.toml, the nearest to the "
                  "current folder; the Price files section of docs/cache-accounting.md gives the shape)")
SCHEMA = "is not 2, the price table schema this dsh-audit reads (leave it out, or write 2)"
MISSING = "missing: a price table holds its rates under providers (providers.PROVIDER.models.MODEL)"


# -- D7: schema and providers of a price table ------------------------------------------------------


@pytest.mark.parametrize(("written", "shown"), [
    ("99", "99"), ('"\\u001b[31m"', '"\\u001b[31m"'), ("true", "true"), ("-1", "-1"), ("2.0", "2.0"),
    ('"2"', '"2"')])
def test_a_pyproject_schema_other_than_2_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], written: str,
                                                      shown: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.dsh-audit.prices]\nschema = {written}\n"
                                             "[tool.dsh-audit.prices.providers]\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "usage", str(LOG)) == (2, "", [
        f"error: {tmp_path / 'pyproject.toml'}:2: [tool.dsh-audit.prices] price table key schema: {shown} {SCHEMA} "
        f"{PYPROJECT_HINT}"])


@pytest.mark.parametrize(("name", "text", "shown"), [
    ("p.json", '{"schema": 99, "providers": {}}', "99"),
    ("p.json", '{"schema": null, "providers": {}}', "null"),
    ("p.toml", 'schema = 3\n[providers]\n', "3"),
    ("p.toml", 'schema = "\\u202e2"\n[providers]\n', r'"\u202e2"')])
def test_a_prices_file_schema_other_than_2_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], name: str, text: str,
                                                        shown: str) -> None:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "usage", str(LOG), "--prices", str(path)) == (2, "", [
        f"error: {path}: price table key schema: {shown} {SCHEMA} {PRICES_HINT}"])


def test_schema_2_or_none_is_read(tmp_path: Path) -> None:
    for text in ('{"schema": 2, "providers": {}}', '{"providers": {}}'):
        path = tmp_path / "p.json"
        path.write_text(text, "utf-8")
        assert load_prices(path, search_from=tmp_path).files == ("packaged", str(path))


@pytest.mark.parametrize("text", ['currency = "USD"\n', 'note = "ours"\nschema = 2\n', ""])
def test_a_pyproject_table_without_providers_is_told_it_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   text: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.dsh-audit.prices]\n{text}", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "usage", str(LOG)) == (2, "", [
        f"error: {tmp_path / 'pyproject.toml'}:1: [tool.dsh-audit.prices] price table key providers: {MISSING} "
        f"{PYPROJECT_HINT}"])


def test_a_prices_file_without_providers_is_told_it_is_missing_and_a_wrong_type_still_named(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    for text, said in (('{"currency": "USD"}', MISSING), ('{"providers": null}', "must be a table/object"),
                       ('{"providers": [1]}', "must be a table/object")):
        path.write_text(text, "utf-8")
        with pytest.raises(UsageError) as caught:
            load_prices(path, search_from=tmp_path)
        assert str(caught.value) == f"{path}: price table key providers: {said} {PRICES_HINT}"


@pytest.mark.parametrize(("written", "shown"), [("1e-320", "1e-320"), ("5e-324", "5e-324"), ("1e3", "1000.0"),
                                                ("0.1", "0.1"), ("1000000.5", "1000000.5"), ("0", "0")])
def test_per_tokens_is_echoed_as_the_file_wrote_it(tmp_path: Path, written: str, shown: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(f"per_tokens = {written}\n[providers]\n", "utf-8")
    with pytest.raises(UsageError) as caught:
        load_prices(path, search_from=tmp_path)
    assert str(caught.value) == (
        f"{path}: price table key per_tokens: {shown} is not the packaged table's 1000000: every rate is read per "
        f"1000000 tokens (leave it out and give the rates per 1000000 tokens) {PRICES_HINT}")


# -- F7: another agent's log, one refusal ----------------------------------------------------------

HINT = ("sessions, requests, show, render, cache, usage, diff and index import it; validate, breaks, explain, "
        "check, report, redact and watch read DSH logs only")


def test_the_refusal_is_one_message() -> None:
    assert foreign_refusal("claude-code") == ("this is a claude-code session, not a DSH log", HINT)


@pytest.mark.parametrize(("log", "kind"), [(CLAUDE, "claude-code"), (CODEX, "codex")])
@pytest.mark.parametrize("command", [["breaks"], ["explain", "{log}", "0"], ["check"], ["validate"],
                                     ["report", "-o", "{tmp}/page.html"], ["redact", "-o", "{tmp}/out.jsonl"]])
def test_every_dsh_only_command_refuses_an_imported_log_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str], log: Path,
                                                               kind: str, command: list[str]) -> None:
    args = [a.format(log=log, tmp=tmp_path) for a in command]
    if "{log}" not in command:
        args.append(str(log))
    code, out, err = invoke(monkeypatch, capsys, *args)
    # every command refuses it at line 1, as the header's reader does (attribution too: breaks, explain)
    where = f"{log}:1"
    # validate too: the one line, no "0 file(s)" summary (no file was validated)
    assert (code, out, err) == (2, "", [f"error: {where}: this is a {kind} session, not a DSH log (hint: {HINT})"])
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("command", [["sessions"], ["requests"], ["show", "{log}", "0"], ["render", "{log}", "0"],
                                     ["cache"], ["usage"], ["diff", "--capture", "{tmp}/capture"],
                                     ["index", "--db", "{tmp}/index.sqlite"]])
def test_every_command_the_hint_names_as_importing_reads_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  command: list[str]) -> None:
    (tmp_path / "capture").mkdir()
    code, body, _ = invoke(monkeypatch, capsys, "render", str(CLAUDE), "0")
    assert code == 0
    (tmp_path / "capture" / "0.json").write_text(body, "utf-8")
    args = [a.format(log=CLAUDE, tmp=tmp_path) for a in command]
    if "{log}" not in command:
        args.append(str(CLAUDE))
    code, out, err = invoke(monkeypatch, capsys, *args)
    # diff finds request 0 in the capture and the other three unmatched: exit 1, not a refusal
    assert (code, [line for line in err if line.startswith("error")]) == (1 if command[0] == "diff" else 0, [])
    assert out
