"""Prefix-cache accounting: provider rules as data, token counting, expected versus actual cache
reads per request, classification of every shortfall, and the tokens and cost it lost.

Example:
    >>> from dsh_audit.cache import cache_report
    >>> report = cache_report("session.jsonl")  # doctest: +SKIP
    >>> [v.classification for v in report.verdicts]  # doctest: +SKIP
    ['as_expected', 'as_expected', 'break_explained']
"""

from ._account import actual_cache_read, analyze_cache, attribution_causes
from ._prefix import Prompt, PromptBuilder, common_chars, common_prefix, prefix_tokens
from ._report import BREAKS, CLASSIFICATIONS, CacheVerdict, SessionCacheReport
from ._rules import CacheRule, Price, load_prices, load_rules, price_for, rule_for
from ._session import cache_group, cache_report, session_transitions
from ._tokens import ESTIMATE, EXACT_DEEPSEEK, TokenCounter, exact_tokenizer_available, make_counter

__all__ = [
    "BREAKS",
    "CLASSIFICATIONS",
    "CacheRule",
    "CacheVerdict",
    "ESTIMATE",
    "EXACT_DEEPSEEK",
    "Price",
    "Prompt",
    "PromptBuilder",
    "SessionCacheReport",
    "TokenCounter",
    "actual_cache_read",
    "analyze_cache",
    "attribution_causes",
    "cache_group",
    "cache_report",
    "common_chars",
    "common_prefix",
    "exact_tokenizer_available",
    "load_prices",
    "load_rules",
    "make_counter",
    "prefix_tokens",
    "price_for",
    "rule_for",
    "session_transitions",
]
