"""Placeholders drawn in bulk are the placeholders drawn byte by byte (session 31).

The ASCII runs of a text are drawn a batch at a time, JSON string tokens are re-encoded a run of raw
characters at a time, object keys are read from flat arrays, and a captured string that diverges from
the render finds the divergence a block at a time. None of it may change an output byte: placeholders
are part of the contract (docs/redact.md). The values pinned here were made by the code before that
change (byte by byte), on large and mixed inputs that reach every path (runs longer and shorter than a
batch, line breaks, leading spaces, multi-byte characters, lone surrogates, session ids, escapes). Not a
timing test.
"""

from __future__ import annotations

import hashlib
import json

from dsh_audit.redact import Placeholders
from dsh_audit.redact._bodies import LogRedactor, redact_body
from dsh_audit.redact._json_text import reencode, rewrite_keys

SALT = b"speed31"
SESSION = "session-0b6f6a0e-4f2c-4a55-9d3e-2b1c5f7e8a90"


def _sha(text: str | bytes) -> str:
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:24]


def _mixed(size: int) -> str:
    """A deterministic text of about ``size`` characters: long and short ASCII runs, every line break,
    separators, quotes, controls, leading spaces, two-, three- and four-byte characters, surrogates."""
    pieces = ["  lead", "word", "a" * 70_000, "/path/to/file.py", '"quoted" \\back', "\ttab", "x" * 23, "y" * 24,
              "z" * 25, "\n", "\r\n", "\v\f\x1c\x1d\x1e", "\x85", "\u2028", "\u2029", "caf\u00e9", "\u2713 ok",
              "\U0001f600", "\ud800", "\udc00", "\u3000\ufeff", "\x00\x1f\x7f", "{\"k\": [1, 2]}", " " * 30,
              SESSION, "end of line " * 5]
    out = [" \u3000\t\ufeff"]  # blank up to here: kept with ``blank``
    seed = 31
    total = len(out[0])
    while total < size:
        seed = (seed * 1_103_515_245 + 12_345) % 2**31
        piece = pieces[seed % len(pieces)]
        if len(piece) > 1000 and total + len(piece) > size:
            piece = piece[:size - total]
        out.append(piece)
        total += len(piece)
    return "".join(out)


def test_short_placeholders_pinned():
    p = Placeholders(SALT)
    p.keep_identifiers([SESSION])
    assert [p.plain(t) for t in ("hello world", "  two  spaces/ok\nnext line", "caf\u00e9 \u2713 \U0001f600!",
                                 f"see {SESSION} there", '"q" \\ \t\x00\x7f')] == [
        "iiUx8~U52jH", "}(rj3]&jOdwIM/EO\noR9Z~p5Vd", "dYn\u0161|\uf919~\U0002906b'",  # session 37: C2 alone
        f"tQ5`{SESSION}@rzVWO", '"b"#\\\'\x08\x1a]']  # session 37: DEL is drawn as ``~`` (no DEL in a placeholder)
    assert p.plain(" \u3000 x", blank=True) == " \u3000 T"
    assert p.plain("a\nb\nc" * 3, lines=False) == "b\x0cg\t8c\tt\tXV\rg\tU"
    assert p.text('{"k": "value", "n": [1, "two"]}') == '{"k": "wfNkE", "n": [1, "uEW"]}'


def test_large_placeholders_pinned():
    p = Placeholders(SALT)
    p.keep_identifiers([SESSION])
    text = _mixed(300_000)
    assert _sha(text) == "cb1facddb9612fc5ceabdf2a"  # the input itself
    assert [_sha(p.plain(text, blank=blank, lines=lines)) for blank in (False, True) for lines in (True, False)] == [
        # session 37: DEL and a character a terminal acts on are drawn as a stand-in, and the lead byte C2 is alone
        # in its class (its C1 controls never drawn), so two-byte characters move among C3..DF
        "8306117e63e661198caaf997", "882863bc5a7de50b349b7f99", "c014dff85a1682cf8b01c2b2", "0af917680969ce90e9b806b1"]
    assert _sha(p.plain("a" * 200_000)) == "3bae9e10af5a8290098f6092"


def test_reencode_pinned():
    new = "\u00e9x\U0001f600/\"y\n"
    assert [reencode(token, new) for token in (
        json.dumps(new), json.dumps(new, ensure_ascii=False), '"\\u00E9x\\uD83D\\uDE00\\/\\"y\\n"',
        '"abcdefg"', '"\\u00e9x\\ud83d\\ude00/\\"y"')] == [
        '"\\u00e9x\\ud83d\\ude00/\\"y\\n"', '"\u00e9x\U0001f600/\\"y\\n"',
        '"\\u00E9x\\uD83D\\uDE00\\/\\"y\\n"',  # a ``\\/`` form holds the new ``/`` as it held the old
        '"\u00e9x\U0001f600/"y\n"',  # raw where the original was raw (the placeholder's class would keep it JSON)
        '"\u00e9x\U0001f600/\\"y\\n"']  # one character short: as ``JSON.stringify`` writes it
    long = "r" * 100_000
    assert reencode('"' + "a" * 100_000 + '"', long) == '"' + long + '"'


def test_rewrite_keys_pinned():
    text = json.dumps({"model": "m", "messages": [{"role": "user", "content": "a"}] * 2000,
                       "sk-ant-api03-abcdefghijklmnopqrstuv": {"sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX": 1, "b": 2}})
    out = rewrite_keys(text, Placeholders(SALT).keys)
    assert out[:-103] == text[:-103]
    assert out[-103:] == ('ontent": "a"}], "tW=BVg,3JvZh^f3XlU7iPAG4jYMaBRFATCB": '
                          '{"tW=Qi2a!MNhN15TqasibKVxWCzXVkBri": 1, "b": 2}}')


def test_capture_body_pinned():
    """A captured body of many messages and a long string that diverges from the render."""
    content = "".join(f"line {n}: the quick brown fox\n" for n in range(4000))
    body = json.dumps({"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "hi"}] * 3000
                       + [{"role": "user", "content": content}]}).encode()
    path = ("messages", 3000, "content")
    original = {path: content[:50_000] + "DIFFERENT" + content[50_009:]}
    redactor = LogRedactor(Placeholders(SALT))
    redacted = {path: redactor.content(original[path])}
    out = redact_body(body, redactor, original, redacted)
    assert len(out) == len(body) and redactor.strings == 3002
    assert out[:120] == (b'{"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "im"}, '
                         b'{"role": "user", "content": "im"}, {"role')
    value = json.loads(out)["messages"][3000]["content"]
    assert value[:50_000] == redacted[path][:50_000] and value[50_000] != redacted[path][50_000]
    assert _sha(out) == "dcb08bf4bcfc2a6150883359"
