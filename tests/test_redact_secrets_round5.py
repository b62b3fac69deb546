"""``dsh-audit redact``, round 5 of its secrets: the anchor prefilter of ``find_secrets`` (the same
matches as every pattern run on the whole text), secrets other than a private key cut over the text
parts of one message or the items of one list (gone, kept or not, and counted once, by their whole
value), a private key cut over strings told apart by its whole body (the same key whole and cut is
one distinct value), and the memos of texts read for secrets, bounded by characters.

Counts are derived by hand from where each text is written, so a secret missed or counted twice
shows as a number."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from _cli import invoke, short_salt
from _properties import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_audit.redact import Placeholders, Redactor, find_secrets
from dsh_audit.redact import _counting
from dsh_audit.redact._secrets import _fold, _full_scan, cut_secrets
from dsh_audit.testing import LogBuilder

# Fake values, each of its provider's current shape.
OPENAI = "sk-proj-" + "Zq7Lm2Xv9Pw4" * 3
BEARER = "tok3nV4lue9xyzABCdef"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PASSWORD = "hunter2hunter2XY"
HEAD, END = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
BODY = "MIIEpAIBAAKCAQEA7v9QxZ3kLm8Pq2Rs6Tv0Xy4Wb7Nc1Hd5Jf9Gk3Lp2Qm8Rn4"


# -- the prefilter ---------------------------------------------------------------------------------

# what secrets are made of: every pattern's anchors and the characters around them, whole secrets,
# and the characters a pattern that ignores case reads as an ASCII letter
_MATERIAL = [
    "sk-", "sk-ant-", "sk-proj-", "AKIA", "ASIA", "ghp_", "github_pat_", "glpat-", "AIza", "ya29.", "GOCSPX-",
    "xoxb-", "hooks.slack.com/services/", "sk_live_", "whsec_", "hf_", "npm_", "pypi-AgE", "gsk_", "xai-", "SK",
    "AC", "dapi", "SG.", ":AA", "eyJ", ".eyJ", "Bearer ", "bearer\t", "Authorization", "authorization: ",
    "Cookie: ", "set-cookie:", "aws_secret_access_key", "api-key", "Ocp-Apim-Subscription-Key", "api_key",
    "API_KEY", "_PASS", "_PW", "_AUTH", "token", "secret", "password", "pwd", "credential", "signature", "sig",
    "key", "auth", "?", "&", "=", ":", " = ", ": ", '"', "'", "[", "]", "\n", "\r\n", "\t", " ", "-", "_", ".", "/",
    "export ", "$", "${", "123456789", "0123456789abcdef" * 2, "Ab3dEf5hIj7lMn9pQr1t", "=" * 3,
    HEAD, END, "\nMIIE\n", OPENAI, BEARER, JWT, PASSWORD, "\u212a", "\u017f", "\u0131", "\u0130", "é", "\u00df",
]


@pytest.mark.slow
@settings(max_examples=examples(300, 2000))
@given(st.lists(st.one_of(st.sampled_from(_MATERIAL), st.text(max_size=6)), max_size=30).map("".join))
def test_the_prefilter_finds_what_the_full_scan_finds(text):
    assert list(find_secrets(text)) == _full_scan(text)


@pytest.mark.parametrize("text, kinds", [
    # a pattern that ignores case matches a Kelvin sign, a long s, a dotless i as k, s, i: the
    # prefilter looks for its anchors in the text folded so
    ("API_\u212aEY=Ab3dEf5hIj7lMn9pQr1t", ["env_assignment"]),
    ("db_pa\u017f\u017fword: r00tp4ss!x", ["credential_assignment"]),
    ("x-api-key: 0123456789abcdef0123456789abcdef", ["azure_api_key"]),
    ("Author\u0131zation: Bearer abcdef0123456789", ["authorization"]),
    ("\u0130 said token=abc12345xyz", ["credential_assignment"]),
    # after its anchor by up to 10 digits, a bot token; a bearer token after its B
    ("id 1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_", ["telegram_bot_token"]),
    ("curl -H 'Bearer abcdef0123456789'", ["bearer_token"]),
    # no anchor, no pattern run: no secret
    ("a long plain sentence of words without any of them " * 20, []),
])
def test_the_prefilter_keeps_every_match(text, kinds):
    assert [m.kind for m in find_secrets(text)] == kinds
    assert list(find_secrets(text)) == _full_scan(text)


def test_the_fold_reads_every_letter_as_a_pattern_that_ignores_case_does():
    letters = re.compile("(?i)[a-z]")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if not 0xD800 <= code <= 0xDFFF and letters.fullmatch(char):
            assert len(_fold(char)) == 1 and re.fullmatch(f"(?i){_fold(char)}", char), hex(code)
    assert _fold("A\u212a\u017f\u0131\u0130\u00c9") == "aksii\u00e9"


# -- secrets cut over the text parts of one message, the items of one list -------------------------

@pytest.mark.parametrize("texts, found", [
    (["use sk-proj-Zq7Lm2", "Xv9Pw4Zq7Lm2Xv9Pw4 now"], [("openai_api_key", [(0, 4, 18), (1, 0, 18)])]),
    (["Authorization: Bea", "rer tok3nV4", "lue9xyzABCdef\n"],
     [("authorization", [(0, 15, 18), (1, 0, 11), (2, 0, 13)])]),
    (["notes\nDB_PASSWORD=hunter2", "hunter2XY\nDEBUG=1"], [("env_assignment", [(0, 18, 25), (1, 0, 9)])]),
    # a secret whole in one string is that string's own; a private key is joined elsewhere
    ([f"use {OPENAI}", " and more"], []),
    ([HEAD + "\nMIIE", "pAIB\n" + END], []),
    (["one", "two"], []),
])
def test_cut_secrets_gives_each_secret_over_two_strings_or_more(texts, found):
    assert [(m.kind, parts) for m, parts in cut_secrets(texts)] == found


def _message(*blocks: str, kind: str = "user/message") -> dict:
    return {"type": kind, "seq": 1, "time": 1, "data": {"content": [{"type": "text", "text": b} for b in blocks]}}


def _counts(redactor: Redactor) -> dict[str, tuple[int, int]]:
    return {kind: (n, len(redactor.secret_values[kind])) for kind, n in redactor.secrets.items()}


_P = Placeholders(b"r5")


@pytest.mark.parametrize("blocks, kept, counts", [
    # an API key, a bearer value, a JWT and a .env line, each cut over content blocks: the parts of
    # the secret go, the rest of each block stays
    (["use sk-proj-Zq7Lm2", "Xv9Pw4Zq7Lm2Xv9Pw4 now"],
     ["use " + _P.plain("sk-proj-Zq7Lm2"), _P.plain("Xv9Pw4Zq7Lm2Xv9Pw4") + " now"], {"openai_api_key": (1, 1)}),
    (["curl -H 'Authorization: Bearer tok3nV4", "lue9xyzABCdef'"],
     ["curl -H 'Authorization: " + _P.plain("Bearer tok3nV4"), _P.plain("lue9xyzABCdef") + "'"],
     {"authorization": (1, 1)}),
    (["token: " + JWT[:30], JWT[30:70], JWT[70:]],
     ["token: " + _P.plain(JWT[:30]), _P.plain(JWT[30:70]), _P.plain(JWT[70:])], {"jwt": (1, 1)}),
    (["DEBUG=1\nDB_PASSWORD=hunter2", "hunter2XY\n"],
     ["DEBUG=1\nDB_PASSWORD=" + _P.plain("hunter2"), _P.plain("hunter2XY") + "\n"], {"env_assignment": (1, 1)}),
    # the first block alone holds a shorter secret of the same kind: the whole one counts, once
    (["Authorization: Bearer tok3nV4lue9", "xyzABCdef"],
     ["Authorization: " + _P.plain("Bearer tok3nV4lue9"), _P.plain("xyzABCdef")], {"authorization": (1, 1)}),
    # no secret over the parts: each as it is
    (["sk-", "is a prefix"], ["sk-", "is a prefix"], {}),
])
def test_a_secret_cut_over_the_blocks_of_a_kept_message_goes_and_counts_once(blocks, kept, counts):
    redactor = Redactor(_P, keep=frozenset({"system"}))
    out = redactor.record(_message(*blocks, kind="system/message"))
    assert [block["text"] for block in out["data"]["content"]] == kept
    assert _counts(redactor) == counts


def test_a_secret_cut_over_the_items_of_a_list_goes_and_counts_once_and_as_the_whole_value():
    redactor = Redactor(_P)
    record = {"type": "tool/result", "seq": 2, "time": 1,
              "data": {"lines": ["export OPENAI_API_KEY=sk-proj-Zq7Lm2", "Xv9Pw4Zq7Lm2Xv9Pw4", "; echo ok"]}}
    out = redactor.record(record)
    assert [len(line) for line in out["data"]["lines"]] == [36, 18, 9]
    assert not any(part in json.dumps(out) for part in ("Zq7Lm2", "Xv9Pw4", "OPENAI"))
    # the key whole in the message after: the same distinct value
    redactor.record(_message("key: sk-proj-Zq7Lm2Xv9Pw4Zq7Lm2Xv9Pw4"))
    assert _counts(redactor) == {"openai_api_key": (2, 1)}
    # a number or an image block between two strings parts them
    parted = Redactor(_P)
    parted.record({"type": "x", "seq": 3, "data": {"lines": ["sk-proj-Zq7Lm2", 1, "Xv9Pw4Zq7Lm2Xv9Pw4"]}})
    parted.record({"type": "x", "seq": 4, "data": {"content": [
        {"type": "text", "text": "sk-proj-Zq7Lm2"}, {"type": "image", "attachmentId": "a"},
        {"type": "text", "text": "Xv9Pw4Zq7Lm2Xv9Pw4"}]}})
    assert _counts(parted) == {}


def test_a_private_key_cut_over_blocks_is_one_distinct_value_with_the_same_key_whole():
    redactor = Redactor(_P)
    redactor.record(_message(f"{HEAD}\n{BODY}\n{END}"))  # whole
    redactor.record(_message(f"{HEAD}\n{BODY[:20]}", f"{BODY[20:]}\n{END}"))  # its body cut
    redactor.record(_message("x " + HEAD[:9], HEAD[9:] + "\n" + BODY[:7], BODY[7:30], BODY[30:] + "\n-----END RSA",
                             " PRIVATE KEY-----"))  # its BEGIN line, body and END line cut
    redactor.record(_message(f"{HEAD}\nMIIE", "pAIB", f"\n{END}"))  # another key, cut: counted once
    assert _counts(redactor) == {"private_key": (4, 2)}


# -- through the command line --------------------------------------------------------------------

BLOCKS = ["deploy with sk-proj-Zq7Lm2", "Xv9Pw4Zq7Lm2Xv9Pw4 and send -H 'Authorization: Bearer tok3nV4",
          "lue9xyzABCdef' with\nDB_PASSWORD=hunter2", "hunter2XY\nset"]
FRAGMENTS = ("Zq7Lm2Xv9Pw4", "sk-proj-Zq7Lm2", "Xv9Pw4Zq7Lm2Xv9Pw4", "tok3nV4", "lue9xyzABCdef", "hunter2hunter2XY")


def test_secrets_cut_over_the_content_blocks_of_a_message_are_gone_and_counted_once(tmp_path, monkeypatch, capsys):
    b = LogBuilder(session_id="s-round5")
    with b.turn([{"type": "text", "text": block} for block in BLOCKS]):
        with b.step():
            b.assistant("done")
    log = b.write_jsonl(tmp_path / "session.jsonl", packed=False)
    # inbox/spliced and user/message
    assert sum(log.read_text().count(json.dumps(block)[1:-1]) for block in BLOCKS) == 8
    out = tmp_path / "out.jsonl"
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "r5")
    assert (code, err) == (0, [short_salt("r5")])
    # each secret in the two records that write the message: 2 occurrences, 1 distinct value
    assert stdout.splitlines()[2:] == [
        "secrets removed: authorization 1 (2 occurrence(s)), env_assignment 1 (2 occurrence(s)), "
        "openai_api_key 1 (2 occurrence(s))", "verdicts of requests, breaks, cache: unchanged",
        f"a recipient verifies it with: dsh-audit redact --check {out}",
        f"and audits it with: dsh-audit check {out}"]
    manifest = json.loads(Path(f"{out}.manifest.json").read_text())
    assert manifest["secrets"] == {kind: {"occurrences": 2, "distinct": 1}
                                   for kind in ("authorization", "env_assignment", "openai_api_key")}
    data = out.read_text()
    assert [f for f in FRAGMENTS if f in data] == []


# -- the memos ------------------------------------------------------------------------------------

def _read_all(redactor: Redactor, texts: list[str]) -> list[str]:
    out = []
    for text in texts + texts:
        out.append(redactor.content(text))
        out.append(redactor.keep_text(text))
        redactor.count(text.replace('"', "'"))
    return out


def test_the_memos_hold_at_most_their_characters(monkeypatch):
    texts = [f'{{"api_key": "Zx9Yw8Vu7Ts6{n:02}"}} and sk-proj-{"Ab3dEf5hIj" * 3}' for n in range(10)]
    long = "x" * 301 + " sk-proj-" + "Ab3dEf5hIj" * 3
    unbounded = Redactor(_P)
    expected = _read_all(unbounded, texts + [long])
    assert unbounded._kept_chars == sum(2 * len(text) for text in texts) + 2 * len(long)
    monkeypatch.setattr(_counting, "_MEMO_CHARS", 300)
    redactor = Redactor(_P)
    assert _read_all(redactor, texts + [long]) == expected
    assert 0 < redactor._kept_chars <= 300 and 0 < redactor._scanned_chars <= 300
    assert redactor._kept_chars == sum(len(text) + len(done[0]) for (text, _), done in redactor._kept_texts.items())
    assert redactor._scanned_chars == sum(map(len, redactor._scanned))
    # a text longer than the bound is read, not remembered; the counts are those of every reading
    assert (long, None) not in redactor._kept_texts and long not in redactor._scanned
    assert _counts(redactor) == _counts(unbounded)
    assert redactor.secrets["openai_api_key"] == 3 * 22 and len(redactor.secret_values["openai_api_key"]) == 1
