"""Progress of log reads: the raw bytes of each file a reader consumes, reported to a hook."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["READ_HOOK", "ConsumedBytes", "ReadShare", "read_progress", "read_share"]

# Raw bytes consumed are reported to the read hook in steps of at least this much (and at the end).
_REPORT_STEP = 1 << 20
READ_HOOK: ContextVar[Callable[[int], None] | None] = ContextVar("dsh_audit_read_hook", default=None)


@contextmanager
def read_progress(hook: Callable[[int], None]) -> Iterator[None]:
    """Report the raw bytes of every log read in this context: ``hook(size)`` with the bytes of the
    file consumed since its last call (compressed bytes for zstd), about once per MiB and at the end.

    A log keeps the hook that was in effect when its first line was read, so the events of a log
    opened in the block and read after it still report to it. The hook is per context
    (:mod:`contextvars`): another thread or asyncio task is not reported.

    Args:
        hook: called with a positive byte count, in the thread that reads; it must be cheap.

    Example:
        >>> consumed = []
        >>> with read_progress(consumed.append):
        ...     log = read_log("session.jsonl")  # doctest: +SKIP
    """
    token = READ_HOOK.set(hook)
    try:
        yield
    finally:
        READ_HOOK.reset(token)


class ReadShare:
    """The read hook of a :func:`read_share` block: each size handed to it goes on to the hook in
    effect before the block, times :attr:`share`, which the task may change as it learns what its
    work is (set it to 1 once it knows the rest of its reads go along with the work: a log read and
    accounted in one pass). What it has handed on adds up to the sum of each size times the share
    it was read at, rounded down."""

    __slots__ = ("done", "hook", "share", "told")

    def __init__(self, hook: Callable[[int], None] | None, share: float) -> None:
        self.hook = hook
        self.share = share
        self.done = 0.0
        self.told = 0

    def __call__(self, size: int) -> None:
        if self.hook is None:
            return
        self.done += size * self.share
        now = int(self.done)
        if now > self.told:
            self.hook(now - self.told)
            self.told = now


@contextmanager
def read_share(share: float) -> Iterator[ReadShare]:
    """Report the bytes of the logs read in this context to the read hook in effect (if any) as
    ``share`` of them: for a task that reads a log whole, then works on it about as long as the
    read took, or longer (a bar of bytes reaches the log's end when its work ends, not when its last
    line is read). The block's :class:`ReadShare` says at which share the bytes read from then on
    count (a log keeps the hook in effect when its first line is read, so the share is set before
    it is: the block holds the whole task, and the task sets the share once it knows).

    Args:
        share: the part of the task's work its reads are, above 0 and at most 1.

    Example:
        >>> seen = []
        >>> with read_progress(seen.append), read_share(1 / 3) as scaled:
        ...     READ_HOOK.get()(3000), READ_HOOK.get()(3000)
        ...     scaled.share = 1
        ...     READ_HOOK.get()(3000)
        (None, None)
        >>> seen
        [1000, 1000, 3000]
    """
    scaled = ReadShare(READ_HOOK.get(), share)
    if scaled.hook is None:
        yield scaled
        return
    token = READ_HOOK.set(scaled)
    try:
        yield scaled
    finally:
        READ_HOOK.reset(token)


class ConsumedBytes:
    """Raw bytes of one file consumed, handed to a read hook in steps of ``_REPORT_STEP``."""

    __slots__ = ("hook", "pending")

    def __init__(self, hook: Callable[[int], None]) -> None:
        self.hook = hook
        self.pending = 0

    def add(self, size: int) -> None:
        self.pending += size
        if self.pending >= _REPORT_STEP:
            self.hook(self.pending)
            self.pending = 0

    def flush(self) -> None:
        if self.pending:
            self.hook(self.pending)
            self.pending = 0
