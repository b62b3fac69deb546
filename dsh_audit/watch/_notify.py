"""How a watch learns that a log grew or a session appeared: file-system notifications through
the ``watchdog`` library when it is installed, else polling with an adaptive interval.

Either way each log being read has a :class:`Wake` that its :class:`~dsh_audit.watch.TailStream`
waits on; a log no thread reads is looked at by the watch itself, which asks for the files changed
since it last asked (:meth:`Notifier.touched`). With notifications a change to the file sets it at
once, and the stream still looks at the file every ``safety`` seconds (a notification lost on a
network file system, or a path seen through a symbolic link, delays a record, never loses it); a
new file or folder under a watched root asks for a rescan. Without notifications the stream looks
at the file every ``fast`` seconds after it grew, twice as long after each look that found
nothing, up to ``slow`` seconds.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

__all__ = ["Notifier", "Wake"]


class Wake:
    """When a followed file should be looked at next (see the module docstring)."""

    def __init__(self, *, notified: bool, fast: float, slow: float, safety: float) -> None:
        self.event = threading.Event()
        self.notified = notified
        self.fast, self.slow, self.safety = fast, slow, safety
        self.interval = fast

    def grew(self) -> None:
        """The file grew: look again soon."""
        self.interval = self.fast

    def wait(self, at_most: float | None = None) -> None:
        """Sleep until the file changes (notifications) or the next look is due, ``at_most``
        seconds when given (an incomplete record is waited for with a short poll)."""
        if self.notified:
            self.event.wait(self.safety if at_most is None else min(self.safety, at_most))
        else:
            self.event.wait(self.interval if at_most is None else min(self.interval, at_most))
            self.interval = min(self.interval * 2, self.slow)
        self.event.clear()

    def set(self) -> None:
        self.event.set()


class Notifier:
    """File-system notifications for some roots, or nothing (polling) when ``watchdog`` is not
    installed or cannot watch them.

    Attributes:
        method: how changes are noticed, for the watch's first line.
        rescan: set when something was created, moved or deleted under a root.
    """

    def __init__(self, roots: list[str], *, use_notifications: bool = True, fast: float = 0.05,
                 slow: float = 0.5, safety: float = 2.0) -> None:
        self.rescan = threading.Event()
        self.fast, self.slow, self.safety = fast, slow, safety
        self._wakes: dict[str, Wake] = {}
        self._touched: set[str] = set()  # files changed since the watch last asked (notifications)
        self._lock = threading.Lock()
        self._observer: Any = None
        reason = "notifications were turned off"
        if use_notifications:
            reason = self._start(roots)
        self.method = ("file-system notifications (watchdog)" if self._observer is not None else
                       f"polling every {fast:g}-{slow:g} s ({reason})")

    @property
    def notified(self) -> bool:
        return self._observer is not None

    def _start(self, roots: list[str]) -> str:
        """Start an observer over ``roots``; the reason why not when it cannot be started."""
        try:  # looked up at run time: the watch works, and type-checks, without the package
            events = importlib.import_module("watchdog.events")
            observers = importlib.import_module("watchdog.observers")
        except ImportError:
            return "the watchdog package is not installed"

        def on_any_event(_handler: Any, event: Any) -> None:
            self._changed(event.event_type, event.src_path, getattr(event, "dest_path", ""))

        handler = type("_Handler", (events.FileSystemEventHandler,), {"on_any_event": on_any_event})
        observer = observers.Observer()
        try:
            scheduled = 0
            for root in roots:
                if os.path.isdir(root):
                    observer.schedule(handler(), os.path.abspath(root), recursive=True)
                    scheduled += 1
                elif os.path.isfile(root):
                    observer.schedule(handler(), os.path.dirname(os.path.abspath(root)), recursive=False)
                    scheduled += 1
            if not scheduled:
                return "no watched folder exists yet"
            observer.daemon = True
            observer.start()
        except Exception as exc:  # noqa: BLE001 - an inotify limit or an unsupported file system: poll
            return f"notifications unavailable: {type(exc).__name__}: {exc}"
        self._observer = observer
        return ""

    def _changed(self, kind: str, *paths: Any) -> None:
        for raw in paths:
            if not raw:
                continue
            path = os.fsdecode(raw)
            with self._lock:
                self._touched.add(path)
                wake = self._wakes.get(path)
            if wake is not None:
                wake.set()
        if kind in ("created", "moved", "deleted"):
            self.rescan.set()

    def touched(self) -> set[str]:
        """The files (absolute paths) a notification said changed since the last call; always
        empty when polling."""
        with self._lock:
            touched, self._touched = self._touched, set()
        return touched

    def wake_for(self, path: str) -> Wake:
        """The :class:`Wake` of a followed file (a new one replaces the one it had)."""
        wake = Wake(notified=self.notified, fast=self.fast, slow=self.slow, safety=self.safety)
        with self._lock:
            self._wakes[os.path.abspath(path)] = wake
        return wake

    def forget(self, path: str, wake: Wake) -> None:
        with self._lock:
            if self._wakes.get(os.path.abspath(path)) is wake:
                del self._wakes[os.path.abspath(path)]

    def wake_all(self) -> None:
        with self._lock:
            wakes = list(self._wakes.values())
        for wake in wakes:
            wake.set()

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
