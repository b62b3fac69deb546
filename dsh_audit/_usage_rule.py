"""Which counts a request's logged usage holds: the one rule that says where a request's tokens come
from, for `requests` (its ``usage_source``) and the cache accounting alike
(:func:`dsh_audit.cache.entry_usage`), so that no view calls a usage logged that another refuses.

It loads nothing of the package at import: `requests` on a log with no capture reads it without
the cache accounting, and the price code (``dsh_audit.cache._money``, which reads its counts by
:func:`count_of`) without the session package, whose route rules a request's counts are read by when first asked.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_SAFE", "MAX_TOKENS", "NATIVE_DEEPSEEK", "PRICED_FIELDS", "count_of", "is_count", "js_integer",
           "logged_cache_read", "logged_counts", "reasoning_excess", "request_provider", "usage_of"]

#: The provider id of DSH's native DeepSeek adapter, which logs ``cacheReadTokens`` only when the
#: API reported it, and then its ``inputTokens`` is the whole prompt (``llm-deepseek/src/translate.ts``
#: ``mapUsage``); :func:`logged_cache_read` reads its usage by the same rule.
NATIVE_DEEPSEEK = "deepseek-official"

#: The most tokens one count of one request's usage can hold: 10**9, past the largest context window
#: any provider has (3,500,000: Llama 4 Scout in pi-ai 0.82.1's model catalog, ``contextWindow``),
#: and an output count is bounded by it too (``maxTokens`` <= ``contextWindow``). A count past it is
#: damaged (docs/cache-accounting.md "Damaged usage"), never priced.
MAX_TOKENS = 10**9

#: The usage fields (DSH's ``TokenUsage``) a request is priced by, in the order of its buckets;
#: ``reasoningTokens`` is a part of ``outputTokens``, shown apart.
PRICED_FIELDS = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")


#: The largest safe integer (JavaScript's ``Number.MAX_SAFE_INTEGER``): DSH's bound on seqs, times
#: and counts (``dsh_audit.log`` re-exports it).
MAX_SAFE = 2**53 - 1


def js_integer(value: Any) -> int | None:
    """The integer a JSON number is to JavaScript, as a Python ``int``; None for a fraction, a
    non-number or a bool. DSH is JavaScript: ``JSON.parse`` makes ``100.0`` the number 100 and
    ``-0.0`` one that ``Number.isSafeInteger`` takes as 0, so a log may write a count either way.
    The one definition of an integer in a log: :func:`count_of` and validate's
    :func:`dsh_audit.log.is_safe_int` read by it (bounds apart).

    Example:
        >>> js_integer(100), js_integer(100.0), js_integer(-0.0), js_integer(1.5), js_integer(True), js_integer("1")
        (100, 100, 0, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int(value)
    return int(value) if isinstance(value, float) and value.is_integer() else None


def count_of(value: Any, *, most: int = MAX_TOKENS) -> int | None:
    """A token count as an ``int`` (never a float, so that JSON and CSV show ``100``): an integer
    from 0 to ``most`` as JavaScript reads a JSON number (:func:`js_integer`: ``100.0`` is 100),
    else None (a negative, fractional, wrong-typed or larger one is none). With ``most`` at
    :data:`MAX_SAFE` it is DSH's own rule for a count, the one validate checks (DSH701, DSH702); the
    ledger prices none past :data:`MAX_TOKENS` (a damaged usage, which DSH would still sum).

    Example:
        >>> count_of(100.0), count_of(-0.0), count_of(10**9 + 1), count_of(10**9 + 1, most=MAX_SAFE), count_of(-1)
        (100, 0, None, 1000000001, None)
    """
    number = value if type(value) is int else js_integer(value)  # the common case first
    return number if number is not None and 0 <= number <= most else None


def is_count(value: Any) -> bool:
    """Whether ``value`` is a token count (:func:`count_of`): an integer from 0 to :data:`MAX_TOKENS`
    as JavaScript reads it (a negative, wrong-typed or larger one is none): the one rule for a logged
    usage and a captured one alike. Use :func:`count_of` for its value (``100.0`` counts 100).

    Example:
        >>> is_count(0), is_count(10**9), is_count(10**18), is_count(-1), is_count(True), is_count(1.0)
        (True, True, False, False, False, True)
    """
    return count_of(value) is not None


def reasoning_excess(usage: Any, *, most: int = MAX_TOKENS) -> tuple[int, int] | None:
    """``(reasoningTokens, outputTokens)`` when ``usage`` logs more reasoning tokens than output
    tokens (output a count up to ``most``, reasoning a safe one: :func:`count_of`); else None.

    Reasoning is a part of the output on every DSH route, so such a usage contradicts itself: DSH's
    native DeepSeek adapter logs ``completion_tokens`` and its ``completion_tokens_details.reasoning_tokens``
    (``llm-deepseek/src/translate.ts`` ``mapUsage``), and pi-ai 0.82.1 folds reasoning into its
    ``output`` in every API it speaks ("completion_tokens already includes reasoning_tokens";
    Anthropic's thinking tokens are "a subset of output_tokens"; Google's output adds
    ``thoughtsTokenCount``), which DSH's pi-ai adapter logs as ``outputTokens``. Which of the two
    counts is damaged is unknown, as for a capture's ``reasoning_tokens`` above its ``output``.

    Example:
        >>> [reasoning_excess({"outputTokens": 24, "reasoningTokens": r}) for r in (100, 24.0, 10**12, "99")]
        [(100, 24), None, (1000000000000, 24), None]
    """
    if not isinstance(usage, dict):
        return None
    output, reasoning = count_of(usage.get("outputTokens"), most=most), count_of(usage.get("reasoningTokens"),
                                                                                  most=MAX_SAFE)
    return (reasoning, output) if output is not None and reasoning is not None and reasoning > output else None


def usage_of(request: Any) -> Any:
    """The usage ``request`` logged, as the ledger prices it: the attempt's own usage chunk wins,
    the step's ``assistant/message`` usage is the fallback (spec §7.4), and an attempt's usage that
    is there wins however little it holds (``{}``: the attempt logged a usage of no count, which a
    step's counts do not stand in for; :func:`dsh_audit.cache.logged_tokens` prices it so). None
    when neither is logged; a value that is no object is returned as it is (no usage to read).

    Example:
        >>> from types import SimpleNamespace as R
        >>> step = {"inputTokens": 9}
        >>> usage_of(R(usage={}, message_usage=step)), usage_of(R(usage=None, message_usage=step))
        ({}, {'inputTokens': 9})
    """
    return request.usage if request.usage is not None else request.message_usage


def logged_counts(request: Any) -> dict[str, int | None] | None:
    """Each of :data:`PRICED_FIELDS` of ``request``'s logged usage -> its count, None where the
    usage holds no valid one (:func:`count_of`: ``100.0`` counts 100), and ``reasoningTokens`` -> its count (0 when
    none); None when the request logged no usage, or one with no count of input, cache read or
    output: its tokens do not come from the log.

    The attempt's own usage wins, the step's ``assistant/message`` usage is the fallback
    (:func:`usage_of`, spec §7.4). ``cacheReadTokens`` is :func:`logged_cache_read`:
    a pi-ai usage without it read 0, DSH's native DeepSeek adapter's did not log it (unknown), and then its
    ``inputTokens`` is the whole prompt, so that count is unknown too. A missing
    ``cacheWriteTokens`` is 0 (no adapter writes a 0 there). An ``outputTokens`` below its own
    ``reasoningTokens`` (:func:`reasoning_excess`) is no count, and that reasoning 0: one of the two
    is damaged, so the request is unpriced, as a capture's usage that says so is; and where that
    output was its one count, the usage holds none (None), as one whose output is ``"24"``.

    Example:
        >>> from types import SimpleNamespace as R
        >>> native = {"config": {"provider": "deepseek-official"}}
        >>> logged_counts(R(usage={"inputTokens": 9, "outputTokens": 2}, message_usage=None, header=native,
        ...                 kind="loop", extra={}))
        {'inputTokens': None, 'cacheReadTokens': None, 'cacheWriteTokens': 0, 'outputTokens': 2, 'reasoningTokens': 0}
        >>> logged_counts(R(usage={"inputTokens": 10**9 + 1, "cacheReadTokens": 10**9 + 1}, message_usage=None,
        ...                 header=native, kind="loop", extra={})) is None
        True
        >>> logged_counts(R(usage={"inputTokens": 100, "outputTokens": 24, "reasoningTokens": 100},
        ...                 message_usage=None, header=native, kind="loop", extra={})) is None
        True
    """
    usage = usage_of(request)
    if not isinstance(usage, dict):
        return None
    write = usage.get("cacheWriteTokens")  # no adapter writes a 0 there; a logged null is no count (DSH702)
    counts = {"inputTokens": usage.get("inputTokens"), "cacheReadTokens": logged_cache_read(request),
              "cacheWriteTokens": 0 if "cacheWriteTokens" not in usage else write,
              "outputTokens": usage.get("outputTokens")}
    valid: dict[str, int | None] = {name: count_of(value) for name, value in counts.items()}
    if valid["cacheReadTokens"] is None and valid["inputTokens"] is not None \
            and request_provider(request) == NATIVE_DEEPSEEK:
        valid["inputTokens"] = None  # its inputTokens holds the cache reads it did not log
    excess = reasoning_excess(usage) is not None
    if excess:
        valid["outputTokens"] = None  # before the test below: an excess that leaves no count is no usage
    if valid["inputTokens"] is None and valid["cacheReadTokens"] is None and valid["outputTokens"] is None:
        return None
    return {**valid, "reasoningTokens": 0 if excess else count_of(usage.get("reasoningTokens")) or 0}


def request_provider(request: Any) -> str | None:
    """The provider id a request was routed by: a compaction call's is the one its
    ``compaction/summary`` names (DSH's summarizer targets the configured ``summarizationProvider``,
    else the latest header's route, else the agent's; ``compaction-basic/src/summarizer.ts``
    ``summarizeWithLlm``, spec §8.4), any other request's its header's."""
    logged = (getattr(request, "extra", None) or {}).get("provider") \
        if getattr(request, "kind", None) == "compaction" else None
    if isinstance(logged, str) and logged:
        return logged
    config = (getattr(request, "header", None) or {}).get("config") or {}
    provider = config.get("provider") if isinstance(config, dict) else None
    if not isinstance(provider, str):
        provider = (getattr(request, "extra", None) or {}).get("provider")
    return provider if isinstance(provider, str) else None


def logged_cache_read(request: Any) -> int | None:
    """The cache-read tokens ``request``'s logged usage holds; None when unknown, never a made-up 0.

    The attempt's own usage chunk wins; a step's ``assistant/message`` usage is the fallback (spec
    §7.4). What a usage without ``cacheReadTokens`` means depends on the DSH adapter that wrote it,
    which its provider id names: DSH's native DeepSeek adapter serves ``deepseek-official`` alone
    (``llm-deepseek/src/index.ts`` ``PROVIDER``) and writes the bucket only when the wire reported
    one, so there it is unknown; every other provider goes through the pi-ai adapter, whose
    ``mapUsage`` (``llm-pi-ai/src/stream.ts``) writes it only when pi-ai's ``cacheRead`` is above 0
    ("pi-ai reports zeros, not absence"), so a pi-ai usage with its ``inputTokens`` and no bucket
    read 0 as pi-ai counted it. A bucket logged with no count in it (``"8000"``, ``true``, ``1.5``,
    one past :data:`MAX_TOKENS`: :func:`count_of`) is unknown on every route, never that 0.

    Example:
        >>> from types import SimpleNamespace as R
        >>> pi = {"config": {"provider": "anthropic"}}
        >>> logged_cache_read(R(usage={"inputTokens": 5}, message_usage=None, header=pi, kind="loop", extra={}))
        0
        >>> native = {"config": {"provider": "deepseek-official"}}
        >>> logged_cache_read(R(usage={"inputTokens": 5}, message_usage=None, header=native, kind="loop", extra={}))
        >>> [logged_cache_read(R(usage={"inputTokens": 5, "cacheReadTokens": v}, message_usage=None, header=pi,
        ...                      kind="loop", extra={})) for v in (7.0, "8000", True, 10**9 + 1, None)]
        [7, None, None, None, None]
    """
    usage = usage_of(request)
    if not isinstance(usage, dict):
        return None
    if "cacheReadTokens" in usage:  # logged: its count (100.0 is 100), else none (null too: DSH702), never 0
        return count_of(usage["cacheReadTokens"])
    provider = request_provider(request)
    return 0 if provider is not None and provider != NATIVE_DEEPSEEK and "inputTokens" in usage else None
