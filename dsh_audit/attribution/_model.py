"""The values attribution produces: one :class:`Transition` per request, with its evidence.

JSON shapes (``to_json``) are the contract of ``dsh-audit breaks --json`` and ``explain --json``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .._frozen import fast_frozen_init
from ..session import Evidence

__all__ = [
    "CAUSES",
    "RELATIONS",
    "UNEXPLAINED_CAUSES",
    "VERDICTS",
    "Break",
    "Divergence",
    "Evidence",
    "FieldChange",
    "SessionAttribution",
    "Transition",
]

#: ``first``: nothing before it in its conversation; ``extension``: the previous prompt is a prefix
#: of this one (pure append); ``cache_safe_change``: something was logged between the two (a config
#: field, a resume or fork boundary, a retry) but the prompt prefix is intact; ``break``: the
#: prompt prefix changed, so the provider cache can reuse at most the part before the divergence.
VERDICTS = ("first", "extension", "cache_safe_change", "break")

#: Why a transition is not a plain extension. ``unrecorded_mutation`` needs captured bodies.
CAUSES = ("header_change", "compaction", "prune", "plugin_replace", "resume", "fork", "subagent",
          "retry", "title_input", "search_input", "unexplained", "unrecorded_mutation")

#: The causes of a break the log does not explain: ``unexplained`` (the log records nothing that
#: changes the prompt) and ``unrecorded_mutation`` (the captured bodies break the prefix where the
#: log records nothing). One definition for every view (:attr:`Transition.is_unexplained`): the
#: ``cache`` classification ``break_unexplained``, check's ``DSH821``, ``breaks --fail-on
#: unexplained`` and the report page's count.
UNEXPLAINED_CAUSES = ("unexplained", "unrecorded_mutation")

#: How the two requests relate: consecutive loop steps, a retry in the same step, a new loop
#: instance over the same log, a fork/subagent child's first request against its parent, an
#: auxiliary compaction call against the loop request before it, a title or web-search call against
#: the previous one of its kind, or the start of a conversation.
RELATIONS = ("step", "retry", "resume", "fork", "subagent", "compaction_call", "title_call", "search_call", "first")


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One header field that differs between the two requests.

    Attributes:
        field: ``provider``, ``model``, ``reasoningEffort``, ``maxTokens``, ``temperature``,
            ``stop``, ``adapterDefaults.reasoningEffort``, ``adapterDefaults.maxTokens``,
            ``system`` or ``tools``.
        before: the old value (``system``: its length in characters; ``tools``: the tool names).
        after: the new value, same conventions.
        prompt_affecting: whether the change alters what the provider caches (spec §9.7).
        detail: ``system``: ``{"diff": [unified diff lines]}``; ``tools``: ``added``, ``removed``,
            ``reordered``, ``schema_changed``; effort: ``thinking`` before/after.
    """

    field: str
    before: Any
    after: Any
    prompt_affecting: bool
    detail: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"field": self.field, "before": self.before, "after": self.after,
               "prompt_affecting": self.prompt_affecting}
        if self.detail:  # "changes": "detail" is a break's sentence in every command's JSON
            out["changes"] = self.detail
        return out


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where the two prompts first differ, in provider prompt order.

    Attributes:
        segment: ``config`` (model, provider or reasoning mode: a new cache domain), ``system``,
            ``tools`` or ``messages``.
        message_index: for ``messages``, the index of the first differing message.
        offset: UTF-8 byte offset of the first difference inside the segment's own text: the
            system string, ``JSON.stringify(tools)``, or ``JSON.stringify(messages)`` (DSH's
            message objects). ``None`` for ``config``.
        body_offset: byte offset inside the wire body, when bodies were rendered or captured.
    """

    segment: str
    message_index: int | None = None
    offset: int | None = None
    body_offset: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"segment": self.segment, "message_index": self.message_index, "offset": self.offset,
                "body_offset": self.body_offset}


#: The data of an outline's evidence (:meth:`Transition.outline`): one empty object for them all.
_NO_DATA: dict[str, Any] = {}


@fast_frozen_init  # one is made per request, by attribution's several makers
@dataclass(frozen=True, slots=True)
class Transition:
    """How one request relates to the request its provider cache could reuse.

    Attributes:
        session_id: the session of ``request``.
        request: the request's index in its session (``dsh-audit requests`` numbering).
        previous: the index of the request compared against, or None for ``first``.
        previous_session_id: the session of ``previous`` (a parent for fork/subagent children).
        relation: one of :data:`RELATIONS`.
        verdict: one of :data:`VERDICTS`.
        cause: one of :data:`CAUSES`, or None for ``first`` and plain extensions.
        other_causes: further causes behind the first one (a break can have several).
        fields: header fields that differ.
        evidence: the log events that explain the transition, in seq order.
        context: related events that are not causes themselves (``plan/mode``, ``command/run``).
        first_divergence: where the prompts first differ (breaks only).
        common_messages: leading messages the two prompts share.
        detail: one human sentence.
        notes: further remarks (e.g. a replacement of a result that was never sent).
        kind: the request kind (``loop``, ``compaction``, ``title``).
        turn: the request's turn, when known.
        step: the request's step, when known.
        attempt: the request's attempt within its step.
    """

    session_id: str
    request: int
    previous: int | None
    previous_session_id: str | None
    relation: str
    verdict: str
    cause: str | None
    other_causes: tuple[str, ...] = ()
    fields: tuple[FieldChange, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    context: tuple[Evidence, ...] = ()
    first_divergence: Divergence | None = None
    common_messages: int = 0
    detail: str = ""
    notes: tuple[str, ...] = ()
    kind: str = "loop"
    turn: int | None = None
    step: int | None = None
    attempt: int = 1

    @property
    def evidence_seqs(self) -> tuple[int, ...]:
        """The seqs of :attr:`evidence`, in order."""
        return tuple(e.seq for e in self.evidence)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.field for f in self.fields)

    @property
    def is_break(self) -> bool:
        return self.verdict == "break"

    @property
    def is_unexplained(self) -> bool:
        """A break whose cause the log does not explain (no cause, or one of :data:`UNEXPLAINED_CAUSES`)."""
        return self.is_break and (self.cause is None or self.cause in UNEXPLAINED_CAUSES)

    def outline(self) -> Transition:
        """This transition without what only ``explain`` shows: the quoted events keep their seq and
        type (:attr:`evidence_seqs`), the changed fields their names (:attr:`field_names`), and the
        context, the field values and the first divergence go. A long log's breaks kept for a
        report that lists them hold no event data (a prune's shadowed seqs, a header's config)."""
        return replace(self, evidence=tuple(Evidence(e.seq, e.type, _NO_DATA, e.session_id) for e in self.evidence),
                       context=(), first_divergence=None,
                       fields=tuple(FieldChange(f.field, None, None, f.prompt_affecting) for f in self.fields))

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``dsh-audit breaks --json``."""
        return {
            "session_id": self.session_id,
            "request": self.request,
            "previous": self.previous,
            "previous_session_id": self.previous_session_id,
            "kind": self.kind,
            "turn": self.turn,
            "step": self.step,
            "attempt": self.attempt,
            "relation": self.relation,
            "verdict": self.verdict,
            "cause": self.cause,
            "other_causes": list(self.other_causes),
            "fields": [f.to_json() for f in self.fields],
            "evidence_seqs": list(self.evidence_seqs),
            "evidence": [e.to_json() for e in self.evidence],
            "context_events": [e.to_json() for e in self.context],  # "context": a request's own
            "first_divergence": self.first_divergence.to_json() if self.first_divergence else None,
            "common_messages": self.common_messages,
            "detail": self.detail,
            "notes": list(self.notes),
        }


#: The same value, named for what most callers look for.
Break = Transition


@dataclass(frozen=True, slots=True)
class SessionAttribution:
    """Every transition of one session log, one per request, in request order."""

    session_id: str
    path: str | None
    transitions: tuple[Transition, ...]

    @property
    def breaks(self) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.verdict == "break")

    def transition(self, request: int) -> Transition:
        """The transition of request ``request``; raises KeyError when there is none."""
        for item in self.transitions:
            if item.request == request:
                return item
        raise KeyError(request)
