"""The tokens a request is priced from: its logged usage (DSH's ``TokenUsage``, read by one rule
with the cache report's: :func:`logged_tokens`), else, when its log holds none, the provider's usage
in the captured response to its send (``--capture``: :mod:`dsh_audit.cache._captured_usage`), never
in place of a logged one (:func:`entry_usage`); the route and model it is billed under, and the prompt
that selects its long-context tier.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._usage_rule import (MAX_TOKENS, NATIVE_DEEPSEEK, PRICED_FIELDS, js_integer, logged_counts, reasoning_excess,
                           usage_of)
from ..replay import Request
from ..session import request_provider
from ._response_usage import UnusableUsage
from ._money import Tokens

__all__ = ["NATIVE_DEEPSEEK", "USAGE_BUCKETS", "entry_usage", "logged_tokens", "priced_prompt", "request_route_model",
           "unlogged_reason", "unpriced_usage"]


def request_route_model(request: Request) -> tuple[str | None, str | None]:
    """The DSH provider id and model a request was billed under: an auxiliary call's own logged
    route (compaction, title, search) first, else the header's config."""
    config = (request.header or {}).get("config") or {}
    first, then = (request.extra, config) if request.kind != "loop" else (config, request.extra)
    return _string(first, then, "provider"), _string(first, then, "model")


def _string(first: Mapping[str, Any], then: Mapping[str, Any], key: str) -> str | None:
    """``key``'s value in ``first``, else in ``then``, when it is a string (None: in neither)."""
    value = first.get(key)
    if isinstance(value, str):
        return value
    value = then.get(key)
    return value if isinstance(value, str) else None


def logged_tokens(request: Request) -> tuple[Tokens | None, tuple[str, ...]]:
    """The tokens by bucket ``request``'s logged usage holds, and the fields of it that hold no
    valid count: one rule with the cache report's and `requests`' (:func:`dsh_audit._usage_rule.logged_counts`,
    where the rule is told).

    A count is an integer from 0 to :data:`~dsh_audit._usage_rule.MAX_TOKENS`; a negative,
    wrong-typed or larger one is not logged (``validate`` warns of it). A field not logged counts
    0 in its bucket. The tokens are None when the usage is absent or holds none of input, cache
    read and output.

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
    counts = logged_counts(request)
    if counts is None:
        return None, ()
    unlogged = tuple(name for name in PRICED_FIELDS if counts[name] is None)
    return Tokens(**{bucket: counts[name] or 0 for name, bucket in USAGE_BUCKETS},
                  reasoning=counts["reasoningTokens"] or 0), unlogged


#: Each DSH usage field (``TokenUsage``, :data:`~dsh_audit._usage_rule.PRICED_FIELDS`) and the bucket
#: of :class:`Tokens` it counts.
USAGE_BUCKETS = tuple(zip(PRICED_FIELDS, ("cache_miss", "cache_read", "cache_write", "output")))


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
    :data:`~dsh_audit._usage_rule.MAX_TOKENS` is damaged, and said with its place (:func:`_usage_place`), as an
    ``outputTokens`` below its own ``reasoningTokens`` is (:func:`~dsh_audit._usage_rule.reasoning_excess`); DSH's
    native DeepSeek adapter's cache reads are "not logged" only when it logged none (one it logged
    that is no count, ``"8000"``, is a usage without a valid one, as on every route)."""
    usage = usage_of(request)
    if unlogged == ("inputTokens", "cacheReadTokens") and request_provider(request) == NATIVE_DEEPSEEK \
            and isinstance(usage, dict) and usage.get("cacheReadTokens") is None:
        return (f"cache reads not logged ({NATIVE_DEEPSEEK} logs cacheReadTokens only when the API reported "
                "them: the prompt's split into hits and misses is unknown)")
    huge = [name for name in unlogged if isinstance(usage, dict) and (v := js_integer(usage.get(name))) is not None
            and v > MAX_TOKENS]
    damage = [f"{', '.join(huge)} past {MAX_TOKENS:,} tokens"] if huge else []
    if "outputTokens" in unlogged and (excess := reasoning_excess(usage)) is not None:
        damage.append(f"reasoningTokens {excess[0]} above outputTokens {excess[1]}")
    if damage:
        return f"the log's usage is damaged (request {request.index}, {_usage_place(request)}: {'; '.join(damage)})"
    return "usage without a valid " + ", ".join(unlogged)


def _usage_place(request: Request) -> str:
    """Where ``request``'s usage is in its log: the seq of its first chunk in a DSH log; in one
    imported from another agent's (``extra.format``: a Codex rollout, a Claude Code file, which
    have no seq), the line of the record that holds it (Codex's ``token_count``, Claude Code's last
    response record), as the importers' warnings name a line. The counts keep DSH's names there:
    the importer keeps none of the log's own (Codex's ``inputTokens`` is two of its fields)."""
    extra = request.extra
    if not isinstance(extra.get("format"), str):
        return f"seq {request.first_chunk_seq}"
    lines = extra.get("response_seqs")
    found = extra.get("token_count_seq", lines[-1] if isinstance(lines, list) and lines else None)
    return f"line {found if isinstance(found, int) else request.first_chunk_seq}"


def unpriced_usage(request: Request, tokens: Tokens | None, unlogged: tuple[str, ...],
                   captured: Tokens | None) -> str | None:
    """Why ``request``, priced from ``tokens`` (:func:`entry_usage`'s), is unpriced by its usage;
    None when it is not: its usage is not logged (or the capture's, ``captured``, is damaged or
    matched no request of its session: :class:`~dsh_audit.cache._response_usage.UnusableUsage`), or
    lacks a valid count (:func:`unlogged_reason`); a usage logged with no valid count is said so, not "not logged"."""
    if tokens is None:
        if isinstance(captured, UnusableUsage):
            return captured.why
        if usage_of(request) is None:
            return "usage not logged"
        if reasoning_excess(usage_of(request)) is not None:  # its one count was below its reasoning
            return unlogged_reason(request, ("outputTokens",))
        return "usage holds no valid count"
    return unlogged_reason(request, unlogged) if unlogged else None
