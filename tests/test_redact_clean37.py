"""Session 37, issue 17: redacted text is clean text.

No placeholder holds a character a terminal or an editor acts on rather than shows (C1 controls, DEL,
bidi overrides and isolates, zero-width and other format characters) unless the original held that very
character there and it stays by design (a line break, a space a text starts with); a C0 control stays a
C0 control (one UTF-8 byte that ``JSON.stringify`` writes as six: no other character keeps both lengths,
and break offsets are measured on them), but not in a header's ``cwd`` or a session title, which no
verdict measures: those hold no control character at all.
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pytest

from dsh_audit.jsjson import stringify
from dsh_audit.redact import Placeholders, check_bundle, redact
from dsh_audit.redact._shifts import LINE_BREAKS, _SPACES

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live"
_BIDI = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
# characters a terminal or an editor acts on (DEL, C1, format and bidi controls), one or more of each width
HOSTILE = ["\x7f", "\x85", "\x9b", "\xad", "\u061c", "\u200b", "\u200e", "\u202e", "\u2066", "\u2069", "\ufeff",
           "\ufff9", "\U000110bd", "\U0001d173", "\U000e0001", "\U000e0041"]
TEXTS = ["/tmp/\x1b[2Jproj\u202e/x\x07", "plain \u202egnp.exe\u202c done", "\x9b31m red \x9b0m \x85 next",
         "a\u200b\u200c\u200db\ufeffc\u2060d", "\u2066isolate\u2069 \u061c\u200e\u200f", "tag\U000e0041\U000e007f",
         "\x1b]8;;http://x\x07link\x1b]8;;\x07", "\ufeff\ufeffstarts blank-ish\x7f", "x" + "".join(HOSTILE) * 3,
         "\u00ad\u0600\u06dd\u070f\u0890\u08e2\u180e\u2064\ufffb\U00013430\U0001bca0"]


def _acts(ch: str) -> bool:
    """A control (Cc), format (Cf) or bidi control character."""
    return unicodedata.category(ch) in ("Cc", "Cf") or unicodedata.bidirectional(ch) in _BIDI


def _stays(text: str, at: int) -> bool:
    """Whether the character at ``at`` of ``text`` stays itself by design: a line break, or a space
    before the text's first character that is no space."""
    return text[at] in LINE_BREAKS or all(ch in _SPACES for ch in text[:at + 1])


def _unclean(text: str, out: str) -> list[int]:
    """Where ``out`` (the placeholder of ``text``, of the same length in characters) holds a character
    that acts and is no C0 control for a C0 control, nor a character that stays."""
    assert len(out) == len(text)
    return [at for at, ch in enumerate(out) if _acts(ch)
            and not (ch < " " and text[at] < " ") and not (ch == text[at] and _stays(text, at))]


@pytest.mark.parametrize("salt", [b"salt", b"another", b"37"])
def test_placeholders_hold_no_acting_character(salt):
    p = Placeholders(salt)
    for text in TEXTS:
        for out in (p.text(text), p.plain(text), p.plain(text, lines=False), p.plain(text, blank=True)):
            assert _unclean(text, out) == []
            assert len(out.encode("utf-8")) == len(text.encode("utf-8"))
            assert len(stringify(out)) == len(stringify(text))
            assert len(stringify(stringify(out))) == len(stringify(stringify(text)))  # inside tool arguments
    # every character that acts, after every prefix a text of them makes, and alone
    for ch in HOSTILE:
        assert _unclean(ch, p.plain(ch)) == _unclean("ab" + ch, p.plain("ab" + ch)) == []
        assert (p.plain(ch) == ch) is (ch in LINE_BREAKS)  # U+0085 (NEL) is a line break: it stays


def test_acting_characters_pinned():
    p = Placeholders(b"salt")
    assert p.plain("\u202e\x9b\u200b\x7f") == "\u10f1\xb1\u5a37:"
    # an acting character gets its stand-in's placeholder (the next character that acts not: U+00A1, U+2030...)
    assert p.plain("x\x9b") == p.plain("x\xa1") and p.plain("x\u202e") == p.plain("x\u2030")
    assert p.plain("x\x7f") == p.plain("x~")
    assert p.plain("x\x9by") != p.plain("x\xa1y")  # the next character is drawn after the original's prefix
    # a C1 control keeps its lead byte C2 (alone in its class): its placeholder first differs from one of U+00A2
    # (C2 A2) at the second byte, as the texts did
    assert [p.plain(t).encode()[:1] for t in ("\x80", "\xa2", "\xa9")] == [b"\xc2"] * 3
    # C0 controls stay among themselves (lengths), tab and backspace swap as before
    assert p.plain("\x1b\x07\t") == "\x1a\x17\x08"


def _hostile_log(tmp_path: Path, name: str, replace: str, by: str) -> Path:
    """A copy of the live corpus session ``name`` with every ``replace`` (in any string) made ``by``, a
    header ``cwd`` and session titles that hold ESC, BEL, C1 and bidi controls."""
    (source,) = (CORPUS / name / "session-logs").glob("*.jsonl")
    lines = []
    for line in source.read_text(encoding="utf-8").split("\n")[:-1]:
        record = json.loads(line.replace(replace, by))
        if record.get("type") == "session":
            record["cwd"] = "/tmp/\x1b[2Jproj\u202e/x\x07\u0085/\u2028\x1f"
        elif record.get("type") == "session/title":
            record["data"]["title"] = "\x1b]0;pwned\x07 \u202etitle\x9b\x7f\u200b\n\t"
        lines.append(json.dumps(record, ensure_ascii=False))
    log = tmp_path / name / source.name
    log.parent.mkdir()
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


def _strings(value, path=()):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k, path + ("<key>",))
            yield from _strings(v, path + (k,))
    elif isinstance(value, list):
        for n, v in enumerate(value):
            yield from _strings(v, path + (n,))


@pytest.mark.parametrize(("name", "replace"), [("a-chat", "Who are you"), ("b-tools", "hello.txt")])
def test_bundle_strings_are_clean(tmp_path, name, replace):
    # raw characters that need no JSON escape, so the replacement is valid at every depth (tool arguments)
    by = "he\u202el\x7flo\u200b\x9b[31m\u2066.t\xadxt\ufeff\U000e0041"
    log = _hostile_log(tmp_path, name, replace, by)
    out = tmp_path / "out" / log.name
    out.parent.mkdir()
    result = redact(log, out, salt=b"clean37")
    assert result.mismatched == ()
    assert check_bundle(out).ok
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n")[:-1]]
    originals = [json.loads(line) for line in log.read_text(encoding="utf-8").split("\n")[:-1]]
    header, titles = records[0], [r["data"]["title"] for r in records if r["type"] == "session/title"]
    # no verdict measures the cwd nor a title: no control, format or bidi character at all
    assert [ch for ch in header["cwd"] + "".join(titles) if _acts(ch)] == []
    assert header["cwd"].count("/") == 4 and header["cwd"].startswith("/")
    assert len(titles) == len([r for r in originals if r["type"] == "session/title"]) >= 1
    held = 0
    for before, after in zip(originals, records, strict=True):
        pairs = dict(_strings(before))
        for path, text in _strings(after):
            original = pairs.get(path)
            if original is None or original == text or len(original) != len(text):
                continue  # a kept or renamed key, a kept structural string
            held += by in original
            assert _unclean(original, text) == [], (path, original, text)
    assert held >= 2  # the hostile text was replaced, in messages and (b-tools) tool arguments and paths
    assert by not in out.read_text(encoding="utf-8")


def test_cwd_redaction_reproduced(tmp_path):
    """The tour's finding: the redacted cwd held ``\\u0003`` and ``\\u0017``."""
    shutil.copytree(CORPUS / "a-chat" / "session-logs", tmp_path / "logs")
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    lines = log.read_text(encoding="utf-8").split("\n")[:-1]
    header = json.loads(lines[0])
    header["cwd"] = "/tmp/\x1b[2Jproj\u202e/x\x07"
    log.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    redact(log, out, salt=b"s")
    cwd = json.loads(out.read_text(encoding="utf-8").split("\n")[:-1][0])["cwd"]
    assert cwd == "/5ZQ/F]fEFwKs\u8437/96"
