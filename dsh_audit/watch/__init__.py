"""Watching DSH sessions while they run: each request's cache verdict and cost, and every
prefix-cache break, the moment the log shows it.

:func:`watch` follows every log under some paths (new ones too) with a bounded number of reader
threads: a log that may grow is read by one of them, which reads only the bytes DSH appends
(:class:`TailStream`: complete lines and zstd frames, a torn tail reported only once the writer has
gone) and feeds the streaming replay and attribution (:func:`follow_log`), so a session's state is
kept while it runs; a log that does not change is looked at with a ``stat`` (or a file-system
notification) and read again from its start, silently up to where it stood, once it changes.

Example:
    >>> from dsh_audit.watch import watch
    >>> for item in watch(["~/.dsh/sessions"], idle_exit=30):  # doctest: +SKIP
    ...     print(item.to_json())
"""

from ._follow import follow_log
from ._model import CaptureNote, WatchItem, WatchNote, WatchRequest, WatchSummary
from ._tail import TailStream
from ._watch import watch

__all__ = [
    "CaptureNote",
    "TailStream",
    "WatchItem",
    "WatchNote",
    "WatchRequest",
    "WatchSummary",
    "follow_log",
    "watch",
]
