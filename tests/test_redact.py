"""``dsh-audit redact``: placeholders, secrets, the bundle and its manifest, the verdicts kept."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import zstandard
from _cli import short_salt
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dsh_audit.capture import COMPACTION_PREFIX, TITLE_PREFIX, load_capture
from dsh_audit.cli import cli
from dsh_audit.jsjson import stringify
from dsh_audit.redact import (
    STRUCTURAL_KEYS,
    Placeholders,
    check_bundle,
    find_secrets,
    manifest_path,
    redact,
    session_verdicts,
)
from dsh_audit.redact._shifts import _ACTING, _STAND_INS
from dsh_audit.session import open_session
from dsh_audit.strategies import mutated_captures, sessions
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.validate import validate

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"
SECRET = "sk-proj-" + "Zq7" * 12  # an OpenAI-style key, planted everywhere


def _text(path: Path) -> str:
    data = path.read_bytes()
    if data[:4] == b"\x28\xb5\x2f\xfd":
        data = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
    return data.decode("utf-8")


def _frames(data: bytes) -> list[int]:
    """Decompressed size of each zstd frame."""
    sizes, context = [], zstandard.ZstdDecompressor()
    while data:
        part = context.decompressobj()
        sizes.append(len(part.decompress(data)))
        data = part.unused_data
    return sizes


# -- placeholders ------------------------------------------------------------------------------


def test_placeholders_are_exact_deterministic_and_prefix_preserving():
    p = Placeholders(b"salt")
    assert p.text("hello world") == "XbWGv%hWVar"
    assert p.text("hello there") == "XbWGv%ePobd"  # the shared prefix "hello " stays shared
    assert p.text("hello world") == Placeholders(b"salt").text("hello world")
    assert p.text("hello world") != Placeholders(b"pepper").text("hello world")
    assert p.text('{"path": "a.txt", "n": 2}') == '{"path": "Q]IOn", "n": 2}'  # JSON keeps its shape
    assert p.text(" \n\t") == " \n\t"  # whitespace-only: renderers drop it, so it stays


def test_json_text_keeps_each_escape_form_so_lengths_and_token_estimates_stay():
    # tool arguments written with \\u escapes (a DEL, an e-acute, an emoji as a surrogate pair) and a
    # short escape: each placeholder character is written in its original's form, so the argument
    # text, and the cache estimate of the message holding it, keep their lengths
    p = Placeholders(b"salt")
    original = '{"path": "\\u007f\\u00e9\\ud83d\\ude00\\n"}'
    redacted = p.text(original)
    # (session 37: the DEL is drawn as ``~`` is, and becomes punctuation: no placeholder holds a DEL)
    assert redacted == '{"path": "\\u007c\\u01c8\\ud808\\udc6f\\n"}'
    assert len(stringify(redacted)) == len(stringify(original))
    assert json.loads(redacted) == {"path": "|\u01c8\U0001206f\n"}


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_placeholders_keep_lengths_injectivity_and_the_first_difference(a, b):
    p = Placeholders(b"k")
    pa, pb = p.plain(a), p.plain(b)
    ea, eb = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
    assert len(pa.encode("utf-8", "surrogatepass")) == len(ea)
    assert len(stringify(pa)) == len(stringify(a))
    assert len(stringify(stringify(pa))) == len(stringify(stringify(a)))  # JSON text inside JSON
    # A DEL or a character a terminal acts on is drawn as its class's stand-in (session 37): it and the
    # stand-in, where two texts first differ, may get the same placeholder there (and, ending the line, equal ones)
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    collide = at is not None and _drawn_as(a[at]) == _drawn_as(b[at])
    assert (pa == pb) == (a == b) or (collide and pa == pb)
    if a.isspace() or b.isspace():
        return
    qa, qb = pa.encode("utf-8", "surrogatepass"), pb.encode("utf-8", "surrogatepass")
    common = next((i for i, (x, y) in enumerate(zip(ea, eb)) if x != y), min(len(ea), len(eb)))
    first = next((i for i, (x, y) in enumerate(zip(qa, qb)) if x != y), min(len(qa), len(qb)))
    # at the byte, or at the character where a placeholder walked past one that acts (session 37, rare)
    start = len(a[:at].encode("utf-8", "surrogatepass")) if at is not None else common
    assert start <= first and (first <= common or collide)


def _drawn_as(ch: str) -> str:
    """The character ``ch`` is drawn as: itself, or the stand-in of a DEL or a character a terminal acts on."""
    data = ch.encode("utf-8", "surrogatepass")
    if ch == "\x7f":
        return "~"
    return _STAND_INS[data].decode() if data in _ACTING else ch


def test_an_empty_salt_is_refused():
    with pytest.raises(ValueError):
        Placeholders(b"")


# -- secrets -----------------------------------------------------------------------------------


def test_secret_patterns_name_each_kind():
    text = ("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx\nAuthorization: Bearer abc123def456\n"
            "AKIAABCDEFGHIJKLMNOP ghp_" + "a" * 36 + "\nDB_PASSWORD=hunter22\n"
            "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----\ntoken = get_token()")
    assert [(m.kind, text[m.start:m.end]) for m in find_secrets(text)] == [
        ("openai_api_key", "sk-abcdefghijklmnopqrstuvwx"),
        ("authorization", "Bearer abc123def456"),
        ("aws_access_key_id", "AKIAABCDEFGHIJKLMNOP"),
        ("github_token", "ghp_" + "a" * 36),
        ("env_assignment", "hunter22"),
        ("private_key", "\nMIIabc\n"),
    ]


def _planted_log(folder: Path) -> Path:
    b = LogBuilder(session_id="s-secret", cwd=f"/home/dev/{SECRET}", system=f"System with {SECRET} inside.")
    b.title(f"title {SECRET}")
    with b.turn(f"user says {SECRET}"):
        with b.step():
            b.assistant(f"answer {SECRET}", reasoning=f"thinking {SECRET}",
                        tool_calls=[ToolCall("bash", {"command": f"echo {SECRET}"}, id="call-1")])
            b.tool_result("call-1", f"output {SECRET}")
        with b.step():
            b.assistant("done")
    return b.write_zstd(folder / "session.jsonl.zstd")


def test_a_planted_secret_in_every_content_field_is_gone_and_counted(tmp_path):
    log = _planted_log(tmp_path)
    assert _text(log).count(SECRET) >= 9
    result = redact(log, tmp_path / "out.jsonl.zstd", salt="s", keep=["system", "paths", "titles", "tools"])
    text = _text(result.output) + manifest_path(result.output).read_text()
    assert SECRET not in text and SECRET[8:20] not in text
    assert result.secrets == {"openai_api_key": {"occurrences": result.secrets["openai_api_key"]["occurrences"],
                                                 "distinct": 1}}
    assert result.secrets["openai_api_key"]["occurrences"] >= 9
    assert result.mismatched == ()
    assert "System with " in text  # kept parts stay, without the secret


def test_the_cli_summary_names_kinds_never_values(tmp_path):
    log = _planted_log(tmp_path)
    out = tmp_path / "out.jsonl.zstd"
    result = CliRunner().invoke(cli, ["redact", str(log), "-o", str(out), "--salt", "s"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"wrote {out} (format v0, zstd): ")
    assert lines[1:] == [f"wrote {out}.manifest.json",
                         lines[2],
                         short_salt("s"),  # stderr, mixed in by CliRunner
                         "verdicts of requests, breaks, cache: unchanged",
                         f"a recipient verifies it with: dsh-audit redact --check {out}",
                         f"and audits it with: dsh-audit check {out}"]
    assert re.fullmatch(r"secrets removed: openai_api_key 1 \(\d+ occurrence\(s\)\)", lines[2])
    check = CliRunner().invoke(cli, ["redact", "--check", str(out)], catch_exceptions=False)
    assert check.exit_code == 0
    assert check.output == ("requests: match (3 request(s))\nbreaks: match (3 request(s), 0 break(s))\n"
                            f"cache: match (3 request(s))\nOK: every verdict of {out} matches its manifest\n")


# -- bad input ---------------------------------------------------------------------------------


def _run(monkeypatch, args):
    """The console entry point (errors converted at its edge), as a user runs it."""
    from dsh_audit.cli._common import run_guarded

    monkeypatch.setattr("sys.argv", ["dsh-audit", *args])
    return run_guarded(cli)


@pytest.mark.parametrize("case, message", [
    ("unreadable", "{missing}: no such file or folder (hint: pass the path of a log or a session folder, or a session "
                   "id or `latest`: looked up in $DSH_HOME/sessions; set DSH_HOME to the DSH home that holds sessions/)"),
    ("exists", "{out}: the output already exists (hint: pass --force to replace it)"),
    ("empty-salt", "the salt is empty (hint: give a non-empty --salt, or none for a random one)"),
    ("same-file", "{log}: the output would overwrite the input {log} (hint: give -o another path)"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, monkeypatch, capsys, case, message):
    log = _planted_log(tmp_path)
    out = tmp_path / "out.jsonl.zstd"
    missing = tmp_path / "missing.jsonl"
    args = ["redact", str(log), "-o", str(out), "--salt", "s"]
    if case == "unreadable":
        args[1] = str(missing)
    elif case == "exists":
        out.write_bytes(b"keep me")
    elif case == "empty-salt":
        args[-1] = ""
    else:
        args[3] = str(log)
        args.append("--force")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert _run(monkeypatch, args) == 2
    assert capsys.readouterr().err == "error: " + message.format(missing=missing, out=out, log=log) + "\n"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# -- the corpus --------------------------------------------------------------------------------


def _corpus_logs():
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.glob("*/home/sessions/*/*/session.jsonl.zstd"))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is absent")
@pytest.mark.parametrize("log", _corpus_logs(), ids=lambda p: f"{p.parents[4].name}/{p.parent.name[:16]}")
def test_redacted_corpus_sessions_keep_every_verdict_and_validate_the_same(tmp_path, log):
    wire = log.parents[4] / "wire.jsonl"
    out = tmp_path / "session.jsonl.zstd"
    result = redact(log, out, salt="corpus", capture=wire, alone=True)  # a child: compared without its parent
    assert result.mismatched == ()
    assert set(result.verdicts) == {"requests", "breaks", "cache", "diff"}
    assert _frames(out.read_bytes()) == _frames(log.read_bytes())  # same frames, same lengths
    assert check_bundle(out).ok
    rules = [(f.rule, f.seq, f.severity) for f in validate(log)]
    assert [(f.rule, f.seq, f.severity) for f in validate(out)] == rules
    texts = _texts(_text(out))
    words = set(re.findall(r"[A-Za-z]{6,}", _texts(_text(log))))
    assert words and not [w for w in words if w in texts]


def _texts(log_text: str) -> str:
    """Every ``text`` string of a log (content and chunk deltas), joined."""
    return "\n".join(re.findall(r'"(?:text|texts|summary)":(?:\[)?"((?:[^"\\]|\\.)*)"', log_text))


# -- properties --------------------------------------------------------------------------------

GENERATED = sessions(turns=(1, 3), retries=1, compactions=1, prunes=1, header_changes=2, resumes=1, forks=0)


def _content(session) -> list[str]:
    """Texts the generator wrote in content fields (user, assistant, reasoning, tool results)."""
    found: list[str] = []

    def walk(value, key=None):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key in ("text", "summary", "arguments", "system", "description"):
            found.append(value)

    for event in session.events:
        walk(event.get("data"))
    return found


def _wire(bodies) -> bytes:
    return b"".join(stringify({"seq": i, "method": "POST", "path": "/chat/completions", "headers": {
        "authorization": "Bearer abcdefghij123456"}, "body": body.decode("utf-8")}).encode() + b"\n"
        for i, body in enumerate(bodies) if body is not None)


@pytest.mark.slow
@settings(max_examples=15, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(mutated_captures(sessions=GENERATED), st.booleans())
def test_redaction_keeps_every_verdict_of_generated_sessions(tmp_path_factory, capture, compressed):
    folder = tmp_path_factory.mktemp("gen")
    session = capture.session
    log = session.write(folder / "in", compressed=compressed)
    wire = folder / "wire.jsonl"
    wire.write_bytes(_wire(capture.captures))
    out = folder / "out" / log.name
    out.parent.mkdir()
    result = redact(log, out, salt="prop", capture=wire)
    original = open_session(log)
    redacted = open_session(out)
    assert session_verdicts(redacted, load_capture(result.capture)) == session_verdicts(original, load_capture(wire))
    assert result.mismatched == ()
    assert result.dropped_headers == ("authorization",)
    text = _text(out) + result.capture.read_text()
    structure = _structure(text)  # what a redaction keeps: keys, ids, types, roles, models, tool names
    for piece in _content(session):
        if piece.startswith((TITLE_PREFIX, COMPACTION_PREFIX)):
            continue  # DSH's own fixed prompts stay: captures are classified by them
        for i in range(0, max(0, len(piece) - 8)):
            window = piece[i:i + 8]
            if all(ch in "\\u0123456789abcdefABCDEF" for ch in window):
                continue  # \uXXXX escapes hold no words; a line break's stays, as the character does
            if sum(ch.isalnum() for ch in window) >= 5 and window not in stringify(session.header_record):
                assert window not in text or window in structure


def _skeleton(value, key=None):
    """``value`` with every string but the structural ones emptied (its keys and shape)."""
    if isinstance(value, dict):
        return {k: _skeleton(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_skeleton(v, key) for v in value]
    if isinstance(value, str):
        return value if key in STRUCTURAL_KEYS else ""
    return value


def _structure(jsonl: str) -> str:
    """Object keys and structural values of every record of ``jsonl`` (and of the bodies its
    capture records hold), joined: the only places original words may stay."""
    found: list[str] = []

    def walk(value, key=None):
        if isinstance(value, dict):
            found.extend(value)
            found.extend(stringify(k) + ":" for k in value)  # as the text holds it: '"message' of a key
            for k, v in value.items():
                if k == "body" and isinstance(v, str) and v.startswith("{"):
                    body = json.loads(v)
                    walk(body)
                    # the body's own keys and structure as the capture's text holds them, escaped
                    # inside its "body" string: a content window may match them by chance
                    found.append(stringify(stringify(_skeleton(body)))[1:-1])
                else:
                    walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key in STRUCTURAL_KEYS:
            found.append(stringify(value))  # quoted, as the text holds it: '"request' of "request/header"

    for line in filter(None, jsonl.split("\n")):  # not splitlines: U+0085, U+2028 are text here
        walk(json.loads(line))
    return "\n".join(found)


# -- outputs never replace an input --------------------------------------------------------------


def _rendered_bodies(log: Path) -> list[bytes]:
    session = open_session(log)
    return [session.bodies.render(r, session.route(r).adapter) for r in session.requests]


def _bundle_inputs(folder: Path) -> tuple[Path, Path]:
    log = _planted_log(folder)
    wire = folder / "wire.jsonl"
    wire.write_bytes(_wire(_rendered_bodies(log)))
    return log, wire


@pytest.mark.parametrize("case", ["o-symlink", "o-hardlink", "o-dotdot", "manifest", "capture-output",
                                  "capture-output-symlink", "capture-output-log", "capture-default"])
def test_an_output_that_resolves_to_an_input_is_refused(tmp_path, monkeypatch, capsys, case):
    log, wire = _bundle_inputs(tmp_path)
    (tmp_path / "sub").mkdir()
    out = tmp_path / "sub" / "out.jsonl.zstd"
    option, target, refused, shown = "-o", out, log, log
    if case == "o-symlink":
        target = tmp_path / "sub" / "link.jsonl.zstd"
        target.symlink_to(log)
    elif case == "o-hardlink":
        target = tmp_path / "sub" / "hard.jsonl.zstd"
        target.hardlink_to(log)
    elif case == "o-dotdot":
        target = tmp_path / "sub" / ".." / log.name
    elif case == "manifest":  # OUTPUT.manifest.json is the capture
        wire = wire.rename(tmp_path / "red.jsonl.manifest.json")
        target = tmp_path / "sub" / ".." / "red.jsonl"
        refused, shown = manifest_path(target), wire
    elif case.startswith("capture-output"):
        option, refused = "--capture-output", {"capture-output": wire, "capture-output-symlink": tmp_path / "sub" / "w",
                                               "capture-output-log": log}[case]
        shown = log if case == "capture-output-log" else wire
        if case == "capture-output-symlink":
            refused.symlink_to(wire)
    elif case == "capture-default":  # OUTPUT.wire.jsonl, the default (wire.jsonl beside it is the input), links to it
        target, option, refused, shown = tmp_path / "red.jsonl.zstd", None, tmp_path / "red.jsonl.zstd.wire.jsonl", wire
        refused.symlink_to(wire)
    args = ["redact", str(log), "-o", str(target), "--capture", str(wire), "--salt", "s", "--force"]
    if option == "--capture-output":
        args += ["--capture-output", str(refused)]
    what = {"-o": "output", "--capture-output": "capture output", None: "capture output"}[option]
    hint = {"-o": "give -o another path", "--capture-output": "give --capture-output another path",  # the option given
            None: "pass --capture-output (the default is wire.jsonl beside OUTPUT for a wire.jsonl, when that name is "
                  "free, else OUTPUT.<the capture's name>)"}[option]
    if case == "manifest":
        what, hint = "manifest", "choose another -o path (the manifest is OUTPUT.manifest.json)"
    else:
        refused = target if option == "-o" else refused
    before = {p: p.read_bytes() for p in (log, wire)}
    listing = sorted(tmp_path.rglob("*"))
    assert _run(monkeypatch, args) == 2
    assert capsys.readouterr().err == f"error: {refused}: the {what} would overwrite the input {shown} (hint: {hint})\n"
    assert {p: p.read_bytes() for p in (log, wire)} == before
    assert sorted(tmp_path.rglob("*")) == listing


# -- HAR captures and streamed responses ---------------------------------------------------------

HALVES = (SECRET[:21], SECRET[21:])  # the key split across two deltas


def _sse(pieces) -> str:
    events = [{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "deepseek-v4-flash",
               "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]} for piece in pieces]
    return "".join(f"data: {stringify(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def _har(bodies, pieces=("Your key: ", *HALVES, " is set.")) -> dict:
    return {"log": {"version": "1.2", "creator": {"name": "devtools", "version": "1"}, "entries": [{
        "startedDateTime": f"2026-12-02T11:02:0{i}.000Z", "time": 12,
        "request": {"method": "POST", "url": "https://api.example.com/chat/completions", "httpVersion": "HTTP/1.1",
                    "headers": [{"name": "Authorization", "value": "Bearer abcdefghij123456"},
                                {"name": "Content-Type", "value": "application/json"}],
                    "cookies": [{"name": "session", "value": "c00kie-value"}], "queryString": [],
                    "postData": {"mimeType": "application/json", "text": body.decode()},
                    "headersSize": -1, "bodySize": len(body)},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [],
                     "content": {"size": 10, "mimeType": "text/event-stream",
                                 "text": _sse(pieces)},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {}, "timings": {"send": 1, "wait": 10, "receive": 1}} for i, body in enumerate(bodies)]}}


def test_a_har_capture_is_redacted_with_the_log_and_a_key_split_across_deltas_goes(tmp_path):
    log = _planted_log(tmp_path)
    har = tmp_path / "capture.har"
    har.write_text(json.dumps(_har(_rendered_bodies(log)), indent=2))
    clean = tmp_path / "clean" / "capture.har"  # the same capture, its responses without the key
    clean.parent.mkdir()
    clean.write_text(json.dumps(_har(_rendered_bodies(log), ("Your key: ", "x" * 21, "y" * 23, " is set."))))
    (tmp_path / "out").mkdir()
    plain = redact(log, tmp_path / "plain.jsonl.zstd", salt="s", capture=clean, capture_output=tmp_path / "plain.har")
    result = redact(log, tmp_path / "out" / "log.jsonl.zstd", salt="s", capture=har)
    assert result.capture == tmp_path / "out" / "log.jsonl.zstd.capture.har"
    assert result.mismatched == () and set(result.verdicts) == {"requests", "breaks", "cache", "diff"}
    assert result.dropped_headers == ("authorization", "cookies")
    # the split key is found in each streamed response (3 requests), beside the log's own occurrences
    assert result.secrets["openai_api_key"]["occurrences"] == plain.secrets["openai_api_key"]["occurrences"] + 3
    text = result.capture.read_text()
    assert SECRET not in text and HALVES[0][8:] not in text and HALVES[1] not in text and "c00kie" not in text
    entries = json.loads(text)["log"]["entries"]
    originals = [c.body for c in load_capture(har)]
    assert [c.body for c in load_capture(result.capture)] == [
        e["request"]["postData"]["text"].encode() for e in entries]
    assert [len(b) for b in (c.body for c in load_capture(result.capture))] == [len(b) for b in originals]
    stream = entries[1]["response"]["content"]["text"]
    lines = stream.split("\n\n")
    assert lines[-2:] == ["data: [DONE]", ""]
    deltas = [json.loads(line[len("data: "):]) for line in lines[:-2]]
    assert [d["model"] for d in deltas] == ["deepseek-v4-flash"] * 4  # structure stays
    assert [len(d["choices"][0]["delta"]["content"]) for d in deltas] == [10, 21, 23, 8]
    assert [d["choices"][0]["delta"]["content"] for d in deltas][1:3] != list(HALVES)
    url = entries[1]["request"]["url"]  # the host is a placeholder of its length (not a public endpoint)
    assert url.endswith("/chat/completions") and len(url) == len("https://api.example.com/chat/completions")
    assert "api.example.com" not in url
    assert entries[1]["request"]["headers"] == [{"name": "Content-Type", "value": "application/json"}]
    assert check_bundle(result.output).ok


def test_a_streamed_response_in_wire_jsonl_loses_a_key_split_across_deltas(tmp_path):
    log = _planted_log(tmp_path)
    wire = tmp_path / "wire.jsonl"
    records = [json.loads(line) for line in _wire(_rendered_bodies(log)).splitlines()]
    for record in records:
        record["response"] = _sse([HALVES[0], HALVES[1]])
    wire.write_text("".join(stringify(r) + "\n" for r in records))
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "log.jsonl.zstd", salt="s", capture=wire)
    assert result.mismatched == ()
    text = result.capture.read_text()
    assert SECRET not in text and HALVES[0][8:] not in text and HALVES[1] not in text
    response = json.loads(text.splitlines()[0])["response"]
    assert response.startswith("data: {") and response.endswith("data: [DONE]\n\n") and len(response) == len(
        records[0]["response"])
