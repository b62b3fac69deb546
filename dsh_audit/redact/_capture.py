"""Redacting a ``wire.jsonl``, HAR or body-folder capture consistently with its redacted log: the records,
sidecars and HAR entries around each captured body (the bodies themselves: :mod:`._bodies`).

A ``wire.jsonl`` capture is redacted record by record from the records its one read parsed
(:func:`dsh_audit.capture.read_capture`, bodies left out), each record written before the next is redacted. Authorization-like headers (and HAR cookies) are dropped, from a body folder's
``*.meta.json`` sidecars too, and count as secrets by their names (:func:`._secrets.header_kind`: an
``Authorization``, ``Cookie``, ``Set-Cookie`` or ``x-api-key`` value is one whatever its shape; a
cookie when its name says session or credential); a HAR ``queryString`` or ``postData.params`` item
and a URL's query parameter whose name says credential (``api_key``, ``key``, ``token``, ``auth``...)
have their values replaced and counted the same way; responses go through :mod:`._response`.
The gateway's address (the ``host`` and ``x-forwarded-host`` headers, the host and port of a URL, a HAR
entry's ``serverIPAddress``; HTTP/2's ``:authority`` goes with the auth headers) is identifying: it
becomes a placeholder of the same length, the same one wherever it stands, in the bundle's route file
too; only a public vendor API's exact host stays (:mod:`._hosts`). A header that names a user, an
install, an account or an organisation (:func:`_identity`: DSH's anonymous ``x-deepseek-harness-user-id``,
a stable per-install id that would link every bundle its user shares; ``openai-organization``,
``openai-project``, ``chatgpt-account-id``, ``anthropic-organization-id``) is content: its value becomes a
pseudonym of the same length (a hex id stays a hex id), the same for the same value, and its name is
listed (:attr:`.Redactor.identity_headers`); no verdict reads one. Other headers stay (the SDK's
``x-stainless-*`` OS, runtime and version headers, ``user-agent``, ``content-type``, ``anthropic-beta``,
which ``diff`` reads for the key type): no verdict reads them but DSH's session and compaction headers
and pi-ai's session headers, which stay verbatim. A vendor's or a proxy's id of the request or its trace
(:data:`._request_ids.REQUEST_ID_HEADER`: ``x-request-id``, ``request-id``, ``cf-ray``, ``x-amzn-requestid``,
``apigw-requestid``, ``traceparent``...) would let its vendor find the account that sent it: it becomes a
pseudonym of its shape (:func:`_request_id`), its name listed too. A kept header loses its IPv4 and IPv6
addresses, plain or percent-encoded (:func:`._hosts.redact_addresses`: the placeholder the address has in
``host``), but for the ones a verdict reads verbatim (:data:`_VERBATIM_HEADER`), as a URL's query and a HAR
``queryString`` item do. A
``wire.jsonl`` response object's ``headers`` are a HAR response's: kept by the same rule
(``content-length`` as it was).

Every string of a record other than its body (read with its object key, as the log's are), a
response, and a dropped header's or cookie's value count in the summary. A response body whose coding
cannot be undone (``br``, damaged data: :func:`._response.redact_content_text`) is replaced whole by one
placeholder, and the summary says how many and which codings (:func:`replaced_note`); only a bomb (past
the decode limits) is refused at its entry (:func:`_located`), never written as it was.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .._body_decode import BodyDecodeError, NotUndone, names_base64
from ..capture import PIAI_SESSION_HEADERS, CapturedRequest
from ..errors import CaptureError
from ..log import parse_json
from ..report import dumps_line
from ..session import Session
from ._bodies import redacted_bodies
from ._redactor import Redactor
from ._response import encoded, redact_content, redact_response
from ._hosts import host_value, redact_addresses, redact_host, redact_query_value, redact_url
from ._pseudonyms import redact_ascii
from ._request_ids import REQUEST_ID_HEADER, pseudonym
from ._secrets import cookie_secret, credential_name, header_kind

__all__ = ["META_SUFFIX", "ReplacedNote", "redact_body_folder", "redact_capture_records", "redact_har",
           "replaced_note"]

#: The name ending of a body folder's sidecar (``<stem>.meta.json`` beside ``<stem>.json``).
META_SUFFIX = ".meta.json"

_DROPPED_HEADER = re.compile(r"(?i)auth|cookie|api[-_]?key|token|secret|signature|password")
_SESSION_HEADER = "-session-id"  # ``x-deepseek-harness-session-id`` and the like: kept, no secret
#: A header naming a user, an install, an account, an organisation or a project by its id (``*-user-id``,
#: ``*-account-id``, ``openai-organization``, ``*-org-id``, ``openai-project``, ``*-tenant-id``...).
_IDENTITY_HEADER = re.compile(r"(?i)(?:^|[-_])(?:user|account|org|organi[sz]ation|project|tenant|customer|"
                              r"install(?:ation)?|device|machine)(?:[-_]?id)?$")
#: The headers a verdict reads as they were sent, kept verbatim (their IP addresses too): DSH's session and
#: compaction headers (``x-deepseek-harness-session-id``, ``x-deepseek-harness-compact``), pi-ai's session ids
#: (``x-session-affinity``, ``x-session-id``, ``session_id``, ``x-client-request-id``:
#: ``dsh_audit.capture``'s ``PIAI_SESSION_HEADERS``, matched against the log's session ids whole) and
#: ``anthropic-beta`` (the key type ``diff`` reads). Every other kept header's IP addresses are replaced.
_VERBATIM_HEADER = re.compile(r"(?i)session|^x-deepseek-harness-|^anthropic-beta$")


def _verbatim(name: str) -> bool:
    """Whether a verdict reads the header ``name`` as it was sent (:data:`_VERBATIM_HEADER`)."""
    return name.lower() in PIAI_SESSION_HEADERS or _VERBATIM_HEADER.search(name) is not None
_HEX_ID = re.compile(r"[0-9A-Fa-f]+(?:-[0-9A-Fa-f]+)*")
_KEPT_FIELDS = frozenset({"seq", "time", "method", "path", "kind", "auth_present", "status", "url"})

def _dropped(name: str) -> bool:
    """Whether a header named ``name`` is dropped: an auth, cookie, API key or token header."""
    return ((_DROPPED_HEADER.search(name) is not None or header_kind(name) is not None)
            and not name.lower().endswith(_SESSION_HEADER))


def _drop(name: str, value: Any, redactor: Redactor, dropped: list[str]) -> None:
    """A dropped header: its name noted, its value counted as a secret by its name (its secrets when
    it holds some: :meth:`Redactor.named`)."""
    dropped.append(name.lower())
    if isinstance(value, str):
        kind = header_kind(name)
        if kind is None:
            redactor.count(value, name)
        else:
            redactor.named(value, name, kind)


def _identity(name: str, value: Any, redactor: Redactor) -> str | None:
    """The pseudonym of the value of a header that names a user, an install or an account
    (:data:`_IDENTITY_HEADER`; its name noted in :attr:`.Redactor.identity_headers`), or None for any
    other header (or a value that is no string)."""
    if not isinstance(value, str) or _IDENTITY_HEADER.search(name) is None:
        return None
    redactor.identity_headers.add(name.lower())
    return redact_ascii(value, redactor, hex_id=_HEX_ID.fullmatch(value) is not None)


def _request_id(name: str, value: Any, redactor: Redactor) -> str | None:
    """The pseudonym of a request id (a header of :data:`._request_ids.REQUEST_ID_HEADER` no verdict reads verbatim): as
    long as it, its punctuation kept, each run of letters and digits replaced by one of the same shape (a
    hex run by hex digits, the case of its letters kept: :func:`._pseudonyms.redact_ascii`), the same for the
    same run wherever it stands, but a short run or a name; an IP address in it, with its port, and a
    ``host:port`` the placeholder it has as a host (fuzz 24): :func:`._request_ids.pseudonym`. None for any other
    header.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> ray = _request_id("CF-Ray", "8f3a2b1c4d5e6f70-SJC", r)
        >>> len(ray), ray.endswith("-SJC"), set(ray[:16]) <= set("0123456789abcdef"), ray[:16] != "8f3a2b1c4d5e6f70"
        (20, True, True, True)
    """
    if not isinstance(value, str) or REQUEST_ID_HEADER.search(name) is None or _verbatim(name):
        return None
    redactor.identity_headers.add(name.lower())  # named in the summary, as the identity headers are
    return pseudonym(value, redactor)


class _Fate(enum.Enum):
    """What becomes of a header that is given no value of its own (:func:`_header_value`)."""

    DROPPED = "dropped"  # an auth-like header: left out
    KEPT = "kept"  # its value kept, without its secrets and IP addresses


def _header_value(name: str, value: Any, redactor: Redactor, dropped: list[str], size: int | None) -> Any:
    """What one header of a request (``size``: its redacted body's length, for ``content-length``) or of a response
    (``size`` None) becomes, by the one chain of rules a headers object and HAR's list of them both follow:
    :attr:`_Fate.DROPPED` (auth-like: its name noted in ``dropped``, its value counted: :func:`_drop`), the value it
    is given (``content-length``'s; a host's or an address's placeholder, :func:`._hosts.host_value`; a pseudonym,
    :func:`_identity`, :func:`_request_id`) or :attr:`_Fate.KEPT` (its caller keeps the value without its secrets,
    read with its key, and :func:`_addresses` without its IP addresses)."""
    if _dropped(name):
        _drop(name, value, redactor, dropped)
        return _Fate.DROPPED
    if size is not None and name.lower() == "content-length":
        return str(size) if isinstance(value, str) else size
    for given in (host_value, _identity, _request_id):
        new = given(name, value, redactor)
        if new is not None:
            return new
    return _Fate.KEPT


def _headers(headers: Any, redactor: Redactor, dropped: list[str], size: int | None) -> Any:
    """A request's (``size``: its redacted body's length, for ``content-length``) or a response's
    (``size`` None) headers object."""
    if not isinstance(headers, dict):
        return redactor.value(headers)
    kept = {}
    given = {}
    for name, value in headers.items():
        new = _header_value(str(name), value, redactor, dropped, size)
        if new is _Fate.DROPPED:
            continue
        if new is not _Fate.KEPT:
            given[name] = new
        kept[name] = None if name in given else value
    # a kept part: values kept without their secrets, a secret in a header name replaced as in every key
    return {name: given.get(name, _addresses(str(name), value, redactor))
            for name, value in redactor.value(kept, kept=True).items()}


def _addresses(name: str, value: Any, redactor: Redactor) -> Any:
    """A kept header's value with its IP addresses replaced (:func:`._hosts.redact_addresses`), unless a
    verdict reads it verbatim (:data:`_VERBATIM_HEADER`)."""
    if not isinstance(value, str) or _verbatim(name):
        return value
    return redact_addresses(value, redactor)


def redact_capture_records(records: Sequence[dict[str, Any]], captures: Sequence[CapturedRequest], original: Session,
                           redacted: Session, redactor: Redactor, out: IO[bytes], *, path: str,
                           notes: list[str] | None = None) -> list[str]:
    """Every record of a ``wire.jsonl`` capture redacted and written to ``out``, one at a time;
    returns the dropped header names. The bodies replaced whole are said in ``notes`` (:func:`replaced_note`).

    ``records`` are the capture's parsed records, bodies left out, and ``captures`` its requests, both
    in file order, from its one read (:func:`dsh_audit.capture.read_capture`).

    Raises:
        CaptureError: ``records`` and ``captures`` are not as many (they come from different reads).
    """
    if len(records) != len(captures):
        raise CaptureError("the capture changed while it was read", path=path)
    bodies = redacted_bodies(captures, original, redacted, redactor)
    dropped: list[str] = []
    undecoded: list[str] = []
    for source, capture, body in zip(records, captures, bodies):
        with _located(capture.source, capture.locator):
            record = _record(source, body, redactor, dropped, undecoded=undecoded)
        out.write(dumps_line(record).encode("utf-8") + b"\n")  # a body's C1 or bidi character escaped, as in the log
    _say_replaced(undecoded, notes)
    return sorted(set(dropped))


class ReplacedNote(str):
    """The summary's line on the bodies replaced whole (:func:`replaced_note`), carrying what it says as
    data: :attr:`codings`, the coding of each body replaced, in order, as the writer that replaced them
    listed them; the manifest counts them from there (:func:`._notes.replaced_whole`), never from the words.

    Example:
        >>> note = replaced_note(["br", "br"])
        >>> note.codings, note == "2 bodies replaced whole: their coding br could not be undone"
        (('br', 'br'), True)
    """

    codings: tuple[str, ...] = ()


def replaced_note(codings: Sequence[str]) -> ReplacedNote:
    """What the summary says of the bodies replaced whole, one per coding in ``codings`` (each the
    coding of one body that could not be undone, as :class:`dsh_audit._body_decode.UndecodableBody`
    names it: no capture text), their distinct codings in order of first sight; the line carries
    ``codings`` (:class:`ReplacedNote`).

    Example:
        >>> replaced_note(["br"]), replaced_note(["br", "deflate", "br"])
        ('1 body replaced whole: its coding br could not be undone', \
'3 bodies replaced whole: their codings br, deflate could not be undone')
    """
    names = list(dict.fromkeys(codings))
    many = len(codings) != 1
    note = ReplacedNote(f"{len(codings)} {'bodies' if many else 'body'} replaced whole: {'their' if many else 'its'} "
                        f"coding{'s' if len(names) > 1 else ''} {', '.join(names)} could not be undone")
    note.codings = tuple(codings)
    return note


def _not_undone(stored: Iterable[Any], undecoded: list[str] | None) -> None:
    """The coding of each request body the capture reader read as captured (``stored``: what it kept
    in place of the body, a :class:`NotUndone`), appended to ``undecoded``: such a body is no JSON, and
    :func:`._bodies.redact_body` replaces it whole, as a response redact cannot read is replaced."""
    if undecoded is not None:
        undecoded.extend(value.coding for value in stored if isinstance(value, NotUndone))


def _say_replaced(undecoded: list[str], notes: list[str] | None) -> None:
    """:func:`replaced_note` added to ``notes`` (when given) if any body was replaced whole."""
    if undecoded and notes is not None:
        notes.append(replaced_note(undecoded))


#: The hint of a response body redact cannot read when its error gives none (:func:`_located`).
_UNDECODED_HINT = ("its secrets cannot be taken out of a body redact cannot read: recapture it without that "
                   "coding, or leave out --capture to redact the log alone")


@contextmanager
def _located(path: str, where: str) -> Iterator[None]:
    """Refuse a response body past the decode limits (a bomb: :class:`BodyDecodeError`; one whose coding
    cannot be undone is replaced whole before it gets here) as the capture's error at ``where``
    (``line 3``, ``entries[2]``; ``""``: the whole file) in ``path``, in one line.

    Raises:
        CaptureError: the body is past the decode limits.
    """
    try:
        yield
    except BodyDecodeError as exc:
        said = f"cannot redact the response: {exc.message}"
        raise CaptureError(f"{where}: {said}" if where else said, path=path,
                           hint=exc.hint or _UNDECODED_HINT) from None  # a limit's: the variable to raise


def _sent(record: dict[str, Any], body: bytes) -> bytes:
    """The bytes a request record's redacted ``body`` is written as in its ``body_base64``: coded again
    as it was sent when the capture reader undid codings to read it (its ``Content-Encoding``'s: gzip,
    deflate, stacked; the reader keeps them, in the order they were applied, in place of the record's
    ``body_base64``), by the one coder redacted responses go through (:func:`._response.encoded`), so
    that the kept header stays true and ``body_sha256``/``body_bytes`` are of the bytes sent, as the
    reader checks them; else ``body`` itself."""
    codings = record.get("body_base64")
    return encoded(body, codings) if isinstance(codings, tuple) else body


def _record(record: dict[str, Any], body: bytes, redactor: Redactor, dropped: list[str], *,
            undecoded: list[str] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {}
    _not_undone((record.get("body"), record.get("body_base64")), undecoded)
    text, body = body, _sent(record, body)  # a ``body`` beside a coded ``body_base64`` is the text, decoded
    for key, value in record.items():
        if key == "body":
            result[key] = text.decode("utf-8", "surrogatepass")
        elif key == "body_base64":
            result[key] = base64.b64encode(body).decode("ascii")
        elif key == "body_sha256":
            result[key] = hashlib.sha256(body).hexdigest()
        elif key == "body_bytes":
            result[key] = len(body)
        elif key == "headers":
            result[key] = _headers(value, redactor, dropped, len(body))
        elif key == "response":
            result[key] = redact_response(value, redactor, lambda h: _response_headers(h, redactor, dropped),
                                          undecoded=undecoded)
        elif key in ("url", "path") and isinstance(value, str):
            result[key] = redact_url(value, redactor)
        elif key in _KEPT_FIELDS:
            result[key] = redactor.value(value, key, kept=True)
        else:
            result[key] = redactor.value(value, key)
    return result


def _response_headers(headers: Any, redactor: Redactor, dropped: list[str]) -> Any:
    """A ``wire.jsonl`` response's headers, an object or HAR's list, kept as a HAR response's are."""
    if isinstance(headers, list):
        return _har_headers(headers, redactor, dropped, None)
    return _headers(headers, redactor, dropped, None)


# -- a folder of bodies ---------------------------------------------------------------------------


def redact_body_folder(captures: Sequence[CapturedRequest], original: Session, redacted: Session,
                       redactor: Redactor, write: Callable[[str, bytes], None], *,
                       notes: list[str] | None = None) -> tuple[list[str], list[str]]:
    """Every body of a body-folder capture redacted (:func:`redacted_bodies`), and each body's
    ``*.meta.json`` sidecar with auth-like headers dropped and ``content-length`` recomputed, each
    file handed to ``write`` (its name, the input's, and its bytes) as soon as it is made: one body
    is held at a time, however many the folder has; the bodies replaced whole said in ``notes``
    (:func:`replaced_note`).

    Returns the names written and the dropped header names.

    Raises:
        CaptureError: a sidecar can no longer be read, or is no longer a JSON object.
    """
    written: list[str] = []
    dropped: list[str] = []
    undecoded: list[str] = []
    for capture, body in zip(captures, redacted_bodies(captures, original, redacted, redactor)):
        source = Path(capture.source)
        write(source.name, body)
        written.append(source.name)
        meta = source.with_name(source.stem + META_SUFFIX)
        if not meta.exists():
            continue
        try:
            record = parse_json(meta.read_bytes())
        except OSError as exc:
            raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(meta)) from None
        except (ValueError, UnicodeDecodeError):
            record = None
        if not isinstance(record, dict):
            raise CaptureError("the capture changed while it was read", path=str(meta))
        with _located(str(meta), ""):
            sidecar = _record(record, body, redactor, dropped, undecoded=undecoded)
        write(meta.name, dumps_line(sidecar).encode("utf-8") + b"\n")
        written.append(meta.name)
    _say_replaced(undecoded, notes)
    return written, sorted(set(dropped))


# -- HAR 1.2 -------------------------------------------------------------------------------------

_HAR_KEPT = frozenset({"startedDateTime", "time", "timings", "serverIPAddress", "connection", "pageref", "method",
                       "httpVersion", "headersSize", "bodySize", "status", "statusText", "mimeType", "encoding",
                       "size", "compression", "version", "creator", "browser", "cache"})
_HAR_URLS = frozenset({"url", "redirectURL"})


def _har_headers(headers: Any, redactor: Redactor, dropped: list[str], size: int | None) -> Any:
    """A HAR request's or response's ``headers`` list (``size`` as :func:`_headers` takes it), each ``{name, value}``
    item by :func:`_header_value`."""
    if not isinstance(headers, list):
        return redactor.value(headers)
    kept = []
    for header in headers:
        if not isinstance(header, dict):
            kept.append(redactor.value(header))
            continue
        name = str(header.get("name", ""))
        new = _header_value(name, header.get("value"), redactor, dropped, size)
        if new is _Fate.DROPPED:
            continue
        entry = redactor.value({**header, "name": name, "value": header.get("value") if new is _Fate.KEPT else None},
                               kept=True)
        if new is not _Fate.KEPT:
            entry["value"] = new
        elif "value" in entry:
            entry["value"] = _addresses(name, entry["value"], redactor)
        kept.append(entry)
    return kept


def _named_items(items: Any, redactor: Redactor, *, kept: bool) -> Any:
    """A HAR ``queryString`` (``kept``) or ``postData.params`` list: each ``{"name", "value"}`` item whose
    name says credential (``api_key``, ``key``, ``token``, ``access_token``, ``password``, ``auth``...:
    :func:`._secrets.credential_name`) has its value replaced whole and counted as a ``url_parameter``
    secret, whatever its shape; the other items are kept without their secrets and IP addresses
    (``kept``: :func:`._hosts.redact_query_value`, as in the entry's ``url``) or content."""
    if not isinstance(items, list):
        return redactor.value(items, kept=kept)
    out = []
    for item in items:
        name = item.get("name") if isinstance(item, dict) else None
        value = item.get("value") if isinstance(item, dict) else None
        if not isinstance(name, str) or not isinstance(value, str) or not credential_name(name):
            out.append(redactor.value(item, kept=kept and isinstance(item, dict)))
            if kept and isinstance(value, str):  # a query parameter's address, as in the entry's url
                out[-1]["value"] = redact_query_value(out[-1]["value"], redactor)
            continue
        out.append({k: redactor.replace_named(v, name, "url_parameter") if k == "value"
                    else redactor.value(v, k, kept=kept)
                    for k, v in item.items()})
    return out


def _har_part(part: dict[str, Any], redactor: Redactor, dropped: list[str], body: bytes | None, *,
              undecoded: list[str] | None = None) -> dict[str, Any]:
    """A HAR request (``body`` is its redacted body) or response (``body`` None); ``undecoded``: as
    :func:`._response.redact_content_text` takes it."""
    out: dict[str, Any] = {}
    for key, value in part.items():
        if key == "headers":
            out[key] = _har_headers(value, redactor, dropped, None if body is None else len(body))
        elif key == "cookies":
            if value:
                dropped.append("cookies")
            for cookie in value if isinstance(value, list) else ():
                if isinstance(cookie, dict) and isinstance(cookie.get("value"), str):
                    name = str(cookie.get("name", ""))
                    if cookie_secret(name):  # they go; a session cookie counts by its name, others their secrets
                        redactor.named(cookie["value"], name, "cookie")
                    else:
                        redactor.count(cookie["value"], name)
            out[key] = []
        elif key == "postData" and isinstance(value, dict) and body is not None:
            _not_undone((value.get("text"),), undecoded)
            encoded = (base64.b64encode(body).decode("ascii") if names_base64(value.get("encoding"))
                       else body.decode("utf-8", "surrogatepass"))
            out[key] = {k: encoded if k == "text" else _named_items(v, redactor, kept=False) if k == "params"
                        else redactor.value(v, k, kept=k in _HAR_KEPT) for k, v in value.items()}
        elif key == "content" and isinstance(value, dict):
            out[key] = redact_content(value, part.get("headers"), redactor, _HAR_KEPT, undecoded=undecoded)
        elif key == "queryString" and isinstance(value, list):
            out[key] = _named_items(value, redactor, kept=True)
        elif key == "bodySize" and body is not None and isinstance(value, int) and value >= 0:
            out[key] = len(body)
        elif key in _HAR_URLS and isinstance(value, str):
            out[key] = redact_url(value, redactor)
        else:
            out[key] = redactor.value(value, key, kept=key in _HAR_KEPT)
    return out


def redact_har(document: Any, captures: Sequence[CapturedRequest], original: Session, redacted: Session,
               redactor: Redactor, *, path: str, notes: list[str] | None = None) -> tuple[bytes, list[str]]:
    """A HAR 1.2 capture redacted: request bodies as :func:`redacted_bodies` makes them, auth headers and
    cookies dropped, response bodies (streamed or not) redacted, those replaced whole said in ``notes``
    (:func:`replaced_note`); returns the file and dropped header names."""
    entries = document["log"]["entries"]
    if len(entries) != len(captures):
        raise CaptureError("the capture changed while it was read", path=path)
    bodies = redacted_bodies(captures, original, redacted, redactor)
    dropped: list[str] = []
    undecoded: list[str] = []
    out_entries = []
    for entry, capture, body in zip(entries, captures, bodies):
        out_entry: dict[str, Any] = {}
        for key, value in entry.items():
            if key in ("request", "response") and isinstance(value, dict):
                with _located(path, capture.locator):
                    out_entry[key] = _har_part(value, redactor, dropped, body if key == "request" else None,
                                               undecoded=undecoded)
            elif key == "serverIPAddress" and isinstance(value, str):
                out_entry[key] = redact_host(value, redactor)
            else:
                out_entry[key] = redactor.value(value, key, kept=key in _HAR_KEPT)
        out_entries.append(out_entry)
    _say_replaced(undecoded, notes)
    log = {k: out_entries if k == "entries" else redactor.value(v, k, kept=k in _HAR_KEPT)
           for k, v in document["log"].items()}
    result = {k: log if k == "log" else redactor.value(v, k) for k, v in document.items()}
    return dumps_line(result).encode("utf-8") + b"\n", sorted(set(dropped))
