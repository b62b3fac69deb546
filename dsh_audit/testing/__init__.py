"""Build valid DSH v0 session logs in Python: for tests, samples and property-based strategies.

:class:`LogBuilder` writes what DSH's agent loop writes (turns, steps, headers, streamed replies,
tool calls, retries, compaction, pruning, resume, fork) with deterministic ids and times, and
serialises it the way DSH stores it (packed chunk rows, multi-frame zstd, DSH's folder layout).

Example:
    >>> from dsh_audit.testing import LogBuilder
    >>> b = LogBuilder(session_id="demo")
    >>> with b.turn("Hi"):
    ...     with b.step():
    ...         _ = b.assistant("Hello!", reasoning="Greet back.")
    >>> b.lines()[0]
    '{"type":"session","version":0,"id":"demo","createdAt":1800000000000,"cwd":"/home/dev/project","delegationDepth":0}'
"""

from ._migrate import migrate_events
from ._parts import Reply, ToolCall, tool_schema
from ._storage import encode_segment, frames_bytes, jsonl_bytes, pack_chunk_runs, project_key
from ._writer import LogBuilder

__all__ = [
    "LogBuilder",
    "Reply",
    "ToolCall",
    "encode_segment",
    "frames_bytes",
    "jsonl_bytes",
    "migrate_events",
    "pack_chunk_runs",
    "project_key",
    "tool_schema",
]
