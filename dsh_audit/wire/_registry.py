"""The adapter registry: renderer modules register a factory under their adapter's name."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UsageError, closest
from ._types import Renderer

__all__ = ["ADAPTERS", "make_renderer", "register"]

#: Adapter name -> factory of a fresh :class:`Renderer` (keyword options only).
ADAPTERS: dict[str, Callable[..., Renderer]] = {}


def register(name: str, factory: Callable[..., Renderer]) -> Callable[..., Renderer]:
    """Register ``factory`` as the renderer of adapter ``name``; returns the factory.

    Example:
        >>> register("deepseek", DeepSeekRenderer)  # doctest: +SKIP
    """
    ADAPTERS[name] = factory
    return factory


def make_renderer(adapter: str = "deepseek", **options: object) -> Renderer:
    """A fresh renderer for ``adapter``; ``options`` go to its factory.

    Raises:
        UsageError: no renderer is registered under that name (close matches suggested).
    """
    factory = ADAPTERS.get(adapter)
    if factory is None:
        near = closest(adapter, ADAPTERS)
        hint = f"did you mean {near!r}?" if near is not None else "known adapters: " + ", ".join(sorted(ADAPTERS))
        raise UsageError(f"no wire renderer for adapter {adapter!r}", hint=hint)
    return factory(**options)
