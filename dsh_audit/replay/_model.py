"""What replay produces: one :class:`Request` per LLM call a log implies, and a :class:`ReplayResult`.

A request is a value: the header in force and the exact messages the log held when the call was
made (spec §7.3-§7.4, §8.4), plus the usage and finish its response recorded. The replay side
findings (skipped steps, notes) travel separately in the result; the surface replacements a
report quotes are kept by the session's evidence (:class:`dsh_audit.session.LogEvidence`), not
here, so a long log's replay holds none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._frozen import frozen_builder

__all__ = ["Digest", "ReplayResult", "Request", "RequestTime", "request_of"]


class Digest:
    """The hex SHA-256 of a request's messages (``JSON.stringify``, spec §8.5), given or computed
    the first time it is read.

    A loop request's digest covers its whole history: computing it for every request whether or
    not anyone reads it would cost O(history) after every surface replace. Pickles as its value.

    Example:
        >>> Digest(lambda: "ab").hex
        'ab'
    """

    __slots__ = ("_compute", "_hex")

    def __init__(self, value: str | Callable[[], str]) -> None:
        self._hex: str | None = value if isinstance(value, str) else None
        self._compute: Callable[[], str] | None = None if isinstance(value, str) else value

    @property
    def hex(self) -> str:
        if self._hex is None:
            assert self._compute is not None
            self._hex, self._compute = self._compute(), None
        return self._hex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Digest) and self.hex == other.hex

    def __hash__(self) -> int:
        return hash(self.hex)

    def __repr__(self) -> str:
        return f"Digest({self.hex!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Digest, (self.hex,))


@dataclass(frozen=True, slots=True)
class RequestTime:
    """When a request was sent and answered, in seconds since the epoch, from the log's event times.

    ``done`` is ``None`` when the log holds no answer time.
    """

    sent: float
    done: float | None


@dataclass(frozen=True, slots=True)
class Request:
    """One LLM request the log implies.

    ``kind`` is ``loop`` (an agent-loop attempt), ``compaction`` (a summary call), ``title`` or
    ``search`` (a web-search call, whose literal body is logged).
    ``messages`` are the exact message objects (shared with the log, never mutate them).
    For auxiliary calls ``header`` is the header in force (compaction) or a synthetic
    ``{config:{provider, model, maxTokens}, system}`` built from the logged call (title).
    """

    index: int
    kind: str
    session_id: str
    turn: int | None
    step: int | None
    attempt: int
    step_start_seq: int | None
    first_chunk_seq: int
    header: dict[str, Any] | None
    header_seq: int | None
    header_reason: str | None
    messages: Sequence[dict[str, Any]]
    message_seqs: Sequence[int]
    digest: Digest
    context: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    message_usage: dict[str, Any] | None = None
    finish: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    time: RequestTime | None = None

    @property
    def messages_sha256(self) -> str:
        """Hex SHA-256 of ``JSON.stringify(messages)``, the digest DSH's goldens use."""
        return self.digest.hex

    @property
    def message_count(self) -> int:
        return len(self.messages)

    @property
    def config_seq(self) -> int:
        """The seq a refusal about how the request is sent is placed at: its header's (whose config
        names the route, model and options), else its first chunk's (a title call's synthetic header)."""
        return self.header_seq if self.header_seq is not None else self.first_chunk_seq

    def summary(self) -> dict[str, Any]:
        """The JSON row of ``dsh-audit requests --json`` (no message bodies)."""
        return {
            "index": self.index,
            "session_id": self.session_id,
            "kind": self.kind,
            "turn": self.turn,
            "step": self.step,
            "attempt": self.attempt,
            "step_start_seq": self.step_start_seq,
            "first_chunk_seq": self.first_chunk_seq,
            "header_seq": self.header_seq,
            "header_reason": self.header_reason,
            "message_count": self.message_count,
            "messages_sha256": self.messages_sha256,
            "header": self.header,
            "context": self.context,
            "usage": self.usage,
            "message_usage": self.message_usage,
            "finish": self.finish,
            **({"extra": self.extra} if self.extra else {}),
        }

    def to_json(self) -> dict[str, Any]:
        """Everything, messages included (``dsh-audit show``)."""
        return {**self.summary(), "message_seqs": list(self.message_seqs), "messages": list(self.messages)}


#: ``Request(...)``, made by plain assignment (:func:`~dsh_audit._frozen.frozen_builder`):
#: every loop attempt is one
_new_request = frozen_builder(Request)


def request_of(index: int, given: dict[str, Any]) -> Request:
    """``Request(index=index, **given)``, about three times faster (every loop attempt is one).

    Example:
        >>> given = dict(kind="loop", session_id="s", turn=1, step=1, attempt=1, step_start_seq=3,
        ...              first_chunk_seq=4, header=None, header_seq=None, header_reason=None,
        ...              messages=(), message_seqs=(), digest=Digest("ab"))
        >>> request_of(0, given) == Request(index=0, **given)
        True
    """
    return _new_request(index, **given)


@dataclass
class ReplayResult:
    """What a whole replay found besides the requests."""

    skipped_steps: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    event_count: int = 0
    open_turn: bool = False
