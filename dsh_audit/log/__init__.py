"""Reading DSH session logs: discovery, decoding, packed rows, legacy upgrades, refusals."""

from ._discover import default_sessions_root, discover, looks_like_log
from ._reader import SUPPORTED_VERSIONS, SessionLog, read_log
from ._types import CHUNK_ROW_TYPES, KNOWN_EVENT_TYPES, SURFACE_TYPES, Event, SessionHeader

__all__ = [
    "CHUNK_ROW_TYPES",
    "Event",
    "KNOWN_EVENT_TYPES",
    "SUPPORTED_VERSIONS",
    "SURFACE_TYPES",
    "SessionHeader",
    "SessionLog",
    "default_sessions_root",
    "discover",
    "looks_like_log",
    "read_log",
]
