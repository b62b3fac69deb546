"""The lines a session's route configuration gives (:func:`window_conflicts`): which layers of a
DSH home it came from (a :class:`RouteNote`), and each logged context window it contradicts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from .._lazy import LazyModule
from ._route_evidence import RouteEvidence

if TYPE_CHECKING:
    from .. import wire
    from ..wire import PiRoutes
else:
    wire = LazyModule("dsh_audit.wire")  # read only when a session has a route configuration

__all__ = ["RouteNote", "window_conflicts"]


#: ``src/profile.ts``: ``PROFILE_PATCH_FILENAME``, ``PROFILES_DIR``).
_PATCH_FILE, _PROFILES_DIR = "cordis.patch.yml", "profiles"


def _home_layers(routes: PiRoutes) -> tuple[str, str, str]:
    """How a warning names a route configuration composed from a DSH home (:attr:`PiRoutes.layers`):
    its files, what they are, and the source of a value it sets."""
    layer = routes.layers[0]
    if len(routes.layers) == 1 and os.path.basename(layer) == _PATCH_FILE:
        folder = os.path.dirname(layer)
        what = f"DSH profile {os.path.basename(folder)}'s patch layer" \
            if os.path.basename(os.path.dirname(folder)) == _PROFILES_DIR else "DSH's home patch layer"
        return layer, f"the llm-pi-ai row of {what}", f"{what} {layer}"
    files = " + ".join(routes.layers)
    return files, "DSH's layers under its home", f"the route configuration composed from {files} (DSH's layers " \
                                                 "under its home)"


class RouteNote(str):
    """A line that travels with a log's route warnings but is information, not a warning: which
    layers of the DSH home the log sits in gave its route configuration (the normal case, said so
    a ``--routes`` file can be chosen instead). Its :attr:`level` is ``"note"``: a command says it
    as a ``note:``, once per run (every log of a home shares it), and a JSON output lists it among
    the notes, not the warnings. Any other line's level is a warning's.

    Example:
        >>> line = RouteNote("route configuration from /h/cordis.patch.yml")
        >>> line.level, getattr("route /m: the log records ...", "level", "warning"), line == str(line)
        ('note', 'warning', True)
    """

    __slots__ = ()
    level: ClassVar[str] = "note"


def window_conflicts(evidence: RouteEvidence, routes: PiRoutes, *,
                     providers: Iterable[str | None] | None = None) -> list[str]:
    """The lines a session's route configuration gives: first, when it was composed from the
    DSH home the log sits in (not a ``--routes`` file) and routes a call of the log, which layers
    those are (a :class:`RouteNote`, no warning: reading the home's layers is what DSH did); then one
    warning per route/model whose logged context window differs from the one the configuration sets
    (a catalog model's window it leaves as pi-ai's catalog has it is not its own), naming where the
    configuration came from.

    The logged window is the one DSH's pi-ai adapter resolved and used at the time; a route file is
    the configuration as it is now. Requests that logged their window are rendered with it; the
    conflict is reported (once per route/model of a session) so a stale or edited route file does
    not pass unnoticed.

    Args:
        evidence: the session's :class:`RouteEvidence`.
        routes: the route configuration (:class:`~dsh_audit.wire.PiRoutes`): a ``--routes`` file,
            which a warning calls the route file, or one composed from DSH's home.
        providers: the provider ids the session's calls were routed by (default: those
            :attr:`RouteEvidence.providers` saw).

    Example:
        >>> from dsh_audit.wire import PiRoutes
        >>> home = PiRoutes({"local-openai": "openai-completions"}, {}, layers=("/h/cordis.patch.yml",))
        >>> for line in window_conflicts(RouteEvidence(providers={"local-openai"}), home):
        ...     print(f"{line.level}: {line}")
        note: route configuration from /h/cordis.patch.yml (the llm-pi-ai row of DSH's home patch layer; --routes FILE overrides it)
        >>> window_conflicts(RouteEvidence(providers={"deepseek-official"}), home)
        []
    """
    out: list[str] = []
    models = routes.models
    source = "the route file (--routes)"
    if routes.layers:
        files, what, source = _home_layers(routes)
        routed = set(routes.apis) | {provider for provider, _ in routes.models}
        if not routed.isdisjoint(evidence.providers if providers is None else providers):
            out.append(RouteNote(f"route configuration from {files} ({what}; --routes FILE overrides it)"))
    for (provider, model), logged in evidence.windows.items():
        declared = getattr(models.get((provider, model)), "context_window", None)
        catalog = getattr(wire.PIAI_CATALOG.get((provider, model)), "context_window", None)
        if not isinstance(declared, int) or declared == catalog:  # the file set no window: pi-ai's catalog did
            continue
        for window, seq in logged.items():
            if window != declared:
                out.append(f"route {provider}/{model}: the log records contextWindow {window} (request/context "
                           f"at seq {seq}), {source} says {declared}; requests that logged "
                           "their window are rendered with the log's, the one DSH used")
                break
    return out

