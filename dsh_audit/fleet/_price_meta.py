"""What the fleet index's ``meta`` table says of the price tables its ledgers were priced with:
the files each was made of (:func:`record_prices`, stored by ``index``; :func:`price_sources`,
:func:`price_tables`, read by ``stats``), the fingerprint a log's options name
(:func:`price_fingerprint`), and the ledger rows priced at the peak rate (:func:`peak_requests`).
The index's schema and opening it: :mod:`dsh_audit.fleet._db`.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator

__all__ = ["peak_requests", "price_fingerprint", "price_sources", "price_tables", "record_prices"]


_PRICES_KEY = "prices "  # + a price table's fingerprint: the meta key of the files it was made of
_PRICES_OPTION = re.compile(r"(?:^|;)prices=([^;]*)")


def record_prices(connection: sqlite3.Connection, fingerprint: str, files: tuple[str, ...]) -> None:
    """Store which files the price table ``fingerprint`` (:attr:`PriceBook.fingerprint`) was made
    of (:attr:`PriceBook.files`: ``packaged``, then ``[tool.dsh-audit.prices]`` and ``--prices``),
    so that ``stats`` can say where the rates of the ledgers it sums came from."""
    with connection:
        connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_PRICES_KEY + fingerprint, json.dumps(files)))


def price_sources(connection: sqlite3.Connection) -> tuple[tuple[str, ...] | None, ...]:
    """The files of each price table the stored ledgers were priced with (as
    :func:`record_prices` stored them; None for a table an older dsh-audit did not record), in
    the order of their fingerprints (:func:`price_tables`).

    Example:
        >>> from dsh_audit.fleet._db import _SCHEMA
        >>> connection = sqlite3.connect(":memory:")
        >>> for statement in _SCHEMA:
        ...     _ = connection.execute(statement)
        >>> _ = connection.execute("INSERT INTO sessions (path, options) VALUES ('a', 'cache=1;prices=f1;code=x')")
        >>> _ = connection.execute("INSERT INTO costs (path, idx) VALUES ('a', 0)")
        >>> price_sources(connection)
        (None,)
        >>> record_prices(connection, "f1", ("packaged", "mine.json"))
        >>> price_sources(connection)
        (('packaged', 'mine.json'),)
    """
    return tuple(price_tables(connection).values())


def price_tables(connection: sqlite3.Connection) -> dict[str, tuple[str, ...] | None]:
    """:func:`price_sources` by the fingerprint of each table (:attr:`PriceBook.fingerprint`, as
    the options of the logs it priced name it), in fingerprint order."""
    prints: set[str] = set()
    for (options,) in connection.execute("SELECT DISTINCT options FROM sessions AS s WHERE options IS NOT NULL "
                                         "AND EXISTS (SELECT 1 FROM costs AS c WHERE c.path = s.path)"):
        found = price_fingerprint(options)
        if found is not None:
            prints.add(found)
    stored = dict(connection.execute(f"SELECT substr(key, {len(_PRICES_KEY) + 1}), value FROM meta "
                                     "WHERE key LIKE 'prices %'"))
    sources: dict[str, tuple[str, ...] | None] = {}
    for fingerprint in sorted(prints):
        try:
            files = json.loads(stored[fingerprint]) if fingerprint in stored else None
        except ValueError:  # edited by hand: not known
            files = None
        sources[fingerprint] = tuple(map(str, files)) if isinstance(files, list) else None
    return sources


def price_fingerprint(options: object) -> str | None:
    """The fingerprint of the price table a log's ledger was priced with, read from the options its
    ``sessions`` row was made with (:func:`dsh_audit.fleet._audit.options_key`); None when they do
    not say (a row an upgrade marked to be read again).

    Example:
        >>> price_fingerprint("cache=1;prices=f1;code=x"), price_fingerprint(None)
        ('f1', None)
    """
    found = _PRICES_OPTION.search(str(options)) if options is not None else None
    return None if found is None else found.group(1)


def peak_requests(connection: sqlite3.Connection) -> Iterator[tuple[str | None, str | None, str | None, float]]:
    """Every stored ledger row priced at the peak rate (``window`` ``peak``; those sent in the
    window of :func:`window_views`, when one was made), unordered: the fingerprint of the price
    table that priced it (:func:`price_fingerprint`), its provider, model and send time."""
    prints: dict[object, str | None] = {}
    for options, provider, model, sent in connection.execute(
            "SELECT s.options, c.provider, c.model, c.sent_at FROM costs AS c JOIN sessions AS s USING (path) "
            "WHERE c.window = 'peak' AND c.sent_at IS NOT NULL"):
        if options not in prints:
            prints[options] = price_fingerprint(options)
        yield prints[options], provider, model, float(sent)
