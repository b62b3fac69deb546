"""``dsh-audit redact``: body-folder captures, secrets in JSON object keys, and secrets split across
the log's own streamed deltas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from dsh_audit.capture import load_capture
from dsh_audit.jsjson import stringify
from dsh_audit.redact import Placeholders, check_bundle, find_secrets, redact, session_verdicts
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder, ToolCall, jsonl_bytes, migrate_events

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"
SECRET = "sk-proj-" + "Zq7" * 12  # an OpenAI-style key
ANTHROPIC = "sk-ant-api03-" + "Wv4" * 10
AUTH = "Bearer abcdefghij123456"


def _text(path: Path) -> str:
    data = path.read_bytes()
    if data[:4] == b"\x28\xb5\x2f\xfd":
        data = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
    return data.decode("utf-8")


def _fragments(secret: str, text: str) -> list[str]:
    """Every run of 8 characters of ``secret`` that ``text`` still holds."""
    return [secret[i:i + 8] for i in range(len(secret) - 7) if secret[i:i + 8] in text]


def _run(monkeypatch, args):
    """The console entry point (errors converted at its edge), as a user runs it."""
    from dsh_audit.cli import cli
    from dsh_audit.cli._common import run_guarded

    monkeypatch.setattr("sys.argv", ["dsh-audit", *args])
    return run_guarded(cli)


# -- body-folder captures ------------------------------------------------------------------------


def _body_folder(folder: Path, wire: Path, *, sidecars: bool) -> list[str]:
    """The bodies of ``wire`` as a body folder (zero-padded names), each with a sidecar carrying its
    headers and an Authorization header when ``sidecars``; body 2 has one more character in its first
    message, so one row is ``different``. Returns the file names."""
    folder.mkdir()
    names = []
    for i, capture in enumerate(load_capture(wire)):
        body = capture.body.replace(b'"content":"', b'"content":"X', 1) if i == 2 else capture.body
        (folder / f"{i:03}.json").write_bytes(body)
        names.append(f"{i:03}.json")
        if sidecars:
            meta = {"method": capture.method, "path": capture.path, "time": capture.time,
                    "headers": {**capture.headers, "authorization": AUTH}}
            (folder / f"{i:03}.meta.json").write_text(json.dumps(meta))
            names.append(f"{i:03}.meta.json")
    return names


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is absent")
@pytest.mark.parametrize("sidecars", [True, False], ids=["sidecars", "bodies-only"])
def test_a_body_folder_is_redacted_to_a_folder_with_the_diff_verdicts_of_the_originals(tmp_path, sidecars):
    case = CORPUS / "b-tools"
    log = next(case.glob("home/sessions/*/*/session.jsonl.zstd"))
    bodies = tmp_path / "bodies"
    names = _body_folder(bodies, case / "wire.jsonl", sidecars=sidecars)
    (bodies / "README.txt").write_text("not a body")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl.zstd", salt="folder", capture=bodies)
    assert result.capture == tmp_path / "out" / "session.jsonl.zstd.bodies"
    assert sorted(p.name for p in result.capture.iterdir()) == names  # names kept, the README left out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "session.jsonl.zstd", "session.jsonl.zstd.bodies", "session.jsonl.zstd.manifest.json"]  # no temporary folder left
    assert result.notes == ("left out 1 entry of the capture folder that is neither a body nor a body's sidecar "
                            "(0 sidecar(s) without a body)",)
    assert result.mismatched == () and set(result.verdicts) == {"requests", "breaks", "cache", "diff"}
    original = session_verdicts(open_session(log), load_capture(bodies))
    redacted = session_verdicts(open_session(result.output), load_capture(result.capture))
    assert redacted["diff"] == original["diff"]
    assert [row[3] for row in original["diff"]] == ["identical"] * 2 + ["different"] + ["identical"] * 6
    assert redacted == original
    assert result.dropped_headers == (("authorization",) if sidecars else ())
    for name in names:
        before, after = (bodies / name).read_bytes(), (result.capture / name).read_bytes()
        if name.endswith(".meta.json"):
            meta = json.loads(after)
            assert "authorization" not in meta["headers"] and AUTH not in after.decode()
            assert meta["headers"]["x-deepseek-harness-session-id"] == json.loads(before)["headers"][
                "x-deepseek-harness-session-id"]
        else:
            assert len(after) == len(before) and after != before
            assert json.loads(after).keys() == json.loads(before).keys()
    assert json.loads(result.manifest.read_text())["capture"] == "session.jsonl.zstd.bodies"
    assert check_bundle(result.output).ok


def _planted(folder: Path) -> Path:
    b = LogBuilder(session_id="s-folder", cwd="/home/dev/p", system="System prompt.")
    with b.turn(f"user says {SECRET}"):
        with b.step():
            b.assistant("answer")
    return b.write_jsonl(folder / "session.jsonl")


def _rendered(log: Path) -> list[bytes]:
    session = open_session(log)
    return [session.bodies.render(r, session.route(r).adapter) for r in session.requests]


def test_a_body_folder_output_replaces_a_previous_one_with_force(tmp_path):
    log = _planted(tmp_path)
    bodies = tmp_path / "bodies"
    bodies.mkdir()
    (bodies / "1.json").write_bytes(_rendered(log)[0])
    out = tmp_path / "out"
    out.mkdir()
    (out / "session.jsonl.bodies").mkdir()
    (out / "session.jsonl.bodies" / "7.json").write_text("{}")  # an earlier redaction, with another body
    result = redact(log, out / "session.jsonl", salt="s", capture=bodies, force=True)
    assert sorted(p.name for p in out.iterdir()) == ["session.jsonl", "session.jsonl.bodies",
                                                     "session.jsonl.manifest.json"]
    assert sorted(p.name for p in result.capture.iterdir()) == ["1.json"]
    assert SECRET not in (result.capture / "1.json").read_text() and result.mismatched == ()
    assert [c.body for c in load_capture(result.capture)] == _rendered(result.output)


@pytest.mark.parametrize("case", ["exists", "inside", "same", "holds-input", "holds-log", "not-bodies", "a-file"])
def test_a_body_folder_output_that_exists_or_touches_an_input_is_refused(tmp_path, monkeypatch, capsys, case):
    log = _planted(tmp_path)
    bodies = tmp_path / "bodies"
    bodies.mkdir()
    (bodies / "1.json").write_bytes(_rendered(log)[0])
    (tmp_path / "out").mkdir()
    out, target, force = tmp_path / "out" / "x.jsonl", tmp_path / "out" / "bodies", []
    hint = "give --capture-output another path"  # the option given, as every command names it
    if case == "exists":
        target.mkdir()
        message = f"{target}: the capture output already exists (hint: pass --force to replace it)"
    elif case == "inside":
        target = bodies / "redacted"
        message = f"{target}: the capture output would overwrite the input {bodies} (hint: {hint})"
    elif case == "same":
        target, force = tmp_path / "out" / ".." / "bodies", ["--force"]
        message = f"{target}: the capture output would overwrite the input {bodies} (hint: {hint})"
    elif case == "holds-input":
        target, force = tmp_path, ["--force"]
        message = f"{target}: the capture output would replace the folder holding the input {log} (hint: {hint})"
    elif case == "holds-log":
        target, force = tmp_path / "out", ["--force"]
        message = f"{target}: the capture output would replace the folder holding the output {out} (hint: {hint})"
    elif case == "not-bodies":
        target.mkdir()
        (target / "notes.txt").write_text("mine")
        force = ["--force"]
        message = (f"{target}: the capture output holds 'notes.txt': --force replaces only a folder of *.json files "
                   "(hint: name another folder, or move that entry away)")
    else:
        target.write_text("a file")
        force = ["--force"]
        message = f"{target}: cannot write the capture output: it is a file (hint: name a folder)"
    listing = {p: p.read_bytes() if p.is_file() else None for p in tmp_path.rglob("*")}
    args = ["redact", str(log), "-o", str(out), "--salt", "s", "--capture", str(bodies), "--capture-output",
            str(target), *force]
    assert _run(monkeypatch, args) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert {p: p.read_bytes() if p.is_file() else None for p in tmp_path.rglob("*")} == listing


def test_the_cli_redacts_a_body_folder_beside_the_log(tmp_path, monkeypatch, capsys):
    log = _planted(tmp_path)
    bodies = tmp_path / "bodies"
    bodies.mkdir()
    (bodies / "1.json").write_bytes(_rendered(log)[0])
    (bodies / "1.meta.json").write_text(json.dumps({"headers": {"Authorization": AUTH, "x-api-key": "k"}}))
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "x.jsonl"
    assert _run(monkeypatch, ["redact", str(log), "-o", str(out), "--salt", "s", "--capture", str(bodies)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"wrote {out}.bodies: auth headers dropped: authorization, x-api-key"
    assert lines[-4:] == ["verdicts of requests, breaks, cache, diff: unchanged",
                          f"a recipient verifies it with: dsh-audit redact --check {out}",
                          f"and audits it with: dsh-audit check {out} --capture {out}.bodies",
                          f"and prices it as the original with: --capture {out}.bodies for each of breaks "
                          "--accounting, cache, explain, index, report, requests, sessions, usage and watch (they do "
                          "not find that capture by themselves)"]
    assert json.loads(Path(f"{out}.bodies/1.meta.json").read_text()) == {"headers": {}}


# -- secrets in JSON object keys -----------------------------------------------------------------

KEYED = {ANTHROPIC: 1, "env": {f"OPENAI_API_KEY={SECRET}": True, f"OPENAI_API_KEY={SECRET[:-1]}X": False},
         "command": "ls"}


def _keyed_log(folder: Path) -> Path:
    b = LogBuilder(session_id="s-keys", cwd="/home/dev/p", system="System prompt.")
    with b.turn("run it"):
        with b.step():
            b.assistant("calling", tool_calls=[ToolCall("bash", KEYED, id="call-1")], delta_size=1000)
            b.tool_result("call-1", "done")
        with b.step():
            b.assistant("finished")
    return b.write_zstd(folder / "session.jsonl.zstd")


def test_a_secret_used_as_an_object_key_of_tool_arguments_is_gone_and_counted(tmp_path):
    log = _keyed_log(tmp_path)
    wire = tmp_path / "wire.jsonl"
    wire.write_bytes(b"".join(stringify({"method": "POST", "path": "/chat/completions",
                                         "body": body.decode()}).encode() + b"\n" for body in _rendered(log)))
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl.zstd", salt="keys", capture=wire)
    text = _text(result.output) + result.capture.read_text()
    assert _fragments(ANTHROPIC, text) == [] and _fragments(SECRET, text) == []
    # the arguments stream in one delta, and sit in block-end, the message and tool/call: 4 times
    assert result.secrets == {"anthropic_api_key": {"occurrences": 4, "distinct": 1},
                              "openai_api_key": {"occurrences": 8, "distinct": 2}}
    original, redacted = open_session(log), open_session(result.output)
    assert session_verdicts(redacted)["breaks"] == session_verdicts(original)["breaks"]
    assert session_verdicts(redacted)["requests"] == session_verdicts(original)["requests"]
    assert result.mismatched == ()
    calls = [json.loads(line)["data"]["arguments"] for line in _text(result.output).splitlines()
             if json.loads(line)["type"] == "tool/call"]
    arguments = json.loads(calls[0])  # still JSON, of the same length
    assert len(calls[0]) == len(json.dumps(KEYED))
    assert list(arguments)[1:] == ["env", "command"] and len(arguments) == 3  # keys that are not secrets stay
    first = list(arguments)[0]
    assert len(first) == len(ANTHROPIC) and first != ANTHROPIC
    env = list(arguments["env"])
    assert len(env) == 2 and len(set(env)) == 2  # two secret keys, still two keys
    assert [k[:15] for k in env] == ["OPENAI_API_KEY="] * 2 and [len(k) for k in env] == [59, 59]
    assert list(arguments["env"].values()) == [True, False]


def test_secret_keys_stay_distinct_even_when_a_kept_key_is_a_placeholder():
    p = Placeholders(b"salt")
    renamed = p.keys([ANTHROPIC])[ANTHROPIC]
    again = p.keys([ANTHROPIC, renamed])  # a kept key that happens to be the placeholder
    assert list(again) == [ANTHROPIC] and again[ANTHROPIC] not in (renamed, ANTHROPIC)
    assert len(again[ANTHROPIC]) == len(ANTHROPIC)
    assert p.keys(["env", "command"]) == {}


# -- secrets split across the log's own deltas ---------------------------------------------------


def _streamed_log(folder: Path, pieces: int, *, version: int = 0) -> Path:
    """A log whose answer, reasoning and tool arguments each stream ``SECRET`` in ``pieces`` deltas."""
    size = -(-len(SECRET) // pieces)
    b = LogBuilder(session_id="s-stream", cwd="/home/dev/p", system="System prompt.")
    with b.turn("what is the key"):
        with b.step():
            b.assistant(SECRET, reasoning=SECRET, tool_calls=[ToolCall("bash", SECRET, id="call-1")],
                        delta_size=size)
            b.tool_result("call-1", "ok")
        with b.step():
            b.assistant("done")
    if version == 0:
        return b.write_zstd(folder / "session.jsonl.zstd")
    header, events = migrate_events(b.header_record, b.records(packed=False), version)
    path = folder / f"session.v{version}.jsonl"
    path.write_bytes(jsonl_bytes([header, *events]))
    return path


@pytest.mark.parametrize("pieces, version", [(2, 0), (3, 0), (3, 2)], ids=["two-deltas", "three-deltas", "v2-stream"])
def test_a_secret_split_across_deltas_leaves_no_fragment_and_is_counted_once(tmp_path, pieces, version):
    (tmp_path / "split").mkdir()
    (tmp_path / "whole").mkdir()
    log = _streamed_log(tmp_path / "split", pieces, version=version)
    one = _streamed_log(tmp_path / "whole", 1, version=version)
    # the answer, the reasoning and the arguments each hold the whole key in one delta, or in none
    assert _text(one).count(SECRET) - _text(log).count(SECRET) == 3
    result = redact(log, tmp_path / "out.jsonl", salt="stream")
    whole = redact(one, tmp_path / "whole.jsonl", salt="stream")
    out = _text(result.output)
    assert _fragments(SECRET, out) == []
    # each stream (answer, reasoning, arguments) counts the key once, as when it streams in one delta
    assert result.secrets == whole.secrets
    assert result.secrets["openai_api_key"]["distinct"] == 1
    assert result.mismatched == ()
    assert session_verdicts(open_session(result.output)) == session_verdicts(open_session(log))
    assert check_bundle(result.output).ok


@pytest.mark.parametrize("cwd", ["G:\\Users\\dev\\proj", "G:/work/proj", "\\\\server\\share\\proj", "/home/dev/proj"])
def test_a_path_stays_absolute_on_the_platform_that_wrote_it(tmp_path, cwd):
    """A Windows-recorded log's cwd was one segment (split at "/" only), so its placeholder was not
    absolute and DSH (and this project's reader) refused the redacted log. Separators (both), the
    drive and UNC's leading pair are kept; every name is replaced, with its length."""
    from dsh_audit.validate import validate

    builder = LogBuilder(session_id="s-win", cwd=cwd)
    with builder.turn("hi"):
        with builder.step():
            builder.assistant("Hello.")
    log = builder.write_jsonl(tmp_path / "session.jsonl")
    out = tmp_path / "out.jsonl"
    result = redact(log, out, salt=b"salt")
    redacted = json.loads(out.read_text(encoding="utf-8").splitlines()[0])["cwd"]
    shape = [c if c in "/\\:" else "x" for c in cwd]
    assert [c if c in "/\\:" else "x" for c in redacted] == shape and redacted != cwd
    assert redacted.startswith(cwd[:2] if cwd[1] == ":" else cwd[0])  # the drive, or the leading separator
    for name in ("Users", "dev", "proj", "work", "server", "share", "home"):
        assert f"\\{name}" not in redacted and f"/{name}" not in redacted
    assert [f.rule for f in validate(out)] == [f.rule for f in validate(log)] == []
    assert result.mismatched == ()


def test_a_credential_in_a_url_query_is_a_secret() -> None:
    text = "GET https://api.example.com/v1/items?page=2&api_key=abc123def&sort=asc#top and ?access_token=XYZ98765"
    assert [(m.kind, text[m.start:m.end]) for m in find_secrets(text)] == [
        ("url_parameter", "abc123def"), ("url_parameter", "XYZ98765")]
    assert list(find_secrets("https://h/p?page=2&key=val&q=token")) == []  # no credential name, or too short
