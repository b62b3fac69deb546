"""Progress of log reads: the raw bytes of each file a reader consumes, reported to a hook."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["READ_HOOK", "ConsumedBytes", "read_progress", "read_share"]

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


@contextmanager
def read_share(share: float) -> Iterator[None]:
    """Report the bytes of the logs read in this context to the read hook in effect (if any) as
    ``share`` of them: for a task whose work after reading a log takes as long as reading it, or
    longer (a bar of bytes reaches the log's end when its work ends, not when its last line is read).
    The shares reported add up to the bytes read times ``share``, rounded down.

    Args:
        share: the part of the task's work its reads are, above 0 and at most 1.

    Example:
        >>> seen = []
        >>> with read_progress(seen.append), read_share(1 / 3):
        ...     READ_HOOK.get()(3000), READ_HOOK.get()(3000)
        (None, None)
        >>> seen
        [1000, 1000]
    """
    hook = READ_HOOK.get()
    if hook is None or share >= 1:
        yield
        return
    read = told = 0

    def scaled(size: int) -> None:
        nonlocal read, told
        read += size
        now = int(read * share)
        if now > told:
            hook(now - told)
            told = now

    token = READ_HOOK.set(scaled)
    try:
        yield
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
