"""The value every wire renderer returns, and the protocol a renderer follows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..replay import Request

__all__ = ["Renderer", "WireRequest"]


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One HTTP request exactly as an adapter would send it, minus its secrets.

    Attributes:
        adapter: the renderer's registry name (``deepseek``, ``anthropic``, ``openai``).
        method: the HTTP method (always ``POST`` today).
        path: the path the adapter appends to its base URL (``/chat/completions``).
        headers: ``(name, value)`` pairs in the adapter's insertion order, names lower-case;
            credentials (``authorization``, ``x-api-key``) are never included.
        body: the exact body bytes (UTF-8 of the adapter's ``JSON.stringify``).
    """

    adapter: str
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    @property
    def body_text(self) -> str:
        """The body decoded as UTF-8 (what a capture's ``body`` field holds)."""
        return self.body.decode("utf-8")

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (case-insensitive), or ``None``."""
        wanted = name.lower()
        for key, value in self.headers:
            if key == wanted:
                return value
        return None


class Renderer(Protocol):
    """What ``ADAPTERS`` factories build: an object that renders requests, caching fragments.

    A renderer may keep per-message fragments between calls, so rendering every request of a log
    through one renderer costs O(log + output). Every renderer takes ``compaction_instruction``
    (DSH's instruction text, not logged); an adapter may add further keyword-only options with
    defaults (DeepSeek: ``images`` and others) and rejects ones it does not know.
    """

    def render(self, request: Request, *, compaction_instruction: str | None = None) -> WireRequest:
        """Render one request to its wire form."""
        ...
