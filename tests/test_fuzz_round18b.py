"""Fuzz round 18, defects D3, D4, D7, D10, D11, D12 and D14 (/tmp/fuzz18.md):

- D3: ``index`` left its rows in a ``-wal`` file (a 2.2 MB index beside a 5.4 MB ``-wal``), and ``stats``
  of those files copied to a folder it cannot write read the main file alone: "database disk image is
  malformed (hint: delete the file and index again)". Now ``index`` leaves one self-contained file, and
  ``stats`` reads a ``-wal`` beside a read-only index from a copy; no hint says "delete".
- D4: ``check --baseline`` applied a report of any ``schema_version`` (0, 3, "2", 2.0, 10**400, null):
  now 1 and 2 only, another refused in one line.
- D7: ``usage`` summed one session exported as three files three times: every command reads it once,
  with the note saying which file.
- D10: INDEX ``-0`` was the first request; refused now.
- D11: ``redact --check`` said OK when the manifest's ``log`` named another file; its "not a dsh-audit
  redaction manifest" errors had no hint.
- D12: ``dshAudit.keyType`` errors hinted at DSH's route settings; ``keyType`` on an OpenAI route was
  accepted silently.
- D14: ``check session-X`` whose log cannot be opened led with another log's error (exit 2): DSH801 at
  the named log now (exit 1).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.fleet import _db
from dsh_audit.wire._piai_routes import _Bad, parse_routes

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
A = CORPUS / "live/a-chat/session-logs/session-2b096b61-0a34-4da6-abec-4e87161c2c0b.jsonl"
B = CORPUS / "live/b-tools/session-logs/session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd.jsonl"
ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not A.is_file() or not B.is_file(), reason="needs the shared corpus")


def _exports(folder: Path, *, copies: bool = True) -> Path:
    """A flat folder of exports: session a (3 requests) as a.jsonl, a-2.jsonl and a-copy.jsonl, session
    b (9 requests) as b.jsonl and b2.jsonl (without ``copies``: a-2.jsonl and b.jsonl, the files read)."""
    folder.mkdir()
    for name, source in (("a-2.jsonl", A), ("b.jsonl", B)) + ((("a.jsonl", A), ("a-copy.jsonl", A), ("b2.jsonl", B))
                                                            if copies else ()):
        shutil.copyfile(source, folder / name)
    return folder


NOTE = ("note: 2 sessions found in 5 files (the same lines): each read once, from the file DSH reads; e.g. "
        "under F/: read a-2.jsonl, skipped a-copy.jsonl")


# -- D7: one session in three differently named files is read once, by every command --------------


@pytest.mark.parametrize("args", [["usage", "--json"], ["requests", "--json"], ["breaks", "--json"],
                                  ["cache", "--json"], ["sessions", "--json"], ["check", "--no-baseline", "--json"]],
                         ids=lambda args: args[0])
def test_one_session_in_three_exports_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _exports(tmp_path / "F")
    code, out, err = invoke(monkeypatch, capsys, *args, "F")
    said = [NOTE]  # check says the one note every command says (fuzz round 23: it said each file)
    assert (code, [line for line in err if " found in " in line or "one session" in line]) == (0, said)
    for name in ("a.jsonl", "a-copy.jsonl", "b2.jsonl"):
        (tmp_path / "F" / name).unlink()
    code, alone, _ = invoke(monkeypatch, capsys, *args, "F")
    if args[0] == "check":  # the JSON report lists the notes too
        found, expected = json.loads(out), json.loads(alone)
        assert (found.pop("notes"), expected.pop("notes")) == ([line.removeprefix("note: ") for line in said], [])
        out, alone = json.dumps(found), json.dumps(expected)
    assert (code, alone) == (0, out)  # the same output as the two files alone


def test_usage_and_check_totals_count_each_session_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _exports(tmp_path / "F")
    usage = json.loads(invoke(monkeypatch, capsys, "usage", "F", "--json")[1])
    assert (usage["sessions"], sorted((row["path"], row["requests"]) for row in usage["rows"])) == (
        2, [("F/a-2.jsonl", 3), ("F/b.jsonl", 9)])
    assert invoke(monkeypatch, capsys, "requests", "F", "--json")[1].count("\n") == 12
    assert invoke(monkeypatch, capsys, "check", "--no-baseline", "F")[1].splitlines()[-1] == (
        "PASSED: 2 log(s), 12 request(s), 0 error(s), 0 warning(s), 2 info, 0 failing (policy: defaults)")


def test_index_and_report_read_one_session_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _exports(tmp_path / "F")
    code, out, err = invoke(monkeypatch, capsys, "index", "F", "--db", "i.sqlite")
    assert (code, err[0]) == (0, NOTE) and "indexed 2, skipped 0 unchanged, of 2 log(s)" in out
    totals = json.loads(invoke(monkeypatch, capsys, "stats", "--db", "i.sqlite", "--json")[1])["totals"]
    assert (totals["sessions"], totals["requests"]) == (2, 12)
    code, out, err = invoke(monkeypatch, capsys, "report", "F", "-o", "r.html")
    assert (code, err, out) == (0, [NOTE], "wrote r.html: 2 log(s), 12 request(s), check passed: no breaks\n")


def test_a_session_folder_copied_out_twice_under_other_names_is_one_session(tmp_path: Path) -> None:
    """Issue 15's leftover: folders of names DSH does not make are opened for their headers' ids."""
    from dsh_audit.log import discover

    for folder in ("old", "new"):
        (tmp_path / folder).mkdir()
        shutil.copyfile(A, tmp_path / folder / "session.jsonl")
    notes: list[str] = []
    assert [p.parent.name for p in discover([tmp_path], notes=notes)] == ["new"]
    assert notes == [f"one session in two files under {tmp_path}/: read new/session.jsonl, not old/session.jsonl "
                     "(the same lines)"]


# -- D3: index leaves one file; stats reads a -wal beside a read-only index ----------------------


def _cli(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "dsh_audit", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def test_index_with_stats_running_alongside_leaves_a_self_contained_file(tmp_path: Path) -> None:
    folder = _exports(tmp_path / "F", copies=False)
    db = tmp_path / "a.sqlite"
    index = _cli("index", str(folder), "--db", str(db))
    said = []
    while index.poll() is None:  # two real processes: stats reads while index writes
        reader = _cli("stats", "--db", str(db), "--json")
        said.append((reader.communicate()[1].decode(), reader.returncode))
    assert index.communicate()[1] == b"" and index.returncode == 0
    for err, code in said:  # the index, or none yet: never a damaged one
        assert code == 0 or "no such index" in err or "the index is locked" in err, err
    # every row is in a.sqlite itself: a reader still open when index closed may leave an empty -wal
    # and its -shm (harmless), never rows outside the file
    wal = {p.name: p.stat().st_size for p in tmp_path.iterdir() if p.name.endswith("-wal")}
    assert wal in ({}, {"a.sqlite-wal": 0})
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(db, alone / "a.sqlite")
    stats = _cli("stats", "--db", str(alone / "a.sqlite"), "--json")
    assert json.loads(stats.communicate()[0])["totals"]["requests"] == 12 and stats.returncode == 0


def _leftover_wal(db: Path) -> None:
    """An index whose last rows are in its ``-wal`` file (a writer that stopped without a checkpoint)."""
    connection, _ = _db.open_index(db, create=True, upgrade=True)
    connection.close()
    script = ("import os, sqlite3, sys\nc = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=WAL')\n"
              "c.execute('PRAGMA wal_autocheckpoint=0')\n"
              "c.execute(\"INSERT INTO meta VALUES ('left', 'in the wal')\"); c.commit(); os._exit(0)\n")
    subprocess.run([sys.executable, "-c", script, str(db)], check=True)


def test_stats_reads_a_wal_beside_an_index_in_a_folder_it_cannot_write(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _leftover_wal(tmp_path / "a.sqlite")
    folder = tmp_path / "ro"
    folder.mkdir()
    for name in ("a.sqlite", "a.sqlite-wal"):
        shutil.copyfile(tmp_path / name, folder / name)
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):  # root writes anywhere: the folder is read-only as a user sees it
            monkeypatch.setattr(_db.os, "access", lambda path, mode: not (mode & os.W_OK))
        connection = _db.connect_index(folder / "a.sqlite", create=False)
        rows = dict(connection.execute("SELECT key, value FROM meta"))
        connection.close()
        assert (rows["left"], sorted(p.name for p in folder.iterdir())) == ("in the wal", ["a.sqlite", "a.sqlite-wal"])
    finally:
        folder.chmod(0o755)


def test_no_index_error_hints_at_deleting_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "a.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", str(db))
    assert (code, out, len(err)) == (2, "", 1) and "delete" not in err[0]
    assert err[0].endswith("(hint: give another --db file (keep this one: it may hold data), and build it with "
                           "`dsh-audit index PATH --db FILE`)")


# -- D4: a baseline of a schema_version this dsh-audit never wrote -------------------------------


_NEWER, _NOT_WHOLE = ", written by a newer dsh-audit", ", not a whole number"


@pytest.mark.parametrize(("raw", "word"), [("0", "0"), ("3", "3" + _NEWER), ('"2"', "a string ('2')" + _NOT_WHOLE),
                                           ("2.0", "a fraction" + _NOT_WHOLE),
                                           ("1" + "0" * 400, "a number past 64 bits" + _NEWER), ("-2", "-2"),
                                           ("null", "null" + _NOT_WHOLE), ("true", "a boolean" + _NOT_WHOLE),
                                           ('"\\u001b[31m2"', "a string ('\\x1b[31m2')" + _NOT_WHOLE)])
def test_a_baseline_of_another_schema_version_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], raw: str,
                                                         word: str) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "check", "--no-baseline", "--json-report", "v2.json", str(A))[0] == 0
    text = (tmp_path / "v2.json").read_text("utf-8")
    assert '"schema_version": 2,' in text
    (tmp_path / "b.json").write_text(text.replace('"schema_version": 2,', f'"schema_version": {raw},', 1), "utf-8")
    assert invoke(monkeypatch, capsys, "check", "--baseline", "b.json", str(A)) == (2, "", [
        f"error: b.json: the baseline's schema_version is {word}: this dsh-audit reads schema_version 1 and 2 "
        "(hint: write the baseline "
        "with `dsh-audit check PATHS --json-report FILE` and pass that FILE)"])
    for version in ("1", "2"):
        (tmp_path / "b.json").write_text(text.replace('"schema_version": 2,', f'"schema_version": {version},', 1))
        assert invoke(monkeypatch, capsys, "check", "--baseline", "b.json", str(A))[0] == 0


# -- D10: INDEX -0 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("index", ["-0", "-00"])
@pytest.mark.parametrize("command", ["show", "explain", "render"])
def test_minus_zero_names_no_request(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                     command: str, index: str) -> None:
    assert invoke(monkeypatch, capsys, command, str(A), index) == (2, "", [
        f"error: Invalid value for 'INDEX': '{index}' names no request: a leading - counts from the end, and -1 "
        f"is the last request (0 is the first) (hint: see `dsh-audit {command} --help`)"])


# -- D11: a manifest naming another log; hints -----------------------------------------------------


def test_a_manifest_naming_another_log_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "redact", str(A), "-o", "r.jsonl", "--salt", "s18")[0] == 0
    manifest = tmp_path / "r.jsonl.manifest.json"
    data = json.loads(manifest.read_text("utf-8"))
    data["log"] = "\x1b[31mother.jsonl"
    manifest.write_text(json.dumps(data), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl")
    assert (code, err, out.splitlines()[-1]) == (0, [
        "note: the manifest was written for the log \\u001b[31mother.jsonl, and this log is r.jsonl (renamed after "
        "redact?): the verdicts below are this log's"], "OK: every verdict of r.jsonl matches its manifest")
    os.link(tmp_path / "r.jsonl", tmp_path / "same.jsonl")  # found under the name it records: the same file
    data["log"] = "same.jsonl"
    manifest.write_text(json.dumps(data), "utf-8")
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl")[1].splitlines()[-1] == (
        "OK: every verdict of r.jsonl matches its manifest")
    manifest.write_text("[1, 2]", "utf-8")
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (2, "", [
        "error: r.jsonl.manifest.json: not a dsh-audit redaction manifest (hint: the manifest was edited or damaged "
        "after `dsh-audit redact` wrote it: ask the sender for the bundle again, or redact the log again with "
        "`dsh-audit redact LOG -o FILE`)"])


# -- D12: keyType hints and routes -----------------------------------------------------------------


def _route(api: str, **dsh_audit: object) -> dict[str, object]:
    return {"providers": {"p": {"api": api, "baseURL": "http://127.0.0.1:1/v1", "dshAudit": dsh_audit,
                                "models": [{"id": "m"}]}}}


def test_key_type_errors_name_the_setting_and_the_route_file() -> None:
    with pytest.raises(_Bad) as bad:
        parse_routes(_route("anthropic-messages", keyType="OAuth"))
    assert (str(bad.value), bad.value.hint) == (
        "providers.p.dshAudit.keyType: must be one of api-key, oauth (the kind of key DSH gave pi-ai)",
        "write the route's `dshAudit: {keyType: oauth}` or `dshAudit: {keyType: api-key}` (docs/routes.md "
        "section 7.2) in the file given as --routes FILE")
    with pytest.raises(_Bad) as bad:
        parse_routes(_route("openai-completions", keyType="oauth"))
    assert (str(bad.value), bad.value.hint) == (
        "providers.p.dshAudit.keyType: is set on a route of api openai-completions: keyType applies only to "
        "anthropic-messages routes",
        "remove `dshAudit: {keyType: ...}` from this route in the file given as --routes FILE (docs/routes.md "
        "section 7.2)")
    assert parse_routes(_route("anthropic-messages", keyType="oauth")).models[("p", "m")].api == "anthropic-messages"


# -- D14: a session reference whose log cannot be opened -------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_session_named_whose_log_cannot_be_opened_is_dsh801(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "home" / "sessions" / "p"
    for name in ("session-good", "session-fifo", "session-dangling"):
        (project / name).mkdir(parents=True)
    shutil.copyfile(A, project / "session-good" / "session.jsonl")
    os.mkfifo(project / "session-fifo" / "session.jsonl")
    (project / "session-dangling" / "session.jsonl").symlink_to(tmp_path / "nowhere")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    code, out, err = invoke(monkeypatch, capsys, "check", "--no-baseline", "session-fifo")
    log = project / "session-fifo" / "session.jsonl"
    # a log not a line of which can be read is bad input (exit 2, said on stderr), its row still fails (issue 15)
    assert (code, out.splitlines()[-1]) == (
        2, "FAILED: 1 log(s), 0 request(s), 1 error(s), 0 warning(s), 0 info, 1 failing (policy: defaults)")
    assert err == [f"error: {log}: is a FIFO, not a log file (hint: only regular files are read)"]
    assert [line for line in out.splitlines() if "DSH801" in line][0].startswith(f"{log}: DSH801 error")
    code, _, err = invoke(monkeypatch, capsys, "check", "--no-baseline", "session-other")
    assert code == 2 and len(err) == 1 and "cannot be told" in err[0]


def test_a_new_index_appears_whole_never_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # stats alongside a starting index found a 0-byte file ("it is empty"): the new file is made
    # aside and linked into place holding its schema, and nothing is left beside it
    from dsh_audit.fleet import _db

    seen = []
    real_link = os.link

    def link(source: str, target: str) -> None:
        made = sqlite3.connect(source)
        seen.append((os.path.exists(target), made.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()))
        made.close()
        real_link(source, target)

    monkeypatch.setattr(_db.os, "link", link)
    _db.connect_index(tmp_path / "a.sqlite").close()
    assert seen == [(False, (str(_db.SCHEMA_VERSION),))]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sqlite"]
    _db.connect_index(tmp_path / "a.sqlite", create=False).close()  # a sound index for stats


def test_an_index_name_as_long_as_the_system_allows_is_made(tmp_path: Path) -> None:
    # the index is made under a temporary name first: a long --db name (238 characters) plus a
    # suffix passed the 255-byte limit ("unable to open database file")
    from dsh_audit.fleet import _db

    name = "c" * 238
    _db.connect_index(tmp_path / name).close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    _db.connect_index(tmp_path / name, create=False).close()


@pytest.mark.parametrize("length", [248, 255, 300])
def test_a_new_index_whose_name_leaves_no_room_for_its_journal_is_refused_by_name(
        tmp_path: Path, length: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # 247-255 bytes: SQLite failed to make NAME-journal ("unable to open database file", a hint about
    # permissions) after an empty index was linked into place; 256 and more named the temporary file
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "index", str(A), "--db", "c" * length)
    assert (code, err) == (2, [
        f"error: {'c' * length}: the index's file name is {length} bytes long: SQLite keeps a file named as it "
        "plus -journal beside it, past this file system's limit of 255 bytes (hint: give --db a file name of at "
        "most 247 bytes)"])
    assert list(tmp_path.iterdir()) == []
    code, _, err = invoke(monkeypatch, capsys, "index", str(A), "--db", "c" * 247)
    assert code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["c" * 247]
