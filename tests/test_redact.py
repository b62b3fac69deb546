"""``dsh-audit redact``: placeholders, secrets, the bundle and its manifest, the verdicts kept."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dsh_audit.cli import cli
from dsh_audit.jsjson import stringify
from dsh_audit.redact import Placeholders, check_bundle, find_secrets, manifest_path, redact, session_verdicts
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
    assert p.text("hello world") == "P3dT6;2siea"
    assert p.text("hello there") == "P3dT6;zjJ7I"  # the shared prefix "hello " stays shared
    assert p.text("hello world") == Placeholders(b"salt").text("hello world")
    assert p.text("hello world") != Placeholders(b"pepper").text("hello world")
    assert p.text('{"path": "a.txt", "n": 2}') == '{"path": "I^QeY", "n": 2}'  # JSON keeps its shape
    assert p.text(" \n\t") == " \n\t"  # whitespace-only: renderers drop it, so it stays


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_placeholders_keep_lengths_injectivity_and_the_first_difference(a, b):
    p = Placeholders(b"k")
    pa, pb = p.plain(a), p.plain(b)
    ea, eb = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
    assert len(pa.encode("utf-8", "surrogatepass")) == len(ea)
    assert len(stringify(pa)) == len(stringify(a))
    assert len(stringify(stringify(pa))) == len(stringify(stringify(a)))  # JSON text inside JSON
    assert (pa == pb) == (a == b)
    if a.isspace() or b.isspace():
        return
    qa, qb = pa.encode("utf-8", "surrogatepass"), pb.encode("utf-8", "surrogatepass")
    common = next((i for i, (x, y) in enumerate(zip(ea, eb)) if x != y), min(len(ea), len(eb)))
    assert next((i for i, (x, y) in enumerate(zip(qa, qb)) if x != y), min(len(qa), len(qb))) == common


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
                         "verdicts of requests, breaks, cache: unchanged"]
    assert re.fullmatch(r"secrets removed: openai_api_key 1 \(\d+ occurrence\(s\)\)", lines[2])
    check = CliRunner().invoke(cli, ["redact", "--check", str(out)], catch_exceptions=False)
    assert check.exit_code == 0
    assert check.output == ("requests: match (3 verdict(s))\nbreaks: match (3 verdict(s))\n"
                            f"cache: match (3 verdict(s))\nOK: every verdict of {out} matches its manifest\n")


# -- bad input ---------------------------------------------------------------------------------


def _run(monkeypatch, args):
    """The console entry point (errors converted at its edge), as a user runs it."""
    from dsh_audit.cli._common import run_guarded

    monkeypatch.setattr("sys.argv", ["dsh-audit", *args])
    return run_guarded(cli)


@pytest.mark.parametrize("case, message", [
    ("unreadable", "{missing}: cannot open: No such file or directory"),
    ("exists", "{out}: the output already exists (hint: pass --force to replace it)"),
    ("empty-salt", "<input>: the salt is empty (hint: give a non-empty --salt, or none for a random one)"),
    ("same-file", "{log}: the output would overwrite its input (hint: choose another -o path)"),
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
    result = redact(log, out, salt="corpus", capture=wire)
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
@pytest.mark.xfail(strict=True, reason="known gap: in some generated sessions (edited captured messages after a "
                   "compaction) a few token counts of the cache verdicts move by 1-2 after redaction")
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
    from dsh_audit.capture import load_capture

    assert session_verdicts(redacted, load_capture(result.capture)) == session_verdicts(original, load_capture(wire))
    assert result.mismatched == ()
    assert result.dropped_headers == ("authorization",)
    text = _text(out) + result.capture.read_text()
    kept = _text(out)  # structural strings the redaction keeps (ids, tool names, models)
    for piece in _content(session):
        for i in range(0, max(0, len(piece) - 8)):
            window = piece[i:i + 8]
            if sum(ch.isalnum() for ch in window) >= 5 and window not in stringify(session.header_record):
                assert window not in text or window in "".join(re.findall(r'"(?:id|name|model|provider|type)":"[^"]*"', kept))
