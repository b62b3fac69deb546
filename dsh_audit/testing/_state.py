"""``BuilderState``: the typed state :class:`~dsh_audit.testing.LogBuilder` and its mixins share.

``LogBuilder`` is assembled from :class:`~dsh_audit.testing._output.OutputMixin`,
:class:`~dsh_audit.testing._maintenance.MaintenanceMixin` and
:class:`~dsh_audit.testing._replies.ReplyMixin`, which read and write the builder's state and call
a few of its core methods. Every mixin inherits this class, so the type checker sees that state
and those methods with their real types without any mixin importing ``LogBuilder``. Nothing here
exists at run time beyond an empty class: the attributes are set in ``LogBuilder.__init__`` and
the methods are ``LogBuilder``'s own or a mixin's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _parts as P

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["BuilderState"]


class BuilderState:
    """The attributes a log builder holds, and the core methods the mixins call.

    Attributes:
        session_id: the header ``id``.
        cwd: the header ``cwd``, or None.
        created_at: the header ``createdAt``.
        lineage: header ``parentSession``, ``seedLength`` and ``origin`` (None omits a field).
        delegation_depth: the header ``delegationDepth``.
        agent_preset: the header ``agentPreset``, or None.
        context_window: the ``contextWindow`` written in ``request/context``, or None.
        clock: the fixed clock that times events.
        ids: the deterministic message and call id source.
    """

    session_id: str
    cwd: str | None
    created_at: int
    lineage: dict[str, str | int | None]
    delegation_depth: int
    agent_preset: str | None
    context_window: int | None
    clock: P.Clock
    ids: P.Ids
    # every event written, in seq order (envelopes in DSH key order)
    _events: list[dict[str, Any]]
    # the event count at the end of each closed write batch
    _batch_ends: list[int]
    # the surface nodes (seqs), as the surface fold leaves them
    _surface: list[int]
    # the canonical header the next attempt will use
    _proposal: dict[str, Any]
    # the latest header the log holds, or None before the first one
    _logged_header: dict[str, Any] | None
    # whether this loop instance has written its first header yet
    _instance_header: bool
    # the latest request/context data written, or None
    _context: dict[str, Any] | None
    _turn: int
    _turn_open: bool
    _step: int
    _step_open: bool
    # prompts waiting for the turn's first step
    _queued: list[dict[str, Any]]
    # tool calls by id: name, arguments, turn, step and the tool/call seq once written
    _calls: dict[str, dict[str, Any]]
    # attempts made in the open step
    _attempts: int

    if TYPE_CHECKING:
        # Declarations only: LogBuilder defines these (see _writer.py; _chunk is in _replies.py).

        def __init__(self, **options: Any) -> None:
            """LogBuilder's keyword-only constructor (``fork`` calls it through ``type(self)``)."""

        def append(self, etype: str, data: Any, *, source_event_seqs: Sequence[int] | None = None,
                   surface_op: Any = None, time: int | None = None) -> int: ...

        def flush(self) -> None: ...

        def configure(self, *, provider: Any = ..., model: Any = ..., reasoning_effort: Any = ...,
                      temperature: Any = ..., max_tokens: Any = ..., stop: Any = ...,
                      adapter_defaults: Any = ..., system: Any = ..., tools: Any = ...) -> None: ...

        def _before_attempt(self) -> None: ...

        def _chunk(self, chunk: dict[str, Any]) -> int: ...
