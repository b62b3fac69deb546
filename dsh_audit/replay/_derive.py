"""``derive_event_message``: the one message an event puts on the surface (spec §4)."""

from __future__ import annotations

from typing import Any

from ..log import Event

__all__ = ["derive_event_message"]


def _user(event: Event) -> Any:
    return event.data


def _assistant(event: Event) -> Any:
    message = event.data["message"]
    # An empty-content assistant message stays on the surface but never reaches the model.
    return message if message["content"] else None


def _tool(event: Event) -> Any:
    return event.data["message"]


def _nonempty(event: Event) -> Any:
    # v3 system/message and v4 developer/message: an empty node projects to nothing.
    message = event.data.get("message") if isinstance(event.data, dict) else None
    return message if isinstance(message, dict) and message.get("content") else None


_PROJECTIONS = {"user/message": _user, "assistant/message": _assistant, "tool/result": _tool,
                "system/message": _nonempty, "developer/message": _nonempty}


def derive_event_message(event: Event) -> dict[str, Any] | None:
    """Project one event to the message it contributes, or None.

    ``user/message`` contributes its whole data verbatim (id and source included);
    ``assistant/message`` and ``tool/result`` contribute ``data.message``; every other type none.
    The returned dict is the event's own (shared, never copy-mutated).

    Example:
        >>> from dsh_audit.log import Event
        >>> e = Event(seq=4, type="user/message", time=0, line=5, surface_op="append",
        ...           data={"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"},
        ...                 "role": "user", "id": "u1"})
        >>> derive_event_message(e)["content"][0]["text"]
        'hi'
    """
    projection = _PROJECTIONS.get(event.type)
    return projection(event) if projection is not None else None
