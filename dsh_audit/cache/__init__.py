"""Prefix-cache accounting: provider rules as data, token counting, expected versus actual cache
reads per request, classification of every shortfall, and the tokens and cost it lost.

Example:
    >>> from dsh_audit.cache import cache_report
    >>> report = cache_report("session.jsonl")  # doctest: +SKIP
    >>> [v.classification for v in report.verdicts]  # doctest: +SKIP
    ['as_expected', 'as_expected', 'break_explained']
"""

from __future__ import annotations

import typing

from .._lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from ._account import CacheAccount, ParentRequest, analyze_cache, iter_cache_verdicts
    from ._captured_usage import captured_usage, from_capture, given_capture, given_usage, keep_usage
    from ._causes import attribution_causes
    from ._prefix import PromptBuilder
    from ._prompt import Prompt, common_chars, common_prefix, prefix_tokens
    from ._report import BREAKS, CLASSIFICATIONS, CacheTotals, CacheVerdict, SessionCacheReport
    from ._ledger import LedgerEntry, LedgerTotals, SessionLedger, price_entry, session_ledger
    from ._logged_usage import USAGE_BUCKETS, entry_usage
    from ._money import Priced, Rates, Tokens, nanos_usd, usd_cost, usd_nanos, usd_total
    from ._price_window import OFF_PEAK, PEAK, STANDARD
    from ._prices import PriceBook, Quote, load_price_files, load_prices, no_price
    from ._rule_data import load_rules, rule_for
    from ._response_usage import response_tokens, usage_tokens
    from ._restate import restater
    from ._rules import Breakpoints, CacheRule
    from ._session import (account_alone, account_log, accounted, cache_group, cache_report, ledger_group,
                           session_transitions)
    from ._sums import Costs, ExactSum
    from ._summary import SessionSummary, iso_utc, newest_first, summarize_session, summary_group
    from ._tokens import ESTIMATE, EXACT_DEEPSEEK, TokenCounter, exact_tokenizer_available, make_counter
    from ._usage import (USAGE_GROUPS, UsageRow, UsageTable, parse_instant, sent_in_window,
                         usage_table, usage_tables)
    from ._zdr import pyproject_zero_data_retention

__all__ = [
    "BREAKS",
    "Breakpoints",
    "CLASSIFICATIONS",
    "CacheAccount",
    "CacheRule",
    "CacheTotals",
    "CacheVerdict",
    "Costs",
    "ESTIMATE",
    "EXACT_DEEPSEEK",
    "ExactSum",
    "LedgerEntry",
    "LedgerTotals",
    "OFF_PEAK",
    "PEAK",
    "ParentRequest",
    "PriceBook",
    "Priced",
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
    "USAGE_BUCKETS",
    "USAGE_GROUPS",
    "UsageRow",
    "UsageTable",
    "account_alone",
    "account_log",
    "accounted",
    "analyze_cache",
    "attribution_causes",
    "cache_group",
    "cache_report",
    "captured_usage",
    "common_chars",
    "common_prefix",
    "entry_usage",
    "exact_tokenizer_available",
    "from_capture",
    "given_capture",
    "given_usage",
    "iso_utc",
    "iter_cache_verdicts",
    "keep_usage",
    "ledger_group",
    "load_price_files",
    "load_prices",
    "load_rules",
    "make_counter",
    "nanos_usd",
    "newest_first",
    "no_price",
    "parse_instant",
    "prefix_tokens",
    "price_entry",
    "pyproject_zero_data_retention",
    "response_tokens",
    "restater",
    "rule_for",
    "sent_in_window",
    "session_ledger",
    "session_transitions",
    "summarize_session",
    "summary_group",
    "usage_table",
    "usage_tables",
    "usage_tokens",
    "usd_cost",
    "usd_nanos",
    "usd_total",
]

# Public name -> the module (relative to this package) that defines it: imported on first use.
_LAZY = {
    "BREAKS": "._report",
    "Breakpoints": "._rules",
    "CLASSIFICATIONS": "._report",
    "CacheAccount": "._account",
    "CacheRule": "._rules",
    "CacheTotals": "._report",
    "CacheVerdict": "._report",
    "Costs": "._sums",
    "ESTIMATE": "._tokens",
    "EXACT_DEEPSEEK": "._tokens",
    "ExactSum": "._sums",
    "LedgerEntry": "._ledger",
    "LedgerTotals": "._ledger",
    "OFF_PEAK": "._price_window",
    "PEAK": "._price_window",
    "ParentRequest": "._account",
    "PriceBook": "._prices",
    "Priced": "._money",
    "Prompt": "._prompt",
    "PromptBuilder": "._prefix",
    "Quote": "._prices",
    "Rates": "._money",
    "STANDARD": "._price_window",
    "SessionCacheReport": "._report",
    "SessionLedger": "._ledger",
    "SessionSummary": "._summary",
    "TokenCounter": "._tokens",
    "Tokens": "._money",
    "USAGE_BUCKETS": "._logged_usage",
    "USAGE_GROUPS": "._usage",
    "UsageRow": "._usage",
    "UsageTable": "._usage",
    "account_alone": "._session",
    "account_log": "._session",
    "accounted": "._session",
    "analyze_cache": "._account",
    "attribution_causes": "._causes",
    "cache_group": "._session",
    "cache_report": "._session",
    "captured_usage": "._captured_usage",
    "common_chars": "._prompt",
    "common_prefix": "._prompt",
    "entry_usage": "._logged_usage",
    "exact_tokenizer_available": "._tokens",
    "from_capture": "._captured_usage",
    "given_capture": "._captured_usage",
    "given_usage": "._captured_usage",
    "iso_utc": "._summary",
    "iter_cache_verdicts": "._account",
    "keep_usage": "._captured_usage",
    "ledger_group": "._session",
    "load_price_files": "._prices",
    "load_prices": "._prices",
    "load_rules": "._rule_data",
    "make_counter": "._tokens",
    "nanos_usd": "._money",
    "newest_first": "._summary",
    "no_price": "._prices",
    "parse_instant": "._usage",
    "prefix_tokens": "._prompt",
    "price_entry": "._ledger",
    "pyproject_zero_data_retention": "._zdr",
    "response_tokens": "._response_usage",
    "restater": "._restate",
    "rule_for": "._rule_data",
    "sent_in_window": "._usage",
    "session_ledger": "._ledger",
    "session_transitions": "._session",
    "summarize_session": "._summary",
    "summary_group": "._summary",
    "usage_table": "._usage",
    "usage_tables": "._usage",
    "usage_tokens": "._response_usage",
    "usd_cost": "._money",
    "usd_nanos": "._money",
    "usd_total": "._money",
}

__getattr__, __dir__ = _lazy_names(__name__, _LAZY, __all__)
