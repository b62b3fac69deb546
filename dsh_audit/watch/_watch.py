"""Watch every session under some paths: one follower thread per log, results in one queue.

Each log found under the paths (at the start, and by a rescan every ``rescan`` seconds after)
gets a thread that runs :func:`follow_log` over a :class:`TailStream`; the caller iterates
:func:`watch` in its own thread and gets every follower's items as they come. Setting ``stop``
ends the watch: each stream hands over what it holds and ends, so torn tails are reported the way
DSH would report them, and the iteration ends once every follower has finished.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..cache import PriceBook, load_prices
from ..errors import DshAuditError
from ..log import default_sessions_root, discover
from ._follow import follow_log
from ._model import WatchItem, WatchNote
from ._tail import TailStream

__all__ = ["watch"]

_DONE = object()


@dataclass
class _Follower:
    stream: TailStream
    thread: threading.Thread
    start_size: int


def _find(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The logs under ``paths`` now; a folder that holds none yet is not an error (watch waits)."""
    found: list[Path] = []
    for path in paths:
        try:
            found.extend(discover([path]))
        except DshAuditError:
            continue
    return found


def watch(paths: Sequence[str | os.PathLike[str]] = (), *, stop: threading.Event | None = None,
          since: float | None = None, rescan: float = 1.0, settle: float = 10.0, poll: float = 0.05,
          idle_exit: float | None = None, exit_after: float | None = None, lenient: bool = False,
          max_version: int | None = None, prices: PriceBook | None = None) -> Iterator[WatchItem]:
    """Follow every session log under ``paths`` (default ``$DSH_HOME/sessions``) until ``stop``.

    Logs that exist when watching begins are replayed silently up to their current end (their
    requests are left out unless the log was modified at or after ``since``, and then come with
    ``history`` set); logs that appear later are followed and reported from their first byte.

    Args:
        paths: log files, session folders or a sessions root.
        stop: set it (from another thread or a signal handler) to end the watch.
        since: seconds since the epoch: also report the history of logs modified since then.
        rescan: seconds between looks for new logs.
        settle: seconds an incomplete record may stay unchanged before it is a torn tail.
        poll: seconds between looks at each followed file.
        idle_exit: end the watch once no followed log has grown for this many seconds.
        exit_after: end the watch after this many seconds.
        lenient: header leniency (tokenised test fixtures).
        max_version: the newest log format version to read (default: every released one).
        prices: the price table (default: :func:`dsh_audit.cache.load_prices`).

    Example:
        >>> for item in watch(["~/.dsh/sessions"], exit_after=60):  # doctest: +SKIP
        ...     print(item.to_json())
    """
    stop = stop if stop is not None else threading.Event()
    roots = [os.fspath(p) for p in paths] or [str(default_sessions_root())]
    prices = prices if prices is not None else load_prices()
    out: queue.Queue[object] = queue.Queue()
    followers: dict[str, _Follower] = {}
    began = time.monotonic()

    def run(stream: TailStream, start_size: int, replay_history: bool) -> None:
        def history() -> bool:
            return stream.offset <= start_size

        try:
            for item in follow_log(stream, prices=prices, lenient=lenient, max_version=max_version,
                                   history=history):
                if replay_history or not getattr(item, "history", False):
                    out.put(item)
        except Exception as exc:  # noqa: BLE001 - one log's failure must not end the watch
            out.put(WatchNote(time.time(), stream.path, "error", f"{type(exc).__name__}: {exc}"))
        finally:
            stream.close()
            out.put(_DONE)

    def start(path: Path, *, existing: bool) -> None:
        try:
            stat = path.stat()
        except OSError:
            return
        size = stat.st_size if existing else 0
        recent = since is not None and stat.st_mtime >= since
        stream = TailStream(str(path), stop=stop, settle=settle, poll=poll)
        thread = threading.Thread(target=run, args=(stream, size, recent or not existing),
                                  name=f"watch {path.name}", daemon=True)
        followers[str(path)] = _Follower(stream, thread, size)
        thread.start()

    def scan(*, existing: bool) -> None:
        for path in _find(roots):
            if str(path) not in followers:
                start(path, existing=existing)

    scan(existing=True)
    last_scan = last_growth = time.monotonic()
    grown = sum(f.stream.offset for f in followers.values())
    finished = 0
    while True:
        now = time.monotonic()
        if not stop.is_set():
            if exit_after is not None and now - began >= exit_after:
                stop.set()
            elif now - last_scan >= rescan:
                scan(existing=False)
                last_scan = now
            offsets = sum(f.stream.offset for f in followers.values())
            if offsets != grown:
                grown, last_growth = offsets, now
            elif idle_exit is not None and now - last_growth >= idle_exit:
                stop.set()
        if stop.is_set() and finished == len(followers):
            return
        try:
            item = out.get(timeout=poll)
        except queue.Empty:
            continue
        if item is _DONE:
            finished += 1
        else:
            yield item  # type: ignore[misc]
