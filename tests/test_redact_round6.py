"""Redaction round 6: session ids stay in texts (a subagent's spawn keeps its seq), a child beside its
parent is refused unless redacted alone, line breaks stay (a system prompt's diff keeps its hunks), and
a capture of another session is refused."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import zstandard

from _cli import chat_log, invoke
from dsh_audit.errors import UsageError
from dsh_audit.redact import Placeholders, Redaction, check_bundle, redact, session_verdicts
from dsh_audit.redact import _family
from dsh_audit.redact._family import salt_cause
from dsh_audit.redact._manifest import read_manifest
from dsh_audit.session import open_session

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
SUBAGENT = CORPUS / "live" / "g-subagent" / "session-logs"
PARENT = SUBAGENT / "session-70444d8d-ee1d-43e9-8341-470b57f1019c.jsonl"
CHILD = SUBAGENT / "718aabf5-ac98-48d9-87ec-fa18653fd4d4.jsonl"
CHILD_ID = "718aabf5-ac98-48d9-87ec-fa18653fd4d4"
HOME_PARENT = (CORPUS / "live" / "g-subagent" / "home" / "sessions" / "--home-dev-dsh-runs-a-g-subagent-ws--"
               / "session-70444d8d-ee1d-43e9-8341-470b57f1019c" / "session.jsonl.zstd")
CHANGE = CORPUS / "live" / "c-change" / "session-logs" / "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824.jsonl"
A_CHAT_WIRE = CORPUS / "live" / "a-chat" / "wire.jsonl"
needs_corpus = pytest.mark.skipif(not SUBAGENT.is_dir(), reason="../shared/corpus is absent")


def _breaks(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Path) -> list[dict]:
    code, out, err = invoke(monkeypatch, capsys, "breaks", "--json", str(log))
    assert (code, err) == (0, [])
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return [{k: row[k] for k in ("request", "previous", "verdict", "cause", "evidence_seqs")}
            | {"fields": [f["field"] for f in row["fields"]]} for row in rows]


# -- 1. session ids are identifiers, not content -------------------------------------------------


def test_a_session_id_stays_in_place_inside_a_placeholder() -> None:
    p = Placeholders(b"salt")
    # a string of another shape than a session id's (a word, a phrase) could be content: not kept
    p.keep_identifiers([CHILD_ID, "short", "started subagent"])
    text = f"started subagent {CHILD_ID} (short)"
    out = p.plain(text)
    assert len(out.encode()) == len(text.encode())
    assert out[17:17 + len(CHILD_ID)] == CHILD_ID
    assert "started" not in out and "subagent" not in out and "short" not in out
    assert p.text(json.dumps({"note": text}))[10 + 17:10 + 17 + len(CHILD_ID)] == CHILD_ID


@needs_corpus
def test_a_redacted_parent_keeps_the_first_mention_of_its_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    expected = [{"request": 0, "previous": 1, "verdict": "break", "cause": "subagent", "evidence_seqs": [34, 1, 11],
                 "fields": ["system", "tools"]}]
    assert _breaks(monkeypatch, capsys, CHILD) == expected
    (tmp_path / "p").mkdir()
    (tmp_path / "c").mkdir()
    redact(PARENT, tmp_path / "p" / "session.jsonl", salt="s")
    child = redact(CHILD, tmp_path / "c" / "session.jsonl", salt="s", alone=True)
    assert child.mismatched == ()
    assert child.notes == (f"redacted alone: its verdicts were compared without its parent log {PARENT} (beside it, "
                           "breaks compares the two); redact the parent too, with the same salt, to give the "
                           "recipient both",)
    assert _breaks(monkeypatch, capsys, tmp_path / "c" / "session.jsonl") == expected


@needs_corpus
def test_a_child_id_only_the_text_names_is_learnt_from_the_child_beside_it(tmp_path: Path) -> None:
    # the parent's only structural mention (senderSessionId) names another id: the child's id is in texts only
    other = "00000000-0000-0000-0000-000000000000"
    text = PARENT.read_text(encoding="utf-8").replace(f'"senderSessionId":"{CHILD_ID}"', f'"senderSessionId":"{other}"')
    alone, family = tmp_path / "x" / "alone", tmp_path / "y" / "family"  # the search looks one folder up
    for folder in (alone, family):
        folder.mkdir(parents=True)
        (folder / PARENT.name).write_text(text, encoding="utf-8")
    shutil.copy(CHILD, family / CHILD.name)
    redact(alone / PARENT.name, tmp_path / "a.jsonl", salt="s")
    redact(family / PARENT.name, tmp_path / "f.jsonl", salt="s")
    assert (tmp_path / "a.jsonl").read_text(encoding="utf-8").count(CHILD_ID) == 0
    assert (tmp_path / "f.jsonl").read_text(encoding="utf-8").count(CHILD_ID) == text.count(CHILD_ID)


@needs_corpus
def test_a_zstd_parent_in_its_dsh_home_keeps_the_id_of_its_child_in_the_sibling_folder(tmp_path: Path) -> None:
    # the child's header is read (one folder up, where DSH keeps a project's sessions) before the parent's
    # first text, in the parent's one read: the spawn's tool result, before any structural mention, keeps it
    def text(path: Path) -> str:
        with path.open("rb") as handle:
            return zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True).read().decode()

    result = redact(HOME_PARENT, tmp_path / "session.jsonl.zstd", salt="s")
    assert (result.compressed, result.mismatched) == (True, ())
    original, copy = text(HOME_PARENT), text(tmp_path / "session.jsonl.zstd")
    assert [n.count(CHILD_ID) for n in copy.splitlines()] == [n.count(CHILD_ID) for n in original.splitlines()]
    assert copy.count(CHILD_ID) == 7 and f"started subagent {CHILD_ID}" not in copy


# -- 2. a child beside its parent ----------------------------------------------------------------


@needs_corpus
def test_a_child_beside_its_parent_needs_the_parent_redacted_beside_it_or_alone(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"  # a parent is looked for beside the output and one folder up: none there
    out.mkdir(parents=True)
    with pytest.raises(UsageError) as caught:
        redact(CHILD, out / "c.jsonl", salt="s")
    assert str(caught.value) == (
        f"{CHILD}: this log is a child of {PARENT}, beside it, which its breaks and cache verdicts there compare it "
        "with, and no redaction of that parent lies beside the output (hint: redact the parent first, then this "
        "child with its -o beside the parent's (where breaks finds a parent), both with one salt you give (--salt S "
        "or DSH_AUDIT_REDACT_SALT=S), not the default random one; or pass --alone to compare this child's verdicts "
        "without its parent)")
    assert sorted(p.name for p in out.iterdir()) == []


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Redaction]:
    """The subagent family redacted with the salt "s" (the parent first), in a folder of its own two deep (a
    parent is looked for one folder up too), and the child's redaction: read, or copied, by the tests below."""
    folder = tmp_path_factory.mktemp("family") / "a" / "b"
    folder.mkdir(parents=True)
    redact(PARENT, folder / PARENT.name, salt="s")
    return folder, redact(CHILD, folder / CHILD.name, salt="s")


@pytest.fixture(scope="module")
def other_parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The subagent's parent redacted with the salt "another" (the folder holding it and its manifest)."""
    folder = tmp_path_factory.mktemp("other")
    redact(PARENT, folder / PARENT.name, salt="another")
    return folder


def _bundle_copy(source: Path, folder: Path, *logs: str) -> Path:
    """``folder`` (made) holding a copy of the bundles of ``logs`` (each log and its manifest) from ``source``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in logs:
        for file in (name, f"{name}.manifest.json"):
            shutil.copyfile(source / file, folder / file)
    return folder


@needs_corpus
def test_a_child_redacted_beside_its_redacted_parent_proves_its_verdicts_with_it(
        family: tuple[Path, Redaction], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder, child = family
    assert (child.mismatched, child.parent) == ((), "session-70444d8d-ee1d-43e9-8341-470b57f1019c")
    assert child.notes == ("verdicts compared with the parent session session-70444d8d-ee1d-43e9-8341-470b57f1019c on "
                           f"both sides: {PARENT} and its redaction {folder / PARENT.name}",)
    assert _breaks(monkeypatch, capsys, folder / CHILD.name) == _breaks(monkeypatch, capsys, CHILD)
    assert check_bundle(folder / CHILD.name).ok
    # the same child compared alone records other verdicts: its bundle proves what it was compared with
    alone = redact(CHILD, tmp_path / "alone.jsonl", salt="s", alone=True)
    assert alone.verdicts["breaks"] != child.verdicts["breaks"] and alone.parent is None
    # a bundle whose parent is gone is a usage error of --check, not a mismatch
    with pytest.raises(UsageError, match="whose redacted log is not beside it"):
        check_bundle(_bundle_copy(folder, tmp_path / "x" / "y", CHILD.name) / CHILD.name)


@needs_corpus
def test_a_child_and_a_parent_of_another_salt_are_refused_by_redact_and_said_by_check(
        family: tuple[Path, Redaction], other_parent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # a parent redacted with another salt is not the child's: the verdicts move, redact says why (the parent's
    # manifest records its salt's id, never the salt), and writes nothing (session 42: the bundle was written)
    other = tmp_path / "other"
    other.mkdir()
    redact(PARENT, other / PARENT.name)  # the default: a random salt
    manifest = json.loads((other / f"{PARENT.name}.manifest.json").read_text("utf-8"))
    assert (manifest["salt"], manifest["salt_id"][:7], len(manifest["salt_id"])) == ("random", "scrypt:", 7 + 32)
    code, text, err = invoke(monkeypatch, capsys, "redact", str(CHILD), "-o", str(other / CHILD.name), "--salt", "s")
    assert (code, text, err[-1:]) == (1, "", [
        f"FAILED: breaks, cache verdicts differ on the redacted copy, so nothing was written: the parent's redaction "
        f"{other / PARENT.name} was made with another salt than this run's (a random one, which no run can repeat) "
        "(hint: redact the parent again, then this child, both with --force and one salt you give "
        "(--salt S or DSH_AUDIT_REDACT_SALT=S), not the default random one)"])
    assert sorted(p.name for p in other.iterdir()) == [PARENT.name, f"{PARENT.name}.manifest.json"]
    given = _bundle_copy(other_parent, tmp_path / "given", PARENT.name)  # a salt given: recorded as given
    read: list[Path] = []  # session 44: the parent's manifest is read once a run, for its derivation and its salt
    monkeypatch.setattr(_family, "read_manifest", lambda path: read.append(path) or read_manifest(path))
    moved = redact(CHILD, given / CHILD.name, salt="s")
    assert read == [given / PARENT.name]
    assert moved.cause == (
        f"the parent's redaction {given / PARENT.name} was made with another salt than this run's (another given salt)")
    # session 42b: the id is slow to make (scrypt, N=2**14, r=8, p=1, a fixed salt: each guess at a short salt costs
    # as much); review E: no dsh-audit wrote another id (a blake2b: one is refused: test_redact_manifest38)
    recorded = json.loads((given / f"{PARENT.name}.manifest.json").read_text("utf-8"))
    identity = "scrypt:" + hashlib.scrypt(b"another", salt=b"dsh-audit-salt-id", n=2 ** 14, r=8, p=1, dklen=16).hex()
    assert recorded["salt_id"] == identity
    parent_manifest = read_manifest(given / PARENT.name)  # read once by redact, and asked each question
    assert salt_cause(given / PARENT.name, parent_manifest, identity) is None
    assert salt_cause(given / PARENT.name, None, moved.salt_id) is None  # a manifest that could not be read
    assert salt_cause(given / PARENT.name, parent_manifest, moved.salt_id) == (
        f"the parent's redaction {given / PARENT.name} was made with another salt than this run's (another given salt)")
    # re-read E of session 43: a child bundle beside a parent redacted again with another salt says so on --check
    _bundle_copy(family[0], given, CHILD.name)
    read.clear()
    assert invoke(monkeypatch, capsys, "redact", "--check", str(given / CHILD.name))[:2] == (1, (
        "requests: match (2 request(s))\nbreaks: MISMATCH (2 request(s), 1 break(s))\ncache: MISMATCH (2 request(s))\n"
        f"FAILED: breaks, cache verdicts differ from the manifest of {given / CHILD.name}\n"
        f"cause: the parent's redaction {given / PARENT.name} was made with another salt than this child's bundle's "
        "(another given salt) (hint: redact the parent again, then this child, both with --force "
        "and one salt you give (--salt S or DSH_AUDIT_REDACT_SALT=S), not the default random one)\n"))
    assert read == [given / PARENT.name]


@needs_corpus
def test_a_family_of_two_key_derivations_is_refused_by_redact_and_said_by_check(
        family: tuple[Path, Redaction], other_parent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # issue 17: the placeholders' key comes from the salt's scrypt, its derivation recorded; a parent an older
    # dsh-audit redacted (no key_derivation: a SHA-256 of the salt) is refused whatever the salt, nothing written
    folder = _bundle_copy(other_parent, tmp_path, PARENT.name)
    parent_manifest = folder / f"{PARENT.name}.manifest.json"
    recorded = json.loads(parent_manifest.read_text("utf-8"))
    assert recorded["key_derivation"] == 2
    parent_manifest.write_text(json.dumps({k: v for k, v in recorded.items() if k != "key_derivation"}), "utf-8")
    assert check_bundle(folder / PARENT.name).ok  # --check of an older bundle needs no key
    assert invoke(monkeypatch, capsys, "redact", str(CHILD), "-o", str(folder / CHILD.name), "--salt", "another") == (
        2, "", [f"error: {CHILD}: the parent's redaction {folder / PARENT.name} was made by an older dsh-audit, whose "
                "placeholders (key derivation 1) are not this one's (key derivation 2) for any salt (hint: redact the "
                "parent again with this dsh-audit, then this child, both with --force and one salt you give (--salt S "
                "or DSH_AUDIT_REDACT_SALT=S), not the default random one; or pass --alone to compare this child's "
                "verdicts without its parent)"])
    assert sorted(p.name for p in folder.iterdir()) == [PARENT.name, f"{PARENT.name}.manifest.json"]
    # re-read E of session 43: a child whose verdicts moved beside a parent of another derivation says so on
    # --check, whichever is the older (the derivation said first: the salts' ids compare across derivations)
    _bundle_copy(family[0], folder, CHILD.name)
    failed = (f"requests: match (2 request(s))\nbreaks: MISMATCH (2 request(s), 1 break(s))\ncache: MISMATCH (2 "
              f"request(s))\nFAILED: breaks, cache verdicts differ from the manifest of {folder / CHILD.name}\ncause: ")
    hint = (" for any salt (hint: redact the parent again with this dsh-audit, then this child, both with --force and "
            "one salt you give (--salt S or DSH_AUDIT_REDACT_SALT=S), not the default random one)\n")
    assert invoke(monkeypatch, capsys, "redact", "--check", str(folder / CHILD.name)) == (1, (
        f"{failed}the parent's redaction {folder / PARENT.name} was made by an older dsh-audit, whose placeholders "
        f"(key derivation 1) are not this child's (key derivation 2){hint}"), [])
    parent_manifest.write_text(json.dumps(recorded), "utf-8")
    child_manifest = folder / f"{CHILD.name}.manifest.json"
    child_recorded = json.loads(child_manifest.read_text("utf-8"))
    child_manifest.write_text(json.dumps({k: v for k, v in child_recorded.items() if k != "key_derivation"}), "utf-8")
    assert invoke(monkeypatch, capsys, "redact", "--check", str(folder / CHILD.name)) == (1, (
        f"{failed}this child's bundle was made by an older dsh-audit, whose placeholders (key derivation 1) are not "
        f"those of its parent's redaction {folder / PARENT.name} (key derivation 2){hint}"), [])
    # the family again, with one salt
    assert redact(CHILD, folder / CHILD.name, salt="another", force=True).mismatched == ()
    assert invoke(monkeypatch, capsys, "redact", "--check", str(folder / CHILD.name))[:2] == (
        0, f"requests: match (2 request(s))\nbreaks: match (2 request(s), 1 break(s))\ncache: match (2 request(s))\n"
           f"OK: every verdict of {folder / CHILD.name} matches its manifest\n")


# -- 3. line breaks stay, and a system prompt's diff keeps its hunks -----------------------------


def test_line_breaks_stay_and_each_line_is_hashed_alone() -> None:
    p = Placeholders(b"salt")
    old, new = "alpha\nbeta\r\ngamma\u2028delta\x85end", "alpha\nBETA\r\ngamma\u2028delta\x85end"
    a, b = p.plain(old), p.plain(new)
    assert [len(x.encode()) for x in (a, b)] == [len(old.encode())] * 2
    assert a.splitlines(keepends=True)[1:][1:] == b.splitlines(keepends=True)[1:][1:]  # the lines after stay
    assert [line[-1:] for line in a.splitlines(keepends=True)][:-1] == ["\n", "\n", "\u2028", "\x85"]
    assert a.splitlines()[0] == b.splitlines()[0] and a.splitlines()[1] != b.splitlines()[1]
    # no other character becomes a line break
    every = "".join(chr(c) for c in range(0x20)) + "\x85\u2028\u2029 x\u00e9\u4e00"
    assert len(p.plain(every * 3).splitlines()) == len((every * 3).splitlines())
    # a streamed delta hides its line breaks as before (no verdict reads it)
    assert p.text("\n\nSo", blank=False)[0] != "\n"


@pytest.mark.skipif(not CHANGE.is_file(), reason="../shared/corpus is absent")
def test_a_changed_system_prompt_keeps_its_diff_hunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    result = redact(CHANGE, tmp_path / "r.jsonl", salt="s")
    assert result.mismatched == ()
    check = check_bundle(tmp_path / "r.jsonl")  # one breaks row per request, five of them breaks
    assert (check.ok, check.counts["breaks"], check.breaks) == (True, 8, 5)

    def hunks(log: Path) -> list[list[object]]:
        code, out, _ = invoke(monkeypatch, capsys, "breaks", "--json", str(log))
        assert code == 0
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        return [[f["field"], len(f["changes"]["diff"]), [x for x in f["changes"]["diff"] if x.startswith("@@")]]
                for row in rows for f in row["fields"] if f["field"] == "system"]

    expected = [["system", 3, ["@@ -3 +3 @@"]], ["system", 14, ["@@ -3,0 +4,13 @@"]],
                ["system", 14, ["@@ -4,13 +3,0 @@"]], ["system", 3, ["@@ -19,2 +18,0 @@"]]]
    assert hunks(CHANGE) == expected
    assert hunks(tmp_path / "r.jsonl") == expected
    # the verdicts a manifest digests hold the hunk headers and the tool list's change counts
    fields = [row[11] for row in session_verdicts(open_session(CHANGE))["breaks"] if row[11]]
    assert fields == [[["model", True, None], ["system", True, [3, ["@@ -3 +3 @@"]]]],
                      [["reasoningEffort", True, None], ["adapterDefaults.reasoningEffort", False, None]],
                      [["system", True, [14, ["@@ -3,0 +4,13 @@"]]]],
                      [["system", True, [14, ["@@ -4,13 +3,0 @@"]]]],
                      [["system", True, [3, ["@@ -19,2 +18,0 @@"]]], ["tools", True, [0, 2, False, 0]]]]


# -- 4. a capture of another session --------------------------------------------------------------


@pytest.mark.skipif(not A_CHAT_WIRE.is_file(), reason="../shared/corpus is absent")
def test_a_capture_of_another_session_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "in.jsonl", "session-mine")
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "o.jsonl"), "--salt", "s",
                            "--capture", str(A_CHAT_WIRE))
    assert (code, out) == (2, "")
    assert err == [f"error: {A_CHAT_WIRE}: none of the 3 captured request(s) is one of this log's (3 of another "
                   "session): is it the capture of another session? (hint: pass the capture of this session (or "
                   "--any-capture to redact it anyway))"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]
    result = redact(log, tmp_path / "o.jsonl", salt="s", capture=A_CHAT_WIRE, any_capture=True)
    assert result.notes == ("3 of 3 captured request(s) match none of the log's requests (3 of another session): "
                            "they are redacted as content, and prove nothing about this log",)


# -- 5. the default capture's name taken while the redaction ran (session 42b) ---------------------


@pytest.mark.skipif(not CHANGE.is_file(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("links", [True, False], ids=["hard-links", "no-hard-links"])
def test_a_default_capture_name_another_run_took_meanwhile_is_refused_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: bool) -> None:
    import dsh_audit.redact._redact as redacting
    import dsh_audit.redact._staging as staging

    other = b'{"another": "bundle"}\n'
    load = redacting.load_capture

    def meanwhile(*args: object, **kwargs: object) -> object:  # another redaction into the folder ends first
        (tmp_path / "wire.jsonl").write_bytes(other)
        return load(*args, **kwargs)  # type: ignore[arg-type]

    def no_link(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(redacting, "load_capture", meanwhile)
    if not links:
        monkeypatch.setattr(staging.os, "link", no_link)
    with pytest.raises(UsageError) as caught:
        redact(CHANGE, tmp_path / "r.jsonl", salt="s", capture=CHANGE.parent.parent / "wire.jsonl")
    assert str(caught.value) == (
        f"{tmp_path / 'wire.jsonl'}: another run wrote the capture output while this redaction ran, so nothing was "
        "written (hint: pass --capture-output PATH to name another file for the redacted capture)")
    assert sorted(os.listdir(tmp_path)) == ["wire.jsonl"] and (tmp_path / "wire.jsonl").read_bytes() == other


@pytest.mark.skipif(not CHANGE.is_file(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("left", ["file", "link"])
def test_force_without_the_capture_removes_the_earlier_bundles_capture_or_checks_without_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], left: str) -> None:
    # re-read E: the earlier bundle's wire.jsonl stayed beside the copy, and the printed check compared it and failed
    out, wire = tmp_path / "r.jsonl", CHANGE.parent.parent / "wire.jsonl"
    salt = ("--salt", "0123456789abcdef")  # long enough: no warning
    code, _, _ = invoke(monkeypatch, capsys, "redact", str(CHANGE), "-o", str(out), *salt, "--capture", str(wire))
    assert code == 0 and json.loads((tmp_path / "r.jsonl.manifest.json").read_text("utf-8"))["capture"] == "wire.jsonl"
    if left == "link":  # a link is not removed (only the file the manifest named): check is told to take none
        (tmp_path / "kept").mkdir()
        (tmp_path / "wire.jsonl").rename(tmp_path / "kept" / "wire.jsonl")
        (tmp_path / "wire.jsonl").symlink_to(tmp_path / "kept" / "wire.jsonl")
    code, text, err = invoke(monkeypatch, capsys, "redact", str(CHANGE), "-o", str(out), *salt, "--force")
    assert (code, err) == (0, [f"note: the capture {wire}, which `check` finds for this log, was not redacted: pass "
                               f"--capture {wire} to include it"])
    assert text.splitlines()[-2:] == [f"a recipient verifies it with: dsh-audit redact --check {out}",
                                      f"and audits it with: dsh-audit check {out}" + " --no-capture" * (left == "link")]
    names = ["kept", "r.jsonl", "r.jsonl.manifest.json", "wire.jsonl"] if left == "link" else [
        "r.jsonl", "r.jsonl.manifest.json"]
    assert sorted(os.listdir(tmp_path)) == names
    assert json.loads((tmp_path / "r.jsonl.manifest.json").read_text("utf-8"))["capture"] is None
