"""``dsh-audit redact``, round 3 of its secrets: the provider formats of today (each planted in
every content field, gone and counted by kind), a private key split across strings or truncated,
HAR query parameters, headers and cookies that are secrets by their names, and realistic code and
data that is no secret at all.

Counts are derived by hand from where the builder writes each text (as in
``tests/test_redact_escaped_secrets.py``, whose field map this reuses), so a secret missed or counted
twice shows as a number."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from pathlib import Path

import pytest
from _json_text import all_strings

from dsh_audit.capture import load_capture
from dsh_audit.jsjson import stringify
from dsh_audit.redact import SECRET_KINDS, Placeholders, Redactor, check_bundle, find_secrets, redact
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder, ToolCall

# kind -> (a text holding one secret of that kind, in the context its pattern needs; a part of the
# secret alone that must not survive anywhere). Fake values, each of its provider's current shape.
PLANTED: dict[str, tuple[str, str]] = {
    "private_key": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
                    "-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"),
    "anthropic_api_key": ("sk-ant-admin01-" + "Pz4Tg7Yu" * 10, "Pz4Tg7YuPz4Tg7Yu"),
    "deepseek_api_key": ("sk-3f9a0c1d7b2e4f6a8c0d2e4f6a8b0c1d", "3f9a0c1d7b2e4f6a8c0d"),
    "openai_api_key": ("sk-svcacct-" + "Qw7eRt5y" * 8, "Qw7eRt5yQw7eRt5y"),
    "aws_access_key_id": ("ASIAY34FZKBOKMUTVV7A", "Y34FZKBOKMUTVV7A"),
    "aws_secret_access_key": ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "bPxRfiCYEXAMPLE"),
    "github_token": ("github_pat_11ABCDEFG0" + "x1Y2z3" * 12, "x1Y2z3x1Y2z3"),
    "gitlab_token": ("glpat-xY7_zQ2-vW9kLm4nP8rS", "vW9kLm4nP8rS"),
    "google_api_key": ("AIzaSyB7kQ9vX2mP4wL1nC8rR5tH3jF6gZ0eYuI", "SyB7kQ9vX2mP4wL1"),
    "google_oauth_token": ("ya29.a0AfH6SMBx" + "Qw3rTy7u" * 4, "Qw3rTy7uQw3rTy7u"),
    "slack_token": ("xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAtYWJj", "Mi0yLTEyMzQ1Njc4"),
    "slack_webhook": ("https://hooks.slack.com/services/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",
                      "Xy9Zw8Vu7Ts6Rq5P"),
    "stripe_key": ("whsec_Mn4Bv7Cx2Za9Sd6Fg3Hj8Kl1", "Mn4Bv7Cx2Za9Sd6F"),
    "huggingface_token": ("hf_kYw3Lq9ZpX2vN7cR5tB8mJ4hG6fD1sAeUo", "kYw3Lq9ZpX2vN7cR"),
    "npm_token": ("npm_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3gH5", "aB3dE5gH7jK9mN1p"),
    "pypi_token": ("pypi-AgEIcHlwaS5vcmcCJDQ0" + "ZjYyMmRi" * 8, "ZjYyMmRiZjYyMmRi"),
    "groq_api_key": ("gsk_" + "aB3dE5gH7jK9mN1pQ3sT" * 3, "aB3dE5gH7jK9mN1pQ3sT"),
    "xai_api_key": ("xai-" + "Rt6Yu8Io0Pa2Sd4Fg6Hj" * 4, "Rt6Yu8Io0Pa2Sd4Fg6Hj"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "dozjgNryP4J3jVmNHl0w5N"),
    "authorization": ("Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEy"),
    "bearer_token": ("send it as Bearer 9f8e7d6c5b4a3f2e1d0c", "9f8e7d6c5b4a3f2e1d0c"),
    "cookie": ("Cookie: sessionid=Zk4Lm8Qp2Rs6Tv0X; theme=dark", "Zk4Lm8Qp2Rs6Tv0X"),
    "env_assignment": ("DEEPSEEK_KEY=Hq3Wn8Vb5Lp2Xz7K", "Hq3Wn8Vb5Lp2Xz7K"),
    "key_value": ('{"client_secret": "Cs9Vd2Mn6Bq4Wz8X"}', "Cs9Vd2Mn6Bq4Wz8X"),
    "url_parameter": ("https://maps.googleapis.com/maps/api/geocode/json?key=Gk7Pz3Xv9Qm2Lw5R", "Gk7Pz3Xv9Qm2Lw5R"),
}

# Where the builder writes each field's text (tests/test_redact_escaped_secrets.py derives each):
# the system prompt 1; the tool arguments 4 (their delta stream, block-end, assistant/message,
# tool/call); the user prompt 3 (agent/inbox/spliced, user/message, the title request quoting it);
# reasoning 3 and answer 3 (delta stream, block-end, assistant/message); the tool result, the title,
# the cwd, the agent preset and the tool description 1 each.
OCCURRENCES = 1 + 4 + 3 + 3 + 3 + 1 + 1 + 1 + 1 + 1


def test_every_kind_of_round_3_is_one_a_summary_can_name():
    # the whole list, with the kinds round 4 added, is pinned in test_redact_secrets_round4.py
    assert set(PLANTED) <= set(SECRET_KINDS)
    assert len(PLANTED) == 25  # every kind of round 3 is planted below


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_planted_text_holds_one_secret_of_its_kind(kind):
    text, part = PLANTED[kind]
    planted = f"note\n{text}\nend"
    found = [(m.kind, planted[m.start:m.end]) for m in find_secrets(planted)]
    assert [k for k, _ in found] == [kind] and part in found[0][1]


@pytest.mark.parametrize("text, kind", [
    # the provider formats of the audit, each as its provider issues it today
    ("sk-proj-" + "Ab3_xY9-" * 8, "openai_api_key"),
    ("sk-admin-" + "Zx8cVb2n" * 4, "openai_api_key"),
    ("sk-ant-api03-" + "Kq8_w-Lm" * 11 + "AA", "anthropic_api_key"),
    ("sk-" + "0123456789abcdef" * 2, "deepseek_api_key"),
    ("sk-or-v1-" + "0123456789abcdef" * 4, "openai_api_key"),  # OpenRouter: OpenAI's shape
    ("ghp_" + "a1B2c3D4" * 4 + "e5F6", "github_token"),
    ("gho_" + "Z9y8X7w6" * 4 + "v5U4", "github_token"),
    ("ghu_" + "Q1" * 18, "github_token"),
    ("ghs_" + "r4" * 18, "github_token"),
    ("ghr_" + "s5" * 18, "github_token"),
    ("glrt-t3St_Run3r-T0ken12345", "gitlab_token"),
    ("xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx", "slack_token"),
    ("xoxa-2-abcdefghij1", "slack_token"),
    ("xoxp-1234567890-abcdEFGH", "slack_token"),
    ("xoxr-1234567890ab", "slack_token"),
    ("xoxs-1234567890ab", "slack_token"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    ("rk_live_51H8abcdEFGHijklMNOP", "stripe_key"),
    ("AKIAIOSFODNN7EXAMPL3", "aws_access_key_id"),
    ("AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key"),
    ("GOCSPX-aBcD1234eFgH5678iJkL", "google_oauth_token"),
    ("set-cookie: sid=s%3Aabc.def; Path=/; HttpOnly", "cookie"),
    ("OPENAI_KEY=abcd1234efgh", "env_assignment"),
    ("DB_PASS=s3cr3tpw", "env_assignment"),
    ("export GITHUB_TOKEN=zzzzyyyy", "env_assignment"),
    ("MY_SECRET='qwerty12'", "env_assignment"),
    ("PASSWORD=hunter22", "env_assignment"),
    ("https://x.blob.core.windows.net/c?sv=2020&sig=AbCdEf123%3D", "url_parameter"),
    ("https://api.example.com/v1?auth=abcdefghij", "url_parameter"),
])
def test_current_provider_formats_are_found(text, kind):
    assert [m.kind for m in find_secrets(text)] == [kind]


def _fields(text: str) -> dict[str, str]:
    """The text of each content field, holding ``text`` on a line of its own (the context of an
    ``.env`` line), the cwd as an absolute path."""
    planted = f"note\n{text}\nend"
    return {"system": planted, "user": planted, "answer": planted, "reasoning": planted,
            "arguments": json.dumps({"command": planted}), "result": planted, "title": planted,
            "cwd": f"/home/dev/p\n{text}\n", "preset": planted, "description": planted}


def _log(folder: Path, fields: dict[str, str], *, name: str = "session.jsonl") -> Path:
    tool = {"name": "bash", "description": fields["description"],
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}
    b = LogBuilder(session_id="s-round3", cwd=fields["cwd"], system=fields["system"], tools=[tool],
                   agent_preset=fields["preset"])
    with b.turn(fields["user"]):
        with b.step():
            b.assistant(fields["answer"], reasoning=fields["reasoning"],
                        tool_calls=[ToolCall("bash", fields["arguments"], id="call-1")])
            b.tool_result("call-1", fields["result"])
        with b.step():
            b.assistant("done")
    b.title(fields["title"])
    folder.mkdir(parents=True, exist_ok=True)
    return b.write_jsonl(folder / name, packed=False)


def _survives(data: bytes, part: str) -> bool:
    """Whether ``part`` is in ``data`` (JSON lines, or one JSON document), as written or as any JSON
    in it reads."""
    text = data.decode("utf-8")
    if part in text:
        return True
    try:
        documents = [json.loads(text)]
    except ValueError:
        documents = [json.loads(line) for line in filter(None, text.split("\n"))]
    return any(part in s for document in documents for s in all_strings(document))


@pytest.mark.parametrize("keep", [(), ("system", "tools", "titles", "paths")], ids=["replaced", "kept"])
@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_secret_of_every_kind_is_gone_from_every_field_and_counted_by_kind(tmp_path, kind, keep):
    text, part = PLANTED[kind]
    log = _log(tmp_path / "in", _fields(text))
    assert _survives(log.read_bytes(), part)
    result = redact(log, tmp_path / "out.jsonl", salt="round3", keep=keep)
    assert result.secrets == {kind: {"occurrences": OCCURRENCES, "distinct": 1}}
    assert not _survives(result.output.read_bytes(), part)
    assert not _survives(result.manifest.read_bytes(), part)
    assert result.mismatched == ()


# -- no false positives --------------------------------------------------------------------------

_IMAGE = base64.b64encode(b"".join(hashlib.sha512(str(i).encode()).digest() for i in range(300))).decode()
ORDINARY = [
    "sha256 " + hashlib.sha256(b"x").hexdigest() + "\nmd5 " + hashlib.md5(b"x").hexdigest(),
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Dev <dev@example.com>\n\n    Fix it (3f2a9c1)",
    f"id: {uuid.UUID(int=0x6BA7B8109DAD11D180B400C04FD430C8)} and {uuid.UUID(int=12345678901234567890)}",
    f'<img src="data:image/png;base64,{_IMAGE}">',
    "token = get_token()\napi_key = os.environ['OPENAI_API_KEY']\npassword = getpass.getpass()",
    'headers = {"Authorization": f"Bearer {token}", "x-api-key": api_key}',
    "const key = process.env.API_KEY;\nexport API_KEY=$API_KEY\nDEEPSEEK_KEY=${DEEPSEEK_KEY}",
    '{"prompt_cache_key": "session-0b6f6c1e-2f51-4d3b-9f0e-0c2b6a1d9e77", "password": "${DB_PASSWORD}"}',
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "from sklearn.model_selection import train_test_split\nrisk-assessment task-5d41402abc4b2a76b9719d911017c592",
    "Bearer authentication (RFC 6750): the bearer of the token may use it. See document.cookie.",
    "https://example.com/search?q=monkey&page=2&keyword=abc&author=jane",
    "toolu_01A09q90qw90lq917835lq9 msg_01XFDUDYJgAACzvnptvVoYEL chatcmpl-8a9b2c3d4e5f6a7b8c9d0e1f",
    "-----BEGIN RSA PRIVATE KEY-----",  # a header alone: nothing to remove
]


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_code_and_data_is_no_secret(text):
    assert list(find_secrets(text)) == []
    redactor = Redactor(Placeholders(b"s"))
    assert redactor.keep_text(text) == text
    redactor.content(text)
    redactor.content(json.dumps({"command": text}))
    assert dict(redactor.secrets) == {}


def test_a_log_of_ordinary_code_and_data_counts_no_secret(tmp_path):
    text = "\n".join(ORDINARY[:-1])
    fields = {**_fields(text), "cwd": "/home/dev/" + hashlib.sha1(b"p").hexdigest()}
    result = redact(_log(tmp_path, fields), tmp_path / "out.jsonl", salt="s")
    assert result.secrets == {} and result.mismatched == ()


# -- a private key split across strings, or truncated --------------------------------------------

HEADER = "-----BEGIN RSA PRIVATE KEY-----"
BODY = ["MIIEpAIBAAKCAQEA7v9QxZ3kLm8Pq2Rs6Tv0Xy4Wb7Nc1Hd5Jf9Gk3Lp2Qm8Rn4", "Ts6Vw0Xz2Ab4Cd6Ef8Gh0Ij2Kl4Mn6Op8="]
END = "-----END RSA PRIVATE KEY-----"


_P = Placeholders(b"s")


@pytest.mark.parametrize("text, kept, counted", [
    # an array of lines without its END line (a truncated key): the lines after the header go, once
    (stringify([HEADER, *BODY]), stringify([HEADER, _P.plain(BODY[0]), _P.plain(BODY[1])]), 1),
    # the header with a line of the body in its string, the rest in the next: counted by the first
    (stringify({"pem": HEADER + "\n" + BODY[0], "more": BODY[1]}),
     stringify({"pem": HEADER + _P.plain("\n" + BODY[0]), "more": _P.plain(BODY[1])}), 1),
    # a blank line between: skipped; prose after the body ends the key, and stays
    (stringify([HEADER, "", BODY[0], "thanks, that is all"]),
     stringify([HEADER, "", _P.plain(BODY[0]), "thanks, that is all"]), 1),
    # a header followed by prose, a path or one word: no key
    (stringify([HEADER, "hello world"]), stringify([HEADER, "hello world"]), 0),
    (stringify([HEADER, "/home/dev/project", "thanks"]), stringify([HEADER, "/home/dev/project", "thanks"]), 0),
    # a truncated key in one string: it runs to the end of the string
    (HEADER + "\n" + BODY[0][:20], HEADER + _P.plain("\n" + BODY[0][:20]), 1),
])
def test_a_private_key_split_across_json_strings_goes_and_counts_once(text, kept, counted):
    redactor = Redactor(Placeholders(b"s"))
    out = redactor.keep_text(text)
    assert out == kept and len(out) == len(text)
    assert dict(redactor.secrets) == ({"private_key": counted} if counted else {})
    replaced = Redactor(Placeholders(b"s"))
    replaced.content(text)  # replaced whole, the same count
    assert dict(replaced.secrets) == dict(redactor.secrets)


@pytest.mark.parametrize("keep", [False, True], ids=["replaced", "kept"])
def test_a_private_key_split_across_the_strings_of_one_record_goes_and_counts_once(keep):
    # two text blocks of one message, the header alone in the first; the block after the body is prose
    record = {"type": "user/message", "seq": 3, "time": 1, "data": {"id": "m-1", "role": "user", "content": [
        {"type": "text", "text": "my key:\n" + HEADER}, {"type": "text", "text": "\n".join(BODY)},
        {"type": "text", "text": "thanks"}]}}
    redactor = Redactor(Placeholders(b"s"))
    out = redactor.value(record, kept=True) if keep else redactor.record(record)
    blocks = [block["text"] for block in out["data"]["content"]]
    assert dict(redactor.secrets) == {"private_key": 1}
    assert [len(b) for b in blocks] == [len("my key:\n" + HEADER), len("\n".join(BODY)), len("thanks")]
    assert not any(line[:12] in blocks[1] for line in BODY)
    if keep:
        assert blocks[0] == "my key:\n" + HEADER and blocks[2] == "thanks"  # kept, but for the key's body
    # a record that ends with a header leaves the key open for its own strings only: the next record's
    # base64 is no key
    for text in (HEADER, BODY[0]):
        out = redactor.record({"type": "user/message", "data": {"content": [{"type": "text", "text": text}]}})
        assert len(out["data"]["content"][0]["text"]) == len(text)
    assert dict(redactor.secrets) == {"private_key": 1}


def test_a_private_key_split_across_the_deltas_of_a_captured_stream_counts_once():
    # a captured SSE response's deltas at one JSON path are one stream (as the log's own chunks are)
    redactor = Redactor(Placeholders(b"s"))
    deltas = [HEADER, "\n" + BODY[0], "\n" + BODY[1]]
    out = redactor.stream(deltas)
    assert dict(redactor.secrets) == {"private_key": 1}
    assert [len(d) for d in out] == [len(d) for d in deltas] and all(a != b for a, b in zip(out, deltas))


@pytest.mark.parametrize("packed", [False, True], ids=["chunks", "packed"])
@pytest.mark.parametrize("end", [False, True], ids=["truncated", "with-end"])
def test_a_private_key_streamed_in_two_chunks_goes_and_counts_once_per_stream(tmp_path, end, packed):
    # the header in the first delta, the body (and no END line, when truncated) in the next ones
    answer = HEADER + "\n" + "\n".join(BODY) + ("\n" + END if end else "")
    b = LogBuilder(session_id="s-pem", cwd="/home/dev/p", system="System prompt.")
    with b.turn("show me the key"):
        with b.step():
            b.assistant(answer, delta_size=len(HEADER))
    log = b.write_jsonl(tmp_path / "session.jsonl", packed=packed)
    deltas = [r["data"]["chunk"]["text"] for r in b.records(packed=False) if r["type"] == "assistant/chunk"
              and r["data"]["chunk"]["type"] == "text-delta"]
    assert ('"text-chunks"' in log.read_text()) == packed
    assert deltas[:2] == [HEADER, "\n" + BODY[0][:len(HEADER) - 1]]  # the header alone in the first
    result = redact(log, tmp_path / "out.jsonl", salt="pem")
    # the delta stream (joined), the block-end and the assistant/message: one each
    assert result.secrets == {"private_key": {"occurrences": 3, "distinct": 1}}
    text = result.output.read_text()
    assert not any(line[i:i + 12] in text for line in BODY for i in range(0, len(line) - 12, 6))
    assert result.mismatched == () and check_bundle(result.output).ok


# -- HAR: query parameters, headers and cookies that are secrets by their names ---------------------

QUERY = {"api_key": "Qa1Vb2Wc3", "key": "Kz9Yx8", "token": "t0k", "access_token": "AcT0ken", "apikey": "Ap1K",
         "x-api-key": "Xk2L", "secret": "S3c", "password": "pw", "auth": "Au7h"}
HEADERS = {"Authorization": "Basic dXNlcg==", "Cookie": "prefs=compact", "x-api-key": "hdrK3y",
           "api-key": "azureK3y", "anthropic-api-key": "antK3y", "X-Goog-Api-Key": "goog1", "Proxy-Authorization": "pa"}
VALUES = (*QUERY.values(), *HEADERS.values(), "s3ssion42", "setC00kie", "formPw9")


def _har(bodies: list[bytes]) -> dict:
    query = "&".join(f"{k}={v}" for k, v in QUERY.items())
    entries = []
    for i, body in enumerate(bodies):
        headers = [{"name": k, "value": v} for k, v in HEADERS.items()]
        headers += [{"name": "Content-Type", "value": "application/json"},
                    {"name": "x-deepseek-harness-session-id", "value": "s-har"}]
        entries.append({
            "startedDateTime": f"2026-12-05T10:00:0{i}.000Z", "time": 5,
            "request": {"method": "POST", "url": f"https://api.example.com/chat/completions?page=2&{query}",
                        "httpVersion": "HTTP/1.1", "headers": headers,
                        "cookies": [{"name": "sessionid", "value": "s3ssion42"}, {"name": "theme", "value": "dark"}],
                        "queryString": [{"name": "page", "value": "2"}, *({"name": k, "value": v}
                                                                          for k, v in QUERY.items())],
                        "postData": {"mimeType": "application/json", "text": body.decode(),
                                     "params": [{"name": "password", "value": "formPw9"}]},
                        "headersSize": -1, "bodySize": len(body)},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                         "headers": [{"name": "Set-Cookie", "value": "id=setC00kie; Path=/"}], "cookies": [],
                         "content": {"size": 2, "mimeType": "application/json", "text": "{}"},
                         "redirectURL": "", "headersSize": -1, "bodySize": -1},
            "cache": {}, "timings": {"send": 1, "wait": 3, "receive": 1}})
    return {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}}


def test_har_query_parameters_headers_and_cookies_are_secrets_by_their_names(tmp_path):
    b = LogBuilder(session_id="s-har", cwd="/home/dev/p", system="System prompt.")
    with b.turn("hello"):
        with b.step():
            b.assistant("Hello.")
    log = b.write_jsonl(tmp_path / "session.jsonl")
    session = open_session(log)
    bodies = [session.bodies.render(r, session.route(r).adapter) for r in session.requests]
    har = tmp_path / "capture.har"
    har.write_text(json.dumps(_har(bodies)))
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt="har", capture=har)
    assert len(bodies) == 1 and result.mismatched == ()
    # the URL's credential parameters and the queryString items, each by its name (9 + 9, one value
    # each), and the form field (1); the headers by their names (the Cookie header and the Set-Cookie
    # response header as cookies, with the session cookie; not the theme cookie)
    assert result.secrets == {
        "authorization": {"occurrences": 2, "distinct": 2},
        "cookie": {"occurrences": 3, "distinct": 3},
        "key_value": {"occurrences": 4, "distinct": 4},
        "url_parameter": {"occurrences": 9 + 9 + 1, "distinct": 10},
    }
    assert result.dropped_headers == ("anthropic-api-key", "api-key", "authorization", "cookie", "cookies",
                                      "proxy-authorization", "set-cookie", "x-api-key", "x-goog-api-key")
    text = result.capture.read_text()
    for value in VALUES:
        assert f'"{value}"' not in text and f"={value}" not in text
    request = json.loads(text)["log"]["entries"][0]["request"]
    assert request["headers"] == [{"name": "Content-Type", "value": "application/json"},
                                  {"name": "x-deepseek-harness-session-id", "value": "s-har"}]
    assert request["cookies"] == []
    items = request["queryString"]
    assert [item["name"] for item in items] == ["page", *QUERY] and items[0]["value"] == "2"
    assert [len(item["value"]) for item in items[1:]] == [len(v) for v in QUERY.values()]
    assert all(item["value"] != v for item, v in zip(items[1:], QUERY.values()))
    assert re.fullmatch(r"https://[^/]{15}/chat/completions\?page=2&api_key=.*", request["url"])
    assert "api.example.com" not in request["url"]  # an internal host: a placeholder of its length
    assert len(request["url"]) == len(_har(bodies)["log"]["entries"][0]["request"]["url"])
    redacted = open_session(result.output)
    assert [c.body for c in load_capture(result.capture)] == [
        redacted.bodies.render(r, redacted.route(r).adapter) for r in redacted.requests]
    assert check_bundle(result.output).ok


def test_wire_headers_are_secrets_by_their_names(tmp_path):
    b = LogBuilder(session_id="s-wire", cwd="/home/dev/p", system="System prompt.")
    with b.turn("hello"):
        with b.step():
            b.assistant("Hello.")
    log = b.write_jsonl(tmp_path / "session.jsonl")
    session = open_session(log)
    body = session.bodies.render(session.requests[0], session.route(session.requests[0]).adapter)
    wire = tmp_path / "wire.jsonl"
    wire.write_text(stringify({"method": "POST", "path": "/chat/completions?key=Gk7Pz3Xv", "headers": {
        "cookie": "prefs=compact", "x-api-key": "k", "ocp-apim-subscription-key": "subK3y", "accept": "*/*"},
        "body": body.decode()}) + "\n")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt="wire", capture=wire)
    assert result.secrets == {"cookie": {"occurrences": 1, "distinct": 1},
                              "key_value": {"occurrences": 2, "distinct": 2},
                              "url_parameter": {"occurrences": 1, "distinct": 1}}
    assert result.dropped_headers == ("cookie", "ocp-apim-subscription-key", "x-api-key")
    record = json.loads(result.capture.read_text())
    assert record["headers"] == {"accept": "*/*"} and "Gk7Pz3Xv" not in record["path"]
    assert result.mismatched == ()
