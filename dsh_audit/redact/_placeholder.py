"""Deterministic, salted, prefix-preserving placeholders that keep every length a break depends on.

A placeholder replaces each character of a text by another of the same *class*, so every UTF-8
byte length and every ``JSON.stringify`` escaped length stays: letters and digits among
themselves, other printable ASCII (space included) among itself, ``"`` and ``\\`` between
themselves, the five short-escaped controls among themselves (so a JSON text inside a JSON
string, such as tool arguments, keeps its length too), other controls among themselves, and two-, three- and
four-byte characters and each half of a lone surrogate within their own range. No placeholder holds a DEL or
a character a terminal or an editor acts on (C1 controls, bidi overrides and isolates, zero-width and other
format characters: :func:`._shifts._shown`) but where the text held that very character and it stays (a line
break, a space a text starts with): such a character is drawn as its stand-in (``~`` for DEL, else the next
character of its width that acts not: :func:`._shifts._stand_in`), at the cost that the two, after the same
prefix, get the same placeholder; the lead byte C2 is alone in its class (as E0 is), so a C1 control keeps it.
A C0 control stays a C0 control (one UTF-8 byte that ``JSON.stringify`` writes as six: no printable character
keeps both lengths, and break offsets are measured on them), but in a header's ``cwd`` and a session title,
which no verdict measures (:func:`._shifts.printable`).

Each UTF-8 byte is shifted, within the bytes UTF-8 allows at its place in its character, by a
non-zero amount drawn from a BLAKE2b hash of the bytes *before* it, keyed by a slow scrypt of the salt
(:mod:`._derivation`: each guess at a salt costs one) (prefix-preserving anonymisation, as Crypto-PAn does for IP addresses). So equal texts get equal
placeholders, two texts that share a prefix share the placeholder of that prefix and first
differ at exactly the byte where they did (break offsets stay; at the character, for the first
non-space multi-byte character of a text, whose placeholder may walk past the spaces of its class, and
where one walks past a character that acts), different texts always get different placeholders (each byte
is a bijection given its prefix; but for a character that acts and its stand-in), and no
ASCII character is left in place but the spaces a text starts with, path separators and line breaks.
The prefix is that of the line: every line break (:data:`._shifts.LINE_BREAKS`, as ``str.splitlines`` splits)
stays itself, no other character becomes one, and the hash starts again after it, so the lines two
versions of a system prompt share keep equal placeholders and a line diff of them its hunks. Without
the salt the shifts say nothing; with many texts, the first character of each line is a fixed
substitution (every line has the same, empty, prefix there), and equal lines show as equal.

Session ids (:meth:`Placeholders.keep_identifiers`: the log's own, its parent's, its children's) are
identifiers, not content: a text that holds one keeps it verbatim in place, its placeholder built
around it, so a parent's tool result that names its child's session still names it (``breaks`` dates
a subagent's spawn by that first mention). Only a string of the shape DSH gives a session id
(:data:`._plain.SESSION_ID`: a UUID, or 32 hex digits, after an optional prefix such as ``session-``) is one.

What is kept on purpose: whitespace-only texts (renderers drop them, so the verdict depends on
it), the spaces a content text starts with (so that a text is blank for JavaScript's ``trim`` and
Python's ``isspace`` exactly when its placeholder is: :meth:`Placeholders.plain` ``blank``) and JSON
structure inside texts that are JSON objects or arrays (keys, numbers, literals and
layout stay; string values are replaced), so tool arguments still parse to objects of the same
shape. An object key that holds a secret is the exception: the secret in it is replaced in place
(:meth:`Placeholders.keys`, :func:`._json_text.rewrite_keys`), keeping the key's lengths and the object's keys
distinct.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterable

from ._json_secrets import _KeyEnds, _key_run, _member_keys, _split_keys, context_secrets
from ._json_text import _SHORTEST_SECRET, _TOKEN, _char_starts, _json_text, _skeleton_only, reencode, rewrite_keys
from ._plain import PlainPlaceholders
from ._secrets import SecretMatch, find_secrets, private_key_closed, scrub
from ._shifts import _ALNUM

__all__ = ["Placeholders"]


def _free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether the span ``start:end`` overlaps none of ``taken`` (spans in order, no two overlapping).

    Example:
        >>> _free([(0, 4), (10, 12)], 4, 10), _free([(0, 4), (10, 12)], 3, 5), _free([(0, 4), (10, 12)], 11, 20)
        (True, False, False)
    """
    at = bisect.bisect_left(taken, (end,))  # the spans that start before ``end``; the last ends last
    return at == 0 or taken[at - 1][1] <= start


class _Overlaps:
    """Which of ``spans`` overlap each of a series of ranges of a text asked in order (each range
    starting where or after the one before ended, as :meth:`Placeholders._strings` reads the pieces of a
    text): a sweep, so each span is looked at when the ranges reach it and dropped once they pass it,
    and a text of many strings and many secrets is read in linear time, not each string against every
    span.

    Example:
        >>> sweep = _Overlaps([(5, 9), (0, 2), (1, 30)])
        >>> sweep.between(0, 3), sweep.between(3, 6), sweep.between(10, 12), sweep.between(40, 41)
        ([1, 2], [0, 2], [2], [])
    """

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self._spans = spans
        self._order = sorted(range(len(spans)), key=lambda n: spans[n][0])
        self._next = 0
        self._active: list[int] = []

    def between(self, start: int, end: int) -> list[int]:
        """The numbers of the spans that overlap ``start:end`` (or hold the point ``start`` when the
        range is empty), in order."""
        spans, order = self._spans, self._order
        while self._next < len(order) and spans[order[self._next]][0] < end:
            self._active.append(order[self._next])
            self._next += 1
        self._active = [n for n in self._active if spans[n][1] > start]
        return sorted(n for n in self._active if spans[n][0] < end)


class Placeholders(PlainPlaceholders):
    """Placeholders for one redaction: one salt.

    Example:
        >>> p = Placeholders(b"salt")
        >>> a, b = p.text("hello world"), p.text("hello there")
        >>> a == p.text("hello world"), len(a.encode()) == 11, a[:6] == b[:6], a[6] != b[6]
        (True, True, True, True)
    """

    def keys(self, names: Iterable[str]) -> dict[str, str]:
        """The new name of each key of one object that holds a secret (other keys stay): the key
        with each secret in it replaced by its placeholder, of the same lengths. The new names are
        distinct from each other and from the keys that stay, whatever the order of ``names``.

        Example:
            >>> p = Placeholders(b"salt")
            >>> renamed = p.keys(["env", "sk-ant-api03-abcdefghijklmnopqrstuv"])
            >>> list(renamed), len(renamed["sk-ant-api03-abcdefghijklmnopqrstuv"])
            (['sk-ant-api03-abcdefghijklmnopqrstuv'], 35)
        """
        unique = set(names)
        spans = {name: [(m.start, m.end) for m in find_secrets(name)] for name in unique}
        taken = {name for name in unique if not spans[name]}
        renamed: dict[str, str] = {}
        for name in sorted(unique - taken):
            new = scrub(name, self.plain)
            start, end = spans[name][-1]
            new = self._distinct(new, start, end, taken)
            taken.add(new)
            renamed[name] = new
        return renamed

    def _distinct(self, new: str, start: int, end: int, taken: set[str]) -> str:
        """``new``, or when another key already has that name, ``new`` with characters of its secret
        span ``start:end`` moved on within their class (lengths kept) until no key has it."""
        candidate = new
        for i in range(end - 1, start - 1, -1):
            candidate = new
            for _ in range(len(_ALNUM)):
                if candidate not in taken:
                    return candidate
                candidate = candidate[:i] + self.other_than(candidate[i], candidate[i]) + candidate[i + 1:]
        return candidate

    def kept(self, text: str, found: Callable[[str, str], None] | None = None, *, key: str | None = None) -> str:
        """A kept text (``--keep``, structural strings): ``text`` with each secret in it replaced by its
        :meth:`plain` placeholder, every other character kept; ``found(kind, secret)`` is told of each.

        Each JSON string in the text (all of JSON object or array text, or a quoted string of other text that
        reads as one) is read as :meth:`json` reads a value: its secrets are looked for in the string as read
        (escapes decoded, so a secret written with ``\\uXXXX`` or ``\\/`` escapes is found; JSON text inside it
        is read the same way, at any depth), replaced there, and the string written back in its original's
        escape forms (:func:`._json_text.reencode`; a character written ``\\/`` stays ``/``), so every length
        stays and the JSON stays valid. A secret found only with what surrounds a string (``"api_key": "..."``,
        an ``Authorization`` header) is replaced inside the string, the rest as written. In JSON object or array
        text a secret inside an object key is replaced as every key is (:func:`._json_text.rewrite_keys` with
        :meth:`keys`), so the object's keys stay distinct whatever their order. How a string is read depends on
        the string alone, not on what follows it, so two texts that share a prefix keep sharing it up to the
        string where they part.

        A string that is the value of an object member (of the JSON, or of a record: ``key``) is also read with
        its key, as :func:`._json_secrets.context_secrets` reads it, so a key written ``"Author\\u0069zation"``
        gives its value the same context as ``"Authorization"``. A private key block that starts inside a JSON
        string ends with that string, unless its ``-----END`` line is in a later string (a key written as an
        array of lines): then every string up to that line goes, and the JSON between them stays. Without an END
        line, a block its string leaves open (:func:`._pem.private_key_open`) goes on over the value strings
        after it that read as key body (:func:`._pem.key_body`), up to the first that does not (prose
        stays), and counts once. A BEGIN line cut over any number of consecutive value strings
        (:func:`._json_secrets._split_keys`) opens a block in the string that ends it, and a block whose next
        strings read as pieces of a key, however short, up to an END line (whole or cut over strings:
        :func:`._pem.key_end`) takes them all; each string is read once (:class:`._json_secrets._KeyEnds`).

        Example:
            >>> p = Placeholders(b"salt")
            >>> text = '{"sk-ant-api03-abcdefghijklmnopqrstuv": 1, "env": 2}'
            >>> kept = p.kept(text)
            >>> kept.endswith('": 1, "env": 2}'), len(kept) == len(text), "abcdefghijklmn" in kept
            (True, True, False)
            >>> nested = json.dumps({"args": json.dumps({"token": "abc\\u00e9defgh", "n": 1})})
            >>> print(nested)
            {"args": "{\\"token\\": \\"abc\\\\u00e9defgh\\", \\"n\\": 1}"}
            >>> print(p.kept(nested))
            {"args": "{\\"token\\": \\"QrX\\\\u0339s3NYf\\", \\"n\\": 1}"}
        """
        return self._kept(text, found, (), key)[0]

    def _kept(self, text: str, found: Callable[[str, str], None] | None,
              around: Iterable[tuple[int, int, int]], key: str | None = None) -> tuple[str, set[int]]:
        """:meth:`kept` of ``text`` (the value of a member under ``key``, when given), also replacing each
        span of ``around`` (number, start, end: a secret found in the text around ``text``) that overlaps
        none of the secrets in ``text`` itself; and the numbers of the spans of ``around`` it replaced."""
        matches = list(find_secrets(text))
        if key is not None:
            matches += context_secrets(key, text)  # none overlaps a secret of the text alone
        # a private key block whose BEGIN line runs across two strings of the text: its body goes as one
        # that starts in the second string (over the strings after it, to its END line or the last string
        # of key body, as ``runs`` says)
        tokens = list(_TOKEN.finditer(text)) if '"' in text else []
        runs: dict[int, int] = {}
        ends = _KeyEnds(tokens)  # the END line lookahead of every block of the text, each string read once
        taken = sorted((m.start, m.end) for m in matches)  # no two overlap
        for start, end, run in _split_keys(tokens, ends) if "-" in text else ():  # a piece holds one of its dashes
            if start < end and _free(taken, start, end):
                if run:
                    runs[len(matches)] = end
                matches.append(SecretMatch("private_key", start, end))
                bisect.insort(taken, (start, end))
        spans = [(m.start, m.end) for m in matches]
        outer: list[int] = []  # spans[len(matches) + i] is the span of around numbered outer[i]
        for n, start, end in around:
            if start < end and _free(taken, start, end):
                spans.append((start, end))
                outer.append(n)
        if not spans and '"' not in text:
            return text, set()
        # A secret found starting inside a JSON string ends with it (a private key block without its
        # end line runs on to the end of the text as written, but only to the end of its string as read;
        # one whose header ends its string, at the closing quote, is then empty), but for a private key
        # block whose END line is in a later string: it covers those strings, not the JSON between them
        # (counted once: by its first string, when that holds more than the header, as read)
        strings = [(m.start(), m.end()) for m in tokens if len(m.group(0)) > 1 and m.group(0)[0] == '"']
        firsts = [start for start, _ in strings]
        across: set[int] = set()
        silent: set[int] = set()
        # A block without its END line that its string leaves open (:func:`._pem.private_key_open`) goes on
        # over the value strings after it that read as key body (a truncated key as an array of lines)
        positions = [k for k, m in enumerate(tokens) if len(m.group(0)) > 1 and m.group(0)[0] == '"']
        for i, (start, end) in enumerate(spans):
            if i in runs:  # its strings go, not the JSON between them
                across.add(i)
                continue
            at = bisect.bisect_right(firsts, start) - 1
            if at >= 0 and start <= strings[at][1] - 1:
                last = None
                if end > strings[at][1] - 1 and i < len(matches) and private_key_closed(text, matches[i]):
                    across.add(i)
                    if start < strings[at][1] - 1:
                        silent.add(i)
                elif end > strings[at][1] - 1 and i < len(matches) and matches[i].kind == "private_key":
                    last = _key_run(tokens, positions[at], ends=ends)
                if last is not None:
                    spans[i] = (start, tokens[last].end() - 1)
                    matches[i] = SecretMatch(matches[i].kind, matches[i].start, tokens[last].end() - 1)
                    across.add(i)
                    if start < strings[at][1] - 1:
                        silent.add(i)
                elif i not in across:
                    spans[i] = (start, min(end, strings[at][1] - 1))
        members = _member_keys(text, tokens)
        used: set[int] = set()

        def raw(start: int, piece: str) -> str:
            """``piece`` (at ``start`` in ``text``, not a JSON string) with every span in it replaced as written."""
            end = start + len(piece)
            cuts = sorted((max(spans[n][0], start), min(spans[n][1], end), n) for n in overlaps.between(start, end)
                          if n not in across)
            if not cuts:
                return piece
            out: list[str] = []
            last = start
            for s, e, n in cuts:
                used.add(n)
                s = max(s, last)  # spans from around may overlap by a character
                if s < e:
                    out.append(text[last:s])
                    out.append(self.plain(text[s:e]))
                    last = e
            out.append(text[last:end])
            return "".join(out)

        def string(start: int, token: str) -> str:
            """A JSON string token at ``start`` in ``text``, its secrets (and those of ``spans`` inside
            it) replaced in the string as read, written back in its forms."""
            try:
                value = json.loads(token)
            except ValueError:  # quotes that do not hold a JSON string: the text inside as written
                return '"' + raw(start + 1, token[1:-1]) + '"'
            end = start + len(token) - 1  # the closing quote
            inside = [(n, max(spans[n][0], start + 1) - start, min(spans[n][1], end) - start)
                      for n in overlaps.between(start + 1, end)]
            starts = _char_starts(token) if inside or "\\/" in token else []
            if len(starts) == len(value):  # in the string as read, each span growing to whole characters
                inside = [(n, bisect.bisect_right(starts, s) - 1, bisect.bisect_left(starts, e)) for n, s, e in inside]
            else:
                inside = [(n, 0, len(value)) for n, _, _ in inside]
            new, hits = self._kept(value, found, inside, members.get(start))
            used.update(hits)
            if new == value:
                return token
            if "\\/" in token and len(new) == len(starts):
                new = "".join("/" if token[at:at + 2] == "\\/" else ch for at, ch in zip(starts, new))
            return reencode(token, new)

        overlaps = _Overlaps(spans)  # the pieces of the text are read in order: each span is looked at once
        keys = _json_text(text)  # JSON text keeps its structure and keys (but for secrets): only its strings change
        out = self._strings(text, string, found, keys=keys, other=None if keys else raw)
        if found is not None:
            for n in sorted(used):
                if n < len(matches) and n not in silent:
                    found(matches[n].kind, text[matches[n].start:matches[n].end])
        return out, {outer[n - len(matches)] for n in used if n >= len(matches)}

    def text(self, text: str, *, blank: bool = True) -> str:
        """The placeholder of ``text``: :meth:`json` for JSON object or array text, else :meth:`plain`,
        blank exactly when ``text`` is (``blank``; a streamed delta, which no verdict reads, needs not
        be: its leading space is hidden among punctuation as every other)."""
        if not blank:
            done = self.json(text, blank=False) if text.lstrip()[:1] in ("{", "[") else None
            return self.plain(text, lines=False) if done is None else done
        memo = self._memo if len(text) > 32 else self._short
        found = memo.get(text)
        if found is not None:
            return found
        stripped = text.lstrip()
        result = self.json(text) if stripped[:1] in ("{", "[") else None
        if result is None:
            result = self.plain(text, blank=True)
        if len(memo) > 50_000:
            memo.clear()
        memo[text] = result
        return result

    def json(self, text: str, *, blank: bool = True) -> str | None:
        """``text`` with every string *value* of the JSON it holds replaced in place (keys, numbers,
        literals and layout kept, but a secret in a key is replaced: :meth:`keys`); None when
        ``text`` is not JSON. ``blank``: as :meth:`text`'s."""
        try:
            json.loads(text)
        except RecursionError:  # nested past the parser: still JSON when only strings hold words
            if not _skeleton_only(text):
                return None
        except ValueError:
            return None
        return self._strings(text, lambda start, token: reencode(token, self.text(json.loads(token), blank=blank)))

    def _strings(self, text: str, value: Callable[[int, str], str], found: Callable[[str, str], None] | None = None,
                 *, keys: bool = True, other: Callable[[int, str], str] | None = None) -> str:
        """``text`` with each JSON string token that is not an object key replaced by
        ``value(start, token)`` (``start``: where the token starts in ``text``) and, when ``other`` is
        given, each other piece by ``other(start, piece)``. With ``keys`` (``text`` is JSON), keys,
        numbers, literals and layout are kept but for a key that holds a secret: it is renamed as
        every key is (:func:`._json_text.rewrite_keys` with :meth:`keys`), and ``found`` is told of each such
        secret. Without, a key is a string as any other."""
        out: list[str] = []
        tokens = list(_TOKEN.finditer(text))
        secret_key = False
        for i, match in enumerate(tokens):
            token = match.group(0)
            if len(token) < 2 or token[0] != '"':
                out.append(other(match.start(), token) if other is not None and token != '"' else token)
            elif not keys or not (i + 1 < len(tokens) and tokens[i + 1].group(0).lstrip().startswith(":")):
                out.append(value(match.start(), token))
            else:
                out.append(token)
                if len(token) >= _SHORTEST_SECRET and (found is not None or not secret_key):
                    name = json.loads(token)
                    for secret in find_secrets(name):
                        secret_key = True
                        if found is None:
                            break
                        found(secret.kind, name[secret.start:secret.end])
        redacted = "".join(out)
        return rewrite_keys(redacted, self.keys) if secret_key else redacted
