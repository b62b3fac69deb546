"""The warnings of ``dsh-audit usage`` for requests it could not price: how many, and for a model the
price table does not know, the provider its requests went through and the ``--prices`` table that
would price it."""

from __future__ import annotations

from collections.abc import Iterable

from .._pyproject import dotted_key
from ..cache import SessionLedger, UsageTable, load_rules, no_price, sent_in_window

__all__ = ["unpriced_warnings"]


def _price_hint(provider: str | None, model: str) -> str:
    """Where a ``--prices`` file gives ``model`` through ``provider`` its rates: the table of the
    price document (:func:`dsh_audit.cache.load_prices`'s shape) its requests are priced from, as a
    TOML header: the family's table for a provider a cache rule names (DeepSeek's peak window applies
    there), else the provider's own.

    Example:
        >>> _price_hint("local-openai", "local-coder")[:68]
        'provider local-openai: give --prices FILE a [providers.local-openai.'
        >>> _price_hint("deepseek-official", "deepseek-v9").split(" table ")[0]
        'provider deepseek-official: give --prices FILE a [providers.deepseek.models.deepseek-v9]'
        >>> _price_hint(None, "gpt-5.4").split(" table ")[0]
        'no provider logged: give --prices FILE a [providers.PROVIDER.models."gpt-5.4"]'
        >>> _price_hint(None, "模型").split(" table ")[0]  # as the reason quotes it (stdout escapes it if need be)
        'no provider logged: give --prices FILE a [providers.PROVIDER.models."模型"]'
    """
    # a provider a cache rule names is priced from its family's table (whose windows apply there:
    # deepseek-official's rates from the deepseek table); another one's own table has no window
    family = next((rule.family for rule in load_rules() if provider and provider in rule.providers), None)
    table = f"[{dotted_key('providers', family or provider or 'PROVIDER', 'models', model, ascii_only=False)}]"
    where = f"provider {provider}" if provider else "no provider logged"
    return f"{where}: give --prices FILE a {table} table of cache_miss, cache_read and output rates"


def unpriced_warnings(table: UsageTable, ledgers: Iterable[SessionLedger], since: float | None,
                       until: float | None) -> list[str]:
    """A warning for each reason requests of the table were not priced, with how many; a model
    the price table does not know is named with the provider its requests went through and the
    ``--prices`` table that would price it (:func:`_price_hint`), one warning per provider."""
    routes: dict[str, dict[tuple[str | None, str], int]] = {}
    for ledger in ledgers:
        for entry in ledger.entries:
            if entry.unpriced is not None and entry.model and entry.unpriced == no_price(entry.model) \
                    and sent_in_window(entry, since, until):
                counts = routes.setdefault(entry.unpriced, {})
                counts[entry.provider, entry.model] = counts.get((entry.provider, entry.model), 0) + 1
    found = []
    for reason, count in table.unpriced.items():
        split = routes.get(reason)
        if not split or sum(split.values()) != count:
            found.append(f"{count} request(s) unpriced: {reason}")
            continue
        found.extend(f"{n} request(s) unpriced: {reason} ({_price_hint(provider, model)})"
                     for (provider, model), n in sorted(split.items(), key=lambda item: (item[0][0] or "", item[0][1])))
    return found
