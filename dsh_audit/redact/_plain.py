"""The salted, class-preserving, prefix-preserving placeholder of a text, byte by byte (the scheme
:mod:`._placeholder` describes), with the session ids it keeps in place and the stand-ins of images.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from ._derivation import derived, subkey
from ._shifts import (_ACTING, _ASCII, _ASCII_BREAKS, _ASCII_SHIFTS, _FIXED, _RUNS, _SHORT_RUN, _SPACES, _WIDE_BREAKS,
                      _SPACE_BYTES, _ascii_run, _lead, _shown)

__all__ = ["IMAGE_LIMIT", "PlainPlaceholders", "SESSION_ID"]

#: The largest image given a stand-in (32 MiB, as dsh-audit reads DSH's attachment store: DSH admits 3.5 MiB
#: by default and never sends an image whose base64 passes 20 MiB); a larger one keeps its name.
IMAGE_LIMIT = 32 << 20
_MEMO_IMAGES = 4096
#: The shape of a session id DSH writes (:meth:`PlainPlaceholders.keep_identifiers` keeps no other string): a
#: UUID (a subagent child, ``packages/subagent/subagent/src/continuation.ts:415``; an ACP session,
#: ``packages/acp/acp/src/index.ts:311``), or one after a prefix ending in ``-`` (``session-<uuid>``,
#: ``packages/bundle/headless/src/index.ts:112``; ``<agent>-session-<uuid>``,
#: ``packages/core/agent-loop/src/index.ts:358``), or 32 hex digits after one (``session-<hex>``,
#: ``packages/subagent/subagent-dsh-sdk/src/run.ts:165``). No text of words is one.
SESSION_ID = re.compile(r"(?:[A-Za-z0-9._]{1,64}-){0,4}(?:[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}"
                        r"|[0-9A-Fa-f]{32})")


class PlainPlaceholders:
    """The placeholders of one salt that know no JSON: a text's, byte by byte (:meth:`plain`), an
    image's stand-in (:meth:`image`), and the session ids kept in place (:meth:`keep_identifiers`).
    :class:`._placeholder.Placeholders` adds JSON text, kept texts and object keys.
    """

    def __init__(self, salt: bytes) -> None:
        if not salt:
            raise ValueError("the salt must not be empty")
        # bytes (a bytearray is no memo key); slow (scrypt), once per salt: each guess at a salt costs as much
        key = derived(bytes(salt))[1]
        self._hash = hashlib.blake2b(b"dsh-audit redact v2", key=subkey(key, b"texts"), digest_size=8)
        self._image_key = subkey(key, b"images")
        self._digits_key = subkey(key, b"digits")
        self._memo: dict[str, str] = {}  # :meth:`._placeholder.Placeholders.text`'s, per text
        self._short: dict[str, str] = {}  # the same for texts of at most 32 characters (a body repeats its roles)
        self._identifiers: re.Pattern[str] | None = None
        self._shortest = 0
        self._image_ids: dict[tuple[str, int], str] = {}

    def image(self, attachment: str, size: int) -> bytes:
        """The stand-in bytes of the image a log names ``attachment`` (``sha256:<hex>``), ``size`` bytes
        long: keyed pseudo-random bytes drawn from the salt and the name (SHAKE256), so the log's
        reference and a captured body's bytes of one image get the same stand-in (:meth:`image_id`
        names it), and its base64 keeps its length.

        Example:
            >>> from dsh_audit.redact import Placeholders
            >>> p = Placeholders(b"salt")
            >>> image = p.image("sha256:ab", 70)
            >>> len(image), image == p.image("sha256:ab", 70) != p.image("sha256:ac", 70)
            (70, True)
        """
        return hashlib.shake_256(self._image_key + attachment.encode("utf-8", "surrogatepass")).digest(size)

    def hex_digits(self, text: str, count: int) -> str:
        """``count`` hex digits (up to 128) drawn from the salt and the whole of ``text`` (keyed BLAKE2b): unlike
        :meth:`plain`'s, no digit is shared by two texts for a prefix they share, so two addresses of one network
        (``fd00::1``, ``fd00::2``) draw digits as unlike as any two (:func:`._ipv6.ipv6_draws`).

        Example:
            >>> from dsh_audit.redact import Placeholders
            >>> p = Placeholders(b"salt")
            >>> a, b = p.hex_digits("fd00::1", 6), p.hex_digits("fd00::2", 6)
            >>> len(a), set(a) <= set("0123456789abcdef"), a == p.hex_digits("fd00::1", 6), a[0] != b[0] or a != b
            (6, True, True, True)
        """
        data = text.encode("utf-8", "surrogatepass")
        size = min(64, max(1, (count + 1) // 2))
        return hashlib.blake2b(data, key=self._digits_key, digest_size=size).hexdigest()[:count]

    def image_id(self, attachment: str, size: int) -> str | None:
        """The attachment name of the stand-in of the image named ``attachment`` (:meth:`image`): as DSH
        names an image, ``sha256:`` and the hex SHA-256 of its bytes; None for an image larger than any
        DSH sends (:data:`IMAGE_LIMIT`), which gets no stand-in."""
        if not 0 <= size <= IMAGE_LIMIT:
            return None
        memo = (attachment, size)
        found = self._image_ids.get(memo)
        if found is None:
            found = "sha256:" + hashlib.sha256(self.image(attachment, size)).hexdigest()
            if len(self._image_ids) > _MEMO_IMAGES:
                self._image_ids.clear()
            self._image_ids[memo] = found
        return found

    def plain(self, text: str, *, blank: bool = False, lines: bool = True) -> str:
        """The class-preserving, prefix-preserving placeholder of ``text`` (no JSON awareness).

        With ``blank`` (a content text: :meth:`._placeholder.Placeholders.text`), whether the text is
        blank (only spaces, for Python's ``str.isspace`` and for JavaScript's ``trim``, by which pi-ai
        drops a text or thinking block) stays too: up to the text's first character that is no space
        (:data:`._shifts._SPACES`), spaces stay themselves and other characters move among the
        non-spaces of their class (a multi-byte one walks its class's cycle past the spaces), so the
        placeholder's first non-space is where the text's was, and a text of spaces stays one. (A
        secret replaced inside a kept text holds letters or digits, which never become spaces: it
        needs no ``blank``.)

        Example:
            >>> from dsh_audit.redact import Placeholders
            >>> p = Placeholders(b"salt")
            >>> [p.plain(t, blank=True).isspace() for t in ("!", "\\ufeff!", " x")]
            [False, False, False]
            >>> p.plain("\\ufeff\\u3000", blank=True), p.plain("\\ufeff\\u3000") != "\\ufeff\\u3000"
            ('\\ufeff\\u3000', True)

        With ``lines`` (all but a streamed delta's), each line break (:data:`._shifts.LINE_BREAKS`) stays and the
        hash starts again after it, so equal lines get equal placeholders:

            >>> two = p.plain("same\\nold\\nsame"), p.plain("same\\nnew\\nsame")
            >>> [t.split("\\n") for t in two][0][::2] == [t.split("\\n") for t in two][1][::2], two[0] != two[1]
            (True, True)
        """
        if not text or text.isspace():
            return text
        data = text.encode("utf-8", "surrogatepass")
        out = bytearray(data)  # a byte no placeholder replaces (a separator, a line break) stays as it is
        state, leading, at, done = self._hash.copy(), blank, 0, 0  # leading: no character but spaces so far
        if self._identifiers is not None and len(text) >= self._shortest:
            for match in self._identifiers.finditer(text):  # an identifier stays itself, the placeholder around it
                start = at + len(text[done:match.start()].encode("utf-8", "surrogatepass"))
                state, leading = self._bytes(data, at, start, out, state, leading, lines)
                end = start + len(match.group(0).encode("utf-8", "surrogatepass"))
                out[start:end] = data[start:end]
                state.update(data[start:end])
                leading = False
                at, done = end, match.end()
        self._bytes(data, at, len(data), out, state, leading, lines)
        return out.decode("utf-8", "surrogatepass")

    def _bytes(self, data: bytes, i: int, stop: int, out: bytearray, state: Any, leading: bool,
               lines: bool) -> tuple[Any, bool]:
        """The placeholder of ``data[i:stop]`` into ``out`` (:meth:`plain`), after the bytes hashed into
        ``state`` (since the last line break); the state and ``leading`` after it. Each line break stays
        and starts the hash again (a line's placeholder depends on that line alone, so the lines two
        versions of a text share keep their placeholders, and a line diff its hunks); without ``lines``
        (a streamed delta) a line break is hidden among its class as every other character."""
        breaks, wide = (_ASCII_BREAKS, _WIDE_BREAKS) if lines else (frozenset(), frozenset())
        shifts, first_shifts = _ASCII_SHIFTS[lines]
        from_bytes = int.from_bytes
        runs, short = _RUNS[lines], 0  # short: where a run of ASCII bytes too short to draw at once ends
        while i < stop:
            byte = data[i]
            if byte < 0x80 and not leading and i >= short:  # a run of ASCII bytes at once, as below byte by byte
                run = runs.match(data, i, stop)
                end = i if run is None else run.end()
                if end - i >= _SHORT_RUN:
                    _ascii_run(state, data, i, end, out, lines)
                    i = end
                    continue
                short = end
            if byte < 0x80:
                # as _shift(byte, its class, the draw) makes it, by table; the draw's hash is made only
                # when it is read (``out`` holds each byte a table leaves as it is)
                table = first_shifts[byte] if leading else shifts[byte]
                if table is not None:
                    out[i] = table[from_bytes(state.digest(), "big") % len(table)]  # digest() leaves the state
                leading = leading and chr(byte) in _SPACES
                if byte in breaks:
                    state = self._hash.copy()
                else:
                    state.update(data[i:i + 1])
                i += 1
                continue
            char = data[i:i + _lead(byte)[1]]
            if char in wide:
                out[i:i + len(char)] = char
                state = self._hash.copy()
                i += len(char)
                continue
            if not leading:  # no line break, no character a terminal acts on (_shown walks past them)
                new = _shown(state, char, wide)
            elif char.decode("utf-8", "surrogatepass") in _SPACES:
                new = char
            else:
                leading = False
                new = _shown(state, char, _SPACE_BYTES)
            out[i:i + len(char)] = new
            state.update(char)
            i += len(char)
        return state, leading

    def keep_identifiers(self, identifiers: Iterable[str]) -> None:
        """Keep each of ``identifiers`` (session ids) verbatim wherever a text holds it: the placeholder
        is built around it (:meth:`plain`), so a parent's tool result that names its child's session
        id names it after as before. A string not of the shape of a session id (:data:`SESSION_ID`) is
        not kept: it could be content. Call before the first placeholder; a call replaces the ids of
        the one before.

        Example:
            >>> from dsh_audit.redact import Placeholders
            >>> p = Placeholders(b"salt")
            >>> p.keep_identifiers(["session-0b6f6a0e-4f2c-4a55-9d3e-2b1c5f7e8a90", "Project Nightingale"])
            >>> p.plain("see session-0b6f6a0e-4f2c-4a55-9d3e-2b1c5f7e8a90")[4:]
            'session-0b6f6a0e-4f2c-4a55-9d3e-2b1c5f7e8a90'
            >>> "Nightingale" in p.plain("Project Nightingale")
            False
        """
        found = sorted({i for i in identifiers if SESSION_ID.fullmatch(i)}, key=lambda i: (-len(i), i))
        self._identifiers = re.compile("|".join(map(re.escape, found))) if found else None
        self._shortest = min(map(len, found)) if found else 0
        self._memo.clear()
        self._short.clear()

    @staticmethod
    def other_than(ch: str, taken: str) -> str:
        """``ch``, or when it equals ``taken`` the next character of its class (same lengths)."""
        if ch != taken:
            return ch
        code = ord(ch)
        if code < 0x80:
            members = _ASCII[code]
            if code in _FIXED:
                return ch  # no other member may stand for a separator; taken ones are told apart elsewhere
            out = members[(members.index(code) + 1) % len(members)]
            while out in _FIXED:
                out = members[(members.index(out) + 1) % len(members)]
            return chr(out)
        data = bytearray(ch.encode("utf-8", "surrogatepass"))
        data[-1] = 0x80 + (data[-1] - 0x80 + 1) % 0x40
        for _ in range(0x3F):  # no character a terminal acts on, when its block of 64 holds another
            if bytes(data) not in _ACTING:
                break
            data[-1] = 0x80 + (data[-1] - 0x80 + 1) % 0x40
        return data.decode("utf-8", "surrogatepass")
