"""A private key block cut over several strings: what of each string is its body.

A private key block runs from its ``-----BEGIN ... PRIVATE KEY-----`` line to its END line, or to
the end of the text when none follows. Split over several strings (the lines of a key as a JSON
array, two content blocks, a truncated key whose body is in the next string, streamed chunks
quoted as a JSON array), the strings after its header that read as key body (:func:`key_body`:
base64 lines, PEM header lines) continue it: :func:`private_key_open` tells a text that leaves a
block open. Its BEGIN line may itself be cut over any number of consecutive strings
(:func:`split_tail`, :func:`split_private_key`), and so may its END line: the strings up to an END
line, whole or cut, that read as pieces of a key (:func:`key_end`) are its body, however short.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._patterns import PEM_BEGIN, PEM_END

__all__ = ["key_body", "key_end", "key_piece", "key_start", "private_key_cut", "private_key_end", "private_key_open",
           "split_private_key", "split_tail"]

_BEGIN = re.compile(PEM_BEGIN)
_END = re.compile(PEM_END)
_BREAK = re.compile(r"\r\n|[\n\r]|\\n|\\r\\n")  # a line break, or one written as a ``\n`` escape in raw text
_MIXED = re.compile(r"(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9+/]).*", re.S)
_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Comment|Version|Hash)[ \t]*:[^\r\n]*")


def key_body(text: str) -> tuple[int, bool] | None:
    """How much of ``text`` reads as the body of a private key block (base64 lines, PEM header lines
    such as ``Proc-Type:``, blank lines), up to its END line when it holds one: that length and
    whether the END line follows; None when a line before that reads as something else (prose), or
    when, without an END line, what it holds does not look like key material (base64 mixes upper and
    lower case letters with digits or ``+``/``/``, or ends in ``=`` padding: ``thanks`` and
    ``/home/dev/project`` are no key).

    Example:
        >>> key_body("MIIEabc+/=\\\\nQUJD\\n"), key_body("QUJD\\n-----END RSA PRIVATE KEY-----\\nok")
        ((17, False), (5, True))
        >>> key_body("hello world"), key_body("thanks"), key_body("/home/dev/project"), key_body("AbC="), key_body("")
        (None, None, None, (4, False), (0, False))
    """
    end = _END.search(text)
    body = text if end is None else text[:end.start()]
    material = []
    for line in _BREAK.split(body):
        line = line.strip(" \t")
        if line and _BODY_LINE.fullmatch(line) is None:
            return None
        material.append(line)
    found = "".join(material)
    if end is None and found and not (found.endswith("=") or ":" in found or _MIXED.fullmatch(found)):
        return None  # one word, a path: no key material without its END line
    return len(body), end is not None


def key_start(text: str) -> int | None:
    """Where the body of the last private key block of ``text`` starts, when no END line follows its
    BEGIN line (None: none is left open): what of it ``text`` holds, ``text[key_start(text):]``, is
    the ``v`` of its ``private_key`` match (which runs to the end of the text).

    Example:
        >>> key_start("key:\\n-----BEGIN RSA PRIVATE KEY-----\\nMIIE"), key_start("no key")
        (36, None)
    """
    last = None
    for last in _BEGIN.finditer(text):
        pass
    return None if last is None or _END.search(text, last.end()) is not None else last.end()


def private_key_open(text: str) -> int | None:
    """Where the body of a private key block that ``text`` leaves open starts: its last BEGIN line,
    with no END line after it and nothing but key body (:func:`key_body`) after that; None when
    ``text`` leaves none open. A later string that reads as key body continues that block.

    Example:
        >>> private_key_open("key:\\n-----BEGIN RSA PRIVATE KEY-----")
        36
        >>> private_key_open("-----BEGIN RSA PRIVATE KEY-----\\nab c") is None  # prose after the header
        True
    """
    last = None
    for last in _BEGIN.finditer(text):
        pass
    if last is None:
        return None
    found = key_body(text[last.end():])
    return last.end() if found is not None and not found[1] else None


#: How much of the end of the strings before one may hold the start of a BEGIN (or END) line that
#: this string ends (the longest such line is shorter).
_SPLIT = 64
_HEADER_CHARS = frozenset("-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")
# What a piece of a private key block between its BEGIN and END lines may hold, cut anywhere: base64,
# line breaks (a ``\\n`` escape too), the characters of PEM header lines (``Proc-Type: 4,ENCRYPTED``)
# and of a cut END line
_PIECE = re.compile(r"[A-Za-z0-9+/=:, \t\r\n\\-]*")


def private_key_end(text: str) -> int | None:
    """Where the first END line of a private key block in ``text`` starts (None: it holds none).

    Example:
        >>> private_key_end("QUJD\\n-----END RSA PRIVATE KEY-----\\n"), private_key_end("-----END RSA PRIV")
        (5, None)
    """
    end = _END.search(text)
    return None if end is None else end.start()


def key_piece(text: str, start: int = 0) -> bool:
    """Whether ``text`` from ``start`` reads as a piece of a private key block cut anywhere, between
    its BEGIN and END lines (:func:`key_end`): base64, line breaks, the characters of PEM header lines
    and of a cut END line, however short.

    Example:
        >>> key_piece("MIIE"), key_piece("Ab\\nCd=="), key_piece("-----END RSA PRIV"), key_piece("that's all")
        (True, True, True, False)
    """
    return _PIECE.fullmatch(text, start) is not None


def private_key_cut(text: str) -> bool:
    """Whether ``text`` leaves a private key block open as a piece of one (:func:`key_end`): its last
    BEGIN line has no END line after it and nothing but what a piece of a key holds, however short
    (``"-----BEGIN RSA PRIVATE KEY-----\\nMIIE"``, which :func:`private_key_open` does not call key
    material alone). Whether the block runs on is then for the strings after it to say (an END line).

    Example:
        >>> private_key_cut("-----BEGIN RSA PRIVATE KEY-----\\nMIIE")
        True
        >>> private_key_cut("-----BEGIN RSA PRIVATE KEY----- ok!"), private_key_cut("no key")
        (False, False)
    """
    last = None
    for last in _BEGIN.finditer(text):
        pass
    return last is not None and _END.search(text, last.end()) is None and key_piece(text, last.end())


def split_tail(tail: str, text: str) -> str:
    """What :func:`split_private_key` needs of the consecutive strings up to ``text`` (``tail``: what
    it needed of those before it, ``""`` for none): the end of them joined, as far back as a BEGIN
    (or END) line that runs into the next string may start. A BEGIN line holds no character that
    parts it, so a line cut over any number of strings is found in the joined end of them; keeping
    only that end keeps the work of each string bounded, however many there are.

    Example:
        >>> tail = ""
        >>> for piece in ("note: -----BEG", "IN", " RSA PRIV"):
        ...     tail = split_tail(tail, piece)
        >>> tail, split_tail(tail, "no key")
        ('note: -----BEGIN RSA PRIV', '')
    """
    if not text:
        return tail
    if text[-1] not in _HEADER_CHARS:  # no BEGIN or END line runs on past this string
        return ""
    return (tail + text[-_SPLIT:])[-_SPLIT:]


def split_private_key(before: str, text: str) -> tuple[int, int, bool] | None:
    """The body of a private key block whose BEGIN line starts at the end of ``before`` (the end of
    the consecutive strings before ``text``, joined: :func:`split_tail`; items of a list, content
    blocks) and ends in ``text`` (``"-----BEGIN RSA PRIV"``, ``"ATE KEY-----\\nMIIE..."``; or
    ``"-----BEG"``, ``"IN RSA PRIV"``, ``"ATE KEY-----\\nMIIE..."``): where it starts and ends in
    ``text`` (at its END line, or at the end of ``text``) and whether its END line is there; None
    when no BEGIN line runs across into ``text``.

    Example:
        >>> split_private_key("key: -----BEGIN RSA PRIV", "ATE KEY-----\\nMIIEab\\n-----END RSA PRIVATE KEY-----")
        (12, 20, True)
        >>> split_private_key(split_tail(split_tail("", "-----BEG"), "IN RSA PRIV"), "ATE KEY-----\\nMIIE")
        (12, 17, False)
        >>> split_private_key("-----BEGIN EC PRIVATE KEY-----", "MHcC"), split_private_key("a -", "-- b")
        (None, None)
    """
    tail = before[-_SPLIT:]
    if not tail or tail[-1] not in _HEADER_CHARS:  # no BEGIN line can be cut here
        return None
    joined = tail + text[:_SPLIT]
    for match in _BEGIN.finditer(joined):
        if match.start() < len(tail) < match.end():
            start = match.end() - len(tail)
            end = _END.search(text, start)
            return start, len(text) if end is None else end.start(), end is not None
    return None


def key_end(texts: Iterable[str], tail: str = "") -> int | None:
    """How many of ``texts`` (the strings after the one where a private key block's BEGIN line ends,
    in order; ``tail``: that string's :func:`split_tail`, where an END line may start) its body runs
    over, up to and including the string its END line ends in (the line whole in one string, or cut
    over consecutive ones): when every string before that line reads as a piece of a key, cut
    anywhere (base64, line breaks, PEM header lines: however short, ``"MIIE"``, ``"Ab"``); None when a
    string that does not (prose), or the end of ``texts``, comes first. It reads each string once, and
    stops there.

    Example:
        >>> key_end(["MIIE", "pAIB\\nAAK", "CAQ==\\n-----END RSA PRIV", "ATE KEY-----", "thanks"])
        4
        >>> key_end(["MIIE", "pAIB", "that's all", "-----END RSA PRIVATE KEY-----"]), key_end(["MIIE", "pAIB"])
        (None, None)
    """
    for n, text in enumerate(texts):
        end = _END.search(text)
        if end is not None:
            return n + 1 if key_piece(text[:end.start()]) else None
        if tail:
            head = tail + text[:_SPLIT]
            if any(match.start() < len(tail) < match.end() for match in _END.finditer(head)):
                return n + 1
        if not key_piece(text):
            return None
        tail = split_tail(tail, text)
    return None
