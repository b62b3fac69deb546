"""Which strings of a DSH record are content, and what each becomes.

Every string value of a record is content and gets a placeholder, except: strings under a
*structural* key (types, ids, roles, kinds, providers, models, reasons, enum-like settings, tool
names; the full list is :data:`._keys.STRUCTURAL_KEYS`) where DSH's format puts them, whitespace-only strings,
DSH's own fixed prompts (the title and compaction instructions, which captures are classified by), and
the parts the user keeps (``--keep``). Below a content root (:data:`._keys.CONTENT_KEYS`: a tool call's
arguments object, a tool result's ``details``; and a ``tool/result``'s ``meta``) no key is structural,
whatever its name; the header line keeps only the members the spec names (:data:`._keys.HEADER_KEYS`), any
other one is content. Paths
(``cwd``, ``path``, ``file_path``, ...) are replaced segment by segment, so an absolute path stays
absolute. Numbers, booleans and nulls never change, nor do object keys,
except a key that holds a secret: the secret in it is replaced in place, keys kept distinct
(:meth:`Placeholders.keys`), in the objects of a record and in JSON text alike, kept or not. Secrets
are scrubbed from every kept string (:meth:`Placeholders.kept`) and counted wherever they are found,
as they read: a string replaced whole counts exactly the secrets it would lose if it were kept
(JSON-escaped ones in tool arguments too), and the value of an object member is read with its key
(``"password": "..."``), in a record's objects as in JSON text. A private key block split over
strings of one record (its header ending one content block, its body in the next; its BEGIN line, body
and END line cut over any number of them) goes and counts once (:meth:`Redactor.string`), told apart
by its whole body; so does another secret cut over the text parts of one message or the string items
of one list (:meth:`Redactor._cut`). A value that is a secret by its name alone (a captured header,
cookie or query parameter) is counted by :meth:`._counting.SecretCounter.named`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..capture import COMPACTION_PREFIX, TITLE_PREFIX
from ._counting import secret_digest
from ._key_blocks import KeyBlocks
from ._keys import (CONTENT_KEYS, HEADER_KEYS, META_KEY, PATH_KEYS, STRUCTURAL_KEYS, TOOL_NAME_KEYS, content_root,
                    is_header, meta_of, structural)
from ._secrets import cut_secrets, find_secrets
from ._shifts import printable, printable_value

__all__ = ["Every", "Redactor"]

_HARNESS_PREFIXES = (TITLE_PREFIX, COMPACTION_PREFIX)
_SEPARATORS = re.compile(r"([/\\])")
_DRIVE = re.compile(r"[A-Za-z]:")
#: A placeholder's shape (its letters ``a``, its digits ``0``): texts of one shape draw from the same places.
_SHAPE_OF = str.maketrans(string.ascii_letters + string.digits, "a" * 52 + "0" * 10)
_IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")  # how DSH names an image it stores (by its bytes' digest)


@dataclass(frozen=True)
class Every:
    """A stage of :meth:`Redactor.distinct` that is every placeholder of a block in turn, not salted draws of it:
    what makes each free placeholder of an almost full block reachable (salted draws may miss its last ones).
    ``placeholders`` makes the enumeration, once a redaction: a text reads on from where the last text that
    read the block (``key``) stopped, every placeholder before that given already, so a text costs O(1)
    amortised however full the block."""

    key: tuple[object, ...]
    placeholders: Callable[[], Iterator[str]]


@dataclass
class Redactor(KeyBlocks):
    """Redacts records of one log (and its capture) with one set of placeholders: the secrets it finds
    counted as :class:`._counting.SecretCounter` counts them, a private key block cut over the strings of a
    record followed as :class:`._key_blocks.KeyBlocks` follows it.

    Attributes:
        keep: the ``--keep`` parts kept verbatim (secrets still go).
        tool_names: whether tool names are kept.
        secrets: secrets found, by kind (every occurrence).
        strings: content strings replaced.
        identity_headers: the capture's header names (lower-cased) whose values named a user, an
            install, an account or one request (a request id), replaced by pseudonyms (:mod:`._capture`).
    """

    keep: frozenset[str] = frozenset()
    tool_names: bool = True
    identity_headers: set[str] = field(default_factory=set)
    # the placeholder given to each text of a kind (:meth:`distinct`), and the placeholders given, by kind
    _given: dict[tuple[str, str], str] = field(default_factory=dict)
    _taken: dict[str, set[str]] = field(default_factory=dict)
    # the stages of draws (by kind, shape and number) a text found all taken: not read for the texts after it
    _spent: set[tuple[str, str, int]] = field(default_factory=set)
    # where each block's enumeration (an :class:`Every` stage, by kind and key) was left
    _every: dict[tuple[str, tuple[object, ...]], Iterator[str]] = field(default_factory=dict)
    _meta_of: Any = None  # the ``data`` of the ``tool/result`` being read, whose ``meta`` is content
    # a string of the record that holds part of a secret cut over consecutive text parts (:meth:`_cut`):
    # the string, the key it is found under, its spans of such secrets and the secrets its own reading
    # finds that they cover (counted with the cut secret, once); the latter while it is being read
    _piece: tuple[str, str | None, tuple[tuple[int, int], ...], tuple[tuple[str, bytes], ...]] | None = None

    # -- strings ---------------------------------------------------------------------------

    def content(self, text: str, key: str | None = None) -> str:
        """A content string (the value of a member under ``key``, when given): its placeholder. Its
        secrets are counted as :meth:`keep_text` would find them (:meth:`_secrets`), so JSON-escaped
        ones (tool arguments, JSON in a tool result) count too."""
        if not text or text.isspace() or text.startswith(_HARNESS_PREFIXES):
            return self.keep_text(text, key)
        self._count(text, key)
        self.strings += 1
        return self.placeholders.text(text)

    def stream(self, deltas: list[str]) -> list[str]:
        """The deltas of one streamed text, each its placeholder (whitespace-only deltas stay).

        Secrets are looked for (and counted) in the deltas joined, so one split across two
        deltas is found; no delta is ever kept verbatim, whatever it equals."""
        self.stream_secrets(deltas)
        return [self.delta(delta) for delta in deltas]

    def delta(self, delta: str) -> str:
        """One delta of a streamed text: its placeholder (whitespace-only deltas stay). Its secrets
        are counted with its stream's, once the stream is whole (:meth:`stream_secrets`)."""
        if delta and not delta.isspace():
            self.strings += 1
            return self.placeholders.text(delta, blank=False)  # no verdict reads a delta: its spaces are hidden
        return delta

    def stream_secrets(self, deltas: list[str]) -> None:
        """Count the secrets of one streamed text, looked for in its deltas joined."""
        self._count("".join(deltas))

    def keys(self, names: Iterable[str]) -> dict[str, str]:
        """The new name of each key of one object that holds a secret (each occurrence counted);
        other keys stay. See :meth:`Placeholders.keys`."""
        every = list(names)
        found = [name for name in every if len(name) >= 8 and self._scan(name)]
        for name in found:
            self._tally(self._scan(name))  # as written, as Placeholders.keys replaces it
        return self.placeholders.keys(every) if found else {}

    def path(self, text: str, *, measured: bool = True) -> str:
        """A path: each segment replaced; separators (``/`` and a Windows ``\\``), ``.``, ``..``,
        ``~`` and a leading drive (``G:``) kept, so a path absolute on the platform that wrote it
        (POSIX, a drive letter, UNC) stays absolute: DSH refuses a log whose ``cwd`` is not. Not
        ``measured`` (a header's ``cwd``, which no request holds and no verdict reads), its placeholder's
        C0 controls are letters or digits (:func:`._shifts.printable`): it holds no control character."""
        if "paths" in self.keep:
            return self.keep_text(text)
        self._count(text)
        self.strings += 1
        parts = _SEPARATORS.split(text)  # segments at even positions, separators at odd ones
        out = "".join(part if at % 2 or part in ("", ".", "..", "~") or (at == 0 and _DRIVE.fullmatch(part))
                      else self.placeholders.text(part) for at, part in enumerate(parts))
        return out if measured else printable(out)

    def string(self, text: str, key: str | None, *, kept: bool = False, member: bool = True,
               content: bool = False) -> str:
        """``text`` found under ``key``: kept, a path, or content. ``member``: ``text`` is the value of
        the object member ``key`` (not an item of a list under it), read with its key for secrets.
        ``content``: ``text`` lies below a content root (:data:`CONTENT_KEYS`, a header's unknown
        member), where no key is structural.

        A string of a record that continues a private key block an earlier string of the record left
        open (a key split over two content blocks or list items: :meth:`_split_key`), or whose BEGIN
        line the string before it started (``"-----BEGIN RSA PRIV"``, ``"ATE KEY-----\\nMIIE..."``),
        loses that part too, kept or not, and the block counts once. So does a string that holds part of
        another secret cut over the text parts of its message or list (:meth:`_cut`)."""
        piece = self._piece
        cut: tuple[tuple[int, int], ...] = ()
        if piece is not None and piece[0] is text and piece[1] == key:
            self._piece, cut, self._suppress = None, piece[2], list(piece[3])
        try:
            return self._string(text, key, kept=kept, member=member, cut=cut, content=content)
        finally:
            self._suppress, self._hold = [], None

    def _string(self, text: str, key: str | None, *, kept: bool, member: bool, cut: tuple[tuple[int, int], ...],
                content: bool) -> str:
        context = key if member else None
        fixed = not content and structural(key, text)
        # a structural string holds no key, and does not part two strings that do
        start, end = (0, 0) if fixed or not text.strip() else self._split_key(text)
        fixed = fixed and not kept and not (key in TOOL_NAME_KEYS and not self.tool_names)
        if kept or fixed:
            out = self.keep_text(text, context)
            if start < end and out[start:end] == text[start:end]:
                out = out[:start] + self.placeholders.plain(text[start:end]) + out[end:]
            for start, end in cut:
                out = self._hide(text, out, start, end)
            return out
        if key in TOOL_NAME_KEYS and not self.tool_names and not content:
            return self.content(text, context)
        if key in PATH_KEYS:
            return self.path(text)
        return self.content(text, context)

    def _hide(self, text: str, out: str, start: int, end: int) -> str:
        """``out`` (the kept form of ``text``) with what it still holds of ``text[start:end]``, part of a
        secret cut over strings, replaced (each run of it left as it was: a replaced character never
        equals its original; nothing when the kept form is not as long as ``text``)."""
        if len(out) != len(text):
            return out
        at = start
        while at < end:
            if out[at] != text[at]:
                at += 1
                continue
            stop = at + 1
            while stop < end and out[stop] == text[stop]:
                stop += 1
            out = out[:at] + self.placeholders.plain(text[at:stop]) + out[stop:]
            at = stop
        return out

    def distinct(self, text: str, *stages: Iterable[str] | Every, kind: str = "host") -> str:
        """The placeholder of ``text`` (a host or an address; with another ``kind``, a pseudonym of that kind)
        that no other text of the kind has in this redaction: the one it was given before, else the first of
        its draws (salted, each in the blocks that name no one's machine, read only as far as needed; in
        ``stages``: its first blocks, those it spills into...) that no other text was given. So two different
        hosts never read as one, and one host reads as itself wherever it stands. A stage whose every draw
        was taken is not read again for the texts of its shape (of ``text``'s, letters and digits aside: they
        draw from the same blocks) after it: they start at the next (a hostile log's many addresses of one
        length would each read the full blocks first). A stage that is an :class:`Every` (after an address's
        draws in a block: every placeholder of that block in turn) reads on from where the last text left it,
        so every free placeholder of a block is given before an address spills past it, at O(1) amortised
        (review 40: an almost full block's last free addresses went unused). Should every stage be spent,
        ``text`` shares its first draw with another: only once every placeholder of its length and shape was
        given (more than the 1000 of ``0.d.d.d`` for the IPv4 addresses of 7 characters, the 15 of ``h::`` for
        the IPv6 ones of 3), or, for a name or a pseudonym, whose stage is its salted draws alone, nearly (more
        than 26 of ``x-----``).

        The placeholder a text gets depends on the texts given one before it (in the order the log and its
        capture are read, the same on each run): two redactions with one salt give a host the same
        placeholder, but when another host took its first draw in one of them only (or spent a stage).

        Example:
            >>> from dsh_audit.redact import Placeholders
            >>> r = Redactor(Placeholders(b"salt"))
            >>> [r.distinct(t, iter("xy")) for t in ("a", "b", "a", "c")], r.distinct("b", iter("xy"), kind="user")
            (['x', 'y', 'x', 'x'], 'x')
            >>> [r.distinct(t, "pq", "rs", kind="id") for t in ("d", "e", "f", "g", "h", "i")]
            ['p', 'q', 'r', 's', 'p', 'p']
            >>> block = Every(("ab",), lambda: iter("ab"))
            >>> [r.distinct(t, "a", block, kind="v") for t in ("j", "k", "l")]
            ['a', 'b', 'a']
        """
        chosen = self._given.get((kind, text))
        if chosen is not None:
            return chosen
        taken = self._taken.setdefault(kind, set())
        shape, first = text.translate(_SHAPE_OF), None
        for number, stage in enumerate(stages):
            if (kind, shape, number) in self._spent:
                continue  # not drawn at all: a spent stage costs nothing
            for candidate in self._cursor(kind, stage) if isinstance(stage, Every) else stage:
                first = candidate if first is None and not number else first
                if candidate not in taken:
                    chosen = candidate
                    break
            else:
                if not isinstance(stage, Every):  # a block's cursor, once at its end, costs nothing either
                    self._spent.add((kind, shape, number))
                continue
            break
        if chosen is None:  # every stage spent: its first draw, shared
            head = stages[0]
            chosen = first if first is not None else next(iter(head.placeholders() if isinstance(head, Every) else head))
        self._given[kind, text] = chosen
        taken.add(chosen)
        return chosen

    def _cursor(self, kind: str, stage: Every) -> Iterator[str]:
        """The enumeration of ``stage``'s block for texts of ``kind``, where the last text that read it left it
        (begun at the first read)."""
        cursor = self._every.get((kind, stage.key))
        if cursor is None:
            cursor = self._every[kind, stage.key] = stage.placeholders()
        return cursor

    # -- values ----------------------------------------------------------------------------

    def value(self, value: Any, key: str | None = None, *, kept: bool = False, member: bool = True,
              content: bool = False) -> Any:
        """``value`` with every string replaced as :meth:`string` says; keys and scalars kept.
        ``content``: ``value`` lies below a content root (:data:`CONTENT_KEYS`), as do its members."""
        if isinstance(value, str):
            return self.string(value, key, kept=kept, member=member, content=content)
        # Loops, not comprehensions: a comprehension is a frame of its own, and a record nested
        # up to the reader's 512 levels must fit the interpreter's recursion limit.
        if isinstance(value, dict):
            renamed = self.keys(value)
            out: dict[Any, Any] = {}
            meta = value is self._meta_of
            for k, v in value.items():
                out[renamed.get(k, k)] = self.value(v, k, kept=kept or (not content and self._kept_part(k)),
                                                    content=content or content_root(k, v) or (meta and k == META_KEY))
            image = self.attachment(value)
            if image is not None:
                out["attachmentId"] = image
            return out
        if isinstance(value, list):
            outer = self._piece
            cut = self._cut(value, key, content) if self._record is not None and len(value) > 1 else {}
            items: list[Any] = []
            for at, v in enumerate(value):
                self._piece = cut.get(at)
                items.append(self.value(v, key, kept=kept, member=False, content=content))
            self._piece = outer
            return items
        return value

    def _cut(self, items: list[Any], key: str | None, content: bool = False) -> dict[int, Any]:
        """The items of a list of a record that hold part of a secret cut over its text parts (see
        :func:`._secrets.cut_secrets`), by position: the consecutive strings of a list, or ``text``
        members of its consecutive ``{"type": "text", ...}`` blocks (the content of one message or tool
        result), read joined in order; any other item parts them. Each such secret is counted here, once,
        by its whole value; the string of each item that holds part of it loses that part when kept
        (:meth:`_hide`), and does not count what its own reading finds there (:meth:`_tally`)."""
        if (key in STRUCTURAL_KEYS and not content) or key in PATH_KEYS:
            return {}
        out: dict[int, Any] = {}
        run: list[tuple[int, str, str | None]] = []
        for at, item in enumerate([*items, None]):
            if isinstance(item, str):
                run.append((at, item, key))
                continue
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                run.append((at, item["text"], "text"))
                continue
            if len(run) > 1:
                texts = [text for _, text, _ in run]
                spans: dict[int, list[tuple[int, int]]] = {}
                for match, parts in cut_secrets(texts):
                    whole = "".join(texts[n][start:end] for n, start, end in parts)
                    self._tally(((match.kind, secret_digest(whole)),))
                    for n, start, end in parts:
                        spans.setdefault(n, []).append((start, end))
                for n, cuts in spans.items():
                    at_item, text, member = run[n]
                    own = tuple((m.kind, secret_digest(text[m.start:m.end])) for m in find_secrets(text)
                                if m.kind != "private_key" and any(m.start < e and s < m.end for s, e in cuts))
                    out[at_item] = (text, member, tuple(cuts), own)
            run = []
        return out

    def attachment(self, reference: dict[Any, Any]) -> str | None:
        """The new ``attachmentId`` of an image reference (``{attachmentId: "sha256:<hex>", bytes, ...}``,
        spec §5.3): its stand-in's (:meth:`Placeholders.image_id`), which a captured body's image of those
        bytes becomes too (:mod:`._capture`); None for any other object (a reference without a whole
        ``bytes`` size, with another kind of name, or larger than any image DSH sends, keeps it)."""
        name, size = reference.get("attachmentId"), reference.get("bytes")
        if not isinstance(name, str) or type(size) is not int or size < 0 or _IMAGE_ID.fullmatch(name) is None:
            return None
        return self.placeholders.image_id(name, size)

    def _kept_part(self, key: str) -> bool:
        return ((key == "system" and "system" in self.keep) or (key == "tools" and "tools" in self.keep)
                or (key == "title" and "titles" in self.keep))

    def record(self, record: Any) -> Any:
        """One storage record of a log (the header line, an event or a packed chunk row)."""
        self._open_key, self._tail = False, ""  # a private key block never runs from one record into the next
        self._key_parts, self._held, self._piece = None, False, None
        self._record, self._walked, self._position, self._key_end, self._ahead = record, None, 0, None, (-1, -1, None)
        self._meta_of = meta_of(record)
        try:
            if not isinstance(record, dict):
                return self.value(record)
            if is_header(record):  # its known members kept (cwd a path), any other one content, shown only: printable
                return {k: (self.path(v, measured=False) if k == "cwd" and isinstance(v, str)
                            else self.value(v, k, kept=True) if k in HEADER_KEYS
                            else printable_value(self.value(v, k, content=True)))
                        for k, v in record.items()}
            if record.get("type") == "system/message" and "system" in self.keep:
                return self.value(record, kept=True)
            out = self.value(record)
            data = out.get("data") if isinstance(out, dict) and record.get("type") == "session/title" else None
            if isinstance(data, dict) and isinstance(data.get("title"), str) and "titles" not in self.keep:
                # a title is shown, never measured (no request holds it): it holds no control character
                out = {**out, "data": {**data, "title": printable(data["title"])}}
            return out
        finally:
            self._finish_key()
            self._record = self._walked = self._piece = self._meta_of = None


