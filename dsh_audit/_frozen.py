"""Frozen slots dataclasses made fast: a frozen dataclass's ``__init__`` sets each field through a call
of ``object.__setattr__``, which for values made by the thousand (an event per record, a request per
step, a transition per request) costs more than the checks that made them. One way to skip it, for
every package (the log's events and lines, the replay's requests, attribution's transitions)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any, TypeVar, cast

__all__ = ["fast_frozen_init", "frozen_builder"]

T = TypeVar("T")


def _plain_init(cls: type, *, swap_in: bool) -> tuple[type, Callable[..., None]]:
    """A builder class of the frozen slots dataclass ``cls``'s slot layout, and its ``__init__``:
    it takes ``cls``'s arguments, sets each field by plain assignment and then makes the instance a
    ``cls`` (``__class__``, which CPython allows between classes of one slot layout, and checks).
    With ``swap_in`` it is ``cls``'s own ``__init__``: the instance, a ``cls`` at first, is made a
    builder before the assignments, as assignment on a frozen ``cls`` raises. Made the way
    :mod:`dataclasses` makes ``__init__``: its source from the fields' names (identifiers of
    ``cls``'s own definition), compiled once."""
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__, which a fast builder does not call")
    params, lines = [], []
    scope: dict[str, Any] = {"cls": cls, "MISSING": MISSING, "object_setattr": object.__setattr__}
    for each in fields(cls):
        name = each.name
        if not each.init or each.kw_only or name in scope or name in ("self", "builder"):
            raise TypeError(f"{cls.__name__}.{name}: a fast builder sets every field positionally, by a free name")
        if each.default is not MISSING:
            scope[f"default_{name}"] = each.default
            params.append(f"{name}=default_{name}")
        elif each.default_factory is not MISSING:
            scope[f"factory_{name}"] = each.default_factory
            params.append(f"{name}=MISSING")
            lines.append(f"if {name} is MISSING: {name} = factory_{name}()")
        else:
            params.append(name)
        lines.append(f"self.{name} = {name}")
    head = ["object_setattr(self, '__class__', builder)"] if swap_in else []
    source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join([*head, *lines, "self.__class__ = cls"])
    slots = cls.__dict__["__slots__"]  # dataclass(slots=True) made them
    builder = type(f"_{cls.__name__}Builder", (), {"__slots__": slots})
    scope["builder"] = builder
    exec(source, scope)  # noqa: S102  (the source holds only cls's field names)
    init: Callable[..., None] = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    builder.__init__ = init  # type: ignore[misc]
    return builder, init


def frozen_builder(cls: type[T]) -> type[T]:
    """A class whose call ``builder(...)`` takes the arguments of ``cls(...)`` and makes the same
    ``cls`` instance, about three times faster: a frozen dataclass sets each field through a call
    of ``object.__setattr__``, which for values made by the thousand (one event per record) costs
    more than the checks that made them.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True, slots=True)
        ... class Pair:
        ...     a: int
        ...     b: str = "b"
        >>> new = frozen_builder(Pair)
        >>> type(new(1)) is Pair, new(1, b="c") == Pair(1, "c")
        (True, True)
    """
    return cast("type[T]", _plain_init(cls, swap_in=False)[0])


def fast_frozen_init(cls: type[T]) -> type[T]:
    """Give the frozen slots dataclass ``cls`` the ``__init__`` of :func:`frozen_builder` (for a
    class made where its makers cannot call a builder): ``cls(...)`` about twice as fast, the same
    value. Apply it above ``@dataclass``.

    Example:
        >>> from dataclasses import dataclass, field
        >>> @fast_frozen_init
        ... @dataclass(frozen=True, slots=True)
        ... class Pair:
        ...     a: int
        ...     b: list[int] = field(default_factory=list)
        >>> Pair(1), Pair(1, [2]) == Pair(a=1, b=[2])
        (Pair(a=1, b=[]), True)
    """
    cls.__init__ = functools.wraps(cls.__init__)(_plain_init(cls, swap_in=True)[1])  # type: ignore[method-assign]
    return cls
