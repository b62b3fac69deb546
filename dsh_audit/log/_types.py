"""The values the log layer produces: the session header and one event."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._frozen import frozen_builder

__all__ = ["Event", "SessionHeader", "SURFACE_TYPES", "KNOWN_EVENT_TYPES", "CHUNK_ROW_TYPES", "new_event"]

# v0-v2 surface types, plus v3 system/message and v4 developer/message (read from v3/v4 logs only).
SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result", "system/message", "developer/message"})
CHUNK_ROW_TYPES = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})

# DSH 0.1.0-rc.8 packages/core/session/src/known-event-types.ts (format v0).
KNOWN_EVENT_TYPES = frozenset(
    """agent-preset/selected agent/inbox/spliced approval/asked approval/decided approval/policy
    assistant/chunk assistant/message command/done command/run compaction/end compaction/prune
    compaction/start compaction/summary feedback/record goal/change hook/invoked hook/result
    llm/retry llm/retry-started permission/preset plan/mode request/context request/header
    sandbox/mode schedule/change session/end-seed session/title session/title-llm-request
    step/end step/start subagent/descriptor team/member team/message/delivered
    team/message/queued team/task todo/write tool-workflow/agent-end tool-workflow/agent-start
    tool-workflow/run-end tool-workflow/run-start tool/call tool/code-dispatch
    tool/code-dispatch-start tool/result turn/end turn/start user/message
    web/deepseek-search-llm-request""".split()
)


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """The first line of a log (spec §1.6), plus what a lenient read had to change."""

    id: str
    version: int
    created_at: int
    cwd: str | None = None
    parent_session: str | None = None
    seed_length: int | None = None
    origin: str | None = None
    delegation_depth: int = 0
    agent_preset: str | None = None
    is_seeded: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Event:
    """One session event after unpacking and legacy upgrades (spec §1.5).

    ``data`` is the parsed JSON payload, shared and never mutated. ``line`` is the physical line
    of the decoded log the event came from (a packed row yields several events on one line).
    """

    seq: int
    type: str
    time: int
    data: Any
    line: int
    surface_op: Any = None
    source_event_seqs: list[int] | None = None
    ignorable: bool = False


#: ``Event(...)`` (the same arguments), made about three times faster: for the reader, which
#: makes one event per record (``new_event(3, "turn/start", 10, {}, 4) == Event(3, "turn/start", 10, {}, 4)``).
new_event = frozen_builder(Event)
