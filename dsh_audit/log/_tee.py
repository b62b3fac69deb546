"""A second consumer of a log's lines as the reader reads them (:class:`LineTee`), so that the
validation rules need no second read of the file: every decoded line, then the file's end or the
decoding error that stopped it, and the rest of the file when the reader stops early."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from ..errors import UnreadableError
from ._decode import Line, TornTail

__all__ = ["LineTee"]


class LineTee(Protocol):
    """What sees every decoded line of a log as the reader reads it (``read_log``'s ``tee``), so
    that a second consumer (the validation rules) needs no second read of the file."""

    def feed(self, line: Line) -> bool:
        """One line, in file order; False when the tee wants no more lines."""

    def fail(self, error: UnreadableError) -> None:
        """Decoding stopped with ``error`` (corrupt zstd data, a decompression bomb): no more lines."""

    def end(self, torn: Sequence[TornTail]) -> None:
        """The end of the file; ``torn`` is what a crash left incomplete."""


class _Teed:
    """``iter_lines`` that also hands every line to a tee, and can read on for the tee alone."""

    def __init__(self, lines: Iterator[Line], tee: LineTee, torn: list[TornTail]) -> None:
        self._lines, self._tee, self._torn = lines, tee, torn
        self.active = True  # the tee still wants lines

    def __iter__(self) -> Iterator[Line]:
        return self

    def __next__(self) -> Line:
        try:
            line = next(self._lines)
        except StopIteration:
            if self.active:
                self.active = False
                self._tee.end(list(self._torn))
            raise
        except UnreadableError as exc:
            if self.active:
                self.active = False
                self._tee.fail(exc)
            raise
        except BaseException:
            self.active = False  # not the log's fault (a bad limit, an interrupt): the tee never ends
            raise
        if self.active and not self._tee.feed(line):
            self.active = False
        return line

    def drain(self) -> None:
        """Read the rest of the file for the tee (the reader stopped early: DSH refuses the log at
        its first problem, the tee may want to see every one); a decoding error goes to the tee."""
        try:
            while self.active:
                next(self)
        except (StopIteration, UnreadableError):
            pass

