"""``dsh-audit redact``, round 4 of its secrets: provider formats round 3 left out (Twilio, Azure,
Databricks, SendGrid, Telegram), prefix-less keys given away by the name they are assigned to in any
syntax (``-e MISTRAL_API_KEY=...``, ``api_key: ...``, ``api_key='...'``), each planted in every
content field, gone and counted by kind; a private key whose BEGIN line is itself split over two
strings; ids, digests, UUIDs, git SHAs and base64 images that are no secret; and bad input, which is
one line of error, exit 2 and nothing written.

Counts are derived by hand from where the builder writes each text (as in
``tests/test_redact_secrets_round3.py``), so a secret missed or counted twice shows as a number."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import uuid
from pathlib import Path

import pytest
from _cli import invoke
from test_redact_secrets_round3 import OCCURRENCES, _fields, _log, _survives

from dsh_audit.jsjson import stringify
from dsh_audit.redact import SECRET_KINDS, Placeholders, Redactor, find_secrets, redact
from dsh_audit.testing import LogBuilder

# kind -> (a text holding one secret of that kind, in the context its pattern needs; a part of the
# secret alone that must not survive anywhere). Fake values, each of its provider's current shape.
PLANTED: dict[str, tuple[str, str]] = {
    "twilio_key": ("SK" + "3f9a0c1d7b2e4f6a8c0d2e4f6a8b0c1d", "3f9a0c1d7b2e4f6a8c0d"),
    "databricks_token": ("dapi" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9" + "-2", "0a1b2c3d4e5f60718293"),
    "sendgrid_api_key": ("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", "TwL2iGABf9DHoTf"),
    "telegram_bot_token": ("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_", "AAHdqTcvCH1vGWJxfSeo"),
    "azure_api_key": ("curl -H 'Ocp-Apim-Subscription-Key: 9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a49'", "9c8b7a6f5e4d3c2b1a0f"),
    "credential_assignment": ("docker run -e MISTRAL_API_KEY=Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f img",
                              "Ab3dEf5hIj7lMn9pQr1t"),
}

# The planted log and how often each field's text is written in it (OCCURRENCES): round 3's.


def test_the_kinds_a_summary_can_name():
    assert SECRET_KINDS == (
        "private_key", "anthropic_api_key", "deepseek_api_key", "openai_api_key", "aws_access_key_id",
        "aws_secret_access_key", "github_token", "gitlab_token", "google_api_key", "google_oauth_token",
        "slack_token", "slack_webhook", "stripe_key", "huggingface_token", "npm_token", "pypi_token",
        "groq_api_key", "xai_api_key", "twilio_key", "databricks_token", "sendgrid_api_key", "telegram_bot_token",
        "azure_api_key", "jwt", "authorization", "bearer_token", "cookie", "env_assignment", "key_value",
        "url_parameter", "credential_assignment", "url_credentials")
    assert set(PLANTED) <= set(SECRET_KINDS)


@pytest.mark.parametrize("text, found", [
    # formats round 3 already covers, as the audit lists them: found by their own shape
    ("hf_kYw3Lq9ZpX2vN7cR5tB8mJ4hG6fD1sAeUo", ["huggingface_token"]),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_live_51H8abcdEFGHijklMNOP", ["stripe_key", "stripe_key"]),
    ("glpat-xY7_zQ2-vW9kLm4nP8rS", ["gitlab_token"]),
    ("npm_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3gH5", ["npm_token"]),
    ("sk-ant-admin01-" + "Pz4Tg7Yu" * 10, ["anthropic_api_key"]),
    ("sk-proj-" + "Ab3dEf5hIj" * 12, ["openai_api_key"]),
    ("MISTRAL_API_KEY=Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f", ["env_assignment"]),
    ("TWILIO_AUTH_TOKEN=0123456789abcdef0123456789abcdef", ["env_assignment"]),
    # new provider formats
    ("AC" + "0123456789abcdef" * 2 + " SK" + "fedcba9876543210" * 2, ["twilio_key", "twilio_key"]),
    ("dapi" + "0123456789abcdef" * 2, ["databricks_token"]),
    ("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", ["sendgrid_api_key"]),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_ ok", ["telegram_bot_token"]),
    ("api-key: 0123456789abcdef0123456789abcdef", ["azure_api_key"]),
    ('{"Ocp-Apim-Subscription-Key": "0123456789abcdef0123456789abcdef"}', ["azure_api_key"]),
    # a prefix-less key under a credential name, in every syntax but the two round 3 covers
    ("env MISTRAL_API_KEY=Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f python run.py", ["credential_assignment"]),
    ("mistral_api_key: Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f", ["credential_assignment"]),
    ('MISTRAL_API_KEY: "Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f"', ["credential_assignment"]),
    ("os.environ['MISTRAL_API_KEY'] = 'Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f'", ["credential_assignment"]),
    ("client = Mistral(api_key='Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f')", ["credential_assignment"]),
    ("x-api-key: 8f3a9c2e1d4b5a6c", ["credential_assignment"]),
    ("passwd: r00tp4ss!", ["credential_assignment"]),
])
def test_provider_formats_and_named_keys_are_found(text, found):
    assert [m.kind for m in find_secrets(text)] == found


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_planted_text_holds_one_secret_of_its_kind(kind):
    text, part = PLANTED[kind]
    planted = f"note\n{text}\nend"
    found = [(m.kind, planted[m.start:m.end]) for m in find_secrets(planted)]
    assert [k for k, _ in found] == [kind] and part in found[0][1]


@pytest.mark.parametrize("keep", [(), ("system", "tools", "titles", "paths")], ids=["replaced", "kept"])
@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_secret_of_every_new_kind_is_gone_from_every_field_and_counted_by_kind(tmp_path, kind, keep):
    text, part = PLANTED[kind]
    log = _log(tmp_path / "in", _fields(text))
    assert _survives(log.read_bytes(), part)
    result = redact(log, tmp_path / "out.jsonl", salt="round4", keep=keep)
    assert result.secrets == {kind: {"occurrences": OCCURRENCES, "distinct": 1}}
    assert not _survives(result.output.read_bytes(), part)
    assert not _survives(result.manifest.read_bytes(), part)
    assert result.mismatched == ()


# -- no false positives --------------------------------------------------------------------------

_PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"".join(hashlib.sha256(bytes([i])).digest() for i in range(64))).decode()
ORDINARY = [
    # digests, git SHAs, UUIDs and ids of every length the new patterns look at
    "sha256:" + hashlib.sha256(b"x").hexdigest() + " md5 " + hashlib.md5(b"x").hexdigest(),
    "commit 3f9a0c1d7b2e4f6a8c0d2e4f6a8b0c1d3f9a0c1d (3f9a0c1)",
    f"id {uuid.UUID(int=0x550E8400E29B41D4A716446655440000)} run {uuid.uuid5(uuid.NAMESPACE_DNS, 'x').hex}",
    "request-id: 0123456789abcdef0123456789abcdef\nETag: \"0123456789abcdef0123456789abcdef\"",
    "SKU 0123456789abcdef0123456789abcdef, ACK 0123456789abcdef0123456789abcdef",
    "AC0123456789ABCDEF0123456789ABCDEF is upper-case hex, SK0123456789abcdef0123456789abcde is short",
    "dapi is a word, dapi0123 is short, SG.short.dot",
    "at 12:34:56, 123456789:42 ratio 1234567890:AAB",
    f"data:image/png;base64,{_PNG}",
    # names that hold a credential word but assign none, and values that are no key
    "max_tokens: 64000\ntokenizer: deepseek-v4-tokenizer\nprompt_cache_key: sess-abc123def456",
    "secret_name: prod-db-2\ntoken_type: Bearer\nmonkey: banana12345\nprimary_key: user_id_12345",
    "api_key = os.environ['API_KEY']\nauth_token = response.json()['token']\npassword: ${DB_PASSWORD}",
    "api_key: YOUR_API_KEY\npassword: <your password 1>\napi-key: {{ secrets.AZURE_KEY }}",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
]


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_code_and_data_is_no_secret(text):
    assert list(find_secrets(text)) == []
    redactor = Redactor(Placeholders(b"s"))
    assert redactor.keep_text(text) == text
    redactor.content(text)
    redactor.content(json.dumps({"command": text}))
    redactor.content(json.dumps(text.split("\n")))  # each line a string of an array
    assert dict(redactor.secrets) == {}


def test_a_log_of_ordinary_code_and_data_counts_no_secret(tmp_path):
    text = "\n".join(ORDINARY)
    fields = {**_fields(text), "cwd": "/home/dev/" + hashlib.sha1(b"p").hexdigest()}
    result = redact(_log(tmp_path, fields), tmp_path / "out.jsonl", salt="s")
    assert result.secrets == {} and result.mismatched == ()


# -- a private key whose BEGIN line is split over two strings ------------------------------------

HEAD, REST = "-----BEGIN RSA PRIV", "ATE KEY-----"
BODY = ["MIIEpAIBAAKCAQEA7v9QxZ3kLm8Pq2Rs6Tv0Xy4Wb7Nc1Hd5Jf9Gk3Lp2Qm8Rn4", "Ts6Vw0Xz2Ab4Cd6Ef8Gh0Ij2Kl4Mn6Op8="]
END = "-----END RSA PRIVATE KEY-----"
_P = Placeholders(b"s")


@pytest.mark.parametrize("text, kept", [
    # the header cut in two items of an array, the body and END line in the second: the body goes
    (stringify(["key: " + HEAD, REST + "\n" + BODY[0] + "\n" + END, "after"]),
     stringify(["key: " + HEAD, REST + _P.plain("\n" + BODY[0] + "\n") + END, "after"])),
    # cut elsewhere (in the dashes), members of an object
    (stringify({"a": "-----BEGIN EC PRIVATE KEY---", "b": "--\n" + BODY[0]}),
     stringify({"a": "-----BEGIN EC PRIVATE KEY---", "b": "--" + _P.plain("\n" + BODY[0])})),
    # the second string holds the rest of the header alone: the key body strings after it go, prose stays
    (stringify([HEAD, REST, BODY[0], "", BODY[1], "thanks, that is all"]),
     stringify([HEAD, REST, _P.plain(BODY[0]), "", _P.plain(BODY[1]), "thanks, that is all"])),
    # inside JSON inside JSON (tool arguments holding an array)
    (stringify({"args": stringify([HEAD, REST + "\n" + BODY[0]])}),
     stringify({"args": stringify([HEAD, REST + _P.plain("\n" + BODY[0])])})),
])
def test_a_begin_line_split_across_json_strings_goes_and_counts_once(text, kept):
    redactor = Redactor(Placeholders(b"s"))
    out = redactor.keep_text(text)
    assert out == kept and len(out) == len(text)
    assert dict(redactor.secrets) == {"private_key": 1}
    replaced = Redactor(Placeholders(b"s"))
    replaced.content(text)  # replaced whole, the same count
    assert dict(replaced.secrets) == {"private_key": 1}


@pytest.mark.parametrize("text", [
    stringify(["a -", "-- b"]),
    stringify(["-----BEGIN PUBLIC", " KEY-----\n" + BODY[0]]),  # a public key is no secret
    stringify(["-----BEGIN RSA PRIV", "thanks"]),  # the next string does not end the line
    stringify([HEAD, 12, REST + "\n" + BODY[0]]),  # a number between: two values, no split line
])
def test_no_begin_line_runs_across_these_strings(text):
    redactor = Redactor(Placeholders(b"s"))
    assert redactor.keep_text(text) == text
    redactor.content(text)
    assert dict(redactor.secrets) == {}


@pytest.mark.parametrize("keep", [False, True], ids=["replaced", "kept"])
def test_a_begin_line_split_across_the_content_parts_of_a_tool_result_goes_and_counts_once(keep):
    parts = ["key:\n" + HEAD, REST + "\n" + BODY[0], BODY[1], "thanks"]
    record = {"type": "tool/result", "seq": 9, "time": 1, "data": {"turn": 1, "step": 1, "message": {
        "role": "user", "id": "m-2", "source": {"kind": "tool", "callId": "call-1"},
        "content": [{"type": "tool-result", "toolCallId": "call-1", "isError": False,
                     "content": [{"type": "text", "text": part} for part in parts]}]}}}
    redactor = Redactor(Placeholders(b"s"))
    out = redactor.value(record, kept=True) if keep else redactor.record(record)
    texts = [block["text"] for block in out["data"]["message"]["content"][0]["content"]]
    assert dict(redactor.secrets) == {"private_key": 1}
    assert [len(t) for t in texts] == [len(p) for p in parts]
    assert not any(line[:12] in text for line in BODY for text in texts)
    if keep:
        assert texts == [parts[0], REST + _P.plain("\n" + BODY[0]), _P.plain(BODY[1]), "thanks"]


def test_a_begin_line_split_across_two_user_text_blocks_is_gone_from_the_log_and_counted_once(tmp_path):
    b = LogBuilder(session_id="s-split")
    with b.turn([{"type": "text", "text": "my key " + HEAD}, {"type": "text", "text": REST + "\n" + "\n".join(BODY)}]):
        with b.step():
            b.assistant("noted")
    log = b.write_jsonl(tmp_path / "in" / "session.jsonl", packed=False)
    result = redact(log, tmp_path / "out.jsonl", salt="s")
    # agent/inbox/spliced and user/message hold the two blocks (the title request quotes none)
    assert result.secrets == {"private_key": {"occurrences": 2, "distinct": 1}}
    assert not _survives(result.output.read_bytes(), BODY[0][:16]) and result.mismatched == ()


# -- bad input: one line, exit 2, nothing written ------------------------------------------------


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    """A folder holding one small log; returns the folder and the log."""
    b = LogBuilder(session_id="s-bad")
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello")
    folder = tmp_path / "work"
    return folder, b.write_jsonl(folder / "session.jsonl", packed=False)


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    return {str(p.relative_to(folder)): (os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else "dir")
            for p in sorted(folder.rglob("*"))}


def _refused(monkeypatch, capsys, folder: Path, *args: str, message: str) -> None:
    before = _snapshot(folder)
    monkeypatch.chdir(folder)
    code, out, err = invoke(monkeypatch, capsys, "redact", *args)
    assert (code, out, err) == (2, "", [message])
    assert _snapshot(folder) == before  # nothing written, nothing left behind


def test_a_missing_log_a_folder_and_a_fifo_are_one_line_each(tmp_path, monkeypatch, capsys):
    folder, _ = _folder(tmp_path)
    (folder / "logs").mkdir()
    _refused(monkeypatch, capsys, folder, "missing.jsonl", "-o", "out.jsonl", "--salt", "s",
             message="error: missing.jsonl: no such file or folder (hint: pass the path of a log or a session "
                     "folder, or a session id or `latest`: looked up in $DSH_HOME/sessions; set DSH_HOME to the "
                     "DSH home that holds sessions/)")
    _refused(monkeypatch, capsys, folder, "logs", "-o", "out.jsonl", "--salt", "s",
             message="error: logs: folder holds no DSH session log "  # a folder of one session is read
                     "(hint: expected session.jsonl or session.jsonl.zstd files below it: pass PATH (a log, a "
                     "session folder or a sessions root), or set DSH_HOME to the DSH home whose sessions/ holds them)")
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "fifo")
        _refused(monkeypatch, capsys, folder, "fifo", "-o", "out.jsonl", "--salt", "s",
                 message="error: fifo: is a FIFO, not a log file (hint: only regular files are read)")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads a file of mode 000")
def test_a_log_without_read_permission_is_one_line(tmp_path, monkeypatch, capsys):
    folder, log = _folder(tmp_path)
    log.chmod(0)
    try:
        _refused(monkeypatch, capsys, folder, "session.jsonl", "-o", "out.jsonl", "--salt", "s",
                 message="error: session.jsonl: cannot open: Permission denied")
    finally:
        log.chmod(0o644)


def test_an_existing_output_without_force_and_an_empty_salt_are_one_line_each(tmp_path, monkeypatch, capsys):
    folder, _ = _folder(tmp_path)
    (folder / "out.jsonl").write_text("mine\n")
    _refused(monkeypatch, capsys, folder, "session.jsonl", "-o", "out.jsonl", "--salt", "s",
             message="error: out.jsonl: the output already exists (hint: pass --force to replace it)")
    (folder / "new.jsonl.manifest.json").write_text("{}\n")
    _refused(monkeypatch, capsys, folder, "session.jsonl", "-o", "new.jsonl", "--salt", "s",
             message="error: new.jsonl.manifest.json: the manifest already exists (hint: pass --force to replace it)")
    _refused(monkeypatch, capsys, folder, "session.jsonl", "-o", "other.jsonl", "--salt", "",
             message="error: the salt is empty (hint: give a non-empty --salt, or none for a random one)")


def test_an_output_that_is_the_input_by_any_name_is_one_line(tmp_path, monkeypatch, capsys):
    folder, log = _folder(tmp_path)
    os.link(log, folder / "hard.jsonl")
    (folder / "sym.jsonl").symlink_to("session.jsonl")
    (folder / "sub").mkdir()
    hint = " (hint: give -o another path)"  # the option given, as every command names it
    for output, shown in [("session.jsonl", "session.jsonl"), ("hard.jsonl", "hard.jsonl"),
                          ("sym.jsonl", "sym.jsonl"), ("sub/../session.jsonl", "sub/../session.jsonl")]:
        _refused(monkeypatch, capsys, folder, "session.jsonl", "-o", output, "--salt", "s", "--force",
                 message=f"error: {shown}: the output would overwrite the input session.jsonl{hint}")
    (folder / "out.jsonl.manifest.json").symlink_to("session.jsonl")
    _refused(monkeypatch, capsys, folder, "session.jsonl", "-o", "out.jsonl", "--salt", "s", "--force",
             message="error: out.jsonl.manifest.json: the manifest would overwrite the input session.jsonl "
                     "(hint: choose another -o path (the manifest is OUTPUT.manifest.json))")


def _unwritable_folder(tmp_path: Path) -> Path | None:
    """A folder that takes no new file: a read-only one (not for root), or a kernel file system's."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    for folder in (locked, Path("/proc"), Path("/sys")):
        try:
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError:
            return folder
    return None


def test_an_output_folder_that_is_not_writable_is_one_line(tmp_path, monkeypatch, capsys):
    folder, _ = _folder(tmp_path)
    _capture(folder)
    target = _unwritable_folder(tmp_path)
    if target is None:
        pytest.skip("no folder here refuses a new file")
    try:
        for flag in ("-o", "--capture-output"):
            before = _snapshot(folder)
            monkeypatch.chdir(folder)
            args = (["-o", str(target / "out.jsonl")] if flag == "-o"
                    else ["-o", "out.jsonl", "--capture", str(_capture(folder)), "--capture-output",
                          str(target / "w.jsonl")])
            code, out, err = invoke(monkeypatch, capsys, "redact", "session.jsonl", *args, "--salt", "s")
            name, what = ("out.jsonl", "output") if flag == "-o" else ("w.jsonl", "capture output")
            assert (code, out, len(err)) == (2, "", 1)
            assert err[0].startswith(f"error: {target / name}: cannot write the {what}: ")
            assert err[0].endswith("(hint: write the redacted files to a folder you can write to (-o, --capture-output))")
            assert _snapshot(folder) == before
    finally:
        (tmp_path / "locked").chmod(0o755)


def _capture(folder: Path) -> Path:
    """A one-request wire.jsonl capture of the log in ``folder`` (its body need not match)."""
    path = folder / "wire.jsonl"
    if not path.exists():
        path.write_text(json.dumps({"seq": 1, "method": "POST", "path": "/chat/completions", "body": "{}"}) + "\n")
    return path


def test_a_capture_that_is_not_json_is_one_line(tmp_path, monkeypatch, capsys):
    folder, _ = _folder(tmp_path)
    (folder / "caps").mkdir()
    (folder / "caps" / "wire.jsonl").write_text('{"method": "POST", "body": "{}"}\n{broken\n')
    (folder / "caps" / "body.json").write_text('{"model": ')
    _refused(monkeypatch, capsys, folder, "session.jsonl", "-o", "out.jsonl", "--salt", "s", "--capture",
             "caps/wire.jsonl", message="error: caps/wire.jsonl: line 2: not a JSON record (Expecting property name "
                                        "enclosed in double quotes: line 1 column 2 (char 1)) (hint: a wire.jsonl "
                                        "capture has one JSON object per line)")
    _refused(monkeypatch, capsys, folder, "session.jsonl", "-o", "out.jsonl", "--salt", "s", "--capture",
             "caps/body.json", message="error: caps/body.json: not a capture format dsh-audit knows (hint: expected "
                                       "a wire.jsonl file, a HAR 1.2 file or a folder of *.json bodies)")
