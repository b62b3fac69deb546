"""``dsh-audit redact``: a secret planted in every content field of a log, raw or JSON-escaped (tool
arguments are JSON text inside the log's JSON: ``\\"``, ``\\n`` and ``\\uXXXX`` escapes), is gone from
the output in every spelling and counted exactly once per occurrence, by kind, whether its part is
kept (``--keep``) or replaced whole, and the same on the capture side.

Every count below is derived by hand from where the builder writes each text (comments say where),
so a secret missed, counted twice, or counted in one spelling but not another shows as a number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke, short_salt
from _json_text import all_strings

from dsh_audit.jsjson import stringify
from dsh_audit.redact import Placeholders, Redactor, find_secrets
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder, ToolCall

# One distinct value per field, so each count traces back to its field. Fake, but each fits its pattern.
ANTHROPIC_SYSTEM = "sk-ant-api03-" + "Qm7x" * 6  # in the system prompt (JSON text, "s" escaped)
ANTHROPIC_ARGS = "sk-ant-api03-" + "Rn8y" * 6  # in the tool arguments ("s" and "-" escaped)
OPENAI = "sk-proj-" + "Zq7" * 12  # in the user prompt (and so in the title request, JSON-escaped)
GITHUB = "ghp_" + "a1B2" * 9  # in the reasoning
AWS = "AKIAQ3ZX7WVB2NRT5LKM"  # in the answer text
BEARER = "tok3nV4lue9xyz"  # an Authorization header inside a quoted curl argument (\" escapes)
ENV_VALUE = "envV4lue77q"  # an .env line after an escaped newline
PEM_BODY = "MIIEpAIBAAKCAQEA7v9Qx"  # a private key block written with \n escapes
PASSWORD = "hunter2hunter2"  # "password": "..." in the tool arguments
SLACK = "xoxb-1234567890-abcdefXYZ"  # in the tool result
RESULT_SECRET = "hunter3hunter3"  # "secret": "..." in the tool result, its "h" escaped
STRIPE = "sk_live_" + "4eC39HqLyjWDarjt"  # in the title
GOOGLE = "AIza" + "SyD4kP9vX2mQ7wL1nB8cR5tH3jF6gZ0eYuI"  # a folder of the cwd
HUGGINGFACE = "hf_" + "kYw3Lq9ZpX2vN7cR5tB8mJ4hG6fD1sAeUo"  # the session header's agent preset
DESCRIPTION_BEARER = "descT0ken5678"  # an Authorization value under an escaped key, in a tool description
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

SYSTEM = '{"role": "coder", "key": "\\u0073' + ANTHROPIC_SYSTEM[1:] + '", "note": "line1\\nline2"}'
ARGUMENTS = ('{"command": "curl -H \\"Authorization: Bearer ' + BEARER + '\\" https://api.example.com", '
             '"env": "PATH=/bin\\nAPI_KEY=' + ENV_VALUE + '\\n", '
             '"key": "\\u0073k\\u002d' + ANTHROPIC_ARGS[3:] + '", '
             '"pem": "-----BEGIN RSA PRIVATE KEY-----\\n' + PEM_BODY + '\\n-----END RSA PRIVATE KEY-----\\n", '
             '"password": "' + PASSWORD + '"}')
RESULT = ('HTTP/1.1 200 OK\n{"access_token": "' + SLACK + '", "secret": "\\u0068' + RESULT_SECRET[1:] + '"}')
DESCRIPTION = ('{"example": {"Author\\u0069zation": "Bearer ' + DESCRIPTION_BEARER + '"}, "jwt": "' + JWT + '"}')
CWD = f"/home/dev/{GOOGLE}/project"

# What must not survive, in any spelling: each value's distinctive part (alphanumeric, so it reads the
# same raw and JSON-escaped at any depth), and the escaped spellings planted above.
FRAGMENTS = (ANTHROPIC_SYSTEM[13:], ANTHROPIC_ARGS[13:], OPENAI[8:], GITHUB[4:], AWS[4:], BEARER, ENV_VALUE,
             PEM_BODY, PASSWORD, SLACK[5:], RESULT_SECRET[1:], STRIPE[8:], GOOGLE[4:], HUGGINGFACE[3:],
             DESCRIPTION_BEARER, JWT[40:70])
SPELLINGS = ("\\u0073k-ant", "\\u0073k\\u002dant", "\\u0068unter3")

# kind -> (occurrences, distinct values), derived from where the builder writes each text:
# - header.system of the one request/header: 1 (ANTHROPIC_SYSTEM)
# - the tool arguments: the tool-call-delta stream (its deltas joined, once), the block-end, the
#   assistant/message and the tool/call: 4 each (ANTHROPIC_ARGS, BEARER, ENV_VALUE, the PEM, PASSWORD)
# - the user prompt: agent/inbox/spliced, user/message and the title request's prompt, which quotes it
#   JSON-escaped: 3 (OPENAI)
# - reasoning and answer: their delta stream, block-end and assistant/message: 3 each (GITHUB, AWS)
# - the tool result (tool/result), the title (session/title), the cwd and the agent preset (session
#   header) and the tool description (request/header): 1 each
EXPECTED = {
    "anthropic_api_key": (5, 2),
    "authorization": (5, 2),  # BEARER 4, DESCRIPTION_BEARER 1 (under a key written with a \u escape)
    "aws_access_key_id": (3, 1),
    "env_assignment": (4, 1),
    "github_token": (3, 1),
    "google_api_key": (1, 1),
    "huggingface_token": (1, 1),
    "jwt": (1, 1),
    "key_value": (5, 2),  # PASSWORD 4, RESULT_SECRET 1
    "openai_api_key": (3, 1),
    "private_key": (4, 1),
    "slack_token": (1, 1),
    "stripe_key": (1, 1),
}


def _manifest_secrets(expected: dict[str, tuple[int, int]]) -> dict[str, dict[str, int]]:
    return {kind: {"occurrences": n, "distinct": d} for kind, (n, d) in sorted(expected.items())}


def _summary(expected: dict[str, tuple[int, int]]) -> str:
    kinds = (f"{kind} {d} ({n} occurrence(s))" for kind, (n, d) in sorted(expected.items()))
    return "secrets removed: " + ", ".join(kinds)


def _log(folder: Path) -> Path:
    tool = {"name": "bash", "description": DESCRIPTION,
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}
    b = LogBuilder(session_id="s-escaped", cwd=CWD, system=SYSTEM, tools=[tool], agent_preset=f"preset-{HUGGINGFACE}")
    with b.turn(f"run it with {OPENAI}"):
        with b.step():
            b.assistant(f"answer {AWS}", reasoning=f"thinking {GITHUB}",
                        tool_calls=[ToolCall("bash", ARGUMENTS, id="call-1")])
            b.tool_result("call-1", RESULT)
        with b.step():
            b.assistant("done")
    b.title(f"title {STRIPE}")
    folder.mkdir(parents=True, exist_ok=True)
    return b.write_jsonl(folder / "session.jsonl", packed=False)



def _survivors(data: bytes) -> list[str]:
    """The planted fragments and spellings found in ``data`` (JSON lines, or one JSON document), as
    written or as any JSON in it reads, at any depth."""
    text = data.decode("utf-8")
    found = [s for s in (*FRAGMENTS, *SPELLINGS) if s in text]
    try:
        documents = [json.loads(text)]
    except ValueError:
        documents = [json.loads(line) for line in filter(None, text.split("\n"))]
    for document in documents:
        for s in all_strings(document):
            found += [f for f in (*FRAGMENTS, *SPELLINGS) if f in s]
    return sorted(set(found))


def test_the_setup_holds(tmp_path):
    # each planted text holds its secret as it reads, not (all) as the log's JSON writes it
    assert [m.kind for m in find_secrets(json.loads(ARGUMENTS)["key"])] == ["anthropic_api_key"]
    # as written, the .env line (after an escaped newline) and the escaped key do not show
    assert [m.kind for m in find_secrets(ARGUMENTS)] == ["authorization", "private_key", "key_value"]
    assert [m.kind for m in find_secrets(json.loads(ARGUMENTS)["env"])] == ["env_assignment"]
    log = _log(tmp_path)
    assert _survivors(log.read_bytes()) == sorted({*FRAGMENTS, *SPELLINGS})


@pytest.mark.parametrize("keep", [(), ("system", "tools", "titles", "paths")], ids=["replaced", "kept"])
def test_every_planted_secret_is_gone_in_every_spelling_and_counted_exactly(tmp_path, monkeypatch, capsys, keep):
    log = _log(tmp_path / "in")
    out = tmp_path / "out.jsonl"
    args = ["redact", str(log), "-o", str(out), "--salt", "escaped"]
    for part in keep:
        args += ["--keep", part]
    code, stdout, err = invoke(monkeypatch, capsys, *args)
    assert (code, err) == (0, [short_salt("escaped")])
    lines = stdout.splitlines()
    assert lines[0].startswith(f"wrote {out} (format v0, plain): ") and lines[0].endswith(" content string(s) replaced")
    assert lines[1:] == [f"wrote {out}.manifest.json", _summary(EXPECTED),
                         "verdicts of requests, breaks, cache: unchanged",
                         f"a recipient verifies it with: dsh-audit redact --check {out}",
                         f"and audits it with: dsh-audit check {out}"]
    assert not any(f in stdout for f in FRAGMENTS)
    manifest = json.loads(Path(f"{out}.manifest.json").read_text())
    assert manifest["secrets"] == _manifest_secrets(EXPECTED)
    assert _survivors(out.read_bytes()) == []
    assert _survivors(Path(f"{out}.manifest.json").read_bytes()) == []
    records = [json.loads(line) for line in out.read_text().splitlines()]
    header = next(r["data"]["header"] for r in records if r["type"] == "request/header")
    if keep:  # kept parts stay but for their secrets, of the same lengths, still JSON
        assert json.loads(header["system"])["role"] == "coder" and len(header["system"]) == len(SYSTEM)
        assert list(json.loads(header["tools"][0]["description"])["example"]) == ["Authorization"]
        assert records[0]["cwd"].startswith("/home/dev/") and records[0]["cwd"].endswith("/project")
    else:
        assert "coder" not in header["system"]
    call = next(r["data"]["arguments"] for r in records if r["type"] == "tool/call")
    assert list(json.loads(call)) == ["command", "env", "key", "pem", "password"] and len(call) == len(ARGUMENTS)
    assert invoke(monkeypatch, capsys, "validate", str(out))[0] == 0
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out))[0] == 0


# -- the capture side ------------------------------------------------------------------------------


def _rendered(log: Path) -> list[str]:
    """The body of each loop request of ``log`` (the builder's title request is not DSH's, so no
    capture of it would pair with it)."""
    session = open_session(log)
    return [session.bodies.render(r, session.route(r).adapter).decode() for r in session.requests if r.kind == "loop"]


STRAY_BEARER = "strayB3arer42"
AUTHORIZATION = f"Bearer {STRAY_BEARER}"


def _capture(folder: Path, bodies: list[str], form: str) -> Path:
    """A capture of ``bodies`` (``wire.jsonl``, HAR or a body folder with sidecars), each written as
    ``json.dumps`` writes it (other separators, every non-ASCII character escaped: not the rendered
    bytes, so each string is matched to the log's by value), each with an Authorization header (and
    in a HAR a cookie that is no secret), and one request no log explains that holds the tool
    arguments (JSON text in a JSON string, in a JSON string of the capture)."""
    stray = json.dumps({"model": "other", "messages": [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "x", "type": "function", "function": {"name": "bash", "arguments": ARGUMENTS}}]}]})
    written = [json.dumps(json.loads(body)) for body in [*bodies, stray]]
    if form == "wire":
        wire = folder / "wire.jsonl"
        wire.write_text("".join(stringify({"method": "POST", "path": "/chat/completions", "headers": {
            "authorization": AUTHORIZATION, "content-type": "application/json"}, "body": body}) + "\n"
            for body in written))
        return wire
    if form == "har":
        har = folder / "capture.har"
        har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": [{
            "startedDateTime": f"2026-12-05T10:00:0{i}.000Z", "time": 5,
            "request": {"method": "POST", "url": "https://api.example.com/chat/completions",
                        "httpVersion": "HTTP/1.1", "headers": [{"name": "Authorization", "value": AUTHORIZATION},
                                                               {"name": "Content-Type", "value": "application/json"}],
                        "cookies": [{"name": "theme", "value": "dark"}], "queryString": [],
                        "postData": {"mimeType": "application/json", "text": body},
                        "headersSize": -1, "bodySize": len(body)},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [],
                         "content": {"size": 2, "mimeType": "application/json", "text": "{}"},
                         "redirectURL": "", "headersSize": -1, "bodySize": -1},
            "cache": {}, "timings": {"send": 1, "wait": 3, "receive": 1}} for i, body in enumerate(written)]}}))
        return har
    bodies_folder = folder / "bodies"
    bodies_folder.mkdir()
    for i, body in enumerate(written):
        (bodies_folder / f"{i:03}.json").write_text(body)
        (bodies_folder / f"{i:03}.meta.json").write_text(json.dumps({"method": "POST", "path": "/chat/completions",
                                                                     "headers": {"authorization": AUTHORIZATION}}))
    return bodies_folder


def _files(path: Path) -> list[Path]:
    return sorted(path.iterdir()) if path.is_dir() else [path]


@pytest.mark.parametrize("form", ["wire", "har", "folder"])
def test_the_capture_counts_as_the_log_does(tmp_path, monkeypatch, capsys, form):
    log = _log(tmp_path / "in")
    bodies = _rendered(log)
    capture = _capture(tmp_path / "in", bodies, form)
    assert all(_survivors(f.read_bytes()) for f in _files(capture) if not f.name.endswith(".meta.json"))
    out = tmp_path / "out" / "session.jsonl"
    out.parent.mkdir()
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "escaped",
                               "--capture", str(capture))
    assert (code, err) == (0, ["note: 1 of 3 captured request(s) match none of the log's requests: they are redacted "
                               "as content, and prove nothing about this log", short_salt("escaped")])
    # Strings the capture holds as the log renders them are the log's (counted there). Counted on
    # the capture side: each dropped Authorization header (one per request: the log's two and the
    # stray one; one value), and the stray request's tool arguments, read as the log's are: one
    # occurrence of each of their five secrets.
    requests = len(bodies) + 1
    assert len(bodies) == 2
    expected = dict(EXPECTED)
    for kind in ("anthropic_api_key", "env_assignment", "private_key", "key_value"):
        expected[kind] = (EXPECTED[kind][0] + 1, EXPECTED[kind][1])
    expected["authorization"] = (EXPECTED["authorization"][0] + 1 + requests, EXPECTED["authorization"][1] + 1)
    # a wire.jsonl lands where the views find the copy's capture; the others are named for the recipient
    redacted = out.parent / "wire.jsonl" if form == "wire" else Path(f"{out}.{capture.name}")
    dropped = "authorization, cookies" if form == "har" else "authorization"
    assert stdout.splitlines()[1:] == [f"wrote {redacted}: auth headers dropped: {dropped}",
                                       f"wrote {out}.manifest.json", _summary(expected),
                                       "verdicts of requests, breaks, cache, diff: unchanged",
                                       f"a recipient verifies it with: dsh-audit redact --check {out}",
                                       f"and audits it with: dsh-audit check {out} --capture {redacted}"] + (
        [] if form == "wire" else [f"and prices it as the original with: --capture {redacted} for each of breaks "
                                   "--accounting, cache, explain, index, report, requests, sessions, usage and watch "
                                   "(they do not find that capture by themselves)"])
    manifest = json.loads(Path(f"{out}.manifest.json").read_text())
    assert manifest["secrets"] == _manifest_secrets(expected)
    assert len(_files(redacted)) == len(_files(capture))
    for written in _files(redacted):
        assert _survivors(written.read_bytes()) == [] and STRAY_BEARER.encode() not in written.read_bytes()
    assert _survivors(out.read_bytes()) == []
    assert invoke(monkeypatch, capsys, "validate", str(out))[0] == 0
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out))[0] == 0


# -- JSON token boundaries in kept text ------------------------------------------------------------


@pytest.mark.parametrize("text, kept, counted", [
    # a private key header that ends its string does not run on over the next strings (it did: "hello
    # world" went, counted as a private key)
    ('{"a": "-----BEGIN RSA PRIVATE KEY-----", "b": "hello world"}',
     '{"a": "-----BEGIN RSA PRIVATE KEY-----", "b": "hello world"}', {}),
    # a key written as an array of lines, its END line in a later string: the strings between go, and
    # the key counts once (by its first string, when that holds more than the header)
    ('["-----BEGIN RSA PRIVATE KEY-----", "MIIEabcdef", "-----END RSA PRIVATE KEY-----"]',
     '["-----BEGIN RSA PRIVATE KEY-----", "Y7SVO2wOCI", "-----END RSA PRIVATE KEY-----"]', {"private_key": 1}),
    ('["-----BEGIN RSA PRIVATE KEY-----\\nMIIEfirst", "MIIEabcdef", "-----END RSA PRIVATE KEY-----"]',
     '["-----BEGIN RSA PRIVATE KEY-----\\nY7SVT9KGP", "Y7SVO2wOCI", "-----END RSA PRIVATE KEY-----"]',
     {"private_key": 1}),
    # a key whose name is written with escapes gives its value the same context as when written plainly
    ('{"Author\\u0069zation": "Bearer abcdefgh1234"}', '{"Author\\u0069zation": "N3k2am@hr6aQs7EOTl1"}',
     {"authorization": 1}),
    ('{"\\u0070assword": "hunter2hunter2"}', '{"\\u0070assword": "ttaV56lGdIbH1C"}', {"key_value": 1}),
    # JSON syntax after a key is no value: neither replaced (it cannot be) nor counted
    ('{"Authorization": 12345678}', '{"Authorization": 12345678}', {}),
])
def test_kept_json_reads_secrets_inside_its_strings_not_across_them(text, kept, counted):
    redactor = Redactor(Placeholders(b"s"))
    assert redactor.keep_text(text) == kept
    assert dict(redactor.secrets) == counted
    replaced = Redactor(Placeholders(b"s"))
    replaced.content(text)  # replaced whole, the same secrets counted
    assert dict(replaced.secrets) == counted


def test_a_member_of_a_record_reads_its_value_with_its_key():
    # an object of a record (a captured body's tool input, a kept header) is read as its JSON text is
    redactor = Redactor(Placeholders(b"s"))
    record = {"input": {"password": "hunter2hunter2", "items": ["hunter2hunter2"]}, "headers": {"x-token": "Zx9Zx9Zx9"}}
    out = redactor.value(record)
    assert dict(redactor.secrets) == {"key_value": 2}  # not the list item: JSON text gives it no key either
    assert len(out["input"]["password"]) == 14 and out["input"]["password"] != "hunter2hunter2"
    kept = Redactor(Placeholders(b"s"))
    assert kept.value(record, kept=True)["input"]["items"] == ["hunter2hunter2"]
    assert dict(kept.secrets) == {"key_value": 2}
