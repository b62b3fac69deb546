"""Rebuilt requests against a capture: align, render each request, diff its body with the capture.

This module only runs the pipeline; :mod:`dsh_audit.diff` says what a difference is.

What each kind needs to render:

- ``loop``: nothing but the log.
- ``title``: nothing but the log (``session/title-llm-request`` holds system, messages, limit).
- ``compaction``: DSH's compaction instruction is a code constant, not logged. It is taken from
  the paired captured body (its last user message), and the row says so; without a capture, or
  when that body has no final user message, the request is ``unrendered``.

On an Anthropic route, the kind of key DSH gave pi-ai (an API key or an OAuth token, for which
pi-ai writes another body and headers) is not logged either: when the captured request was made
for the other kind than the one rendered (:func:`dsh_audit.wire.key_type_of`), the request is
rendered again for the capture's, and the row says so. Where the renderer cannot be told (a
forced ``--adapter``, a ``render`` without ``routes``), a ``different`` row's hint names the route
setting (:func:`dsh_audit.wire.key_type_conflict`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..diff import BodyDiff, diff_bodies
from ..errors import DshAuditError
from ..log import parse_json
from ..replay import Request
from ..session import Bodies
from ..wire import images_in_body, key_type_conflict, key_type_of, make_renderer
from ._align import Pairing, align, too_large
from ._evidence import RouteApi
from ._types import CapturedRequest, last_user_text

__all__ = ["RequestDiff", "compare_capture", "gate_ok"]

#: ``render(request, options) -> body bytes``; options may hold ``compaction_instruction``.
BodyRenderer = Callable[[Request, dict[str, Any]], bytes]

INSTRUCTION_NOTE = "instruction from capture"
#: The note of a request rendered with image bytes taken from its capture: the log holds only a
#: reference (``sha256:<digest>``), so only bytes with that digest are used.
IMAGES_NOTE = "image bytes from capture"
#: The note of an Anthropic request rendered for the key type of its capture (see the module).
KEY_NOTES = {"oauth": "OAuth key from capture", "api-key": "API key from capture"}
#: The note of a ``different`` row whose capture was made for another key type than rendered.
KEY_CONFLICT_NOTE = "sent with another Anthropic key type"
#: The rendered bodies kept while comparing: :func:`align` puts a request's resends right after it,
#: so the last request's body is the one a resend takes; a few more cost little.
_KEPT_RENDERED = 4


@dataclass(frozen=True, slots=True)
class RequestDiff:
    """One pairing and its verdict.

    ``verdict`` is a body verdict (``identical``, ``equivalent``, ``different``) when both sides
    exist and the request rendered; else ``unmatched`` (one side missing), ``foreign`` (a capture
    of a session none of the logs holds, or not an LLM call) or ``unrendered`` (the renderer
    refused; ``note`` says why, ``hint`` what would settle it: ``--routes FILE``, ``--attachments
    DIR``, and ``seq``/``line`` the event of the request's log the refusal is about, as ``render``
    names it: the header whose route has no facts, the message holding what cannot be sent; None
    when the refusal names none). A capture of kind ``other`` paired by its session header (its
    body is no request body: the pairing's note says why) is ``different`` with no ``diff``.
    """

    pairing: Pairing
    verdict: str
    diff: BodyDiff | None = None
    note: str | None = None
    hint: str | None = None
    seq: int | None = None
    line: int | None = None

    @classmethod
    def refused(cls, pairing: Pairing, refusal: DshAuditError) -> RequestDiff:
        """The ``unrendered`` row of a request the renderer refused (``refusal``): its message as the
        note, its hint, and the place it names in the request's log (a line of another file, one the
        raiser names, is not). Every view shows it alike: a capture's comparison, and ``check``'s
        requests pi-ai sends nothing for with no capture (:meth:`dsh_audit.session.Bodies.header_refusal`)."""
        return cls(pairing, "unrendered", note=f"cannot render: {refusal.message}", hint=refusal.hint,
                   seq=refusal.seq, line=refusal.line if refusal.path is None else None)

    @property
    def said(self) -> str | None:
        """The note as a person reads it: with its hint, when it has one."""
        return f"{self.note} (hint: {self.hint})" if self.note and self.hint else self.note

    @property
    def request(self) -> Request | None:
        return self.pairing.request

    @property
    def capture(self) -> CapturedRequest | None:
        return self.pairing.capture

    @property
    def kind(self) -> str:
        if self.request is not None:
            return self.request.kind
        assert self.capture is not None
        return self.capture.kind

    def to_json(self) -> dict[str, Any]:
        """The ``dsh-audit diff --json`` object of this row."""
        request, capture, body = self.request, self.capture, self.diff
        notes = [n for n in (self.pairing.note, self.said) if n]
        return {
            "session_id": request.session_id if request else (capture.session_id if capture else None),
            "index": request.index if request else None,
            "kind": self.kind,
            "turn": request.turn if request else None,
            "step": request.step if request else None,
            "attempt": request.attempt if request else None,
            "verdict": self.verdict,
            "first_offset": body.first_offset if body else None,
            "paths": body.paths if body else [],
            "equivalence": list(body.equivalence) if body else [],
            "differences": body.to_json()["differences"] if body else [],
            "expected_context": body.expected_context if body else None,
            "actual_context": body.actual_context if body else None,
            "expected_bytes": body.expected_size if body else None,
            "capture_bytes": capture.size if capture else None,
            "capture_position": capture.position if capture else None,
            "capture_source": capture.where() if capture else None,
            "retry": self.pairing.retry,
            "note": "; ".join(notes) or None,
        }


def _shared_renderer(bodies: Bodies, adapter: str) -> BodyRenderer:
    make_renderer(adapter)  # an unknown adapter fails here, once
    return lambda request, options: bodies.render(request, adapter, **options)


def _value(sent: bytes, *, compaction: bool, coded: bool) -> Any:
    """The JSON value of the captured body ``sent``, read once for what a comparison takes from it (a
    compaction's instruction, the images of a body holding base64 data: ``coded``); None when it
    needs neither or is no JSON."""
    if not compaction and not coded:
        return None
    try:
        return parse_json(sent)
    except (ValueError, UnicodeDecodeError):
        return None


def _unpaired(pairing: Pairing) -> RequestDiff:
    note = pairing.note or ""
    foreign = pairing.request is None and (note.startswith("foreign") or note.startswith("not an LLM call"))
    return RequestDiff(pairing, "foreign" if foreign else "unmatched")


def compare_capture(requests: Sequence[Request], captures: Sequence[CapturedRequest], *,
                    adapter: str = "deepseek", bodies: Bodies | None = None,
                    render: BodyRenderer | None = None, routes: RouteApi | None = None) -> list[RequestDiff]:
    """Align ``requests`` with ``captures`` and diff every pair's body.

    Args:
        requests: rebuilt requests, from one or several logs.
        captures: a loaded capture (:func:`load_capture`).
        adapter: the wire renderer to use (see :mod:`dsh_audit.wire`).
        bodies: the sessions' rendered bodies, shared with the other views (default: rendered here).
        render: replaces the wire renderer (tests, other tools): request and options to bytes.
        routes: the route API of each request, for pairing (:func:`align`; default: what the
            requests' own logged messages show, :func:`dsh_audit.capture.log_routes`).

    Returns:
        One :class:`RequestDiff` per pairing, in :func:`align` order.

    Raises:
        CaptureError: the capture does not fit in memory (its bodies are parsed again to align and
            compare them, the last few rendered bodies beside them), as :func:`load_capture`.

    Example:
        >>> rows = compare_capture(dsh_audit.requests(log), load_capture("wire.jsonl"))  # doctest: +SKIP
        >>> {row.verdict for row in rows if row.kind == "loop"}  # doctest: +SKIP
        {'identical'}
    """
    try:
        return _compare(requests, captures, adapter=adapter, bodies=bodies, render=render, routes=routes)
    except MemoryError:
        raise too_large(captures) from None


def _compare(requests: Sequence[Request], captures: Sequence[CapturedRequest], *, adapter: str,
             bodies: Bodies | None, render: BodyRenderer | None, routes: RouteApi | None) -> list[RequestDiff]:
    renderer = render if render is not None else _shared_renderer(bodies or Bodies(), adapter)
    # the last few requests' bodies (the request held, so its id stays its own): resends follow their request
    rendered: OrderedDict[int, tuple[Request, bytes]] = OrderedDict()
    results: list[RequestDiff] = []
    for pairing in align(requests, captures, routes=routes):
        request, capture = pairing.request, pairing.capture
        if request is None or capture is None:
            results.append(_unpaired(pairing))
            continue
        if capture.kind == "other":
            # this session's call (its session header says so) whose body is no request body: it
            # cannot be the rebuilt one, and there is nothing to compare (the pairing's note says why)
            results.append(RequestDiff(pairing, "different"))
            continue
        options: dict[str, Any] = {}
        note = None
        sent = capture.body  # read once (from the capture file: only this pairing's body is held)
        coded = b"base64" in sent  # only a body naming base64 holds an image (searched once)
        value = _value(sent, compaction=request.kind == "compaction", coded=coded)  # parsed once, for both below
        if request.kind == "compaction":
            instruction = last_user_text(value)
            if instruction is None:
                results.append(RequestDiff(pairing, "unrendered", note="the captured compaction body has no "
                                           "final user message to take DSH's instruction from"))
                continue
            options["compaction_instruction"], note = instruction, INSTRUCTION_NOTE
        images = images_in_body(value) if coded else {}  # keyed by digest, as a log names them
        del value
        if images:  # the log names an image by its digest; a captured image with that digest is it
            options["images"] = images
            note = IMAGES_NOTE if note is None else f"{note}; {IMAGES_NOTE}"
        try:
            expected = _rendered(rendered, request, lambda: renderer(request, options))
            key_type = _capture_key(request, expected, sent, capture, adapter=adapter, render=render, routes=routes)
            if key_type is not None:
                expected, note = renderer(request, {**options, "key_type": key_type}), _noted(note, KEY_NOTES[key_type])
        except DshAuditError as exc:
            # the hint names what would settle it (--routes FILE, --attachments DIR)
            results.append(RequestDiff.refused(pairing, exc))
            continue
        body = diff_bodies(expected, sent)
        # a key type the renderer could not take from the capture: name the route setting that renders it
        hint = key_type_conflict(expected, sent, capture.headers) if body.verdict == "different" else None
        note = note if hint is None else _noted(note, KEY_CONFLICT_NOTE)
        results.append(RequestDiff(pairing, body.verdict, body, note, hint))
    return results


def _capture_key(request: Request, expected: bytes, sent: bytes, capture: CapturedRequest, *, adapter: str,
                 render: BodyRenderer | None, routes: RouteApi | None) -> str | None:
    """The key type to render ``request`` for again (see the module): its capture's, when it is not
    the one ``expected`` was rendered for and the Anthropic renderer, which takes one, renders the
    request (the adapter asked for, or the request's route when ``render`` follows ``routes``)."""
    anthropic = adapter == "anthropic" if render is None else \
        routes is not None and routes(request) == "anthropic-messages"
    key_type = key_type_of(sent, capture.headers) if anthropic else None
    return None if key_type is None or key_type == key_type_of(expected) else key_type


def _noted(note: str | None, more: str) -> str:
    return more if note is None else f"{note}; {more}"


def _rendered(kept: OrderedDict[int, tuple[Request, bytes]], request: Request, render: Callable[[], bytes]) -> bytes:
    """``request``'s body as first rendered (``render``), kept among the last :data:`_KEPT_RENDERED`."""
    key = id(request)
    found = kept.get(key)
    if found is not None:
        kept.move_to_end(key)
        return found[1]
    body = render()
    kept[key] = (request, body)
    if len(kept) > _KEPT_RENDERED:
        kept.popitem(last=False)
    return body


def gate_ok(results: Sequence[RequestDiff], *, strict: bool = False) -> bool:
    """Whether every loop request and loop capture passed, and no captured body of another kind
    contradicts its rebuilt one.

    Passing means ``identical`` (or ``equivalent`` unless ``strict``). A loop request without a
    capture, or a loop capture of one of the given sessions (or with no session header) that no
    request explains, fails. A title or compaction request fails only when its captured body is
    ``different`` (or ``equivalent`` with ``strict``), as ``check`` fails it (DSH811, DSH812): its
    instruction text is not always known, so ``unrendered`` and ``unmatched`` pass. Foreign
    captures never fail.
    """
    allowed = {"identical"} if strict else {"identical", "equivalent"}
    contradicted = {"different", "equivalent"} if strict else {"different"}
    return all(row.verdict in allowed if row.kind == "loop" else row.verdict not in contradicted
               for row in results if row.verdict != "foreign")
