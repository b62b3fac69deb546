"""Watching DSH sessions while they run: each request's cache verdict and cost, and every
prefix-cache break, the moment the log shows it.

:func:`watch` follows every log under some paths (new ones too), one thread per log, each reading
only the bytes DSH appends (:class:`TailStream`: complete lines and zstd frames, a torn tail
reported only once the writer has gone) and feeding the streaming replay and attribution
(:func:`follow_log`), so a session's state is kept, never re-read.

Example:
    >>> from dsh_audit.watch import watch
    >>> for item in watch(["~/.dsh/sessions"], idle_exit=30):  # doctest: +SKIP
    ...     print(item.to_json())
"""

from ._follow import follow_log
from ._model import WatchItem, WatchNote, WatchRequest, WatchSummary
from ._tail import TailStream
from ._watch import watch

__all__ = [
    "TailStream",
    "WatchItem",
    "WatchNote",
    "WatchRequest",
    "WatchSummary",
    "follow_log",
    "watch",
]
