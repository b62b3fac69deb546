"""Pair every request with the request whose prefix cache it could reuse, across logs.

Conversations (spec §7-§9):

* loop requests of one log, in first-chunk order: consecutive steps (``step``), further attempts
  of the same step (``retry``), the first request of a new loop instance (``resume``: a
  ``session/end-seed`` or a ``resume`` header lies between them);
* a fork child's first request against the parent's last loop request inside the seed
  (``seedLength``), a spawned subagent's first request against the parent's last loop request
  before the parent first mentions the child (``subagent``); the parent must be among the logs;
* a compaction summary call against the loop request before it (``compaction_call``: DSH sends
  the head of that prompt, so the call should reuse its prefix);
* title calls form their own conversation (``title_call``), and so do web-search calls
  (``search_call``).

With captured bodies, a pair that the log says extends but whose captured bodies do not is an
``unrecorded_mutation``. With ``dsh_audit.wire`` installed, a break also gets its byte offset in
the rendered body.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._lazy import LazyModule
from ..jsjson import stringify
from ..log import SessionHeader
from ..replay import Request
from ..session import Bodies, Evidence, LogEvidence, RouteEvidence, Session, open_session, request_route
from ._compare import Pair, compare
from ._header_diff import on_route
from ._model import Divergence, SessionAttribution, Transition
from ._prefix import MessageDigests, lcp_bytes, pieces_offset

if TYPE_CHECKING:
    from .. import wire
else:
    wire = LazyModule("dsh_audit.wire")  # loaded by the first break whose bodies are compared

__all__ = ["attribute", "attribute_sessions", "captured_extends"]

_CAPTURE_RELATIONS = ("step", "retry", "resume", "fork")
#: the relation of an auxiliary call to the last call of its kind (each kind is a conversation)
_AUX_RELATIONS = {"title": "title_call", "search": "search_call"}
_NON_PROMPT_KEYS = frozenset({"messages", "stream", "stream_options", "max_tokens", "max_completion_tokens",
                              "temperature", "stop", "metadata"})


@dataclass
class _Session:
    path: str
    header: SessionHeader
    requests: list[Request]
    lenient: bool = False
    evidence: LogEvidence | None = None
    captures: dict[int, bytes | None] | None = None
    bodies: Bodies | None = None
    routes: RouteEvidence | None = None
    declared: Mapping[str, str] | None = None
    forget: bool = False  # streamed: drop the evidence no later comparison reads (not a shared Session's)
    _by_index: dict[int, Request] | None = None

    @property
    def id(self) -> str:
        return self.header.id

    def by_index(self) -> dict[int, Request]:
        if self._by_index is None:
            self._by_index = {r.index: r for r in self.requests}
        return self._by_index

    def loops(self) -> list[Request]:
        return sorted((r for r in self.requests if r.kind == "loop"), key=lambda r: r.first_chunk_seq)


def captured_extends(prev_body: bytes, cur_body: bytes) -> tuple[bool, int | None]:
    """Whether captured body ``cur_body`` extends ``prev_body`` as a prompt.

    Every top-level key but the messages and the non-prompt options (``max_tokens``,
    ``temperature``, ``stop``, streaming) must be equal, and the previous messages must be a
    prefix of the current ones. Returns ``(extends, first differing message index or None)``.

    Example:
        >>> captured_extends(b'{"model":"m","messages":[1]}', b'{"model":"m","messages":[1,2]}')
        (True, None)
    """
    try:
        a, b = json.loads(prev_body), json.loads(cur_body)
    except (ValueError, RecursionError):  # a body nested past the parser: compare the bytes
        return cur_body.startswith(prev_body), None
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False, None
    if b'"cache_control"' in prev_body or b'"cache_control"' in cur_body:
        a, b = _without_cache_markers(a), _without_cache_markers(b)
    for key in [*a, *(k for k in b if k not in a)]:
        if key not in _NON_PROMPT_KEYS and stringify(a.get(key)) != stringify(b.get(key)):
            return False, None
    ma, mb = a.get("messages") or [], b.get("messages") or []
    for i, message in enumerate(ma):
        if i >= len(mb) or stringify(message) != stringify(mb[i]):
            return False, i
    return True, None


def _without_cache_markers(body: dict[str, Any]) -> Any:
    """An Anthropic-style body with pi-ai's moving cache breakpoints taken out (spec §8.3, §9.7):
    every ``cache_control`` dropped and a user message's lone text block folded back."""
    out = wire.without_cache_markers(body)
    out["messages"] = [wire.fold_text_block(m) if isinstance(m, dict) and m.get("role") == "user" else m
                       for m in out.get("messages") or []]
    return out


class _Attributor:
    def __init__(self, sessions: list[_Session], *, adapter: str | None,
                 parent: Callable[[str], Session | None] | None = None) -> None:
        self.by_id = {s.id: s for s in sessions}
        self.digests = MessageDigests()
        self.adapter = adapter
        self.parent = parent  # reads a parent that is not among the sessions, when a child needs it

    # -- conversations ---------------------------------------------------------------------

    def run(self, session: _Session) -> SessionAttribution:
        ordered = sorted(session.requests, key=lambda r: (r.first_chunk_seq, r.index))
        out = {t.request: t for t in self.walk(session, ordered)}
        return SessionAttribution(session.id, session.path, tuple(out[i] for i in sorted(out)))

    def walk(self, session: _Session, ordered: Iterable[Request]) -> Iterator[Transition]:
        """Transitions of requests given in first-chunk order; holds only the last of each kind.

        With ``session.forget``, the evidence below the first chunk of the oldest request still
        held (the last loop request, the last of each auxiliary kind) is dropped after each
        request: every later comparison reads its window from one of those (the next loop
        request from the last, a retry too; a compaction call from the loop request before it;
        a title call from the last title call), never from further back. So are the message
        digests of every message none of them carries (a digest is a memo: one that is needed
        again is taken again, with the same result).
        """
        last_loop: Request | None = None
        last_aux: dict[str, Request] = {}
        for request in ordered:
            if request.kind == "loop":
                if last_loop is None:
                    item = self.loop_first(session, request)
                else:
                    item = self.loop_pair(session, last_loop, request)
                last_loop = request
            elif request.kind == "compaction":
                item = self.compaction_call(session, last_loop, request)
            else:
                relation = _AUX_RELATIONS.get(request.kind, "first")
                before = last_aux.get(request.kind)
                item = self.first(session, request, relation=relation) if before is None else self.finish(
                    session, before, session, compare(before, request, Pair(
                        relation, self._evidence(session), before.first_chunk_seq), self.digests), request)
                last_aux[request.kind] = request
            kept = [r for r in (last_loop, *last_aux.values()) if r is not None]
            held = [r.first_chunk_seq for r in kept]
            if session.forget and last_loop is not None and None not in held:
                self._evidence(session).forget_before(min(s for s in held if s is not None))
            if session.forget:
                self.digests.keep_only(r.messages for r in kept)
            yield item

    @staticmethod
    def _evidence(session: _Session) -> LogEvidence:
        assert session.evidence is not None
        return session.evidence

    def first(self, session: _Session, request: Request, *, relation: str = "first",
              notes: Sequence[str] = ()) -> Transition:
        return Transition(session_id=session.id, request=request.index, previous=None, previous_session_id=None,
                          relation=relation, verdict="first", cause=None, detail="the first request of its "
                          "conversation", notes=tuple(notes), kind=request.kind, turn=request.turn,
                          step=request.step, attempt=request.attempt)

    def loop_pair(self, session: _Session, prev: Request, cur: Request) -> Transition:
        evidence = self._evidence(session)
        window = evidence.between(prev.first_chunk_seq, cur.first_chunk_seq)
        if cur.step_start_seq is not None and cur.step_start_seq == prev.step_start_seq:
            relation = "retry"
        elif any(e.type == "session/end-seed" for e in window) or (
                cur.header_reason == "resume" and cur.header_seq is not None
                and cur.header_seq > prev.first_chunk_seq):
            relation = "resume"
        else:
            relation = "step"
        failed = evidence.at(prev.first_chunk_seq)  # an attempt that failed at its first chunk
        extra = [failed] if relation == "retry" and failed is not None else []
        pair = Pair(relation, evidence, prev.first_chunk_seq, extra_evidence=extra)
        return self.finish(session, prev, session, compare(prev, cur, pair, self.digests), cur)

    def loop_first(self, session: _Session, cur: Request) -> Transition:
        parent_id = session.header.parent_session
        if parent_id is None:
            return self.first(session, cur)
        parent = self.by_id.get(parent_id)
        if parent is None and self.parent is not None and (found := self.parent(parent_id)) is not None:
            parent = as_item(found)  # only this comparison needs it: not kept
        if parent is None:
            return self.first(session, cur, notes=[f"parent session {parent_id} is not among the given logs"])
        seed = session.header.seed_length
        notes: list[str] = []
        extra: list[Evidence] = []
        cut: int | None
        if seed:
            relation, cut = "fork", seed
        else:
            relation = "subagent"
            mention = self._evidence(parent).mentions.get(session.id)
            cut = mention[0] if mention is not None else None
            if mention is not None:
                extra.append(Evidence(mention[0], mention[1], {"mentions": session.id}, session_id=parent.id))
            else:
                notes.append(f"the parent log never mentions {session.id}; compared with its last loop request")
        candidates = [r for r in parent.loops() if cut is None or r.first_chunk_seq < cut]
        if not candidates:
            return self.first(session, cur, notes=[f"parent session {parent_id} has no loop request before the "
                                                   f"{relation} point"])
        prev = candidates[-1]
        pair = Pair(relation, self._evidence(session), prev.first_chunk_seq if seed else -1, same_log=False,
                    prev_session_id=parent.id, extra_evidence=extra, notes=notes)
        return self.finish(parent, prev, session, compare(prev, cur, pair, self.digests), cur)

    def compaction_call(self, session: _Session, prev: Request | None, cur: Request) -> Transition:
        if prev is None:
            return self.first(session, cur, relation="compaction_call")
        evidence = self._evidence(session)
        cid = cur.extra.get("compactionId")
        own = [e for e in evidence.between(prev.first_chunk_seq, cur.first_chunk_seq + 1)
               if e.type in ("compaction/start", "compaction/summary") and e.data.get("compactionId") == cid]

        def route(header: dict[str, Any] | None, provider: Any = None, model: Any = None) -> dict[str, Any]:
            header = header or {}
            config = header.get("config") or {}
            return {"config": {"provider": provider or config.get("provider"), "model": model or config.get("model")},
                    "system": header.get("system"), "tools": header.get("tools")}

        pair = Pair("compaction_call", evidence, prev.first_chunk_seq, prefix_of_previous=True,
                    prev_header=route(prev.header),
                    cur_header=route(cur.header, cur.extra.get("provider"), cur.extra.get("model")),
                    extra_evidence=own,
                    notes=["the summary call's reasoning effort and its instruction text are not logged"])
        return compare(prev, cur, pair, self.digests)

    # -- bodies ----------------------------------------------------------------------------

    def _adapter(self, session: _Session, request: Request) -> str | None:
        if self.adapter is None or session.bodies is None:
            return None
        return self.adapter if self.adapter != "auto" else \
            request_route(request, session.routes, declared=session.declared).adapter  # the route it really took

    def _rendered(self, session: _Session, request: Request) -> bytes | None:
        adapter = self._adapter(session, request)
        if adapter is None or session.bodies is None:
            return None
        return session.bodies.body(request, adapter)  # rendered once, shared with every view

    def _pieces_offset(self, prev_session: _Session, prev: Request, session: _Session, cur: Request) -> int | None:
        """A DeepSeek break's body offset from the two bodies' pieces, without joining either
        (each is the whole history); None when the pieces cannot tell it."""
        if self._adapter(prev_session, prev) != "deepseek" or self._adapter(session, cur) != "deepseek" \
                or prev_session.bodies is None or session.bodies is None:
            return None
        a, b = prev_session.bodies.pieces(prev, "deepseek"), session.bodies.pieces(cur, "deepseek")
        if a is None or b is None:
            return None
        return pieces_offset(a, ((prev.header or {}).get("config") or {}).get("model"),
                             b, ((cur.header or {}).get("config") or {}).get("model"))

    def finish(self, prev_session: _Session, prev: Request, session: _Session, item: Transition,
               cur: Request) -> Transition:
        """Check captured bodies and add the body offset of a break."""
        bodies: tuple[bytes, bytes] | None = None
        cp = (prev_session.captures or {}).get(prev.index)
        cc = (session.captures or {}).get(cur.index)
        if cp is not None and cc is not None and item.relation in _CAPTURE_RELATIONS:
            bodies = (cp, cc)
            extends, index = captured_extends(cp, cc)
            if not extends and item.verdict != "break":
                item = dataclasses.replace(
                    item, verdict="break", cause="unrecorded_mutation",
                    other_causes=(item.cause,) if item.cause else (),
                    first_divergence=Divergence("messages" if index is not None else "config", index, None),
                    detail="the captured bodies break the prefix, but the log records nothing that changes "
                           "the prompt: something between DSH's log and the provider rewrote the request")
        if item.verdict == "break" and item.first_divergence is not None:
            offset = self._pieces_offset(prev_session, prev, session, cur) if bodies is None else None
            if offset is None and bodies is None:
                rendered = (self._rendered(prev_session, prev), self._rendered(session, cur))
                bodies = (rendered[0], rendered[1]) if rendered[0] is not None and rendered[1] is not None else None
            if offset is None and bodies is not None:
                offset = lcp_bytes(*bodies)
            if offset is not None:
                item = dataclasses.replace(item, first_divergence=dataclasses.replace(
                    item.first_divergence, body_offset=offset))
        if "reasoningEffort" not in item.field_names:
            return item
        routes = (self._route(prev_session, prev), self._route(session, cur))
        return dataclasses.replace(item, fields=on_route(item.fields, routes, bodies))

    def _route(self, session: _Session, request: Request) -> str | None:
        """The adapter a request went through (the one the caller forces, if any), rendered or not."""
        if self.adapter not in (None, "auto"):
            return self.adapter
        return request_route(request, session.routes, declared=session.declared).adapter


def as_item(session: Session) -> _Session:
    """A session as attribution walks it: its requests, evidence and rendered bodies."""
    return _Session(session.path, session.header, session.requests, lenient=session.lenient,
                    evidence=session.evidence, bodies=session.bodies, routes=session.routes,
                    declared=session.config.apis if session.config is not None else None)


def attribute_sessions(sessions: Iterable[Session], *,
                       captures: Mapping[str, Sequence[bytes | None]] | None = None,
                       adapter: str | None = "auto") -> list[SessionAttribution]:
    """Explain every request of several sessions, pairing children with parents among them.

    Args:
        sessions: sessions read once, a parent with the children it watches for
            (:func:`dsh_audit.session.open_group`).
        captures: per session id, captured body bytes aligned with that session's requests
            (``None`` where a request was not captured).
        adapter: the ``dsh_audit.wire`` adapter that renders the two bodies of a break to give
            its body byte offset (captured bodies win when given): ``auto`` (default) each
            request's own route (:meth:`dsh_audit.session.Session.route`); None renders nothing.

    Returns:
        One :class:`SessionAttribution` per session, in the order given.

    Example:
        >>> group = open_group(["parent.jsonl", "child.jsonl"])  # doctest: +SKIP
        >>> [a.breaks for a in attribute_sessions(group.sessions)]  # doctest: +SKIP
    """
    items = [as_item(session) for session in sessions]
    for item in items:
        given = (captures or {}).get(item.id)
        if given is not None:
            item.captures = dict(zip((r.index for r in item.requests), given))
    attributor = _Attributor(items, adapter=adapter)
    return [attributor.run(item) for item in items]


def attribute(source: Session | str | os.PathLike[str], *, captures: Sequence[bytes | None] | None = None,
              lenient: bool = False, adapter: str | None = "auto") -> SessionAttribution:
    """Explain every request of one session (fork and subagent children are compared only when
    their parent is given too: use :func:`attribute_sessions`).

    Args:
        source: a :class:`~dsh_audit.session.Session`, or a log path (opened here).
        captures: captured bodies aligned with the session's requests.
        lenient: header leniency when ``source`` is a path.
        adapter: see :func:`attribute_sessions`.

    Raises:
        DshAuditError: the log cannot be read (a path), or it is not a DSH log.
    """
    session = source if isinstance(source, Session) else open_session(source, lenient=lenient, foreign=False)
    mapped = {session.id: captures} if captures is not None else None
    return attribute_sessions([session], captures=mapped, adapter=adapter)[0]
