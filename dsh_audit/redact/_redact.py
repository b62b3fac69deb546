"""Redact one session log (and its capture) into a bundle that still proves every verdict.

The bundle is the redacted log, optionally its redacted capture (``wire.jsonl``, HAR or a folder of
bodies) and its redacted route configuration (``<log>.routes.yml``, when one rendered the verdicts:
:mod:`._routes`), and a manifest
``<log>.manifest.json`` naming the dsh-audit version, the format version and a digest of every
verdict (never the salt). Each file (and a folder capture) is written to a temporary name and renamed
into place (:meth:`dsh_audit.log.ProtectedInputs.staged`), so a failure leaves nothing partial; no output
may be, or resolve to, an input or another output (checked by :meth:`dsh_audit.log.ProtectedInputs.guard`,
the guard of every command's outputs, before anything is read: :mod:`._staging`). A fork or subagent
child is compared with its parent on both sides (:mod:`._family`); :mod:`._bundle` checks a bundle.
"""

from __future__ import annotations

import functools
import os
import secrets as _random
from collections.abc import Callable, Iterable
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .._paths import refuse_empty_paths
from .._version import __version__
from ..capture import CapturedRequest, load_capture
from ..errors import UsageError
from ..log import ProtectedInputs, SessionLog, open_regular, read_stream
from ..report import dumps_pretty
from ..session import Headers, Session, dsh_homes_of, open_session, routes_from
from ..wire import PiRoutes, home_route_files, load_routes
from ._bodies import LogRedactor
from ._capture import redact_body_folder, redact_capture_records, redact_har
from ._chunks import ChunkStreams
from ._family import Identifiers, family, parent_log, parent_session, salt_cause
from ._hosts import redact_url
from ._pseudonyms import redact_ascii
from ._log import LogRewriter, drain, name_compression, refuse_early, teed
from ._notes import compression_note, left_out_note, replaced_whole, unmatched_note, unrendered_note
from ._placeholder import Placeholders
from ._keys import KEEP_CHOICES
from ._derivation import KEY_DERIVATION
from ._manifest import salt_id
from ._routes import redacted_routes
from ._staging import (commit_capture, drop_stale, output_targets, read_rewritable, refuse_generation, stale_capture,
                       staged_capture, staged_file, write_file)
from ._verdicts import CATEGORIES, digest, session_verdicts

__all__ = ["Redaction", "redact"]


@dataclass(frozen=True, slots=True)
class Redaction:
    """What :func:`redact` wrote and found.

    Attributes:
        output: the redacted log.
        manifest: its manifest.
        capture: the redacted capture, when one was given.
        format_version: the log's format version (kept).
        compressed: whether the redacted log is zstd: as its name says (``.zstd`` zstd, ``.jsonl``
            plain, as DSH reads a log's compression), else as the input is (kept frame by frame).
        strings: content strings of the log replaced.
        capture_strings: content strings of the capture replaced (beyond the log's, which a rendered
            body takes from the redacted log).
        secrets: secrets found, by kind: occurrences and distinct values (never the values).
        dropped_headers: capture header names dropped.
        salt_id: the salt's id the manifest records (:func:`._manifest.salt_id`), and ``salt_random``
            whether the salt was random (no run can repeat it: a family redacted again needs a salt given).
        cause: why the verdicts moved, when it is known (a child's parent redacted with another salt:
            :func:`._family.salt_cause`); None otherwise.
        identity_headers: capture header names whose values named a user, an install, an account
            (DSH's ``x-deepseek-harness-user-id``...) or one request (``x-request-id``, ``cf-ray``...): kept,
            each value replaced by a pseudonym.
        verdicts: digest of each verdict category, equal on the original and the redaction.
        mismatched: categories whose verdicts differ between original and redaction (should be
            empty; else nothing is written, as the bundle would fail its own ``--check``, and the CLI
            exits 1).
        notes: what could not be carried over (torn tails, damaged records), a compression the
            output's name changed.
        routes: whether a route configuration rendered the verdicts (``routes=``); the manifest says
            so, and :func:`check_bundle` then reads it from ``route_file``.
        route_file: the redacted route configuration written beside the log (``<log>.routes.yml``), with
            which the redacted copy's verdicts were checked; None without ``routes=``.
        unrendered: the captured requests that could not be rendered from the log (verdict
            ``unrendered``), as ``(request index, reason)``: their bodies were compared with nothing,
            so their diff verdicts prove nothing, and the manifest lists them (``"unrendered"``).
        parent: the session id of the parent a child's verdicts were compared with (its redacted log
            beside the redacted child, where ``breaks`` and :func:`check_bundle` find it), or None.
        replaced_whole: how many captured bodies were replaced whole, their coding not undone, and
            their distinct codings (:func:`._notes.replaced_whole`; the manifest's ``"replaced_whole"``).
    """

    output: Path
    manifest: Path
    capture: Path | None
    format_version: int
    compressed: bool
    strings: int
    secrets: dict[str, dict[str, int]]
    dropped_headers: tuple[str, ...] = ()
    verdicts: dict[str, str] = field(default_factory=dict)
    mismatched: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    routes: bool = False
    unrendered: tuple[tuple[int | None, str], ...] = ()
    parent: str | None = None
    capture_strings: int = 0
    route_file: Path | None = None
    identity_headers: tuple[str, ...] = ()
    salt_id: str = ""
    salt_random: bool = False
    cause: str | None = None
    replaced_whole: tuple[int, tuple[str, ...]] = (0, ())


def _read_log(source: Path, sink: Callable[[bytes], None], *, lenient: bool) -> Session:
    """The session of the log at ``source``, read once: every byte the reader reads is also handed
    to ``sink`` (the redacted copy is written in the same read), once :func:`._log.refuse_early` passed it."""
    handle = open_regular(source)
    try:
        refuse_early(handle, str(source), lenient=lenient)
        session = open_session(read_stream(teed(handle, sink), str(source), lenient=lenient), foreign=False)
        drain(handle, sink)  # the reader read to the end; anything it left is redacted too
    finally:
        handle.close()
    return session


def _compare(before: dict[str, list[Any]], after: dict[str, list[Any]]) -> tuple[dict[str, str], tuple[str, ...]]:
    digests = {c: digest(before[c]) for c in CATEGORIES if c in before}
    return digests, tuple(c for c in digests if digest(after.get(c, [])) != digests[c])


def _salt_bytes(salt: str) -> bytes:
    """The bytes of a text salt: the very bytes given in argv or the environment, also when they are
    not UTF-8 (Python carries those as lone surrogates U+DC80-U+DCFF); any other lone surrogate
    (from a caller of :func:`redact`) as its UTF-8 form."""
    try:
        return salt.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return salt.encode("utf-8", "surrogatepass")


def redact(path: str | os.PathLike[str], output: str | os.PathLike[str], *, salt: str | bytes | None = None,
           keep: Iterable[str] = (), tool_names: bool = True, capture: str | os.PathLike[str] | None = None,
           capture_output: str | os.PathLike[str] | None = None, force: bool = False,
           lenient: bool = False, routes: str | os.PathLike[str] | PiRoutes | None = None,
           identifiers: Iterable[str] = (), alone: bool = False, any_capture: bool = False) -> Redaction:
    """Write a redacted copy of one session log (and its capture) with a verdict manifest.

    Args:
        path: the session log (plain or zstd, v0-v4).
        output: the redacted log to write, of the same format version; zstd when its name ends in
            ``.zstd``, plain in ``.jsonl`` (as DSH reads a log's compression by its name; a note says
            when that is not the input's), the input's compression for any other name.
        salt: the placeholder salt; equal salts give equal placeholders across runs. Default: a
            random one (never written anywhere; the manifest records that it was random, and its id).
        keep: parts kept verbatim (secrets still go): ``paths``, ``system``, ``titles``, ``tools``.
        tool_names: keep tool names (default) or replace them too.
        capture: a ``wire.jsonl`` or HAR capture, or a folder of JSON bodies, of the log's requests,
            redacted with the same placeholders (a folder to a new folder, file names kept).
        capture_output: where the redacted capture goes (default: for a ``wire.jsonl``, ``wire.jsonl``
            beside ``output``, where every view finds the copy's capture, unless a file is there or the views
            of ``path`` look there (its folder or one of the 4 above it: :func:`._staging.output_targets`); else
            ``<output>.<the capture's file or folder name>``, beside ``<output>.manifest.json``).
        force: replace existing output files (never an input).
        lenient: read tokenised test fixtures (see :func:`dsh_audit.log.read_log`).
        routes: DSH's ``llm-pi-ai`` route configuration (a file, as ``--routes`` takes, or one
            read already), with which both logs' requests are routed and rendered (a hand-declared
            pi-ai route's requests are rendered only with it); the redacted copy's verdicts are then
            checked with it too (:func:`check_bundle` ``routes=``). Default: none (not even the DSH
            home's, which a check of the bundle elsewhere would not find).
        identifiers: more session ids to keep verbatim in every text (the ids of the log's family
            that do not lie beside it). The ids its header names (its own, its ``parentSession``) and
            those of its children beside it (the logs whose header names it as their
            ``parentSession``, where ``breaks`` finds them) are always kept: ``breaks`` dates a
            child's spawn by the first mention of its id in the parent, often a tool result's text.
            Only a string of the shape of a session id is kept (a UUID, after an optional prefix
            such as ``session-``: :meth:`Placeholders.keep_identifiers`).
        alone: redact a fork or subagent child whose parent log lies beside it (where ``breaks``
            finds it and compares the child with it) alone, its verdicts compared without the parent
            on both sides, as the recipient sees them without it. Default: refused (a usage error
            naming the parent), since the bundle would not prove the verdicts seen beside the parent.
        any_capture: redact a capture none of whose requests is one of the log's (another
            session's). Default: refused (a usage error); a capture some of whose requests match none
            of the log's is redacted with a note saying how many.

    Raises:
        UsageError: an empty salt, an unknown ``keep`` part, ``tools`` kept with ``tool_names=False``
            (``--keep tools`` keeps the tool names ``--redact-tool-names`` would replace: the two
            contradict each other), an output that exists without
            ``force``, an output (log, manifest, route file or capture) that is or resolves to an input
            or another of its outputs (or, for a folder capture, lies inside it or holds it), that
            is a folder, a FIFO or a device, or whose folder does not exist or takes no new file (all in
            the words of :meth:`dsh_audit.log.ProtectedInputs.guard`, as every command's), a capture
            format redact cannot rewrite, an output named for a DSH generation other than the log's format
            version (``session.v2.jsonl`` for a v0 log: :func:`._staging.refuse_generation`).
        DshAuditError: the log or the capture cannot be read.

    Example:
        >>> result = redact("session.jsonl", "shared/session.jsonl", salt="s3cret")  # doctest: +SKIP
        >>> result.mismatched, sorted(result.secrets)  # doctest: +SKIP
        ((), ['openai_api_key'])
    """
    refuse_empty_paths({("-o", "--output"): output, "--capture-output": capture_output})
    source, target = Path(path), Path(output)
    kept = frozenset(keep)
    unknown = sorted(kept - set(KEEP_CHOICES))
    if unknown:
        raise UsageError(f"unknown --keep part {unknown[0]!r}", hint=f"choose from {', '.join(KEEP_CHOICES)}")
    if "tools" in kept and not tool_names:
        raise UsageError("--keep tools and --redact-tool-names contradict each other (the tools kept verbatim "
                         "hold their names)", hint="drop one of them")
    if salt is not None and not salt:
        raise UsageError("the salt is empty", hint="give a non-empty --salt, or none for a random one")
    key = _salt_bytes(salt) if isinstance(salt, str) else salt if salt is not None else _random.token_bytes(32)
    refuse_generation(source, target)
    capture_source = Path(capture) if capture is not None else None
    inputs = (source, capture_source, None if routes is None or isinstance(routes, PiRoutes) else Path(routes),
              *map(Path, ProtectedInputs.captures_near(source, folder=False)))  # evidence too, redacted or not
    guard = functools.partial(output_targets, target=target, capture_output=capture_output, force=force,
                              routed=routes is not None)
    manifest, route_target, capture_target = guard(inputs)
    stale = stale_capture(manifest, capture_target, inputs) if force else None  # read before its manifest goes
    config = routes if isinstance(routes, PiRoutes) or routes is None else routes_from(os.fspath(routes))
    redactor = LogRedactor(Placeholders(key), keep=kept, tool_names=tool_names)
    return _write(source, target, manifest, capture_source, capture_target, redactor, config, kept, tool_names,
                  lenient=lenient, identifiers=identifiers, alone=alone, any_capture=any_capture,
                  route_target=route_target, protect=lambda parent: guard((*inputs, parent)),
                  salt=(key, salt is None), stale=stale)


def _write(source: Path, target: Path, manifest: Path, capture_source: Path | None, capture_target: Path | None,
           redactor: LogRedactor, config: PiRoutes | None, kept: frozenset[str], tool_names: bool, *,
           lenient: bool, identifiers: Iterable[str] = (), alone: bool = False,
           any_capture: bool = False, route_target: Path | None = None,
           protect: Callable[[Path], object], salt: tuple[bytes, bool], stale: Path | None) -> Redaction:
    """Redact the log at ``source`` (and its capture) to temporary files, check the copy's verdicts
    (with the redacted route configuration written to ``route_target``, when ``config`` is given) and
    rename the files into place only when none moved (the outputs were checked by :func:`redact`, and are
    checked against each parent log once :func:`._family.family` finds it, by ``protect``); ``salt``: the
    salt and whether it was random, for the manifest (its id: :func:`._manifest.salt_id`); ``stale``: the capture the
    replaced manifest named, which this bundle does not write, removed once it is written (:func:`._staging.drop_stale`)."""
    # a capture output nothing was at when the outputs were checked (just now) takes no file written there since
    fresh = capture_target is not None and not os.path.lexists(capture_target)
    key, salt_random = salt
    identity = salt_id(key)
    streams = ChunkStreams(redactor)
    # the headers of the logs beside the source, each read once: for its children's ids, and its parent
    with staged_file(target, what="output") as (log_out, log_temp), closing(Headers(lenient=lenient)) as headers, \
            closing(Identifiers(streams.record, redactor.placeholders, source, headers, identifiers)) as learn, \
            ExitStack() as parent_logs:
        # compressed as its name says, as DSH reads it (the log's own compression for another name)
        rewriter = LogRewriter(log_out, learn.record, path=str(source), compress=name_compression(target))
        original = _read_log(source, rewriter.feed, lenient=lenient)
        if config is not None:
            original.use_routes(config)
        streams.end()
        notes = rewriter.finish()
        if rewriter.written_compressed != rewriter.compressed:
            notes.append(compression_note(target, rewriter.written_compressed))
        kin, parent_path, redacted_parent, parent_manifest = family(source, target, original, alone=alone,
                                                                    headers=headers, protect=protect)
        # each parent log read whole from the open log whose header was read to find it, never opened again
        parent_opened = parent_log(parent_path, headers, learn)
        redacted_parent_opened = parent_log(redacted_parent, headers, learn)
        for opened in (parent_opened, redacted_parent_opened):
            if isinstance(opened, SessionLog):  # read and closed by parent_session; closed here on an error before
                parent_logs.callback(opened.close)
        learn.close()  # the other logs of the parent's session it kept open
        headers.close()
        notes.extend(kin)
        redactor.reading_log = False  # what the log replaced is known; the capture's strings follow it
        log_strings = redactor.strings
        read = read_rewritable(capture_source)  # opened and read once: its requests, and its records to rewrite
        fmt, captures = (None, None) if read is None else (read.format, read.requests)
        reasons: list[str] = []
        parent = parent_session(parent_opened, original, lenient=lenient, config=config)
        before = session_verdicts(original, captures, unrendered=reasons, parent=parent)
        unrendered = tuple(zip((row[0] for row in before.get("diff", ()) if row[3] == "unrendered"), reasons))
        if unrendered:  # their diff verdicts compared nothing: said, never claimed unchanged
            homes = [] if config is not None else [f for home in dsh_homes_of(source) for f in home_route_files(home)]
            notes.append(unrendered_note(unrendered, routed=config is not None, home_files=homes))
        log_out.flush()
        redacted = open_session(log_temp, lenient=lenient, foreign=False)
        # the copy's verdicts are rendered with the route file the bundle carries, as check_bundle renders them
        route_temp, bundle_config = None, None
        if config is not None and route_target is not None:
            route_out, route_temp = parent_logs.enter_context(staged_file(route_target, what="route file"))
            document = redacted_routes(config, url=lambda url: redact_url(url, redactor),
                                       value=lambda text: redact_ascii(text, redactor))
            route_out.write(dumps_pretty(document).encode("utf-8") + b"\n")
            route_out.flush()
            bundle_config = load_routes(route_temp)
        if bundle_config is not None:
            redacted.use_routes(bundle_config)
        with staged_capture(capture_target, folder=fmt == "body-folder") as (capture_temp, capture_out):
            dropped: list[str] = []
            if captures is not None and capture_source is not None and capture_temp is not None:
                assert read is not None
                dropped = _redact_capture(capture_source, fmt, read.records, captures, (original, redacted), redactor,
                                          notes, (capture_temp, capture_out))
                # refused here: nothing is renamed yet
                notes.extend(unmatched_note(before["diff"], captures, capture_source, any_capture=any_capture))
            captures = read = None  # the original capture let go before its redacted copy is read
            after_captures = None if capture_temp is None else load_capture(capture_temp, format=fmt)
            after = session_verdicts(redacted, after_captures,
                                     parent=parent_session(redacted_parent_opened, redacted, lenient=lenient,
                                                           config=bundle_config))
            digests, mismatched = _compare(before, after)
            cause = (salt_cause(redacted_parent, parent_manifest, identity)
                     if mismatched and redacted_parent is not None else None)
            if mismatched and bundle_config is not None:
                notes.append(f"the copy's verdicts were rendered with the bundle's redacted route file "
                             f"{route_target.name if route_target is not None else ''}: a route whose internal "
                             "baseURL host names a vendor that pi-ai's compat detection reads (deepseek.com, "
                             "openrouter.ai...) renders otherwise once its host is replaced")
            result = Redaction(
                output=target, manifest=manifest, capture=capture_target, format_version=original.format_version,
                compressed=rewriter.written_compressed, strings=log_strings, capture_strings=redactor.strings - log_strings,
                secrets={k: {"occurrences": n, "distinct": len(redactor.secret_values.get(k, ()))}
                         for k, n in sorted(redactor.secrets.items())},
                dropped_headers=tuple(dropped), identity_headers=tuple(sorted(redactor.identity_headers)),
                verdicts=digests, mismatched=mismatched, notes=tuple(notes), replaced_whole=replaced_whole(notes),
                routes=config is not None, unrendered=unrendered,
                parent=None if parent is None else parent.id, route_file=route_target,
                salt_id=identity, salt_random=salt_random, cause=cause)
            with staged_file(manifest, what="manifest") as (manifest_out, manifest_temp):
                # written as every JSON output is: a parent id's lone surrogate, C1 control or bidi
                # character as its \uXXXX escape (orjson refuses the first, and would write the others raw)
                manifest_out.write(dumps_pretty(_manifest(result, before, kept, tool_names)).encode("utf-8"))
                manifest_out.write(b"\n")
                manifest_out.flush()
                if capture_temp is not None and capture_target is not None and not mismatched:
                    # first: refused (every temporary goes) when another run took its name meanwhile
                    commit_capture(capture_temp, capture_target, fresh=fresh)
                for temp, path in ((log_temp, target), (route_temp, route_target), (manifest_temp, manifest)):
                    if temp is not None and path is not None and not mismatched:  # else the temporaries go
                        ProtectedInputs.commit(temp, path)
                if not mismatched:
                    drop_stale(stale)
    return result


def _redact_capture(source: Path, fmt: str | None, records: list[Any], captures: list[CapturedRequest],
                    sessions: tuple[Session, Session], redactor: LogRedactor, notes: list[str],
                    staged: tuple[Path, IO[bytes] | None]) -> list[str]:
    """The capture at ``source`` (of format ``fmt``, its parsed ``records`` as
    :func:`dsh_audit.capture.read_capture` read them) redacted into the ``staged`` temporary (a folder, or
    a file and its handle), a ``wire.jsonl`` record by record; a note on what else a body folder holds,
    and one on the bodies replaced whole (:func:`._capture.replaced_note`), added to ``notes``. Returns
    the header names dropped."""
    original, redacted = sessions
    temp, out = staged
    if fmt == "body-folder":
        # each file written into the staged folder as it is made (one body held at a time)
        written, dropped = redact_body_folder(captures, original, redacted, redactor,
                                              functools.partial(write_file, temp), notes=notes)
        notes.extend(left_out_note(source, frozenset(written)))
        return dropped
    assert out is not None
    if fmt == "har":
        data, dropped = redact_har(records[0], captures, original, redacted, redactor, path=str(source),
                                   notes=notes)
        out.write(data)
    else:
        dropped = redact_capture_records(records, captures, original, redacted, redactor, out, path=str(source),
                                         notes=notes)
    out.flush()
    return dropped


def _manifest(result: Redaction, before: dict[str, list[Any]], keep: frozenset[str], tool_names: bool) -> dict[str, Any]:
    return {
        "tool": "dsh-audit",
        "version": __version__,
        "format_version": result.format_version,
        "compression": "zstd" if result.compressed else "none",
        "log": result.output.name,
        "capture": None if result.capture is None else os.path.relpath(result.capture, result.output.parent),
        "kept": sorted(keep) + (["tool names"] if tool_names else []),
        "secrets": result.secrets,
        "routes": result.routes,
        # the redacted route configuration the verdicts were rendered with, beside the log
        "route_file": None if result.route_file is None else result.route_file.name,
        # the captured requests no render was compared with (their diff verdicts are "unrendered")
        "unrendered": {"count": len(result.unrendered), "requests": [index for index, _ in result.unrendered]},
        # the captured bodies replaced whole by one placeholder, their coding not undone: no secret looked for in them
        "replaced_whole": {"count": result.replaced_whole[0], "codings": list(result.replaced_whole[1])},
        # a child's verdicts compared with its parent: its redacted log beside this one (as breaks finds it)
        "parent": result.parent,
        # the salt's id (never the salt): a family redacted again needs one salt, given, for every member
        "salt": "random" if result.salt_random else "given",
        "salt_id": result.salt_id,
        # how the placeholders' key comes from the salt: a child's parent redacted with another has other placeholders
        "key_derivation": KEY_DERIVATION,
        "verdicts": {c: {"count": len(before[c]), "digest": result.verdicts[c]} for c in result.verdicts},
    }
