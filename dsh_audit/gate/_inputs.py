"""Finding the capture that belongs to a log when none is given: :func:`dsh_audit.capture.find_capture`
(it lives in :mod:`dsh_audit.capture`, where every view of a log finds it), named here too.
"""

from __future__ import annotations

from ..capture import CAPTURE_NAME, CAPTURE_SEARCH_LEVELS, find_capture

__all__ = ["CAPTURE_NAME", "CAPTURE_SEARCH_LEVELS", "find_capture"]
