"""The tokens a request is priced from: its logged usage (DSH's ``TokenUsage``, read by one rule
with the cache report's: :func:`logged_tokens`), else, when its log holds none, the provider's usage
in the captured response to its send (``--capture``: :mod:`dsh_audit.cache._captured_usage`), never
in place of a logged one (:func:`entry_usage`); the route and model it is billed under, and the prompt
that selects its long-context tier.
"""

from __future__ import annotations

from typing import Any

from ..replay import Request
from ..session import logged_cache_read, request_provider
from ._response_usage import UnusableUsage
from ._money import MAX_TOKENS, Tokens, is_count

__all__ = ["NATIVE_DEEPSEEK", "USAGE_BUCKETS", "entry_usage", "logged_tokens", "priced_prompt", "request_route_model",
           "unlogged_reason", "unpriced_usage"]

#: The provider id of DSH's native DeepSeek adapter, which logs ``cacheReadTokens`` only when the
#: API reported it, and then its ``inputTokens`` is the whole prompt (``llm-deepseek/src/translate.ts``
#: ``mapUsage``); :func:`dsh_audit.session.logged_cache_read` reads its usage by the same rule.
NATIVE_DEEPSEEK = "deepseek-official"


def request_route_model(request: Request) -> tuple[str | None, str | None]:
    """The DSH provider id and model a request was billed under: an auxiliary call's own logged
    route (compaction, title, search) first, else the header's config."""
    config = (request.header or {}).get("config") or {}
    sources = (request.extra, config) if request.kind != "loop" else (config, request.extra)
    provider = next((v for s in sources if isinstance(v := s.get("provider"), str)), None)
    model = next((v for s in sources if isinstance(v := s.get("model"), str)), None)
    return provider, model


def _count(value: Any) -> int | None:
    return value if is_count(value) else None


def logged_tokens(request: Request) -> tuple[Tokens | None, tuple[str, ...]]:
    """The tokens by bucket ``request``'s logged usage holds, and the fields of it that hold no
    valid count: one rule with the cache report's.

    The attempt's own usage wins, the step's ``assistant/message`` usage is the fallback (spec
    §7.4). A count is a non-negative integer; a negative or wrong-typed one is not logged
    (``validate`` warns of it). ``cacheReadTokens`` is :func:`dsh_audit.session.logged_cache_read`:
    a pi-ai usage without it read 0, DSH's native DeepSeek adapter's did not log it (unknown),
    and then its ``inputTokens`` is the whole prompt, so the cache-miss bucket is unknown too. A
    missing ``cacheWriteTokens`` or ``reasoningTokens`` is 0 (no adapter writes a 0 there). The
    tokens are None when the usage is absent or holds none of input, cache read and output.

    Example:
        >>> from types import SimpleNamespace as R
        >>> native = {"config": {"provider": "deepseek-official"}}
        >>> logged_tokens(R(usage={"inputTokens": 9, "outputTokens": 2}, message_usage=None, header=native,
        ...                 kind="loop", extra={}))
        (Tokens(cache_miss=0, cache_read=0, cache_write=0, output=2, reasoning=0), ('inputTokens', 'cacheReadTokens'))
        >>> logged_tokens(R(usage={"inputTokens": -1, "outputTokens": 2, "cacheReadTokens": 7},
        ...                 message_usage=None, header=native, kind="loop", extra={}))
        (Tokens(cache_miss=0, cache_read=7, cache_write=0, output=2, reasoning=0), ('inputTokens',))
    """
    usage = request.usage if request.usage is not None else request.message_usage
    if not isinstance(usage, dict):
        return None, ()
    miss, read, output = _count(usage.get("inputTokens")), _count(logged_cache_read(request)), _count(usage.get("outputTokens"))
    write = 0 if usage.get("cacheWriteTokens") is None else _count(usage.get("cacheWriteTokens"))
    if read is None and miss is not None and request_provider(request) == NATIVE_DEEPSEEK:
        miss = None  # its inputTokens holds the cache reads it did not log
    if miss is None and read is None and output is None:
        return None, ()
    unlogged = tuple(name for name, value in (("inputTokens", miss), ("cacheReadTokens", read),
                                              ("cacheWriteTokens", write), ("outputTokens", output))
                     if value is None)
    return Tokens(miss or 0, read or 0, write or 0, output or 0, _count(usage.get("reasoningTokens")) or 0), unlogged


#: Each DSH usage field (``TokenUsage``) and the bucket of :class:`Tokens` it counts.
USAGE_BUCKETS = (("inputTokens", "cache_miss"), ("cacheReadTokens", "cache_read"), ("cacheWriteTokens", "cache_write"),
                 ("outputTokens", "output"))


def entry_usage(request: Request, captured: Tokens | None = None
                ) -> tuple[Tokens | None, tuple[str, ...], str | None, bool]:
    """The tokens ``request`` is priced from, the usage fields it holds no valid count of
    (:func:`logged_tokens`), where they came from (``log``, ``capture``, None) and whether the log's
    and the capture's disagree: its logged usage, else ``captured`` (the provider's usage in the
    captured response to its send) when the log holds none. A logged usage is never overridden:
    one the capture contradicts (in a bucket the log holds) is kept, and said to differ.

    Example:
        >>> from types import SimpleNamespace as R
        >>> title = R(usage=None, message_usage=None, header={}, kind="title", extra={})
        >>> entry_usage(title, Tokens(140, output=5))
        (Tokens(cache_miss=140, cache_read=0, cache_write=0, output=5, reasoning=0), (), 'capture', False)
        >>> loop = R(usage={"inputTokens": 9, "outputTokens": 2}, message_usage=None, header={}, kind="loop", extra={})
        >>> entry_usage(loop, Tokens(9, output=3))[2:]
        ('log', True)
    """
    tokens, unlogged = logged_tokens(request)
    if isinstance(captured, UnusableUsage):  # it prices nothing: unpriced_usage says why
        return (tokens, unlogged, None if tokens is None and not unlogged else "log", False)
    if tokens is None and not unlogged:
        return (None, (), None, False) if captured is None else (captured, (), "capture", False)
    differs = captured is not None and tokens is not None and any(
        getattr(tokens, bucket) != getattr(captured, bucket) for name, bucket in USAGE_BUCKETS if name not in unlogged)
    return tokens, unlogged, "log", differs


def priced_prompt(tokens: Tokens | None, unlogged: tuple[str, ...]) -> int | None:
    """The prompt tokens that select a request's long-context tier (:meth:`PriceBook.quote`), of
    its :func:`logged_tokens`: cache-miss + cache-read + cache-write, None (base rates) when one of
    them is not logged. Its cost and what it lost are priced at the one tier this gives."""
    if tokens is None or {"inputTokens", "cacheReadTokens", "cacheWriteTokens"} & set(unlogged):
        return None
    return tokens.prompt


def unlogged_reason(request: Request, unlogged: tuple[str, ...]) -> str:
    """Why a request whose usage lacks the fields ``unlogged`` is not priced: a count past
    :data:`~dsh_audit.cache._money.MAX_TOKENS` is damaged, and said with the request's log seq."""
    if unlogged == ("inputTokens", "cacheReadTokens") and request_provider(request) == NATIVE_DEEPSEEK:
        return (f"cache reads not logged ({NATIVE_DEEPSEEK} logs cacheReadTokens only when the API reported "
                "them: the prompt's split into hits and misses is unknown)")
    usage = request.usage if request.usage is not None else request.message_usage
    huge = [name for name in unlogged if isinstance(usage, dict) and isinstance(v := usage.get(name), int)
            and not isinstance(v, bool) and v > MAX_TOKENS]
    if huge:
        return (f"the log's usage is damaged (request {request.index}, seq {request.first_chunk_seq}: "
                f"{', '.join(huge)} past {MAX_TOKENS:,} tokens)")
    return "usage without a valid " + ", ".join(unlogged)


def unpriced_usage(request: Request, tokens: Tokens | None, unlogged: tuple[str, ...],
                   captured: Tokens | None) -> str | None:
    """Why ``request``, priced from ``tokens`` (:func:`entry_usage`'s), is unpriced by its usage;
    None when it is not: its usage is not logged (or the capture's, ``captured``, is damaged or
    matched no request of its session: :class:`~dsh_audit.cache._response_usage.UnusableUsage`), or
    lacks a valid count (:func:`unlogged_reason`)."""
    if tokens is None:
        return captured.why if isinstance(captured, UnusableUsage) else "usage not logged"
    return unlogged_reason(request, unlogged) if unlogged else None
