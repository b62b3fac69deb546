"""``dsh-audit redact``: secrets cut over many strings.

A live DSH log streams every text in chunks (``assistant/chunk`` ``text-delta``, ``reasoning-delta``
and ``tool-call-delta`` events, or packed ``*-chunks`` rows: spec §1.4, §5.4), cut wherever the
model's tokens fall, so every kind of secret can be cut over any number of them: a private key block
(its BEGIN and END lines too), an API key, an ``Authorization: Bearer`` header, an ``.env``
assignment. Each stream is scanned joined, so each counts once per stream whatever the cuts. The
same chunks quoted as JSON strings (a packed row read back into a tool result or argument, a kept
tool description) or the content blocks of one record are separate strings: there a private key
block whose BEGIN line, body and END line are cut over any number of consecutive strings goes too,
kept or not, and counts once.

Counts are derived by hand from where the builder writes each text (as in
``tests/test_redact_escaped_secrets.py``), so a secret missed or counted twice shows as a number.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from _cli import invoke, short_salt
from _json_text import all_strings
from hypothesis import given
from hypothesis import strategies as st

from dsh_audit.jsjson import stringify
from dsh_audit.redact import Placeholders, Redactor
from dsh_audit.redact import _json_secrets as _placeholder, _key_blocks  # JSON text's and a record's key_end lookahead
from dsh_audit.redact._chunks import ChunkStreams
from dsh_audit.redact._pem import key_end
from dsh_audit.testing import LogBuilder, ToolCall

# Fake values, each of its provider's current shape.
HEAD, END = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
BODY = ("MIIEpAIBAAKCAQEA7v9QxZ3kLm8Pq2Rs6Tv0Xy4Wb7Nc1Hd5Jf9Gk3Lp2Qm8Rn4\n"
        "Ts6Vw0Xz2Ab4Cd6Ef8Gh0Ij2Kl4Mn6Op8Qr0St2Uv4Wx6Yz8Ab0Cd2Ef4Gh6=")
PEM = f"{HEAD}\n{BODY}\n{END}"
OPENAI = "sk-proj-" + "Zq7Lm2Xv9Pw4" * 3
BEARER = "tok3nV4lue9xyzABCdef"
PASSWORD = "hunter2hunter2XY"
# kind -> (a text holding one secret of that kind, the part of it that must not survive anywhere)
SHAPES: dict[str, tuple[str, str]] = {
    "private_key": (f"my key:\n{PEM}\n", BODY[4:40]),
    "openai_api_key": (f"use {OPENAI} for it", OPENAI[8:]),
    "authorization": (f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.com", BEARER),
    "env_assignment": (f"notes\nDB_PASSWORD={PASSWORD}\nDEBUG=1", PASSWORD),
}
ANSWER = "\n".join(text for text, _ in SHAPES.values())
FRAGMENTS = tuple(part for _, part in SHAPES.values())

# A second private key, quoted as the chunks of a packed row: its BEGIN line cut over three strings,
# its body over many, its END line over two.
BODY2 = "MHcCAQEEIO1xQ3w8Zr5Ty7Ui9Op0As2Df4Gh6Jk8Lz0Xc1Vb3Nm5Qw7Er9Ty1Ui3Op5As7Df9Gh1Jk3="
CHUNKS2 = ["-----BEG", "IN EC PRIV", "ATE KEY-----\n", *[BODY2[i:i + 5] for i in range(0, len(BODY2), 5)],
           "\n-----END EC PRIV", "ATE KEY-----", "that's all"]
# A third, over the text blocks of one user message
BODY3 = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu"
BLOCKS3 = ["here it is: -----BE", "GIN OPENSSH PRIV", "ATE KEY", "-----",
           *[BODY3[i:i + 3] for i in range(0, len(BODY3), 3)], "\n-----END OPENSSH PRIVATE KEY-----\n"]
# the pieces of those two keys' bodies: none may survive as a string (at any depth of JSON)
PIECES = (*CHUNKS2[3:-3], *BLOCKS3[4:-1])


def _manifest_secrets(expected: dict[str, tuple[int, int]]) -> dict[str, dict[str, int]]:
    return {kind: {"occurrences": n, "distinct": d} for kind, (n, d) in sorted(expected.items())}


def _summary(expected: dict[str, tuple[int, int]]) -> str:
    kinds = (f"{kind} {d} ({n} occurrence(s))" for kind, (n, d) in sorted(expected.items()))
    return "secrets removed: " + ", ".join(kinds)


def _survivors(data: bytes) -> list[str]:
    """The :data:`FRAGMENTS` found in ``data`` (JSON lines), as written or as any JSON in it reads, at
    any depth, and the :data:`PIECES` found there as whole strings."""
    text = data.decode("utf-8")
    found = {f for f in FRAGMENTS if f in text}
    for line in filter(None, text.split("\n")):
        strings = all_strings(json.loads(line))
        found |= {f for s in strings for f in FRAGMENTS if f in s} | set(PIECES).intersection(strings)
    return sorted(found)


def _log(folder: Path, *, packed: bool) -> Path:
    tool = {"name": "bash", "description": stringify({"texts": CHUNKS2}),
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}
    b = LogBuilder(session_id="s-split-secrets", tools=[tool])
    with b.turn([{"type": "text", "text": block} for block in BLOCKS3]):
        with b.step():
            # every secret cut over many chunks of 3 characters
            b.assistant(ANSWER, reasoning=f"thinking:\n{ANSWER}", delta_size=3,
                        tool_calls=[ToolCall("bash", {"command": ANSWER}, id="call-1")])
            b.tool_result("call-1", "ok")
        with b.step():
            b.assistant("done")
    folder.mkdir(parents=True, exist_ok=True)
    return b.write_jsonl(folder / "session.jsonl", packed=packed)


# kind -> (occurrences, distinct values), from where the builder writes each text:
# - the answer and the reasoning: each its delta stream (joined, once), its block-end and the
#   assistant/message: 3 each, 6 in all for each kind of ANSWER
# - the tool arguments (ANSWER as JSON): the tool-call-delta stream, the block-end, the
#   assistant/message and the tool/call: 4 for each kind of ANSWER (the same values: distinct 1)
# - the tool description (CHUNKS2): the one request/header: 1, a second private key
# - the user message's blocks (BLOCKS3): agent/inbox/spliced and user/message: 2, a third private key
EXPECTED = {
    "private_key": (6 + 4 + 1 + 2, 3),
    "openai_api_key": (10, 1),
    "authorization": (10, 1),
    "env_assignment": (10, 1),
}


def test_the_setup_holds(tmp_path):
    log = _log(tmp_path, packed=False).read_bytes()
    assert _survivors(log) == sorted({*FRAGMENTS, *PIECES})
    records = [json.loads(line) for line in log.decode().splitlines()]
    deltas = [r["data"]["chunk"] for r in records if r["type"] == "assistant/chunk"]
    # no secret is whole in any one chunk: the BEGIN line alone runs over 11 of them
    assert not any(part in str(chunk.get("text", chunk.get("argumentsDelta", "")))
                   for chunk in deltas for part in (*FRAGMENTS, HEAD, END, "DB_PASSWORD="))
    # step 1: the answer, the reasoning and the arguments (after an empty delta that opens them) in 3s
    kinds = Counter(r["data"]["chunk"]["type"] for r in records if r["type"] == "assistant/chunk"
                    and r["data"]["step"] == 1 and r["data"]["chunk"]["type"].endswith("-delta"))
    assert kinds == {"text-delta": -(-len(ANSWER) // 3), "reasoning-delta": -(-len("thinking:\n" + ANSWER) // 3),
                     "tool-call-delta": 1 + -(-len(json.dumps({"command": ANSWER})) // 3)} == {
        "text-delta": 124, "reasoning-delta": 128, "tool-call-delta": 134}


@pytest.mark.parametrize("packed", [False, True], ids=["events", "packed-rows"])
@pytest.mark.parametrize("keep", [(), ("tools",)], ids=["replaced", "kept"])
def test_secrets_cut_over_many_chunks_and_strings_are_gone_counted_and_the_bundle_checks(
        tmp_path, monkeypatch, capsys, packed, keep):
    log = _log(tmp_path / "in", packed=packed)
    out = tmp_path / "out.jsonl"
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "split",
                               *(a for part in keep for a in ("--keep", part)))
    assert (code, err) == (0, [short_salt("split")])
    lines = stdout.splitlines()
    assert lines[1:] == [f"wrote {out}.manifest.json", _summary(EXPECTED),
                         "verdicts of requests, breaks, cache: unchanged",
                         f"a recipient verifies it with: dsh-audit redact --check {out}",
                         f"and audits it with: dsh-audit check {out}"]
    manifest = json.loads(Path(f"{out}.manifest.json").read_text())
    assert manifest["secrets"] == _manifest_secrets(EXPECTED)
    data = out.read_bytes()
    assert _survivors(data) == []
    records = [json.loads(line) for line in data.decode().splitlines()]
    description = next(r["data"]["header"]["tools"][0]["description"] for r in records if r["type"] == "request/header")
    texts = json.loads(description)["texts"]
    assert [len(t) for t in texts] == [len(t) for t in CHUNKS2]
    if keep:  # the kept description keeps its BEGIN line pieces and its prose: only the key goes
        assert texts[:3] == CHUNKS2[:3] and texts[-1] == "that's all"
        assert all(new != old for new, old in zip(texts[3:-3], CHUNKS2[3:-3]))
    else:
        assert texts[0] != CHUNKS2[0]
    assert invoke(monkeypatch, capsys, "validate", str(out))[0] == 0
    code, stdout, err = invoke(monkeypatch, capsys, "redact", "--check", str(out))
    assert (code, err) == (0, [])


# -- the generalised private key block, string by string ---------------------------------------

_P = Placeholders(b"s")


@pytest.mark.parametrize("strings, kept", [
    # the BEGIN line cut over three strings, the body over four, the END line over two: the body and the
    # END line's pieces go (as one private key), the BEGIN line's pieces and the prose after stay
    (["-----BEG", "IN RSA PRIV", "ATE KEY-----\n", "MIIE", "pAIB", "AAKC", "AQ==\n-----END RSA PRIV", "ATE KEY-----",
      "thanks"],
     ["-----BEG", "IN RSA PRIV", "ATE KEY-----\n", _P.plain("MIIE"), _P.plain("pAIB"), _P.plain("AAKC"),
      _P.plain("AQ==\n-----END RSA PRIV"), _P.plain("ATE KEY-----"), "thanks"]),
    # a BEGIN line cut into single characters
    ([*"-----BEGIN EC PRIVATE KEY-----", "MH", "cC", "\n-----END EC PRIVATE KEY-----"],
     [*"-----BEGIN EC PRIVATE KEY-----", _P.plain("MH"), _P.plain("cC"), _P.plain("\n-----END EC PRIVATE KEY-----")]),
    # the header whole in one string, the body cut in short pieces that read as no key alone, an END line
    # whole in one string: from the header to that line (which stays)
    (["-----BEGIN RSA PRIVATE KEY-----", "MIIE", "abcd", "-----END RSA PRIVATE KEY-----"],
     ["-----BEGIN RSA PRIVATE KEY-----", _P.plain("MIIE"), _P.plain("abcd"), "-----END RSA PRIVATE KEY-----"]),
    # the END line cut, the header whole: the lookahead reads the END line's pieces
    (["-----BEGIN RSA PRIVATE KEY-----", "MIIE", "abcd", "-----END RSA PRI", "VATE KEY-----"],
     ["-----BEGIN RSA PRIVATE KEY-----", _P.plain("MIIE"), _P.plain("abcd"), _P.plain("-----END RSA PRI"),
      _P.plain("VATE KEY-----")]),
])
def test_a_private_key_cut_over_many_json_strings_goes_and_counts_once(strings, kept):
    text = stringify({"texts": strings, "n": 1})
    redactor = Redactor(Placeholders(b"s"))
    out = redactor.keep_text(text)
    assert json.loads(out) == {"texts": kept, "n": 1} and len(out) == len(text)
    assert dict(redactor.secrets) == {"private_key": 1}
    replaced = Redactor(Placeholders(b"s"))
    replaced.content(text)  # replaced whole, the same count
    assert dict(replaced.secrets) == {"private_key": 1}


@pytest.mark.parametrize("strings", [
    ["-----BEG", "IN RSA PRIV", "thanks"],  # the line never ends
    ["-----BEG", "IN PUBLIC", " KEY-----\n", "MIIE"],  # a public key is no secret
    ["-----BEG", "IN RSA PRIV", 7, "ATE KEY-----\nMIIE"],  # a number parts the strings
    # prose between the pieces and the END line: short pieces alone read as no key (the BEGIN line's own
    # string holds no body), nothing runs on
    ["-----BEG", "IN RSA PRIVATE KEY-----", "MIIE", "that's all", "-----END RSA PRIVATE KEY-----"],
])
def test_no_key_runs_across_these_strings(strings):
    text = stringify(strings)
    redactor = Redactor(Placeholders(b"s"))
    assert redactor.keep_text(text) == text and dict(redactor.secrets) == {}


@pytest.mark.parametrize("module", [_placeholder, _key_blocks], ids=["json-text", "record"])
def test_many_cut_begin_lines_without_an_end_line_read_each_string_once(monkeypatch, module):
    # bounded work: every block opening among the strings an earlier block's END line lookahead read
    # ends where that lookahead said, so the lookahead reads each string once (not once per block)
    reads: list[str] = []

    def counting(texts, tail=""):
        def each():
            for text in texts:
                reads.append(text)
                yield text
        return key_end(each(), tail)

    monkeypatch.setattr(module, "key_end", counting)
    strings = ["-----BEG", "IN RSA PRIVATE KEY-----", "MIIE"] * 2000
    redactor = Redactor(Placeholders(b"s"), keep=frozenset({"tools"}))
    if module is _placeholder:
        assert redactor.keep_text(stringify(strings)) == stringify(strings)
    else:
        record = {"type": "request/header", "seq": 4, "time": 1, "data": {"header": {"tools": strings}}}
        assert redactor.record(record)["data"]["header"]["tools"] == strings
    assert dict(redactor.secrets) == {} and 0 < len(reads) < len(strings)


@pytest.mark.parametrize("keep", [False, True], ids=["replaced", "kept"])
def test_a_private_key_cut_over_the_enum_of_a_tool_goes_from_the_record_and_counts_once(keep):
    pieces = ["-----BEGI", "N RSA PRIVATE", " KEY-----", "MII", "Epa", "IBA", "-----END RSA PRIV", "ATE KEY-----", "ok"]
    record = {"type": "request/header", "seq": 4, "time": 1, "data": {"header": {"tools": [
        {"name": "pick", "description": "d", "parameters": {"type": "object", "properties": {
            "x": {"type": "string", "enum": pieces}}}}]}}}
    redactor = Redactor(Placeholders(b"s"), keep=frozenset({"tools"}) if keep else frozenset())
    out = redactor.record(record)
    enum = out["data"]["header"]["tools"][0]["parameters"]["properties"]["x"]["enum"]
    assert dict(redactor.secrets) == {"private_key": 1}
    assert [len(e) for e in enum] == [len(p) for p in pieces]
    if keep:  # the string that ends the END line keeps what of it is there (no key)
        assert enum == [*pieces[:3], *(_P.plain(p) for p in pieces[3:7]), *pieces[7:]]
    else:
        assert not set(enum) & set(pieces)


# -- a property: any secret, cut anywhere over any number of chunks, is gone and counted once ----

_SECRET = st.sampled_from(sorted(SHAPES))


@st.composite
def _cuts(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at random points into 1 to 40 pieces (none empty)."""
    points = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=39)))
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]


@given(data=st.data(), kind=_SECRET, field=st.sampled_from(["text-delta", "reasoning-delta", "tool-call-delta"]))
def test_a_secret_cut_over_a_live_stream_is_gone_and_counted_once(data, kind, field):
    text, part = SHAPES[kind]
    if field == "tool-call-delta":
        text = stringify({"command": text})
    pieces = data.draw(_cuts(text))
    streams = ChunkStreams(Redactor(Placeholders(b"s")))
    out = []
    for seq, piece in enumerate(pieces):
        chunk = ({"type": field, "index": 0, "id": "c1", "argumentsDelta": piece} if field == "tool-call-delta"
                 else {"type": field, "index": 0, "text": piece})
        record = {"type": "assistant/chunk", "seq": seq, "time": 1, "data": {"turn": 1, "step": 1, "chunk": chunk}}
        out.append(stringify(streams.record(record)))
    streams.end()
    assert dict(streams.redactor.secrets) == {kind: 1}
    assert all(new != old for new, old in zip(out, pieces))
    assert part not in "".join(json.loads(line)["data"]["chunk"].get("text", "") for line in out)


@given(data=st.data(), keep=st.booleans())
def test_a_private_key_cut_over_any_number_of_json_strings_is_gone_and_counted_once(data, keep):
    pieces = data.draw(_cuts(PEM))
    text = stringify(["before", *pieces, "after"])
    redactor = Redactor(Placeholders(b"s"))
    out = redactor.keep_text(text) if keep else redactor.content(text)
    assert dict(redactor.secrets) == {"private_key": 1}
    joined = "".join(json.loads(out)) if keep else out
    line = BODY.replace("\n", "")
    assert not any(line[i:i + 8] in joined for i in range(len(line) - 8))
