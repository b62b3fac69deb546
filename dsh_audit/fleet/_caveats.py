"""The caveats of the costs ``stats`` sums: what the price table that priced the stored ledgers
could not know (:meth:`dsh_audit.cache.PriceBook.caveat`: a year its holiday list does not
cover), found again from the ``costs`` rows ``index`` stored, with the table each was priced with.

The index names each table by its fingerprint, with the files it was made of
(:func:`~dsh_audit.fleet._db.record_prices`). Only a request priced at the peak rate can have a
caveat (a holiday would have made it off-peak), so a table is loaded only when the rows summed
hold one it priced so (:func:`dsh_audit.cache.load_price_files`: the packaged table, and the
user's files read again); an index with none loads no price table. A table whose files cannot be
read now, or no longer make the table that priced the rows (another fingerprint: a file was
edited since, or the packaged table is another dsh-audit's), or that the index does not record,
has caveats no one knows: one note says so, naming its files.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import cache
from ..errors import UsageError
from ._price_meta import peak_requests, price_tables

if TYPE_CHECKING:
    from ..cache import PriceBook

__all__ = ["stats_caveats"]


def stats_caveats(connection: sqlite3.Connection) -> tuple[str, ...]:
    """The caveats of the requests of the index at ``connection`` (those in the window of its
    :func:`~dsh_audit.fleet._db.window_views`, when one was made), each once, in the order of the
    first request (by send time) each was met at; with a note for each table whose caveats are
    unknown (:func:`_table`). What ``usage`` says of the same requests, priced with the same table."""
    tables = price_tables(connection)
    books: dict[str | None, PriceBook | str] = {}
    met: dict[str, float] = {}
    for fingerprint, provider, model, sent in peak_requests(connection):
        book = books.get(fingerprint)
        if book is None:
            book = books[fingerprint] = _table(fingerprint, tables.get(fingerprint) if fingerprint else None)
        text = book if isinstance(book, str) else book.caveat(provider, model, sent)
        if text is not None and met.get(text, math.inf) > sent:
            met[text] = sent
    return tuple(str(text) for text in sorted(met, key=lambda text: (met[text], text)))


def _table(fingerprint: str | None, files: tuple[str, ...] | None) -> PriceBook | str:
    """The price table of ``fingerprint``, made of ``files`` (:func:`dsh_audit.fleet._db.price_tables`),
    or the note that says its caveats are unknown: the index does not record its files, they
    cannot be read now, or they make another table now."""
    if fingerprint is None or not files:
        return ("the index does not record which price table priced some of its requests: whether it lists "
                "the holidays of the years of those it priced at the peak rate is unknown; index them again "
                "to record it")
    try:
        book = cache.load_price_files(files)
    except UsageError as exc:
        reason = f"{exc.path}: {exc.message}" if exc.path else exc.message
        return (f"the price table {_named(files)} cannot be read now ({reason}): whether it lists the "
                "holidays of the years of the requests it priced at the peak rate is unknown; index them "
                "again to price them with a table that can be read")
    if book.fingerprint != fingerprint:
        return (f"the price table {_named(files)} is not the one `index` priced with any more (a file of it "
                "changed since): whether that one listed the holidays of the years of the requests it priced "
                "at the peak rate is unknown; index them again to price them with this one")
    return book


def _named(files: Sequence[str]) -> str:
    """A price table by its files (:attr:`dsh_audit.cache.PriceBook.files`), as a note names it.

    Example:
        >>> _named(("packaged",)), _named(("packaged", "a.json", "b.toml"))
        ('of the packaged list prices', 'from a.json, b.toml over the packaged list prices')
    """
    mine = [name for name in files if name != "packaged"]
    return f"from {', '.join(mine)} over the packaged list prices" if mine else "of the packaged list prices"
