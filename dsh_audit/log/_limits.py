"""Limits on what decoding a log (or a compressed capture body) may cost: the decoded size and the
expansion ratio, from ``DSH_AUDIT_MAX_DECODED`` and ``DSH_AUDIT_MAX_RATIO``, which turn a
decompression bomb into a one-line refusal (``docs/hostile-inputs.md``)."""

from __future__ import annotations

import os
import re

from ..errors import UnreadableError, UsageError

__all__ = ["DEFAULT_MAX_DECODED", "DEFAULT_MAX_RATIO", "DecodeBudget", "decode_limits"]

#: Default limit on the decoded text of one log, in bytes (``DSH_AUDIT_MAX_DECODED``; 0: none).
DEFAULT_MAX_DECODED = 8 << 30
#: Default limit on decoded bytes per compressed byte of a zstd log (``DSH_AUDIT_MAX_RATIO``; 0: none).
DEFAULT_MAX_RATIO = 200
# The ratio is checked over the whole file read so far, once this much text has been decoded.
_RATIO_FLOOR = 4 << 20
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# ASCII digits only (int() refuses "²", which \d and isdigit() accept), at most 30 (int() refuses 4,301)
_SIZE = re.compile(r"\s*([0-9]{1,30})\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)
_WHOLE = re.compile(r"\s*([0-9]{1,30})\s*")


def _size_text(size: int) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def _quoted(value: str, keep: int = 40) -> str:
    """``value`` quoted for a message: its first ``keep`` characters when it is longer, and its length."""
    return repr(value) if len(value) <= keep else f"{value[:keep]!r}... ({len(value):,} characters)"


def decode_limits() -> tuple[int, int]:
    """``(max_decoded_bytes, max_ratio)`` from the environment (0 means no limit).

    ``DSH_AUDIT_MAX_DECODED`` is a size in bytes, with an optional binary suffix (``16G``,
    ``512MiB``); ``DSH_AUDIT_MAX_RATIO`` a whole number of decoded bytes per compressed byte.

    Raises:
        UsageError: a value that is not a size or a whole number.

    Example:
        >>> decode_limits() == (DEFAULT_MAX_DECODED, DEFAULT_MAX_RATIO)  # doctest: +SKIP
        True
    """
    size_text = os.environ.get("DSH_AUDIT_MAX_DECODED", "")
    ratio_text = os.environ.get("DSH_AUDIT_MAX_RATIO", "")
    max_decoded, max_ratio = DEFAULT_MAX_DECODED, DEFAULT_MAX_RATIO
    if size_text.strip():
        match = _SIZE.fullmatch(size_text)
        if match is None:
            raise UsageError(f"DSH_AUDIT_MAX_DECODED={_quoted(size_text)} is not a size",
                             hint="give bytes with an optional K, M, G or T suffix, e.g. 16G; 0 means no limit")
        max_decoded = int(match.group(1)) * _UNITS[match.group(2).upper()]
    if ratio_text.strip():
        whole = _WHOLE.fullmatch(ratio_text)
        if whole is None:
            raise UsageError(f"DSH_AUDIT_MAX_RATIO={_quoted(ratio_text)} is not a whole number",
                             hint="give decoded bytes per compressed byte, e.g. 1000; 0 means no limit")
        max_ratio = int(whole.group(1))
    return max_decoded, max_ratio


class DecodeBudget:
    """Counts the bytes decoded from one input (a log, a compressed capture body) and refuses it
    past the decoded-size or the expansion-ratio limit of :func:`decode_limits`.

    Example:
        >>> budget = DecodeBudget("body.gz")
        >>> budget.spend(1 << 20, 1 << 10)  # 1 KiB expanding to 1 MiB: below the ratio's floor
        >>> budget.decoded
        1048576
    """

    def __init__(self, path: str, *, what: str = "log", codec: str = "zstd") -> None:
        self.path, self.what, self.codec = path, what, codec  # words of the refusal: a gzip capture body is no log
        self.max_decoded, self.max_ratio = decode_limits()
        self.decoded = 0

    def spend(self, size: int, compressed: int | None) -> None:
        """Count ``size`` more decoded bytes; ``compressed``: compressed bytes read so far (None: plain)."""
        self.decoded += size
        if self.max_decoded and self.decoded > self.max_decoded:
            raise UnreadableError(
                f"refused: the decoded {self.what} passes the limit of {_size_text(self.max_decoded)} of text "
                "(DSH_AUDIT_MAX_DECODED)",
                path=self.path,
                hint=f"{self._real()}: DSH_AUDIT_MAX_DECODED={_next_size(self.max_decoded)} (0: no limit); "
                     "see docs/hostile-inputs.md")
        if compressed and self.max_ratio and self.decoded > _RATIO_FLOOR \
                and self.decoded > self.max_ratio * compressed:
            raise UnreadableError(
                f"refused as a decompression bomb: {compressed} {self.codec} bytes expand to more than "
                f"{self.decoded} bytes, past the limit of {self.max_ratio}x (DSH_AUDIT_MAX_RATIO)",
                path=self.path,
                hint=("real DSH logs expand 3-6x; " if self.what == "log" else "")
                + f"{self._real()}: DSH_AUDIT_MAX_RATIO={self.max_ratio * 10} (0: no limit); "
                "see docs/hostile-inputs.md")

    def _real(self) -> str:
        """The start of a refusal's hint (worded only when a refusal is made: a log spends once a piece)."""
        return f"if this is a real {self.what}, raise the limit"


def _next_size(size: int) -> str:
    doubled = 2 * size
    for suffix, scale in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if doubled % scale == 0:
            return f"{doubled // scale}{suffix}"
    return str(doubled)
