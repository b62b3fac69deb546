"""Replaying a log: message projection, surface and header folds, request enumeration."""

from ._derive import derive_event_message
from ._header import call_config_equals, canonical_header, header_equals, unfoldable_field, unfoldable_words
from ._model import Digest, ReplayResult, Request, RequestTime
from ._requests import iter_requests, replay
from ._message_view import MessageView
from ._prefix_digest import PrefixDigest
from ._surface import Replacement, SurfaceFold

__all__ = [
    "Digest",
    "MessageView",
    "PrefixDigest",
    "Replacement",
    "ReplayResult",
    "Request",
    "RequestTime",
    "SurfaceFold",
    "call_config_equals",
    "canonical_header",
    "derive_event_message",
    "header_equals",
    "iter_requests",
    "replay",
    "unfoldable_field",
    "unfoldable_words",
]
