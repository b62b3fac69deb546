"""Reading DSH session logs: discovery, decoding, packed rows, legacy upgrades, refusals.

Beside the reader (:func:`read_log`), the building blocks it uses are public for the
conformance checker (:mod:`dsh_audit.validate`) and the capture readers: line decoding
(:func:`iter_lines`), JavaScript-exact JSON (:func:`parse_json`; :func:`ensure_room`, the check
before orjson parses a large text, which it cannot survive running out of memory on), packed chunk rows
(:func:`decode_record`, :func:`expand_row`), DSH's shape checks, legacy upgrades and version
shapes, content-based format detection (:func:`detect_format`), and a log's own time span read
from its two ends (:func:`time_span`). :func:`read_progress` reports the bytes a reader consumes
(for a progress bar), :func:`read_share` as a share of a task's work.
"""

from __future__ import annotations

import typing

from .._lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from ._decode import Line, TornTail, iter_lines, parse_line
    from ._copies import (MAX_COPIES, Copy, copy_name, copy_notes, in_layout, may_be_copies,
                          preferred, read_once, without_copies)
    from ._discover import default_sessions_root, discover, is_folder, looks_like_log
    from ._resolve import names_session, prefix_forms, resolve_session
    from ._follow import complete_length, is_zstd_head
    from ._format import FormatSniff, classify_record, detect_format, every_record_damaged, sniff_format
    from ._file_kind import special_kind
    from ._outputs import open_regular, write_atomic
    from ._protected import ProtectedInputs
    from ._header import (BOM_HINT, BOM_REFUSAL, foreign_record, foreign_refusal, header_keys, header_refusal,
                          is_absolute_path, is_fixture_token, unknown_header_keys)
    from ._limits import DecodeBudget, decode_limits
    from ._progress import read_progress, read_share
    from ._reader import SUPPORTED_VERSIONS, SessionLog, read_header, read_log, read_stream
    from ._span import time_span
    from ._tee import LineTee
    from ._json_line import parse_json
    from ._json_room import ensure_room
    from ._records import RowError, decode_record, expand_row
    from ._shapes import MAX_SAFE, adapter_defaults_error, is_plain_chunk, is_safe_int, message_shape_error
    from ._types import CHUNK_ROW_TYPES, KNOWN_EVENT_TYPES, SURFACE_TYPES, Event, SessionHeader, new_event
    from ._upgrade import Malformed, MessageIds, upgrade_event
    from ._versions import (BODY_CUE_TYPES, LATEST_VERSION, body_mismatch, canonical_generation, known_types,
                            log_file_name, to_v0_shapes)

__all__ = [
    "BODY_CUE_TYPES",
    "BOM_HINT",
    "BOM_REFUSAL",
    "CHUNK_ROW_TYPES",
    "Copy",
    "DecodeBudget",
    "Event",
    "FormatSniff",
    "KNOWN_EVENT_TYPES",
    "LATEST_VERSION",
    "Line",
    "LineTee",
    "MAX_COPIES",
    "MAX_SAFE",
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
    "body_mismatch",
    "canonical_generation",
    "classify_record",
    "complete_length",
    "copy_name",
    "copy_notes",
    "decode_limits",
    "decode_record",
    "default_sessions_root",
    "detect_format",
    "discover",
    "ensure_room",
    "every_record_damaged",
    "expand_row",
    "foreign_record",
    "foreign_refusal",
    "header_keys",
    "header_refusal",
    "in_layout",
    "is_absolute_path",
    "is_fixture_token",
    "is_folder",
    "is_plain_chunk",
    "is_safe_int",
    "is_zstd_head",
    "iter_lines",
    "known_types",
    "log_file_name",
    "looks_like_log",
    "may_be_copies",
    "message_shape_error",
    "names_session",
    "new_event",
    "open_regular",
    "parse_json",
    "parse_line",
    "preferred",
    "prefix_forms",
    "read_header",
    "read_log",
    "read_once",
    "read_progress",
    "read_share",
    "read_stream",
    "resolve_session",
    "sniff_format",
    "special_kind",
    "time_span",
    "to_v0_shapes",
    "unknown_header_keys",
    "upgrade_event",
    "without_copies",
    "write_atomic",
]

# Public name -> the module (relative to this package) that defines it: imported on first use, so
# that a command needing one helper (an output file check) does not load the decoders.
_LAZY = {
    "adapter_defaults_error": "._shapes",
    "canonical_generation": "._versions",
    "log_file_name": "._versions",
    "CHUNK_ROW_TYPES": "._types",
    "classify_record": "._format",
    "every_record_damaged": "._format",
    "FormatSniff": "._format",
    "sniff_format": "._format",
    "complete_length": "._follow",
    "copy_name": "._copies",
    "copy_notes": "._copies",
    "Copy": "._copies",
    "decode_limits": "._limits",
    "decode_record": "._records",
    "DecodeBudget": "._limits",
    "default_sessions_root": "._discover",
    "detect_format": "._format",
    "discover": "._discover",
    "in_layout": "._copies",
    "MAX_COPIES": "._copies",
    "MAX_SAFE": "._shapes",
    "may_be_copies": "._copies",
    "read_once": "._copies",
    "without_copies": "._copies",
    "preferred": "._copies",
    "ensure_room": "._json_room",
    "Event": "._types",
    "expand_row": "._records",
    "foreign_record": "._header",
    "foreign_refusal": "._header",
    "header_keys": "._header",
    "header_refusal": "._header",
    "unknown_header_keys": "._header",
    "is_absolute_path": "._header",
    "is_fixture_token": "._header",
    "is_folder": "._discover",
    "is_plain_chunk": "._shapes",
    "is_safe_int": "._shapes",
    "is_zstd_head": "._follow",
    "iter_lines": "._decode",
    "KNOWN_EVENT_TYPES": "._types",
    "known_types": "._versions",
    "body_mismatch": "._versions",
    "BODY_CUE_TYPES": "._versions",
    "BOM_HINT": "._header",
    "BOM_REFUSAL": "._header",
    "LATEST_VERSION": "._versions",
    "Line": "._decode",
    "LineTee": "._tee",
    "looks_like_log": "._discover",
    "Malformed": "._upgrade",
    "message_shape_error": "._shapes",
    "MessageIds": "._upgrade",
    "names_session": "._resolve",
    "prefix_forms": "._resolve",
    "new_event": "._types",
    "open_regular": "._outputs",
    "parse_json": "._json_line",
    "parse_line": "._decode",
    "ProtectedInputs": "._protected",
    "read_header": "._reader",
    "read_log": "._reader",
    "read_progress": "._progress",
    "read_share": "._progress",
    "read_stream": "._reader",
    "resolve_session": "._resolve",
    "RowError": "._records",
    "SessionHeader": "._types",
    "SessionLog": "._reader",
    "special_kind": "._file_kind",
    "SUPPORTED_VERSIONS": "._reader",
    "SURFACE_TYPES": "._types",
    "time_span": "._span",
    "to_v0_shapes": "._versions",
    "TornTail": "._decode",
    "upgrade_event": "._upgrade",
    "write_atomic": "._outputs",
}

__getattr__, __dir__ = _lazy_names(__name__, _LAZY, __all__)
