"""The session trunk: a log opened once, read in one pass, shared by every view.

:func:`open_session` reads one log into a :class:`Session` (requests with their times, the
evidence attribution quotes, warnings); :func:`open_group` reads related logs (a fork or subagent
child with its parent) together, each once; a :class:`Session` renders each request's wire body
once per adapter (:meth:`Session.body`).

Example:
    >>> from dsh_audit.session import open_session
    >>> session = open_session("sample_logs/chat/session.jsonl")
    >>> len(session.requests), session.format
    (3, 'dsh')
"""

from ._attachments import (ATTACHMENTS_ENV, AttachmentStore, ImageOverlay, attachment_root, attachment_store,
                           attachment_warnings, dsh_homes_of)
from ._evidence import (
                     CONTEXT_TYPES,
                     Evidence,
                     EvidenceCollector,
                     LogEvidence,
                     collect_evidence,
)
from ._group import (
                     Failure,
                     GroupResult,
                     SessionGroup,
                     family_groups,
                     open_group,
                     pair_orphans,
                     read_session,
                     rounds,
                     route_warnings,
                     run_groups,
                     validating_headers,
)
from ._related import Headers, find_parent, nearby_logs, walk_family, with_ancestors
from ._route_evidence import RouteEvidence
from ._route_notes import RouteNote, window_conflicts
from .._usage_rule import logged_cache_read, request_provider
from ._routes import (
                     ADAPTER_APIS,
                     ADAPTER_ENV,
                     Route,
                     forced_adapter,
                     request_model,
                     request_route,
                     route_for,
)
from ._lines import EventLines
from ._activity import Activity, RequestSpan
from ._bodies import Bodies
from ._home_routes import HOME_PATCH, PROFILE_ENV, home_routes_file, home_routes_key, routes_from, routes_hint
from ._session import Session, evidence_observer, open_foreign, open_session, route_apis, route_renderer

__all__ = [
    "ADAPTER_APIS",
    "ADAPTER_ENV",
    "ATTACHMENTS_ENV",
    "Activity",
    "AttachmentStore",
    "Bodies",
    "CONTEXT_TYPES",
    "EventLines",
    "Evidence",
    "EvidenceCollector",
    "Failure",
    "GroupResult",
    "HOME_PATCH",
    "Headers",
    "ImageOverlay",
    "LogEvidence",
    "PROFILE_ENV",
    "RequestSpan",
    "Route",
    "RouteEvidence",
    "RouteNote",
    "Session",
    "SessionGroup",
    "attachment_root",
    "attachment_store",
    "attachment_warnings",
    "collect_evidence",
    "dsh_homes_of",
    "evidence_observer",
    "family_groups",
    "find_parent",
    "forced_adapter",
    "home_routes_file",
    "home_routes_key",
    "logged_cache_read",
    "nearby_logs",
    "open_foreign",
    "open_group",
    "open_session",
    "pair_orphans",
    "read_session",
    "request_model",
    "request_provider",
    "request_route",
    "rounds",
    "route_apis",
    "route_for",
    "route_renderer",
    "route_warnings",
    "routes_from",
    "routes_hint",
    "run_groups",
    "validating_headers",
    "walk_family",
    "window_conflicts",
    "with_ancestors",
]
