"""What a redaction derives from its salt, both from one slow scrypt of it: the salt's id a manifest records
(:func:`._manifest.salt_id`) and the key material of every placeholder (:class:`._plain.PlainPlaceholders`).

Each guess at a salt then costs a scrypt (N=2**14, r=8, p=1: 16 MiB, some 50-120 ms of one core), whether it is
checked against the id or against a known text of the bundle: before (key derivation 1), the placeholders were
keyed by a SHA-256 of the salt, so one known text confirmed a guess in a microsecond (review E, issue 17). The
id and the key are two blocks of scrypt's last step (PBKDF2-HMAC-SHA256 of the salt, each block an HMAC keyed by
the salt over the mixed memory and the block's number): the id is the first half of block 1, as every
dsh-audit since session 42 wrote it (so ids of either derivation compare), the key is block 2, which the id
does not give without the salt. A run derives once per salt: the result is kept in the process
(:data:`_MEMO` salts), so the tests and a family redacted with one salt pay it once.
"""

from __future__ import annotations

import functools
import hashlib

__all__ = ["KEY_DERIVATION", "KEY_DERIVATIONS", "derived", "subkey"]

#: The key derivation this dsh-audit's placeholders use (a manifest's ``key_derivation``): 2, scrypt. 1: a
#: SHA-256 of the salt, by every dsh-audit before it (whose manifests record none).
KEY_DERIVATION = 2
#: The key derivations a manifest may record (1 is implied by none recorded, and never written).
KEY_DERIVATIONS = (1, 2)
#: scrypt's cost (N; r=8, p=1) and its own salt, a fixed string (docs/redact.md): fixed, as a manifest's id is
#: compared with a salt given again.
_SCRYPT_N, _SCRYPT_SALT = 2 ** 14, b"dsh-audit-salt-id"
#: How many salts' derivations a process keeps (a run takes one; a test session a few dozen).
_MEMO = 64


@functools.lru_cache(maxsize=_MEMO)
def derived(salt: bytes) -> tuple[str, bytes]:
    """The salt's id (``scrypt:`` and 32 hex digits) and the placeholders' key material (32 bytes) of
    ``salt``, from one scrypt of it (memoised: the first call for a salt is the slow one).

    Example:
        >>> identity, key = derived(b"s")
        >>> identity[:7], len(identity), len(key), key.hex() not in identity, derived(b"t")[1] != key
        ('scrypt:', 39, 32, True, True)
    """
    blocks = hashlib.scrypt(salt, salt=_SCRYPT_SALT, n=_SCRYPT_N, r=8, p=1, maxmem=2 ** 25, dklen=64)
    return "scrypt:" + blocks[:16].hex(), blocks[32:]


def subkey(key: bytes, purpose: bytes) -> bytes:
    """A 32-byte key for one use (``purpose``: texts, images, digits) of the key material ``key``
    (:func:`derived`), keyed BLAKE2b of the purpose's name: no use's key tells another's.

    Example:
        >>> key = derived(b"s")[1]
        >>> len(subkey(key, b"texts")), subkey(key, b"texts") != subkey(key, b"images")
        (32, True)
    """
    return hashlib.blake2b(b"dsh-audit redact " + purpose, key=key, digest_size=32).digest()
