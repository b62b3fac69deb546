"""Reading DSH session logs: discovery, decoding, packed rows, legacy upgrades, refusals.

Beside the reader (:func:`read_log`), the building blocks it uses are public for the
conformance checker (:mod:`dsh_audit.validate`) and the capture readers: line decoding
(:func:`iter_lines`), JavaScript-exact JSON (:func:`parse_json`), packed chunk rows
(:func:`decode_record`, :func:`expand_row`), DSH's shape checks, legacy upgrades and version
shapes, content-based format detection (:func:`detect_format`), and a log's own time span read
from its two ends (:func:`time_span`). :func:`read_progress` reports the bytes a reader consumes
(for a progress bar).
"""

from ._decode import DecodeBudget, Line, TornTail, decode_limits, iter_lines, parse_line, read_progress
from ._discover import default_sessions_root, discover, looks_like_log, resolve_session
from ._follow import complete_length, is_zstd_head
from ._format import classify_record, detect_format
from ._outputs import ProtectedInputs, open_regular, special_kind, write_atomic
from ._header import is_absolute_path
from ._reader import SUPPORTED_VERSIONS, LineTee, SessionLog, read_log, read_stream
from ._span import time_span
from ._records import (
    RowError,
    adapter_defaults_error,
    decode_record,
    expand_row,
    is_safe_int,
    message_shape_error,
    parse_json,
)
from ._types import CHUNK_ROW_TYPES, KNOWN_EVENT_TYPES, SURFACE_TYPES, Event, SessionHeader
from ._upgrade import Malformed, MessageIds, upgrade_event
from ._versions import LATEST_VERSION, canonical_generation, known_types, to_v0_shapes

__all__ = [
    "CHUNK_ROW_TYPES",
    "DecodeBudget",
    "Event",
    "KNOWN_EVENT_TYPES",
    "LATEST_VERSION",
    "Line",
    "LineTee",
    "Malformed",
    "MessageIds",
    "ProtectedInputs",
    "RowError",
    "SUPPORTED_VERSIONS",
    "SURFACE_TYPES",
    "SessionHeader",
    "SessionLog",
    "TornTail",
    "adapter_defaults_error",
    "canonical_generation",
    "classify_record",
    "complete_length",
    "decode_limits",
    "decode_record",
    "default_sessions_root",
    "detect_format",
    "discover",
    "expand_row",
    "is_absolute_path",
    "is_safe_int",
    "is_zstd_head",
    "iter_lines",
    "known_types",
    "looks_like_log",
    "message_shape_error",
    "open_regular",
    "parse_json",
    "parse_line",
    "read_log",
    "read_progress",
    "read_stream",
    "resolve_session",
    "special_kind",
    "time_span",
    "to_v0_shapes",
    "upgrade_event",
    "write_atomic",
]
