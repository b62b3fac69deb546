"""Where a URL's authority (user information, host, port) stands, as any parser may read it: after a web
scheme's slashes or backslashes, however many (WHATWG reads ``https:/host`` and ``https:\\\\host`` so), tabs
and line breaks skipped, up to the first ``/``, ``?`` or ``#``; with no scheme, a ``host:port`` or a dotted
host name that starts it (:func:`authority`). :mod:`._hosts` redacts what it finds there.
"""

from __future__ import annotations

import re

__all__ = ["BARE_AUTHORITY", "DOTTED_NAME", "DROPPED", "SCHEME", "WEB_SCHEMES", "authority", "dotted_name"]


def dotted_name(label: str = "[A-Za-z0-9-]", first: str = "[A-Za-z]") -> str:
    """The pattern of a dotted host name (``gw.corp``), written once for every reader of one: two labels or more of
    ``label`` characters, the last one starting with a ``first`` one, a letter (``10.0.0.1``, ``1.5`` or a version are
    none). Its ASCII form is :data:`DOTTED_NAME`; :mod:`._request_ids` reads one in any script.

    Example:
        >>> [bool(re.fullmatch(DOTTED_NAME, h)) for h in ("gw.corp", "a-1.b2", "10.0.0.1", "gw", "хост.бд")]
        [True, True, False, False, False]
    """
    return rf"{label}+(?:\.{label}+)*\.{first}{label}*"


#: A dotted host name of ASCII letters, digits and dashes (:func:`dotted_name`).
DOTTED_NAME = dotted_name()

#: A scheme (after what WHATWG strips first: C0 controls and spaces); the web's schemes take an authority
#: after any number of slashes or backslashes, the others only after ``//``.
SCHEME = re.compile(r"[\x00-\x20]*([A-Za-z][A-Za-z0-9+.-]*):")
WEB_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
DROPPED = "\t\n\r"  # removed from a URL before it is parsed (WHATWG, urlsplit)
#: An authority with no scheme before it, at the start of a URL (then its path, query or fragment, or the
#: end): a host (a name or a bracketed address) and a port, ``gw.corp:8080/v1``; or a host name of two labels
#: or more, the last one starting with a letter, or an IPv4 address, ``gw.corp/v1``.
BARE_AUTHORITY = re.compile(r"(?:(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.%]*\]):[0-9]+"
                            rf"|{DOTTED_NAME}\.?"
                            r"|[0-9]{1,3}(?:\.[0-9]{1,3}){3})(?=[/?#]|$)")


def authority(url: str) -> tuple[int, int] | None:
    """Where the authority (user information, host, port) of ``url`` stands, as WHATWG and Python's
    ``urlsplit`` may read it (see the module), or None when it has none (a path, ``mailto:``)."""
    at = [i for i, c in enumerate(url) if c not in DROPPED]  # index in url of each character kept
    clean = "".join(url[i] for i in at)
    scheme = SCHEME.match(clean)
    if scheme is not None and scheme[1].lower() in WEB_SCHEMES:
        start = scheme.end()
        while start < len(clean) and clean[start] in "/\\":
            start += 1
    else:
        lead = len(clean) - len(clean.lstrip("".join(map(chr, range(33)))))
        bare = BARE_AUTHORITY.match(clean, lead)
        if bare is not None:  # gw.corp:8080/v1, gw.corp/v1: a host with no scheme before it is still a host
            return at[lead], at[bare.end() - 1] + 1
        start = scheme.end() if scheme is not None else lead
        if clean[start:start + 2] != "//":
            return None
        start += 2
    end = start
    while end < len(clean) and clean[end] not in "/?#":
        end += 1
    return (at[start], at[end - 1] + 1) if end > start else None
