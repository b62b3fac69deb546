"""Leftovers of hostile-input round 15 (issues 15/17; /tmp/fuzz15/REPORT.md D1, D2).

1. Every command that reads ``[tool.dsh-audit.cache]`` (``cache``, ``usage``, ``sessions``, ``watch``,
   ``report``; ``check`` with ``--policy FILE`` too) refuses a misspelt key or table there with the
   one line ``check``'s policy gives (``dsh_audit._pyproject.check_tool_tables``), exit 2.
2. A bundle whose names hold a byte that is not UTF-8 passes ``redact --check``: its manifest holds
   the name as Python's file names do (``"x\\udcfe..."``), which reads back to the same bytes.
3. Every command dsh-audit prints for pasting quotes its paths with ``dsh_audit._shell.shell_word``:
   a gate finding's ``dsh-audit diff`` hint, its ``--routes`` hint, a missing baseline's hint.
"""

from __future__ import annotations

import doctest
import hashlib
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke

from dsh_audit._pyproject import POLICY_KEYS, check_tool_tables
from dsh_audit._shell import shell_word
from dsh_audit.cache import pyproject_zero_data_retention
from dsh_audit.errors import UsageError
from dsh_audit.gate import Policy
from dsh_audit.gate._findings import diff_command
from dsh_audit.redact import check_bundle, redact

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
A_CHAT = CORPUS / "live" / "a-chat"
needs_corpus = pytest.mark.skipif(not A_CHAT.is_dir(), reason="../shared/corpus is absent")
ORACLE = Path(__file__).parent / "data" / "piai_oracle"
POLICY_HINT = "see the Policy section of docs/ci.md"
CACHE_HINT = ("[tool.dsh-audit.cache]: its one key is openai-zero-data-retention, as --openai-zdr / --no-openai-zdr "
              "say; see 'Stating the ZDR status' in docs/cache-accounting.md")
TABLES_HINT = ("dsh-audit reads [tool.dsh-audit.cache], [tool.dsh-audit.check] and [tool.dsh-audit.prices]; the "
               f"policy keys go in [tool.dsh-audit] itself: {POLICY_HINT}")


# -- 1: one refusal of a misspelt [tool.dsh-audit.cache] key on every command -------------------------

TABLE_ERRORS = [
    ("[tool.dsh-audit.cache]\nopenai-zero-data-retenton = true\n",
     f"2: unknown key tool.dsh-audit.cache.openai-zero-data-retenton (did you mean 'openai-zero-data-retention'?) "
     f"(hint: {CACHE_HINT})"),
    ("[tool.dsh-audit.cache]\nzdr = true\n", f"2: unknown key tool.dsh-audit.cache.zdr (hint: {CACHE_HINT})"),
    ("[tool.dsh-audit.cache]\nmin-cache-hit-ratio = 0.5\n",
     "2: tool.dsh-audit.cache.min-cache-hit-ratio is a policy key, read only in [tool.dsh-audit] (hint: move it to "
     f"[tool.dsh-audit], above [tool.dsh-audit.cache]: {POLICY_HINT})"),
    ("[tool.dsh-audit.cahce]\nopenai-zero-data-retention = true\n",
     f"1: [tool.dsh-audit.cahce] is not a table dsh-audit reads (did you mean [tool.dsh-audit.cache]?) (hint: {TABLES_HINT})"),
    ("[tool.dsh-audit]\ncache = true\n", f"2: [tool.dsh-audit.cache] must be a table (hint: {CACHE_HINT})"),
    ('[tool.dsh-audit.check]\nbaselin = "b.json"\n',
     "2: unknown key tool.dsh-audit.check.baselin (did you mean 'baseline'?) (hint: [tool.dsh-audit.check]: its one key "
     "is baseline, as --baseline FILE says; see the Baseline section of docs/ci.md)"),
]
#: Each command that reads the ZDR status, as run on the log ``s/session.jsonl`` (check twice: with
#: the nearest pyproject.toml's policy, and with a policy file, when only the ZDR reader reads it).
COMMANDS = [("cache", "s/session.jsonl"), ("usage", "s/session.jsonl"), ("sessions", "s"),
            ("watch", "s/session.jsonl", "--exit-after", "0"), ("report", "s/session.jsonl", "-o", "r.html"),
            ("check", "s/session.jsonl"), ("check", "s/session.jsonl", "--policy", "p.toml")]


@pytest.mark.parametrize(("text", "message"), TABLE_ERRORS)
def test_every_command_refuses_a_misspelt_table_or_key_as_check_does(
        text: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    chat_log(tmp_path / "s" / "session.jsonl", "s-zdr")
    (tmp_path / "pyproject.toml").write_text(text, "utf-8")
    (tmp_path / "p.toml").write_text("require-capture = false\n", "utf-8")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    said = {command: invoke(monkeypatch, capsys, *command) for command in COMMANDS}
    assert said == {command: (2, "", [f"error: {(tmp_path / 'pyproject.toml').resolve()}:{message}"])
                    for command in COMMANDS}
    assert not (tmp_path / "r.html").exists()


def test_the_library_reader_refuses_it_and_reads_the_tables_commands_read(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "pyproject.toml").write_text(TABLE_ERRORS[0][0], "utf-8")
    with pytest.raises(UsageError) as raised:
        pyproject_zero_data_retention(search_from=tmp_path / "bad")
    assert str(raised.value) == f"{tmp_path / 'bad' / 'pyproject.toml'}:{TABLE_ERRORS[0][1]}"
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.ruff]\nline-length = 1\n[tool.dsh-audit]\nrequire-capture = true\n'
        'ignore = ["DSH81"]\n[tool.dsh-audit.check]\nbaseline = "b.json"\n[tool.dsh-audit.cache]\n'
        'openai-zero-data-retention = true\n[tool.dsh-audit.prices.providers.deepseek.models.m]\ncache_miss = 1\n',
        "utf-8")
    assert pyproject_zero_data_retention(search_from=tmp_path / "good") is True
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "pyproject.toml").write_text("[tool.dsh-audit]\nadapter = 'openai'\n", "utf-8")
    assert pyproject_zero_data_retention(search_from=tmp_path / "none") is None


def test_the_policy_keys_are_the_gate_policys_fields() -> None:
    assert POLICY_KEYS == tuple(sorted(f.name.replace("_", "-") for f in fields(Policy)
                                       if f.name not in ("source", "baseline")))
    check_tool_tables({key: {"a": 1} for key in POLICY_KEYS}, source="p")  # a policy key's value is the policy's


# -- 2: a bundle named with a byte that is not UTF-8 --------------------------------------------------

def _non_utf8(folder: Path) -> str:
    """``x\\xfe.jsonl`` as Python holds it, after checking that ``folder``'s file system takes the name."""
    probe = os.path.join(os.fsencode(folder), b"probe\xfe")
    try:
        with open(probe, "wb"):
            pass
    except OSError:
        pytest.skip("this file system takes no name that is not UTF-8")
    os.remove(probe)
    return os.fsdecode(b"x\xfe.jsonl")


@pytest.fixture
def achat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder (``tmp_path``), an empty DSH home, and in it the a-chat log ``s.jsonl`` and its capture."""
    if not A_CHAT.is_dir():
        pytest.skip("../shared/corpus is absent")
    for source, target in ((next((A_CHAT / "session-logs").glob("*.jsonl")), "s.jsonl"), (A_CHAT / "wire.jsonl", "")):
        shutil.copy(source, tmp_path / (target or source.name))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_bundle_named_with_a_byte_that_is_not_utf8_checks(achat: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    name = _non_utf8(achat)
    code, out, _ = invoke(monkeypatch, capsys, "redact", "s.jsonl", "-o", name, "--salt", "s", "--capture",
                          "wire.jsonl")
    assert (code, out.splitlines()[-3:-1]) == (0, [  # the last line names the capture for the views (session 42)
        "a recipient verifies it with: dsh-audit redact --check $'x\\xfe.jsonl'",
        "and audits it with: dsh-audit check $'x\\xfe.jsonl' --capture $'x\\xfe.jsonl.wire.jsonl'"])
    assert sorted(os.listdir(os.fsencode(achat))) == [b"s.jsonl", b"wire.jsonl", b"x\xfe.jsonl",
                                                      b"x\xfe.jsonl.manifest.json", b"x\xfe.jsonl.wire.jsonl"]
    manifest = (achat / f"{name}.manifest.json").read_bytes()
    # as every dsh-audit wrote such a name: a bundle made before this fix checks the same way
    assert b'  "log": "x\\udcfe.jsonl",\n  "capture": "x\\udcfe.jsonl.wire.jsonl",\n' in manifest
    assert invoke(monkeypatch, capsys, "redact", "--check", name) == (0, "\n".join([
        "requests: match (3 request(s))", "breaks: match (3 request(s), 0 break(s))", "cache: match (3 request(s))",
        "diff: match (3 diff row(s))", "OK: every verdict of x\\xfe.jsonl matches its manifest"]) + "\n", [])
    # a lone surrogate that stands for no byte names no file: not a manifest redact wrote
    (achat / f"{name}.manifest.json").write_bytes(manifest.replace(b'"x\\udcfe.jsonl.wire', b'"x\\ud800.jsonl.wire'))
    assert invoke(monkeypatch, capsys, "redact", "--check", name) == (
        2, "", ["error: x\\xfe.jsonl.manifest.json: not a dsh-audit redaction manifest"
        " (hint: the manifest was edited or damaged after `dsh-audit redact` wrote it: ask the sender for the "
        "bundle again, or redact the log again with `dsh-audit redact LOG -o FILE`)"])


def _bash() -> str:
    found = shutil.which("bash")
    if found is None:
        pytest.skip("no bash")
    return found


def _oracle_case(folder: Path, case: str) -> tuple[Path, Path, Path]:
    """A pi-ai oracle case's log, a ``wire.jsonl`` of its bodies and its route file, in ``folder``."""
    record = json.loads((ORACLE / f"{case}.json").read_text("utf-8"))
    folder.mkdir()
    (folder / "session.jsonl").write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    lines = [json.dumps({"seq": seq, "method": r["method"], "path": r["path"], "headers": dict(r["headers"]),
                         "kind": r["kind"], "body_bytes": len(r["body"].encode("utf-8")), "body": r["body"]})
             for seq, r in enumerate(record["requests"], 1)]
    (folder / "wire.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    (folder / "routes.json").write_text(json.dumps(record["routes"]), "utf-8")
    return folder / "session.jsonl", folder / "wire.jsonl", folder / "routes.json"


def test_a_routed_bundle_named_so_checks_and_checks_hint_names_its_route_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    name = _non_utf8(tmp_path)
    log, capture, routes = _oracle_case(tmp_path / "in", "oai-compat-qwen")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / name, salt="s", capture=capture, routes=routes,  # the capture named so too
                    capture_output=tmp_path / "out" / f"{name}.wire.jsonl")
    assert (result.route_file, result.capture) == (tmp_path / "out" / f"{name}.routes.yml",
                                                   tmp_path / "out" / f"{name}.wire.jsonl")
    assert os.path.isfile(os.fsencode(tmp_path / "out") + b"/x\xfe.jsonl.routes.yml")
    assert check_bundle(result.output).ok  # the route file read back by the name the manifest gives
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "check", f"out/{name}", "--capture", f"out/{name}.wire.jsonl",
                          "--format", "csv")
    hints = {line.split(" (hint: ", 1)[1] for line in err if " DSH815 " in line}
    assert (code, hints) == (1, {"pass --routes $'out/x\\xfe.jsonl.routes.yml' (DSH's llm-pi-ai route configuration), "
                                 "the redacted route file of this bundle (its manifest names it))"})


# -- 3: the printed diff command names the exact files -------------------------------------------------

#: Folder names (bytes on disk) and how the diff hint prints the log and capture inside each.
FOLDERS = [(b"-dir", "./-dir/s.jsonl", "./-dir/wire.jsonl"),
           (b"tab\tdir", "$'tab\\x09dir/s.jsonl'", "$'tab\\x09dir/wire.jsonl'"),
           ("bidi\u202edir".encode(), "$'bidi\\xe2\\x80\\xaedir/s.jsonl'", "$'bidi\\xe2\\x80\\xaedir/wire.jsonl'"),
           (b"x\xfedir", "$'x\\xfedir/s.jsonl'", "$'x\\xfedir/wire.jsonl'")]


def _different_capture(folder: Path) -> None:
    """The a-chat log (``s.jsonl``) and its capture with one character of the first body changed, in ``folder``."""
    folder.mkdir()
    shutil.copy(next((A_CHAT / "session-logs").glob("*.jsonl")), folder / "s.jsonl")
    lines = (A_CHAT / "wire.jsonl").read_text("utf-8").splitlines()
    record: dict[str, Any] = json.loads(lines[0])
    at = record["body"].index('"content":"') + len('"content":"')
    record["body"] = record["body"][:at] + "X" + record["body"][at + 1:]
    record["body_sha256"] = hashlib.sha256(record["body"].encode("utf-8")).hexdigest()
    record["body_bytes"] = len(record["body"].encode("utf-8"))
    lines[0] = json.dumps(record)
    (folder / "wire.jsonl").write_text("\n".join(lines) + "\n", "utf-8")


@needs_corpus
@pytest.mark.parametrize(("raw", "log_word", "capture_word"), FOLDERS, ids=["dash", "tab", "bidi", "nonutf8"])
def test_the_diff_hint_is_a_command_that_names_the_exact_files(
        raw: bytes, log_word: str, capture_word: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    if raw == b"x\xfedir":
        _non_utf8(tmp_path)
    folder = os.fsdecode(raw)
    _different_capture(tmp_path / folder)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "check", "--format", "csv", "--", folder)
    command = f"dsh-audit diff {log_word} --capture {capture_word}"
    assert (code, [line.split(" (hint: ", 1)[1] for line in err if " DSH811 " in line]) == (
        1, [f"run `{command}` for the JSON paths that differ)"])
    said = subprocess.run([_bash(), "-c", "dsh-audit() { printf '%s\\0' \"$@\"; }; " + command],
                          capture_output=True, check=True, cwd=tmp_path).stdout.split(b"\0")[:-1]
    own = (b"./" if raw.startswith(b"-") else b"") + raw
    assert said == [b"diff", own + b"/s.jsonl", b"--capture", own + b"/wire.jsonl"]
    assert diff_command(f"{folder}/s.jsonl", Path(folder) / "wire.jsonl") == command


def test_the_diff_command_quotes_only_its_paths() -> None:
    assert diff_command("-a.jsonl", "-w.jsonl", adapter="anthropic", routes="-r.yml") == (
        "dsh-audit diff ./-a.jsonl --capture ./-w.jsonl --adapter anthropic --routes ./-r.yml")
    assert diff_command("/abs/-a b.jsonl", "w!.jsonl") == "dsh-audit diff '/abs/-a b.jsonl' --capture 'w!.jsonl'"


@pytest.mark.parametrize(("baseline", "word"), [("-", "./-"), ("-b.json", "./-b.json"), ("b\tc.json", "$'b\\x09c.json'")])
def test_a_missing_baselines_hint_writes_that_file(baseline: str, word: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``--json-report -`` would write to stdout: the hint names the file ``-`` (round 15's notes)."""
    chat_log(tmp_path / "s" / "session.jsonl", "s-base")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "s", "--baseline", baseline)
    shown = baseline.replace("\t", "\\u0009")
    assert (code, out, err) == (2, "", [
        f"error: {shown}: cannot read the baseline: No such file or directory (hint: write the first baseline with "
        f"`dsh-audit check PATHS --json-report {word}`)"])


def test_shell_word_reads_back_in_bash(tmp_path: Path) -> None:
    names = ["-x", "a b", "q'!\\", "t\tb", "b\u202ei", "z\u200bw", "nb\u00a0sp", os.fsdecode(b"n\xfeu"), "caf\u00e9"]
    said = subprocess.run([_bash(), "-c", "printf '%s\\0' " + " ".join(shell_word(n) for n in names)],
                          capture_output=True, check=True, cwd=tmp_path).stdout.split(b"\0")[:-1]
    assert said == [os.fsencode(f"./{n}" if n.startswith("-") else n) for n in names]
    assert [shell_word(n) for n in names[5:]] == ["$'z\\xe2\\x80\\x8bw'", "$'nb\\xc2\\xa0sp'", "$'n\\xfeu'", "'café'"]


def test_shell_word_escapes_what_stdout_cannot_write(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    assert (shell_word("caf\u00e9 au lait"), shell_word("plain")) == ("$'caf\\xc3\\xa9 au lait'", "plain")


@pytest.mark.parametrize("name", ["dsh_audit._shell", "dsh_audit._pyproject", "dsh_audit.redact._manifest",
                                  "dsh_audit.gate._findings", "dsh_audit.gate._baseline"])
def test_the_changed_modules_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert (result.failed, result.attempted > 0) == (0, True)
