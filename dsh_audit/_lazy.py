"""Public names of a package resolved on first use (PEP 562), so that importing one name of a
package loads only the module that defines it (start-up time: a command imports what it uses).

A package lists ``name -> defining module`` (relative to the package) in a ``_LAZY`` table, imports
the same names under ``if TYPE_CHECKING:`` for type checkers, and installs the two hooks::

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

A module that needs a whole package only on some paths (``breaks --cost`` needs the cache
accounting, ``breaks`` does not) binds it as ``cache = LazyModule("dsh_audit.cache")`` outside
``if TYPE_CHECKING:`` and imports it for real inside, so type checkers see the package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "lazy_names"]


def lazy_names(package: str, table: Mapping[str, str],
               public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: a name of ``table`` is imported
    from its module when first read, then kept in the package's namespace (later reads skip the
    hook); any other name raises :class:`AttributeError`, as for a plain module."""
    listed = frozenset(public)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | listed)

    return __getattr__, __dir__


class LazyModule:
    """The module ``name``, imported when one of its attributes is first read, not when this
    object is made. A dunder name (``__copy__``, ``__deepcopy__``...) is never looked up in the
    module: ``copy``, ``pickle`` and ``hasattr`` probe those, and must not import it.

    Example:
        >>> json = LazyModule("json")
        >>> json
        LazyModule('json')
        >>> json.dumps([1])
        '[1]'
        >>> import copy
        >>> copy.copy(json).dumps([2])
        '[2]'
        >>> hasattr(LazyModule("no_such_module"), "__wrapped__")
        False
    """

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        module = self._module
        if module is None:
            # kept once imported: ``importlib.import_module`` takes the import lock on every call
            # (~4 us), and a route or a body asked for per request reads a name through here
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __reduce__(self) -> tuple[Any, ...]:
        """A copy or a pickle is the name alone (a module does not pickle)."""
        return LazyModule, (self._name,)

    def __repr__(self) -> str:
        return f"LazyModule({self._name!r})"
