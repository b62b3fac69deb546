"""Prefix-cache accounting: provider rules as data, token counting, expected versus actual cache
reads per request, classification of every shortfall, and the tokens and cost it lost.

Example:
    >>> from dsh_audit.cache import cache_report
    >>> report = cache_report("session.jsonl")  # doctest: +SKIP
    >>> [v.classification for v in report.verdicts]  # doctest: +SKIP
    ['as_expected', 'as_expected', 'break_explained']
"""

from ._account import actual_cache_read, analyze_cache, attribution_causes, iter_cache_verdicts
from ._prefix import Prompt, PromptBuilder, common_chars, common_prefix, prefix_tokens
from ._report import BREAKS, CLASSIFICATIONS, CacheVerdict, SessionCacheReport
from ._ledger import (Costs, LedgerEntry, SessionLedger, Tokens, price_entry, session_ledger, usd_cost,
                      usd_total)
from ._prices import OFF_PEAK, PEAK, STANDARD, PriceBook, Quote, Rates, load_prices
from ._rules import CacheRule, load_rules, rule_for
from ._session import account_log, cache_group, cache_report, ledger_group, session_transitions
from ._summary import SessionSummary, iso_utc, newest_first, summarize_session, summary_group
from ._tokens import ESTIMATE, EXACT_DEEPSEEK, TokenCounter, exact_tokenizer_available, make_counter
from ._usage import USAGE_GROUPS, UsageRow, UsageTable, parse_instant, usage_table

__all__ = [
    "BREAKS",
    "CLASSIFICATIONS",
    "CacheRule",
    "CacheVerdict",
    "Costs",
    "ESTIMATE",
    "EXACT_DEEPSEEK",
    "LedgerEntry",
    "OFF_PEAK",
    "PEAK",
    "PriceBook",
    "Prompt",
    "PromptBuilder",
    "Quote",
    "Rates",
    "STANDARD",
    "SessionCacheReport",
    "SessionLedger",
    "SessionSummary",
    "TokenCounter",
    "Tokens",
    "USAGE_GROUPS",
    "UsageRow",
    "UsageTable",
    "account_log",
    "actual_cache_read",
    "analyze_cache",
    "attribution_causes",
    "cache_group",
    "cache_report",
    "common_chars",
    "common_prefix",
    "exact_tokenizer_available",
    "iso_utc",
    "iter_cache_verdicts",
    "ledger_group",
    "load_prices",
    "load_rules",
    "make_counter",
    "newest_first",
    "parse_instant",
    "prefix_tokens",
    "price_entry",
    "rule_for",
    "session_ledger",
    "session_transitions",
    "summarize_session",
    "summary_group",
    "usage_table",
    "usd_cost",
    "usd_total",
]
