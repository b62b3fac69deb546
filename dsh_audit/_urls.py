"""Why a text is not a URL, one sentence for every reader of a URL from a file.

A route file's ``baseURL`` (``wire``) and a HAR entry's ``request.url`` (``capture``) are read with
Python's :func:`urllib.parse.urlsplit`, whose refusals ("Invalid IPv6 URL") name no cause a user
can act on, and which reads a control character without complaint (it drops tab, CR and LF, and
takes the others as host text). :func:`url_problem` says what is wrong in the project's words, the
same for both.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["url_problem"]


def url_problem(url: str) -> str | None:
    """Why ``url`` is not a URL, in the project's words; None when it is one. Control characters
    (C0, DEL) are looked for first: Python's :func:`urlsplit` drops some (tab, CR, LF) and reads
    the others as host text, so an escape sequence (``ESC ] 0 ; ... BEL``) was an unmatched ``]``;
    its own messages are never shown.

    Example:
        >>> url_problem("http://gw.corp\\x1b]0;x\\x07.example/v1"), url_problem("http://[::1/v1")
        ('it holds a control character', 'its host has a [ without a ] or a ] without a [')
        >>> url_problem("http://[1.2.3.4]/v1"), url_problem("http://127.0.0.1:8080/v1") is None
        ('the host in brackets is not an IPv6 address', True)
    """
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "it holds a control character"
    try:
        urlsplit(url)
    except ValueError:  # about the host (urlsplit's checks): which of them, from the host itself
        host = re.split("[/?#]", url.partition("//")[2], maxsplit=1)[0]
        if ("[" in host) != ("]" in host):
            return "its host has a [ without a ] or a ] without a ["
        if "[" in host:
            return "the host in brackets is not an IPv6 address"
        return "its host holds a character that Unicode normalisation turns into / ? # @ or :"
    return None
