"""Counting the secrets a redaction replaces: each kind's occurrences and distinct values (never a value).

:class:`SecretCounter` is the part of :class:`._redactor.Redactor` that reads texts for secrets and keeps
them as they are apart from their secrets (:meth:`SecretCounter.keep_text`): a string replaced whole counts
exactly the secrets it would lose if it were kept, and a value that is a secret by its name alone (a
captured header, cookie or query parameter) counts as :meth:`SecretCounter.named` says.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ._patterns import CONTEXT_KINDS
from ._placeholder import Placeholders
from ._secrets import context_key, find_secrets

__all__ = ["SecretCounter", "secret_digest"]

# What the memos of texts read for secrets (:meth:`Redactor._scan`, :meth:`Redactor._read`) may hold: so
# many texts, and so many characters (texts and kept forms; a memo that would pass either is emptied
# first, and a text longer than the second is not remembered). A DSH log repeats its texts (a message in
# each request that carries it), so the memos save reading one again.
_MEMO = 20_000
_MEMO_CHARS = 32 * 2**20


def secret_digest(secret: str) -> bytes:
    """What tells two secrets apart in the summary (never the secret)."""
    return hashlib.blake2b(secret.encode("utf-8", "surrogatepass"), digest_size=16).digest()



@dataclass
class SecretCounter:
    """The secrets found while redacting with one set of placeholders.

    Attributes:
        placeholders: the placeholders of the redaction.
        secrets: secrets found, by kind (every occurrence).
        secret_values: a digest of each distinct secret, by kind (never the secret).
        strings: content strings replaced.
        kept: the strings kept (as they were, but for their secrets).
    """

    placeholders: Placeholders
    secrets: Counter[str] = field(default_factory=Counter)
    secret_values: dict[str, set[bytes]] = field(default_factory=dict)
    strings: int = 0
    kept: set[str] = field(default_factory=set)
    _scanned: dict[str, tuple[tuple[str, bytes], ...]] = field(default_factory=dict)
    _kept_texts: dict[tuple[str, str | None], tuple[str, tuple[tuple[str, bytes], ...]]] = field(default_factory=dict)
    _scanned_chars: int = 0
    _kept_chars: int = 0
    # a private key block a string continues (:class:`._key_blocks.KeyBlocks`): ``_held``, it was counted, its
    # digest not yet added; ``_hold``, the digest of what the string being read holds of it, to count
    # without adding it (its own match, :meth:`_tally`)
    _held: bool = False
    _hold: tuple[str, bytes] | None = None
    # the secrets the string being read holds part of a secret cut over strings (counted with it, once)
    _suppress: list[tuple[str, bytes]] = field(default_factory=list)

    def _scan(self, text: str) -> tuple[tuple[str, bytes], ...]:
        """The kind and a digest of each secret in ``text`` as written (remembered for repeated texts):
        what :meth:`_secrets` finds in a text without a quote, and in an object key."""
        found = self._scanned.get(text)
        if found is None:
            found = tuple((m.kind, secret_digest(text[m.start:m.end])) for m in find_secrets(text))
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
            new = self.placeholders.kept(text, lambda kind, secret: found.append((kind, secret_digest(secret))), key=key)
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
        name around it would give: :data:`._patterns.CONTEXT_KINDS`)."""
        found = tuple(secret for secret in self._secrets(text) if secret[0] not in CONTEXT_KINDS)
        if not found and text.strip():
            found = ((kind, secret_digest(text)),)
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
