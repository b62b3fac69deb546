"""``dsh-audit redact``, round 6 of its secrets: the password of a URL (``postgres://admin:...@db``, the
kind ``url_credentials``), a provider key right after an underscore (``MY_TOKEN_sk-proj-...``,
``glob_ghp_...``) and a secret behind percent-encoding (``?next=https%3A%2F%2F...%3Fkey%3Dsk-...``,
``Bearer%20sk-...``), in every field of a log, kept or not, and in a capture's path, headers and bodies:
gone and counted, with the anchor prefilter still finding what every pattern finds.

Counts are derived by hand from where each text is written (comments say where), so a secret missed or
counted twice shows as a number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke, short_salt
from _properties import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_audit.jsjson import stringify
from dsh_audit.redact import SECRET_KINDS, Placeholders, Redactor, find_secrets
from dsh_audit.redact._secrets import _full_scan, cut_secrets
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder, ToolCall

# -- what is found, what is not ---------------------------------------------------------------------

OPENAI = "sk-proj-" + "Ab3dEf5hIj7lMn9pQr1t" * 2
DEEPSEEK = "sk-" + "0123456789abcdef" * 2
GITHUB = "ghp_" + "T00lN4m3S3cr3tV4lu3Xy7Zq9Wv2Ab5Cd8"


def _found(text: str) -> list[tuple[str, str]]:
    return [(m.kind, text[m.start:m.end]) for m in find_secrets(text)]


@pytest.mark.parametrize("text, found", [
    # the password of a URL, whatever its scheme; the scheme, the user and the host stay
    ("DATABASE_URL=postgres://admin:S3cretUrlPassQ7Zx@db.example.com/prod",
     [("url_credentials", "S3cretUrlPassQ7Zx")]),
    ("see https://bob:Qz7HunterPassw0rdXq@git.example.com/r", [("url_credentials", "Qz7HunterPassw0rdXq")]),
    ("redis://:r3dis@cache:6379/0", [("url_credentials", "r3dis")]),
    ("mongodb+srv://u:p%40ss:w0rd@cluster0.example.net", [("url_credentials", "p%40ss:w0rd")]),
    # an unencoded @ in the password: up to the last @ of the authority, as URL parsers read it
    ("amqp://u:p@ss@rabbit/vhost", [("url_credentials", "p@ss")]),
    # a provider key as the password is reported as its provider's
    (f"https://x-access-token:{GITHUB}@github.com/o/r.git", [("github_token", GITHUB)]),
    # no password: a port, no user information, a reference, a mask, a word standing for one
    ("http://localhost:8080/x?y=1 and ssh://git@github.com:22/o/r", []),
    ("postgres://user:password@localhost/db, mysql://root:pass@db, x://u:PWD@h, y://u:Secret@h", []),
    ("postgres://u:${DB_PASS}@h postgres://u:$PASS@h f'postgres://{u}:{pw}@{h}' 'pg://%s:%s@%s' x://u:****@h", []),
    ("x://u:xxxx@h and x://u:<password>@h and a://u:b@ and mailto:u:p@h", []),
    # a prefixed key right after an underscore, or a backslash escape written out
    ("glob_" + GITHUB, [("github_token", GITHUB)]),
    ("MY_TOKEN_" + OPENAI, [("openai_api_key", OPENAI)]),
    ("KEY_" + DEEPSEEK + " AWS_AKIAQ3ZX7WVB2NRT5LKM", [("deepseek_api_key", DEEPSEEK),
                                                       ("aws_access_key_id", "AKIAQ3ZX7WVB2NRT5LKM")]),
    ("echo -e 'a\\n" + GITHUB + "'", [("github_token", GITHUB)]),
    ("https://api.telegram.org/bot1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_/getMe",
     [("telegram_bot_token", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_")]),
    # ... but not right after a letter or a digit: a longer token (a task id, a word)
    ("task-" + DEEPSEEK[3:] + " disk-" + OPENAI[8:] + " risk-admin-panel-configuration-v2", []),
    ("x" + GITHUB + " 9" + OPENAI, []),
    # percent-encoded, once or twice: the encoded span goes
    ("/cb?next=https%3A%2F%2Fapi.example.com%2Fv1%3Fkey%3D" + OPENAI, [("openai_api_key", OPENAI)]),
    ("Authorization=Bearer%20" + OPENAI, [("authorization", "Bearer%20" + OPENAI)]),
    ("q=Bearer%20" + OPENAI, [("openai_api_key", OPENAI)]),
    ("dsn=postgres%3A%2F%2Fadmin%3AUrLeNcPassQ7%40db", [("url_credentials", "UrLeNcPassQ7")]),
    ("u=postgres%253A%252F%252Fadmin%253AS3cr%252540t%2540db", [("url_credentials", "S3cr%252540t")]),
    ("x=%73%6B-proj-" + OPENAI[8:], [("openai_api_key", "%73%6B-proj-" + OPENAI[8:])]),
    ("100%25 sure, 50%20off, %zz, %E2%82%AC", []),
])
def test_what_is_found(text, found):
    assert _found(text) == found
    assert list(find_secrets(text)) == _full_scan(text)


def test_the_new_kind_is_named():
    assert SECRET_KINDS[-1] == "url_credentials"


def test_a_secret_cut_over_strings_is_read_decoded_too():
    texts = ["go to /cb?next=https%3A%2F%2Fh%3Fkey%3Dsk-proj-Ab3dEf5h", "Ij7lMn9pQr1tAb3dEf5hIj7lMn9pQr1t now"]
    assert [(m.kind, parts) for m, parts in cut_secrets(texts)] == [("openai_api_key", [(0, 39, 55), (1, 0, 32)])]
    assert [(m.kind, parts) for m, parts in cut_secrets(["db: postgres://admin:S3cr", "etQ7@db/prod"])] == [
        ("url_credentials", [(0, 21, 25), (1, 0, 4)])]


# -- the prefilter ---------------------------------------------------------------------------------

# what the new patterns are made of, beside round 5's material
_MATERIAL = [
    "://", "http", "postgres", "admin", ":", "@", "@db", "/", "?", "#", "$", "${", "{", "*", "x", "pass", "password",
    "%", "%3D", "%3d", "%20", "%2F", "%3A", "%40", "%25", "%253D", "%2540", "%73", "%6B", "%E2", "%7", "%zz",
    "_", "-", "glob_", "MY_TOKEN_", "task", "\\n", "\\t", "\\", "n", "9", "Bearer", "Bearer%20", "Authorization=",
    "key=", "sk-", "sk-proj-", "ghp_", "AKIA", "xoxb-", ":AA", "1234567890", "Ab3dEf5hIj7lMn9pQr1t",
    "0123456789abcdef" * 2, "Q3ZX7WVB2NRT5LKM", OPENAI, GITHUB, "eyJ", ".eyJ", "é", "\u212a",
]


@pytest.mark.slow
@settings(max_examples=examples(300, 2000))
@given(st.lists(st.one_of(st.sampled_from(_MATERIAL), st.text(max_size=4)), max_size=30).map("".join))
def test_the_prefilter_finds_what_the_full_scan_finds(text):
    assert list(find_secrets(text)) == _full_scan(text)


# -- one record at a time --------------------------------------------------------------------------

_P = Placeholders(b"r6")


def _counts(redactor: Redactor) -> dict[str, tuple[int, int]]:
    return {kind: (n, len(redactor.secret_values[kind])) for kind, n in redactor.secrets.items()}


def test_a_url_password_goes_from_kept_text_json_and_object_keys():
    redactor = Redactor(_P, keep=frozenset({"system"}))
    prompt = 'DATABASE_URL=postgres://admin:S3cretUrlPassQ7Zx@db.example.com/prod {"dsn": "redis://:r3d1s@c"}'
    out = redactor.record({"type": "system/message", "seq": 1, "data": {
        "text": prompt, "env": {"postgres://admin:S3cretUrlPassQ7Zx@db": True}}})
    assert out["data"]["text"] == prompt.replace("S3cretUrlPassQ7Zx", _P.plain("S3cretUrlPassQ7Zx")).replace(
        "r3d1s", _P.plain("r3d1s"))
    assert list(out["data"]["env"]) == ["postgres://admin:" + _P.plain("S3cretUrlPassQ7Zx") + "@db"]
    assert _counts(redactor) == {"url_credentials": (3, 2)}


# -- through the command line: every field of a log, kept or not -----------------------------------

# one distinct value per field, so each count traces back to its field
SYSTEM_PASS = "Sys7PassQ9zXw"
SYSTEM_KEY = "sk-proj-" + "SyS7eMQ9zXw2" * 2
DESCRIPTION_PASS = "D3scPassQ9zX"
DESCRIPTION_KEY = "sk-proj-" + "D3sCrIpT1oNk" * 2
TOOL = "glob_" + GITHUB  # a tool name (kept unless --redact-tool-names)
PROMPT_PASS = "Pr0mptPassQ7x"
PROMPT_KEY = "sk-ant-api03-" + "PrOmPt5q7Xz9" * 2
REASONING_KEY = "xoxb-" + "1234567890-R3as0nQ7Xz9w"
ANSWER_KEY = "AKIAQ3ZX7WVB2NRT5LKM"
ARGS_PASS = "ArgsPassQ7xZ"
ARGS_KEY = "sk-" + "a1b2c3d4e5f60718" * 2
RESULT_PASS = "R3sultP@ssQ7"
TITLE_PASS = "Qz7HunterPassw0rdXq"
CWD_KEY = "hf_" + "kYw3Lq9ZpX2vN7cR5tB8mJ4hG6fD1sAeUo"
PRESET_KEY = "glpat-" + "Pr3s3tQ7Xz9Yw8Vu7Ts6"

SYSTEM = f"You are a coder. DATABASE_URL=postgres://admin:{SYSTEM_PASS}@db.example.com/prod MY_TOKEN_{SYSTEM_KEY}"
DESCRIPTION = f"Clones https://bob:{DESCRIPTION_PASS}@git.example.com/r; auth with Bearer%20{DESCRIPTION_KEY}"
PROMPT = f"connect to mysql://root:{PROMPT_PASS}@db:3306 then open /cb?next=https%3A%2F%2Fh%3Fkey%3D{PROMPT_KEY}"
ARGUMENTS = json.dumps({"url": f"https://deploy:{ARGS_PASS}@host.example.com/x",
                        "q": f"?next=https%3A%2F%2Fapi%3Fk%3D{ARGS_KEY}"})
RESULT = f"cache at redis://:{RESULT_PASS.replace('@', '%40')}@cache:6379/0"
CWD = f"/home/dev/repo_{CWD_KEY}/project"

FRAGMENTS = (SYSTEM_PASS, SYSTEM_KEY[8:], DESCRIPTION_PASS, DESCRIPTION_KEY[8:], GITHUB[4:], PROMPT_PASS,
             PROMPT_KEY[13:], REASONING_KEY[5:], ANSWER_KEY[4:], ARGS_PASS, ARGS_KEY[3:], "R3sultP", TITLE_PASS,
             CWD_KEY[3:], PRESET_KEY[6:])

# kind -> (occurrences, distinct values), from where the builder writes each text:
# - header.system and the tool description of the one request/header: 1 each (SYSTEM_*, DESCRIPTION_*)
# - the tool name (kept): the request/header's tool list, each of the 11 tool-call-delta chunks of its
#   call (the name in each), assistant/message and tool/call: 14
# - the user prompt: agent/inbox/spliced, user/message and the title request's prompt: 3 each
# - reasoning and answer: their delta stream, block-end and assistant/message: 3 each
# - the tool arguments: the tool-call-delta stream (joined), block-end, assistant/message, tool/call: 4 each
# - the tool result, the title, the cwd and the agent preset (session header): 1 each
EXPECTED = {
    "anthropic_api_key": (3, 1),  # PROMPT_KEY
    "deepseek_api_key": (4, 1),  # ARGS_KEY
    "github_token": (14, 1),  # TOOL
    "gitlab_token": (1, 1),  # PRESET_KEY
    "huggingface_token": (1, 1),  # CWD_KEY
    "openai_api_key": (2, 2),  # SYSTEM_KEY, DESCRIPTION_KEY
    "slack_token": (3, 1),  # REASONING_KEY
    "aws_access_key_id": (3, 1),  # ANSWER_KEY
    # SYSTEM_PASS 1, DESCRIPTION_PASS 1, PROMPT_PASS 3, ARGS_PASS 4, RESULT_PASS 1, TITLE_PASS 1
    "url_credentials": (11, 6),
}


def _summary(expected: dict[str, tuple[int, int]]) -> str:
    return "secrets removed: " + ", ".join(f"{kind} {d} ({n} occurrence(s))"
                                           for kind, (n, d) in sorted(expected.items()))


def _log(folder: Path) -> Path:
    tool = {"name": TOOL, "description": DESCRIPTION,
            "parameters": {"type": "object", "properties": {"url": {"type": "string"}}}}
    b = LogBuilder(session_id="s-round6", cwd=CWD, system=SYSTEM, tools=[tool], agent_preset=f"preset_{PRESET_KEY}")
    with b.turn(PROMPT):
        with b.step():
            b.assistant(f"answer AWS_ID_{ANSWER_KEY}", reasoning=f"thinking SLACK_{REASONING_KEY}",
                        tool_calls=[ToolCall(TOOL, ARGUMENTS, id="call-1")])
            b.tool_result("call-1", RESULT)
        with b.step():
            b.assistant("done")
    b.title(f"clone https://bob:{TITLE_PASS}@git.example.com/r")
    folder.mkdir(parents=True, exist_ok=True)
    return b.write_jsonl(folder / "session.jsonl", packed=False)


def _survivors(data: bytes) -> list[str]:
    text = data.decode("utf-8")
    return [fragment for fragment in FRAGMENTS if fragment in text]


def test_the_setup_holds(tmp_path):
    log = _log(tmp_path).read_text()
    assert _survivors(log.encode()) == list(FRAGMENTS)
    assert log.count(TOOL) == 14 and log.count(PROMPT_PASS) == 3 and log.count(REASONING_KEY) == 2
    # the tool arguments' deltas cut the password: the block-end, assistant/message and tool/call hold it whole
    assert log.count(ARGS_PASS) == 3


@pytest.mark.parametrize("keep", [(), ("system", "tools", "titles", "paths")], ids=["replaced", "kept"])
def test_every_planted_secret_is_gone_and_counted_exactly(tmp_path, monkeypatch, capsys, keep):
    log = _log(tmp_path / "in")
    out = tmp_path / "out.jsonl"
    args = ["redact", str(log), "-o", str(out), "--salt", "r6"]
    for part in keep:
        args += ["--keep", part]
    code, stdout, err = invoke(monkeypatch, capsys, *args)
    assert (code, err) == (0, [short_salt("r6")])
    assert stdout.splitlines()[1:] == [f"wrote {out}.manifest.json", _summary(EXPECTED),
                                       "verdicts of requests, breaks, cache: unchanged",
                                       f"a recipient verifies it with: dsh-audit redact --check {out}",
                                       f"and audits it with: dsh-audit check {out}"]
    manifest = json.loads(Path(f"{out}.manifest.json").read_text())
    assert manifest["secrets"] == {kind: {"occurrences": n, "distinct": d} for kind, (n, d) in sorted(EXPECTED.items())}
    assert _survivors(out.read_bytes()) == []
    records = [json.loads(line) for line in out.read_text().splitlines()]
    header = next(r["data"]["header"] for r in records if r["type"] == "request/header")
    name = header["tools"][0]["name"]
    assert name == "glob_" + _P.plain(GITHUB)  # what is before the key stays
    if keep:  # kept parts stay but for their secrets; the scheme, user and host of a URL stay
        assert header["system"].startswith("You are a coder. DATABASE_URL=postgres://admin:")
        assert header["system"] == SYSTEM.replace(SYSTEM_PASS, _P.plain(SYSTEM_PASS)).replace(
            SYSTEM_KEY, _P.plain(SYSTEM_KEY))
        title = next(r["data"]["title"] for r in records if r["type"] == "session/title")
        assert title.startswith("clone https://bob:") and title.endswith("@git.example.com/r")
        assert len(title) == len(f"clone https://bob:{TITLE_PASS}@git.example.com/r")
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out))[0] == 0


# -- the capture: its path, headers and bodies -----------------------------------------------------

PATH_KEY = "sk-proj-" + "P4tHQ7Xz9Yw8" * 2
REFERER_PASS = "RefPassQ7Xz"
FORWARDED_PASS = "FwdPassQ7Xz"
TRACE_KEY = "ghp_" + "Tr4c3HeAd3rQ7Xz9Yw8Vu7Ts6Rq5Po4Nm3"
STRAY_PASS = "StrayPassQ7Xz"
STRAY_KEY = "sk-proj-" + "StR4yBoDyQ7X" * 2
CAPTURE_FRAGMENTS = (PATH_KEY[8:], REFERER_PASS, FORWARDED_PASS, TRACE_KEY[4:], STRAY_PASS, STRAY_KEY[8:])


def _capture(folder: Path, log: Path) -> Path:
    session = open_session(log)
    bodies = [session.bodies.render(r, session.route(r).adapter).decode()
              for r in session.requests if r.kind == "loop"]
    stray = json.dumps({"model": "other", "messages": [
        {"role": "user", "content": f"pull https://ci:{STRAY_PASS}@git.example.com and use MY_{STRAY_KEY}"}]})
    lines = []
    for n, body in enumerate([*bodies, stray]):
        headers = {"content-type": "application/json"}
        path = "/chat/completions"
        if n == 0:  # a path whose query holds a key percent-encoded, and headers kept without their secrets
            path += f"?next=https%3A%2F%2Fapi.example.com%2Fv1%3Fkey%3D{PATH_KEY}"
            headers |= {"referer": f"https://u:{REFERER_PASS}@app.example.com/cb",
                        "x-forwarded-url": f"https://h/?dsn=postgres%3A%2F%2Fadmin%3A{FORWARDED_PASS}%40db",
                        "x-trace": f"span_{TRACE_KEY}"}
        lines.append(stringify({"method": "POST", "path": path, "headers": headers, "body": body}) + "\n")
    wire = folder / "wire.jsonl"
    wire.write_text("".join(lines))
    return wire


def test_the_capture_path_headers_and_bodies_count(tmp_path, monkeypatch, capsys):
    log = _log(tmp_path / "in")
    capture = _capture(tmp_path / "in", log)
    assert all(fragment in capture.read_text() for fragment in CAPTURE_FRAGMENTS)
    out = tmp_path / "out" / "session.jsonl"
    out.parent.mkdir()
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "r6",
                               "--capture", str(capture))
    assert (code, err) == (0, ["note: 1 of 3 captured request(s) match none of the log's requests: they are redacted "
                               "as content, and prove nothing about this log", short_salt("r6")])
    # the log's counts, and what only the capture holds: the path's key, the referer's and the forwarded
    # URL's passwords, the trace header's key, and the stray body's password and key (1 each)
    expected = dict(EXPECTED)
    expected["openai_api_key"] = (EXPECTED["openai_api_key"][0] + 2, EXPECTED["openai_api_key"][1] + 2)
    expected["url_credentials"] = (EXPECTED["url_credentials"][0] + 3, EXPECTED["url_credentials"][1] + 3)
    expected["github_token"] = (EXPECTED["github_token"][0] + 1, EXPECTED["github_token"][1] + 1)
    redacted = out.parent / "wire.jsonl"  # where the views find the copy's capture
    assert stdout.splitlines()[1:] == [f"wrote {redacted}: auth headers dropped: none", f"wrote {out}.manifest.json", _summary(expected),
                                       "verdicts of requests, breaks, cache, diff: unchanged",
                                       f"a recipient verifies it with: dsh-audit redact --check {out}",
                                       f"and audits it with: dsh-audit check {out} --capture {redacted}"]
    written = redacted.read_text()
    assert [f for f in (*FRAGMENTS, *CAPTURE_FRAGMENTS) if f in written] == []
    first = json.loads(written.splitlines()[0])
    path = f"/chat/completions?next=https%3A%2F%2Fapi.example.com%2Fv1%3Fkey%3D{PATH_KEY}"
    # the URL in the query value is read decoded: its host is a placeholder too (session 39)
    assert first["path"] == path.replace(PATH_KEY, _P.plain(PATH_KEY)).replace("api.example.com", "dvd.rmfbcbt.bny")
    referer = first["headers"]["referer"]  # a URL-valued header: its whole address is a placeholder (session 32)
    assert referer.startswith("https://") and referer.endswith("/cb") and "app.example.com" not in referer
    assert first["headers"]["x-trace"] == "span_" + _P.plain(TRACE_KEY)
    assert invoke(monkeypatch, capsys, "redact", "--check", str(out))[0] == 0
