"""Which strings of a DSH record are content, and what each becomes.

Every string value of a record is content and gets a placeholder, except: strings under a
*structural* key (types, ids, roles, kinds, providers, models, reasons, enum-like settings, tool
names; the full list is :data:`STRUCTURAL_KEYS`) where DSH's format puts them, whitespace-only strings,
DSH's own fixed prompts (the title and compaction instructions, which captures are classified by), and
the parts the user keeps (``--keep``). Below a content root (:data:`CONTENT_KEYS`: a tool call's
arguments object, a tool result's ``details``; and a ``tool/result``'s ``meta``) no key is structural,
whatever its name; the header line keeps only the members the spec names (:data:`HEADER_KEYS`), any
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
cookie or query parameter) is counted by :meth:`Redactor.named`.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..capture import COMPACTION_PREFIX, TITLE_PREFIX
from ._placeholder import Placeholders
from ._secrets import (CONTEXT_KINDS, context_key, cut_secrets, find_secrets, key_body, key_end, key_piece, key_start,
                       private_key_cut, private_key_end, private_key_open, split_private_key, split_tail)

__all__ = ["CONTENT_KEYS", "HEADER_KEYS", "KEEP_CHOICES", "PATH_KEYS", "STRUCTURAL_KEYS", "TOOL_NAME_KEYS", "Redactor"]

#: What ``--keep`` can name.
KEEP_CHOICES = ("paths", "system", "titles", "tools")

STRUCTURAL_KEYS = frozenset("""
    type id role kind provider model callId toolCallId responseId surfaceOp op blockType reasoningEffort
    preset policy mode target commandId sourceCommandId compactionId retryId handlerId runId goalId subCallId
    parentCallId rootCallId childId parentSession senderSessionId attachmentId mediaType digest api
    stopReason code thinkingSignature textSignature thoughtSignature responseModel plugin form point phase outcome
    action operation decision dialect
    status source lang shape what waitReason titleProvider agentPreset origin agentProvider agentModel
    pluginId packageId pluginRunId rpcId name toolName required policyKey time createdAt version
    reasoning_effort tool_call_id tool_choice object finish_reason
    """.split())
PATH_KEYS = frozenset({"cwd", "path", "paths", "file_path", "filePath", "root", "workdir"})
#: The structural keys that hold a tool name (replaced too with ``tool_names=False``).
TOOL_NAME_KEYS = frozenset({"name", "toolName"})
#: The members whose object or list value is content whole, whatever its members are named: a tool
#: call's arguments (an object in pi-ai's messages, as a replay envelope holds them; DSH's own are a
#: JSON text) and a tool result's ``details``. No key below one is structural: a string there is
#: content (a path still segment by segment). So is a ``tool/result`` event's ``data.meta``
#: (:data:`META_KEY`), there only: a tool's free-form ``JsonValue`` (``dsh-tool-fs`` puts its
#: result-time diff there), while a tool's JSON schema may name a property ``meta``.
CONTENT_KEYS = frozenset({"arguments", "details"})
#: The member of a ``tool/result`` event's ``data`` that is content whole (spec §2: ``meta?: JsonValue``).
META_KEY = "meta"
#: The members of a log's header line (spec §1.3) that are no content: kept (secrets still go), ``cwd``
#: as a path. Any other member of the header is content, whatever its name.
HEADER_KEYS = frozenset({"type", "version", "id", "createdAt", "parentSession", "seedLength", "origin",
                         "delegationDepth", "agentPreset"})
_HARNESS_PREFIXES = (TITLE_PREFIX, COMPACTION_PREFIX)
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_/")


_SEPARATORS = re.compile(r"([/\\])")
_DRIVE = re.compile(r"[A-Za-z]:")
# What the memos of texts read for secrets (:meth:`Redactor._scan`, :meth:`Redactor._read`) may hold: so
# many texts, and so many characters (texts and kept forms; a memo that would pass either is emptied
# first, and a text longer than the second is not remembered). A DSH log repeats its texts (a message in
# each request that carries it), so the memos save reading one again.
_MEMO = 20_000
_MEMO_CHARS = 32 * 2**20
_IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")  # how DSH names an image it stores (by its bytes' digest)


def _digest(secret: str) -> bytes:
    """What tells two secrets apart in the summary (never the secret)."""
    return hashlib.blake2b(secret.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _identifier(text: str) -> bool:
    return 0 < len(text) <= 40 and set(text) <= _IDENT_CHARS


@dataclass
class Redactor:
    """Redacts records of one log (and its capture) with one set of placeholders.

    Attributes:
        keep: the ``--keep`` parts kept verbatim (secrets still go).
        tool_names: whether tool names are kept.
        secrets: secrets found, by kind (every occurrence).
        strings: content strings replaced.
    """

    placeholders: Placeholders
    keep: frozenset[str] = frozenset()
    tool_names: bool = True
    secrets: Counter[str] = field(default_factory=Counter)
    secret_values: dict[str, set[bytes]] = field(default_factory=dict)
    strings: int = 0
    kept: set[str] = field(default_factory=set)
    _scanned: dict[str, tuple[tuple[str, bytes], ...]] = field(default_factory=dict)
    # a private key block an earlier string of the record being read left open, and whether it was counted
    _open_key: bool = False
    _key_counted: bool = False
    _tail: str = ""  # the joined end of the last strings of the record read, which may start a BEGIN line
    # the record being read (None outside :meth:`record`), its strings as :meth:`string` reads them for a
    # private key block (made when first needed), how many it has read, the position of the string that
    # ends the END line of the block open (None: not known), and the last lookahead (from, stop, result)
    _record: Any = None
    _walked: list[str] | None = None
    _position: int = 0
    _key_end: int | None = None
    _ahead: tuple[int, int, int | None] = (-1, -1, None)
    _meta_of: Any = None  # the ``data`` of the ``tool/result`` being read, whose ``meta`` is content
    _kept_texts: dict[tuple[str, str | None], tuple[str, tuple[tuple[str, bytes], ...]]] = field(default_factory=dict)
    _scanned_chars: int = 0
    _kept_chars: int = 0
    # the body of the private key block open in the record being read, as its strings hold it (None: none),
    # whose distinct value is told by its whole body once it ends (:meth:`_finish_key`): ``_held``, it was
    # counted, its digest not yet added; ``_hold``, the digest of what the string being read holds of it,
    # to count without adding it (its own match, :meth:`_tally`)
    _key_parts: list[str] | None = None
    _held: bool = False
    _hold: tuple[str, bytes] | None = None
    # a string of the record that holds part of a secret cut over consecutive text parts (:meth:`_cut`):
    # the string, the key it is found under, its spans of such secrets and the secrets its own reading
    # finds that they cover (counted with the cut secret, once); the latter while it is being read
    _piece: tuple[str, str | None, tuple[tuple[int, int], ...], tuple[tuple[str, bytes], ...]] | None = None
    _suppress: list[tuple[str, bytes]] = field(default_factory=list)

    # -- strings ---------------------------------------------------------------------------

    def _scan(self, text: str) -> tuple[tuple[str, bytes], ...]:
        """The kind and a digest of each secret in ``text`` as written (remembered for repeated texts):
        what :meth:`_secrets` finds in a text without a quote, and in an object key."""
        found = self._scanned.get(text)
        if found is None:
            found = tuple((m.kind, _digest(text[m.start:m.end])) for m in find_secrets(text))
            if len(text) <= _MEMO_CHARS:
                if len(self._scanned) > _MEMO or self._scanned_chars + len(text) > _MEMO_CHARS:
                    self._scanned.clear()
                    self._scanned_chars = 0
                self._scanned[text] = found
                self._scanned_chars += len(text)
        return found

    def _read(self, text: str, key: str | None) -> tuple[str, tuple[tuple[str, bytes], ...]]:
        """The kept form of ``text`` (the value of a member under ``key``, when given) and the kind and a
        digest of each secret replaced in it (:meth:`Placeholders.kept`; remembered for repeated texts)."""
        memo = (text, key)
        done = self._kept_texts.get(memo)
        if done is None:
            found: list[tuple[str, bytes]] = []
            new = self.placeholders.kept(text, lambda kind, secret: found.append((kind, _digest(secret))), key=key)
            done = (text if new == text else new, tuple(found))  # the text itself, not a copy, when nothing went
            size = len(text) + (0 if done[0] is text else len(new))
            if size <= _MEMO_CHARS:
                if len(self._kept_texts) > _MEMO or self._kept_chars + size > _MEMO_CHARS:
                    self._kept_texts.clear()
                    self._kept_chars = 0
                self._kept_texts[memo] = done
                self._kept_chars += size
        return done

    def _secrets(self, text: str, key: str | None = None) -> tuple[tuple[str, bytes], ...]:
        """The kind and a digest of each secret of ``text`` as it reads, found under ``key`` (when
        given): exactly the secrets :meth:`keep_text` would replace in it, so a text counts the same
        whether it is kept or replaced whole (JSON strings read with their escapes decoded, JSON text
        inside them at any depth, a member's value with its key)."""
        context = key if key is not None and context_key(key) else None
        if context is None and '"' not in text:
            return self._scan(text)
        return self._read(text, context)[1]

    def _count(self, text: str, key: str | None = None) -> None:
        self._tally(self._secrets(text, key))

    def count(self, text: str, key: str | None = None) -> None:
        """Count the secrets of ``text`` (under ``key``, when given) that goes whole: a dropped
        capture header (its name as ``key``) or cookie."""
        self._count(text, key)

    def named(self, text: str, name: str, kind: str) -> None:
        """Count the secrets of ``text``, a value that is a secret by its ``name`` alone (a dropped
        ``Authorization``, ``Cookie`` or ``x-api-key`` header, a session cookie, an ``api_key`` query
        parameter): the provider keys it holds by their own shape (``sk-...``, ``AKIA...``), or, when
        it holds none, itself as one secret of ``kind``, whatever its shape (not as the kind another
        name around it would give: :data:`._secrets.CONTEXT_KINDS`)."""
        found = tuple(secret for secret in self._secrets(text) if secret[0] not in CONTEXT_KINDS)
        if not found and text.strip():
            found = ((kind, _digest(text)),)
        self._tally(found)

    def replace_named(self, text: str, name: str, kind: str) -> str:
        """A value that is a secret by its ``name`` alone (:meth:`named`, counted there), replaced
        whole by its placeholder, of the same lengths, kept part or not."""
        self.named(text, name, kind)
        return self.placeholders.plain(text)

    def _tally(self, found: Iterable[tuple[str, bytes]]) -> None:
        for secret in found:
            if secret in self._suppress:  # part of a secret cut over strings, counted whole (:meth:`_cut`)
                self._suppress.remove(secret)
                continue
            kind, digest = secret
            self.secrets[kind] += 1
            if secret == self._hold:  # a private key block the next strings may continue: its value when it ends
                self._hold, self._held = None, True
                continue
            self.secret_values.setdefault(kind, set()).add(digest)

    def keep_text(self, text: str, key: str | None = None) -> str:
        """A kept string (the value of a member under ``key``, when given): itself, with each secret in
        it replaced and counted once (in a JSON string of it, as the string reads, escapes decoded and
        at any depth of JSON inside JSON, the string written back in its escape forms; a secret in an
        object key of JSON text as every key's is; a value with its key: :meth:`Placeholders.kept`)."""
        self.kept.add(text)
        context = key if key is not None and context_key(key) else None
        if context is None and '"' not in text and not self._scan(text):  # no secret, no JSON string to hide one
            return text
        done = self._read(text, context)
        self._tally(done[1])
        return done[0]

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

    def path(self, text: str) -> str:
        """A path: each segment replaced; separators (``/`` and a Windows ``\\``), ``.``, ``..``,
        ``~`` and a leading drive (``G:``) kept, so a path absolute on the platform that wrote it
        (POSIX, a drive letter, UNC) stays absolute: DSH refuses a log whose ``cwd`` is not."""
        if "paths" in self.keep:
            return self.keep_text(text)
        self._count(text)
        self.strings += 1
        parts = _SEPARATORS.split(text)  # segments at even positions, separators at odd ones
        return "".join(part if at % 2 or part in ("", ".", "..", "~") or (at == 0 and _DRIVE.fullmatch(part))
                       else self.placeholders.text(part) for at, part in enumerate(parts))

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
        structural = not content and _structural(key, text)
        # a structural string holds no key, and does not part two strings that do
        start, end = (0, 0) if structural or not text.strip() else self._split_key(text)
        structural = structural and not kept and not (key in TOOL_NAME_KEYS and not self.tool_names)
        if kept or structural:
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

    def _split_key(self, text: str) -> tuple[int, int]:
        """The part of ``text`` that is the body of a private key block an earlier string of the record
        began (``start == end``: none): one the last string left open continues at the start of ``text``
        while it reads as key body (:func:`._secrets.key_body`: a string of prose ends it), or, up to the
        string that ends its END line, as pieces of a key however short (:meth:`_ahead_end`); one whose
        BEGIN line the strings before started and ``text`` ends (:func:`._secrets.split_private_key` on
        their joined end, :func:`._secrets.split_tail`: a line cut over any number of strings) runs from
        there to its END line or the end of ``text``. That part counts as the block's when the block was
        not yet counted. Also notes whether ``text`` leaves a block open, and its end."""
        position = self._position
        self._position += 1
        start = end = 0
        still_open = False
        # a piece of a block whose END line is ahead (:meth:`_ahead_end`): whole, or up to that line
        ahead = self._key_end if self._open_key else None
        split = None if self._open_key or not self._tail else split_private_key(self._tail, text)
        if ahead is not None and position <= ahead:
            if position < ahead:  # before the string that ends the END line (a cut END line too)
                end, still_open = len(text), True
            else:
                end = private_key_end(text) or 0  # none: the line began in the strings before
        elif self._open_key:
            body = key_body(text)
            if body is not None and (body[1] or text[:body[0]].strip()):
                end, still_open = body[0], not body[1]
        elif split is not None:
            start, end, closed = split
            still_open = not closed
            self._finish_key()
            self._key_counted, self._key_parts = False, [] if self._record is not None else None
            self._key_end = self._ahead_end(position, text) if still_open and key_piece(text, start) else None
        if end > start:
            if self._key_parts is not None:
                self._key_parts.append(text[start:end])
            if not self._key_counted:
                if self._key_parts is None:
                    self._tally((("private_key", _digest(text[start:end])),))
                else:  # its distinct value once its body is whole
                    self.secrets["private_key"] += 1
                    self._held = True
                self._key_counted = True
        if not still_open:
            self._finish_key()
        opened = None if still_open else private_key_open(text)  # a block that begins after the one read
        cut = not still_open and private_key_cut(text)
        if opened is not None or cut:
            begun = key_start(text)
            begun = len(text) if begun is None else begun
            # the text's own match counts it when it holds some of its body (a cut one too: ``"...\nMIIE"``)
            self._open_key, self._key_counted = True, begun < len(text)
            self._key_end = self._ahead_end(position, text) if cut else None
            if self._record is not None:
                self._key_parts = [text[begun:]]
                if begun < len(text):
                    self._hold = ("private_key", _digest(text[begun:]))
        else:
            self._open_key = still_open
        self._tail = split_tail(self._tail, text)
        return start, end

    def _finish_key(self) -> None:
        """End the private key block of the record that :meth:`_split_key` joined: when it was counted
        without its distinct value, add that of its whole body (as one string holding the block whole
        tells it: up to its END line, cut or not), so the same key whole and cut counts once."""
        if self._key_parts is not None and self._held:
            body = "".join(self._key_parts)
            end = body.find("-----")  # an END line cut over the strings before the one that ends it
            self.secret_values.setdefault("private_key", set()).add(_digest(body if end < 0 else body[:end]))
        self._key_parts, self._held, self._hold = None, False, None

    def _ahead_end(self, position: int, text: str) -> int | None:
        """The position (among the strings of the record :meth:`_split_key` reads) of the string that ends
        the END line of the private key block that ``text``, at ``position``, leaves open, when the strings
        before it read as pieces of a key (:func:`._secrets.key_end`); None when they do not, or outside
        :meth:`record`. A block that opens among the strings an earlier lookahead read ends where it said,
        so each string of a record is read once however many blocks it holds."""
        if self._record is None:
            return None
        begun, stop, found = self._ahead
        if begun <= position < stop:
            return found
        if self._walked is None:
            self._walked = _walk(self._record)
        strings = self._walked
        if position >= len(strings) or strings[position] is not text:  # not the record's own string
            return None
        read = [position]

        def after() -> Iterator[str]:
            for at in range(position + 1, len(strings)):
                read[0] = at
                yield strings[at]

        count = key_end(after(), split_tail("", text))
        found = None if count is None else position + count
        self._ahead = (position, read[0], found)
        return found

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
                                                    content=content or _content_root(k, v) or (meta and k == META_KEY))
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
                    self._tally(((match.kind, _digest(whole)),))
                    for n, start, end in parts:
                        spans.setdefault(n, []).append((start, end))
                for n, cuts in spans.items():
                    at_item, text, member = run[n]
                    own = tuple((m.kind, _digest(text[m.start:m.end])) for m in find_secrets(text)
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
        self._meta_of = _meta_of(record)
        try:
            if not isinstance(record, dict):
                return self.value(record)
            if _is_header(record):  # its known members kept (cwd a path), any other one content
                return {k: (self.path(v) if k == "cwd" and isinstance(v, str)
                            else self.value(v, k, kept=True) if k in HEADER_KEYS
                            else self.value(v, k, content=True))
                        for k, v in record.items()}
            if record.get("type") == "system/message" and "system" in self.keep:
                return self.value(record, kept=True)
            return self.value(record)
        finally:
            self._finish_key()
            self._record = self._walked = self._piece = self._meta_of = None


def _walk(record: Any) -> list[str]:
    """The strings of ``record`` that :meth:`Redactor.string` reads for a private key block
    (:meth:`Redactor._split_key`: neither structural nor blank), in the order it reads them; a header's
    ``cwd`` string, read as a path, is none. A loop, not recursion: a record may nest 512 levels."""
    header = _is_header(record)
    meta_of = _meta_of(record)
    out: list[str] = []
    stack: list[tuple[Any, Any, bool]] = [(record, None, False)]
    while stack:
        value, key, content = stack.pop()
        if isinstance(value, str):
            if value.strip() and (content or not _structural(key, value)):
                out.append(value)
        elif isinstance(value, dict):
            top = header and value is record  # the header line's own members: an unknown one is content
            meta = value is meta_of
            items = [(v, k, content or _content_root(k, v) or (top and k not in HEADER_KEYS)
                      or (meta and k == META_KEY))
                     for k, v in value.items() if not (top and k == "cwd" and isinstance(v, str))]
            stack.extend(reversed(items))
        elif isinstance(value, list):
            stack.extend((v, key, content) for v in reversed(value))
    return out


def _is_header(record: Any) -> bool:
    """Whether ``record`` is a log's header line (spec §1.3)."""
    return isinstance(record, dict) and record.get("type") == "session" and "seq" not in record


def _meta_of(record: Any) -> Any:
    """The ``data`` object of ``record`` when it is a ``tool/result`` event (its ``meta`` is content), else None."""
    if isinstance(record, dict) and record.get("type") == "tool/result" and isinstance(record.get("data"), dict):
        return record["data"]
    return None


def _structural(key: str | None, text: str) -> bool:
    """Whether a string under ``key`` is structural where keys can be (not below a content root)."""
    return key in STRUCTURAL_KEYS or (key == "reason" and _identifier(text))


def _content_root(key: Any, value: Any) -> bool:
    """Whether the member ``key`` holds content whole (:data:`CONTENT_KEYS`): an object or a list."""
    return key in CONTENT_KEYS and isinstance(value, (dict, list))
