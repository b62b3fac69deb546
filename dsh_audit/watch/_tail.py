"""A growing log file as a blocking stream that hands over only complete records.

The decoder (:func:`dsh_audit.log.read_stream`) reads this stream as if it were a whole file;
``read`` blocks until the writer has finished the next line (plain JSONL) or frame (zstd), so a
record still being written is waited for, never reported as damage. The stream ends when the
watch stops: whatever is still incomplete then is handed over and the decoder reports it as the
torn tail DSH would. An incomplete tail that does not grow for ``settle`` seconds is handed over
too (the writer has gone); while one is waited for, the file is looked at every few tenths of a
second whatever the notifications say. The file is only ever opened for reading, and it is closed
while the session is idle so that ended sessions hold no file handle.

A file that shrinks, or whose path now names another file (another inode), was replaced: DSH
only appends, so nothing read so far belongs to the new content and :class:`LogReplaced` is
raised (the watch starts that log again from its first byte).

The first ``history`` bytes are what the file held when watching began: plain text is never
handed over across that boundary in one read, so while :attr:`TailStream.in_history` holds, every
line the decoder has been given lies wholly within them (a line completed later does not).

A stream can also be retired (:meth:`TailStream.retire`: the watch needs its reader for another
log): it ends at its next wait at a record boundary and keeps an incomplete tail for the next
reader of the file. Whatever the decoder concludes after the stream ended
(:attr:`TailStream.finished`) depends on where the bytes stopped, not only on what they say (a
request whose usage record had not come yet): the watch shows it as provisional, or, for a retired
stream, not at all. A log read again from its first byte is given what was read of it before
(``expect``): another file at its path, or fewer bytes, is a replacement, as for a stream that
never stopped.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from typing import BinaryIO

from ..errors import UnreadableError
from ..log import complete_length, is_zstd_head, open_regular
from ._notify import Wake

__all__ = ["LogReplaced", "TailStream"]

_CHUNK = 1 << 22  # the most bytes read from the file at one look


class LogReplaced(UnreadableError):
    """The followed file was truncated or replaced by another file: read it again from its start."""


class TailStream:
    """Follow ``path`` from its start; see the module docstring.

    Args:
        path: the log file.
        stop: set when the watch ends; reads then return what is left, and then end of file.
        settle: seconds an incomplete tail may stay unchanged before it is taken as torn.
        poll: seconds between looks at the file while waiting, when no ``wake`` is given.
        release_after: seconds of idleness (at a record boundary) after which the file is closed.
        wake: when to look at the file next (file-system notifications or an adaptive poll,
            :class:`~dsh_audit.watch.Notifier`).
        history: the file's size when watching began (its content then is history, not new).
        expect: for a log read again from its first byte, the file read before (its device and
            inode, None when it was never opened) and how many of its bytes were read.
    """

    def __init__(self, path: str, *, stop: threading.Event, settle: float = 10.0, poll: float = 0.05,
                 release_after: float = 5.0, wake: Wake | None = None, history: int = 0,
                 expect: tuple[tuple[int, int] | None, int] | None = None) -> None:
        self.path = path
        self.stop = stop
        self.settle, self.poll, self.release_after = settle, poll, release_after
        self.wake = wake if wake is not None else Wake(notified=False, fast=poll, slow=poll, safety=poll)
        self.torn = False  # an incomplete tail was handed over because the writer went away
        self.identity: tuple[int, int] | None = expect[0] if expect else None  # (device, inode) of the file read
        self._floor = expect[1] if expect else 0  # fewer bytes than this: the file was truncated
        self.gone = False  # the file was deleted
        self.retiring = False  # ending to free its reader: an incomplete tail is kept for the next one
        #: since when (``time.monotonic``) the stream has waited at a record boundary, every byte
        #: of the file read; None while it reads or waits for a record to complete
        self.idle_since: float | None = None
        self._end_requested = False
        self._finished = False
        self._file: BinaryIO | None = None
        self._offset = 0
        self._handed = 0  # bytes handed to the decoder
        self.history = history
        self._raw = bytearray()  # read from the file, not yet a complete record
        self._ready = bytearray()  # complete records not yet read by the decoder
        self._zstd: bool | None = None
        self._ended = False
        self._last_growth = time.monotonic()

    @property
    def offset(self) -> int:
        """Bytes of the file read so far."""
        return self._offset

    @property
    def grown_at(self) -> float:
        """When (``time.monotonic``) bytes were last read from the file (when the stream was made,
        before any)."""
        return self._last_growth

    @property
    def finished(self) -> bool:
        """Whether the stream has ended: what the decoder is handed from now on is the rest of what
        was read, then end of file."""
        return self._finished

    @property
    def in_history(self) -> bool:
        """Whether everything handed to the decoder so far was in the file when watching began."""
        return self._handed <= self.history

    # -- the file ----------------------------------------------------------------------------

    def _pull(self) -> bool:
        """Read whatever the writer has appended; True when something was."""
        try:
            info = os.stat(self.path)
        except OSError as exc:
            raise self._unreadable(exc) from None
        size, identity = info.st_size, (info.st_dev, info.st_ino)
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end: never read one
            self.identity = identity  # the file refused: the watch reports it once (not a replacement)
            open_regular(self.path).close()  # refused (its kind, a hint) as every command refuses it
            return False  # a regular file since the look: another file took the path (read from its start)
        if self.identity is not None and identity != self.identity:
            self._release()
            raise LogReplaced("another file replaced the log while it was watched", path=self.path,
                              hint="DSH only appends; its new content is read from the start")
        if size < max(self._offset, self._floor):
            self._release()
            read = max(self._offset, self._floor)
            raise LogReplaced(f"the log shrank from {read} to {size} bytes while it was watched",
                              path=self.path, hint="DSH only appends; its new content is read from the start")
        if size == self._offset:
            return False
        if self._file is None:
            try:
                self._file = open(self.path, "rb")  # noqa: SIM115 - closed when idle or at the end
            except OSError as exc:
                self.identity = identity  # the file refused: the watch reports it once (not a replacement)
                raise UnreadableError(f"cannot open the log: {exc.strerror}", path=self.path) from None
            opened = os.fstat(self._file.fileno())
            if self.identity is not None and (opened.st_dev, opened.st_ino) != self.identity:
                self._release()  # replaced between the look and the open
                raise LogReplaced("another file replaced the log while it was watched", path=self.path,
                                  hint="DSH only appends; its new content is read from the start")
            self.identity = (opened.st_dev, opened.st_ino)
            self._file.seek(self._offset)
        data = self._file.read(min(size - self._offset, _CHUNK))  # a watch that lags holds a chunk, not the backlog
        if not data:
            return False
        self._offset += len(data)
        self._raw += data
        self._last_growth = time.monotonic()
        self.idle_since = None
        if self._zstd is None and len(self._raw) >= 4:
            self._zstd = is_zstd_head(bytes(self._raw[:4]))
        if self._zstd is not None:
            done = complete_length(bytes(self._raw), zstd=self._zstd)
            self._ready += self._raw[:done]
            del self._raw[:done]
        return True

    def _unreadable(self, exc: OSError) -> UnreadableError:
        """Why the file cannot be looked at: a symbolic link that leads nowhere (a loop, a missing
        target) as every command says it (:func:`~dsh_audit.log.open_regular`), said once until
        another file takes the path, like a deleted log (``gone``)."""
        if os.path.islink(self.path):
            try:
                open_regular(self.path).close()
            except UnreadableError as refused:
                self.gone = True
                return refused
        if isinstance(exc, FileNotFoundError):
            self.gone = True
            return UnreadableError("the log was deleted while it was watched", path=self.path, hint=(
                "its requests shown stay counted; a file written at its path is read from its first byte, "
                "and its session written again elsewhere under the watched paths goes on where it stopped; "
                "with --polling, --rescan sets how often it is looked for"))
        return UnreadableError(f"cannot read the log: {exc.strerror}", path=self.path)

    def _finish(self, *, torn: bool) -> None:
        """No more bytes will come: hand over the incomplete tail (a retiring stream keeps it for
        the next reader of the file), then end of file."""
        if self.retiring:
            self._offset -= len(self._raw)
            self._raw.clear()
        self._finished = True
        self.torn = torn and bool(self._raw)
        self._ready += self._raw
        self._raw.clear()
        self._ended = True
        self._release()

    def _release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _wait(self, need: int) -> None:
        """Block until ``need`` complete bytes are ready, or the stream has ended."""
        while len(self._ready) < need and not self._ended:
            if self._pull():
                self.wake.grew()
                continue
            if self.stop.is_set() or self._end_requested:
                self._finish(torn=False)
                continue
            idle = time.monotonic() - self._last_growth
            if self._raw and idle >= self.settle:
                self._finish(torn=True)
                continue
            if not self._raw and idle >= self.release_after:
                self._release()
            if self._raw:
                self.idle_since = None
            elif self.idle_since is None:
                self.idle_since = time.monotonic()
            # an incomplete record is looked at again soon (a notification may be coalesced or lost)
            self.wake.wait(at_most=min(self.poll * 4, max(self.settle - idle, self.poll)) if self._raw else None)

    # -- the stream the decoder reads ----------------------------------------------------------

    def peek(self, size: int = 1) -> bytes:
        self._wait(size)
        return bytes(self._ready[:size])

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            raise ValueError("a followed log is read in pieces")
        # Plain text is handed over line by line as it completes; zstd frames are read in exact
        # pieces by the frame walker, and a whole frame is ready before its first byte is.
        self._wait(size if self._zstd else 1)
        if not self._zstd and self._handed < self.history:
            size = min(size, self.history - self._handed)  # never across the history boundary
        out = bytes(self._ready[:size])
        del self._ready[:size]
        self._handed += len(out)
        return out

    def end(self) -> None:
        """End the stream at its next wait (a newer log generation took its place): what is
        complete is read, then end of file; an incomplete tail is not reported as torn."""
        self._end_requested = True
        self.wake.set()

    def retire(self) -> None:
        """End the stream at its next wait, without handing over an incomplete tail (the next
        reader of the file reads it whole): the watch needs this stream's reader for another log."""
        self.retiring = True
        self.end()

    def close(self) -> None:
        self._ended = True
        self._release()
