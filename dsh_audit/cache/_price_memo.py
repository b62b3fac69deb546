"""A price book read once per process while the files it is read from are unchanged.

A command reads its price table once, but the library prices each log it is not given a table for
with its own (:func:`~dsh_audit.cache._prices.load_prices`): this keeps the parsed packaged table
and each book by the :func:`~dsh_audit._stamp.file_stamp` of every file read, so that an edited
file is read again and an unchanged one is not.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._stamp import Stamp, file_stamp
from ._price_files import _PACKAGED_HINT
from ._price_parser import _Parser, _Provider

if TYPE_CHECKING:
    from ._prices import PriceBook

__all__: list[str] = []


#: The packaged price document and its providers as parsed (:func:`_packaged`).
_Packaged = tuple[dict[str, Any], dict[str, _Provider]]


def _remembered(packaged: tuple[str, Stamp | str], load: Callable[..., PriceBook], args: tuple[Any, ...],
                stamps: tuple[Stamp, ...] | None) -> PriceBook:
    """``load(packaged table, *args)``, read once per process for the same ``args`` while the
    files it reads are unchanged (their ``stamps``: None when that cannot be told, then read now)
    and so is the packaged table (``packaged``: its name and version). A command reads the table
    once, but the library prices each log it is not given a table for with its own (every view
    of a session, each ledger of a fleet): one parse of the packaged table and the user's files
    each, not one per log. Each call gets a book of its own (:func:`dataclasses.replace`: the
    quotes and caveats it meets are its own), its providers shared and never changed. An error
    is never remembered: a file that fails is read again, and fails again, each call."""
    if stamps is None:
        return load(_packaged(*packaged), *args)
    return replace(_book(packaged, load, args, stamps))


@functools.lru_cache(maxsize=8)
def _book(packaged: tuple[str, Stamp | str], load: Callable[..., PriceBook], args: tuple[Any, ...],
          _stamps: tuple[Stamp, ...]) -> PriceBook:
    """:func:`_remembered`'s book of one version of its files (``_stamps``: the key only)."""
    return load(_packaged(*packaged), *args)


def _packaged_source() -> tuple[str, Stamp | str]:
    """The name of the packaged price document and what tells its version (a remembered book's
    key: a test may put another in its place), checked (:func:`_packaged_parsed`): its file's
    :func:`~dsh_audit._stamp.file_stamp`, or its text when it has none (an install in a zip file,
    a file just written)."""
    source = resources.files("dsh_audit.cache") / "rules" / "prices.json"
    stamp = file_stamp(source) if isinstance(source, os.PathLike) else None
    found = str(source), stamp if stamp is not None else source.read_text("utf-8")
    _packaged_parsed(*found)
    return found


def _packaged(name: str, version: Stamp | str) -> _Packaged:
    """The packaged price document at ``name`` (:func:`_packaged_source`), its providers a copy
    of their own (:func:`~dsh_audit.cache._prices._layered` adds each layer's to them), read before any user's file."""
    document, parsed = _packaged_parsed(name, version)
    return document, {key: replace(provider, windows=list(provider.windows), models=dict(provider.models))
                      for key, provider in parsed.items()}


@functools.lru_cache(maxsize=2)
def _packaged_parsed(name: str, version: Stamp | str) -> _Packaged:
    """:func:`_packaged` parsed once per version (its copies are what is changed): ``version``
    its text, or its file's stamp (the file is read)."""
    packaged = json.loads(version if isinstance(version, str) else Path(name).read_text("utf-8"))
    providers: dict[str, _Provider] = {}
    # an error here is the packaged table's own (a damaged install): named by its path, never a user's file's
    parser = _Parser(name, providers, hint=_PACKAGED_HINT)
    parser.document(packaged)
    parser.check_references()
    return packaged, providers
