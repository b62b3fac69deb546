"""The JUnit XML report of ``dsh-audit check``: one testsuite per log, one testcase per request.

The shape is the common Jenkins/Ant JUnit XML one (``testsuites > testsuite > testcase`` with
``failure`` children), which GitHub, GitLab and Jenkins test reporters read. A log also gets a
``log`` testcase that carries the findings about the log as a whole (validation, refusal, missing
capture, cache ratio). A testcase that fails has one ``<failure>`` element (the schema Jenkins and
the test reporters follow allows one), which lists every failing finding of the testcase (one
unknown event can be two findings: ``DSH801`` and ``DSH506``); the other findings are listed in
the testcase's ``<system-out>`` (a finding a baseline accepts, ``check --baseline``, among them:
not a failure, marked ``baselined``). A log's testsuite is named by its path relative to the run's
folder (``base``) and its session id, its testcases' ``classname`` by that path: two copies of a
session (a scenario's ``.zstd`` log and its decompressed copy, or three logs with one id) are
distinct testcases, which a CI viewer does not merge. Each log of another agent the run left out
(:attr:`~dsh_audit.gate.CheckResult.not_checked`: it exits 2 for them) is a testcase of a ``not
checked`` testsuite with one ``<error>`` saying why: the report's ``errors`` counts them, so a
CI viewer shows no all-green run of a check that exited 2; nor of a log that could not be read whose
``DSH801`` does not fail (``fail-on-refusal = false``): its ``log`` testcase has an ``<error>``.
Log text is written as the terminal shows it (:func:`~dsh_audit.report.terminal.terminal_text`,
each text one line): control characters, DEL, C1,
bidi overrides, line and paragraph separators, CR and lone surrogates as ``\\uXXXX`` text, which XML
can hold and an XML reader (the CI viewer) shows as it is, never a character reference that would
decode to the raw character; the first character of a line that a CI runner would read as a workflow
command (``::error``) is escaped too, inert where the document is printed (``check --junit -``).
A testsuite's ``file`` attribute is no such text but a machine field, the log's real path a CI
viewer opens: only what XML cannot hold is ``\\uXXXX`` there; its active characters are character
references, which an XML reader reads back as the path's own.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..gate import tally
from ._json import ACTIVE_TEXT
from ._safe_text import terminal_text

__all__ = ["format_junit", "iter_junit"]

#: What XML 1.0 cannot hold: every code point but ``\t \n \r``, U+0020-U+D7FF, U+E000-U+FFFD and
#: U+10000-U+10FFFF, spelt as that set's complement (the negated class takes milliseconds to compile).
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: The first character of a line (after blanks) that GitHub Actions or Azure Pipelines would read as
#: a command: ``::error ...``, ``##[error]``, ``##vso[...]``.
_CI_LINE = re.compile(r"(?m)^([^\S\n]*)([:#])(?=:|#\[|#vso\[)")


def _clean(text: str) -> str:
    """Text for the document as :func:`terminal_text` shows it, one line: a character reference
    alone (``&#x202e;``) would be the raw control again to an XML reader, the CI viewer that shows
    the report. A text of several lines (:func:`_lines`) is made of such lines."""
    return terminal_text(text)


def _xml_safe(path: str) -> str:
    """A log's path for the ``file`` attribute, a machine field (a CI viewer opens the file it names):
    the path itself, only what XML cannot hold as ``\\uXXXX``; :func:`_inert` writes its active
    characters as character references, which an XML reader reads back as the path's own."""
    return _BAD_XML.sub(lambda m: f"\\u{ord(m.group(0)):04x}", path)


def _lines(texts: Iterable[str]) -> str:
    """``texts`` one a line, each :func:`_clean`: a log path's line break is no line of its own."""
    return "\n".join(map(_clean, texts))


def _reference(match: re.Match[str]) -> str:
    return f"&#x{ord(match.group(0)):x};"


def _inert(piece: str) -> str:
    """A piece of the document (its text already :func:`_clean`) as it is written: each active
    character (DEL, C1, bidi: :data:`dsh_audit.report._json.ACTIVE_TEXT`) and CR (which an XML reader
    would read as LF) as a character reference, and so is the first character of a line of text
    that a CI runner would read as a workflow command (``::error``, ``##[``): a log's text with a
    line break cannot start one where the document is printed. An element's line starts with
    ``<``, so every such line is text, and an XML reader reads the same text."""
    if not (piece.isascii() and "\x7f" not in piece):
        piece = ACTIVE_TEXT.sub(_reference, piece)
    if "\r" in piece:
        piece = piece.replace("\r", "&#13;")
    if "::" in piece or "##" in piece:
        piece = _CI_LINE.sub(lambda m: f"{m.group(1)}&#x{ord(m.group(2)):x};", piece)
    return piece


#: A testcase: its name, classname and findings, and for a log that could not be read whose
#: refusal does not fail, the error that says why (:func:`_case`).
_Case = tuple[str, str, Sequence[Any]] | tuple[str, str, Sequence[Any], str]


def _label(request: Any) -> str:
    """A request's testcase name: ``request 3 (loop turn 2 step 1 attempt 1)``; a compaction call
    (no step) ``request 10 (compaction turn 9, no step)``, as `requests` shows it (``9/-``)."""
    if request.turn is None:
        where = ""
    elif request.step is None:
        where = f" turn {request.turn}, no step"
    else:
        where = f" turn {request.turn} step {request.step} attempt {request.attempt}"
    return f"request {request.index} ({request.kind}{where})"


def _failure_text(finding: Any) -> str:
    text: str = finding.format(hint=False)
    return _lines([text, *([f"hint: {finding.hint}"] if finding.hint else [])])


def _case(suite: ET.Element, *, name: str, classname: str, findings: Sequence[Any], error: str | None = None) -> int:
    """A testcase of ``findings``; ``error``: the log could not be read and no finding fails for it
    (``fail-on-refusal = false``): an ``<error>`` saying why, as the run exits 2 for it."""
    case = ET.SubElement(suite, "testcase", name=_clean(name), classname=_clean(classname), time="0")
    failing = [f for f in findings if f.fails]
    if failing:  # one <failure> for all of them: a testcase fails once, however many findings say why
        first = failing[0]
        rules = list(dict.fromkeys(f.rule for f in failing))
        message = f"{first.rule}: {first.message}"
        more = tally(failing[1:])  # a folded run of lines counts each, as check's counts do
        if more:
            message += f" (and {more} more failing finding(s): {', '.join(f.rule for f in failing[1:])})"
        node = ET.SubElement(case, "failure", message=_clean(message), type=" ".join(rules))
        node.text = "\n\n".join(_failure_text(f) for f in failing)
    elif error is not None:
        ET.SubElement(case, "error", message=_clean(error), type="unreadable")
    others = [f for f in findings if not f.fails]
    if others:
        ET.SubElement(case, "system-out").text = _lines(f.format() for f in others)
    return 1 if failing else 0


def _fails(findings: Sequence[Any]) -> int:
    return 1 if any(f.fails for f in findings) else 0


def _open_tag(tag: str, attributes: dict[str, str]) -> str:
    """``<tag a="..." ...>`` as ElementTree writes it (the same escaping and attribute order)."""
    return ET.tostring(ET.Element(tag, attributes), encoding="unicode")[:-3] + ">"


def _attribute(text: str) -> str:
    """An attribute value escaped as ElementTree writes it (``xml.etree.ElementTree._escape_attrib``
    of Python 3.10 to 3.13: ``&<>"``, then CR, LF and tab as character references)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#09;"))


def _cases(level: int, cases: Iterable[_Case]) -> Iterator[str]:
    """Each testcase, indented as :func:`xml.etree.ElementTree.indent` indents it at ``level``.

    A testcase with no finding (most of a long log's requests) is one empty element, written here
    as ElementTree writes it (no child to indent); the others are made with ElementTree."""
    indent = "\n" + "  " * level
    for name, classname, findings, *error in cases:
        if not findings and not error:
            yield (f'{indent}<testcase name="{_attribute(_clean(name))}" '
                   f'classname="{_attribute(_clean(classname))}" time="0" />')
            continue
        holder = ET.Element("testsuite")
        _case(holder, name=name, classname=classname, findings=findings, error=error[0] if error else None)
        case = holder[0]
        ET.indent(case, level=level)
        yield indent + ET.tostring(case, encoding="unicode")


def _relative(path: str, base: str) -> str:
    """``path`` relative to the run's folder ``base`` when it lies under it, else as it is
    (``/``-separated): what names a log's testsuite the same in every run from that folder.

    Example:
        >>> _relative("/ci/logs/a.jsonl", "/ci"), _relative("logs/./a.jsonl", "/ci"), _relative("/x/a.jsonl", "/ci")
        ('logs/a.jsonl', 'logs/a.jsonl', '/x/a.jsonl')
    """
    if os.path.isabs(path):
        try:
            inside = os.path.relpath(path, base)
        except ValueError:  # another drive (Windows)
            inside = os.pardir
        if inside != os.pardir and not inside.startswith(os.pardir + os.sep):
            path = inside
    return os.path.normpath(path).replace(os.sep, "/")


def _suite(check: Any, base: str) -> tuple[dict[str, str], Callable[[], Iterator[_Case]]]:
    """A log's testsuite: its attributes, and its testcases (the ``log`` one, then one per request).

    Its name is the log's path relative to ``base`` and its session id (``logs/a.jsonl (s-1)``),
    its testcases' classname ``dsh-audit.`` and that path: unique for each log of the run. A log
    that could not be read whose refusal does not fail (``fail-on-refusal = false``) is an error
    of its ``log`` testcase: the run exits 2 for it, so no CI viewer shows it green."""
    where = _relative(check.path, base)
    name = f"{where} ({check.session_id})" if check.session_id else where
    classname = _clean(f"dsh-audit.{where}")

    about = check.findings_by_request()

    unread = None if _fails(check.log_findings) else check.unread_why

    def cases() -> Iterator[_Case]:
        yield "log", classname, check.log_findings, *([unread] if unread else [])
        for request in check.requests:
            yield _label(request), classname, about.get(request.index, ())

    failures = sum(_fails(findings) for _, _, findings, *_ in cases())
    return {"name": _clean(name), "file": _xml_safe(check.path), "tests": str(len(check.requests) + 1),
            "failures": str(failures), "errors": "1" if unread else "0", "skipped": "0", "time": "0"}, cases


def format_junit(result: Any, *, base: str | None = None) -> str:
    """The JUnit XML text of a :class:`dsh_audit.gate.CheckResult` (:func:`iter_junit` joined).

    Example:
        >>> print(format_junit(result))  # doctest: +SKIP
        <?xml version="1.0" encoding="UTF-8"?>
        <testsuites name="dsh-audit check" tests="4" failures="0" errors="0" time="0">...
    """
    return "".join(iter_junit(result, base=base))


def iter_junit(result: Any, *, base: str | None = None) -> Iterator[str]:
    """The JUnit XML text of a :class:`dsh_audit.gate.CheckResult`, in pieces as it is written:
    a long log's testcases (one per request) are never held as one tree or one text. A log's
    testsuite and classname name its path relative to ``base`` (default: the current folder).

    Example:
        >>> print("".join(iter_junit(result)))  # doctest: +SKIP
        <?xml version="1.0" encoding="UTF-8"?>
        <testsuites name="dsh-audit check" tests="4" failures="0" errors="0" time="0">...
    """
    return map(_inert, _pieces(result, os.getcwd() if base is None else base))


def _errors(level: int, left: Sequence[tuple[str, str]], base: str) -> Iterator[str]:
    """A testcase per log left out (``(path, why)``), each with one ``<error>`` saying why, indented
    as :func:`_cases` indents its testcases.

    Example:
        >>> print("".join(_errors(2, [("/ci/c/x.jsonl", "this is a codex session, not a DSH log")], "/ci")))
        <BLANKLINE>
            <testcase name="not checked: c/x.jsonl" classname="dsh-audit.not-checked" time="0">
              <error message="this is a codex session, not a DSH log" type="not checked" />
            </testcase>
    """
    for path, why in left:
        case = ET.Element("testcase", name=_clean(f"not checked: {_relative(path, base)}"),
                          classname="dsh-audit.not-checked", time="0")
        ET.SubElement(case, "error", message=_clean(why), type="not checked")
        ET.indent(case, level=level)
        yield "\n" + "  " * level + ET.tostring(case, encoding="unicode")


def _written(cases: Callable[[], Iterable[_Case]]) -> Callable[[], Iterator[str]]:
    """A testsuite's testcases as :func:`_pieces` writes them, made when the suite is written."""
    return lambda: _cases(2, cases())


def _pieces(result: Any, base: str) -> Iterator[str]:
    suites: list[tuple[dict[str, str], Callable[[], Iterator[str]]]] = [
        (attributes, _written(cases)) for attributes, cases in (_suite(check, base) for check in result.sessions)]
    loose = list(result.unattached)
    if loose:
        captures = [("captures no log explains", "dsh-audit.captures", loose)]
        suites.append(({"name": "captures", "tests": "1", "failures": str(_fails(loose)), "errors": "0",
                        "skipped": "0", "time": "0"}, _written(lambda: captures)))
    left = list(getattr(result, "not_checked", ()))
    if left:
        suites.append(({"name": "not checked", "tests": str(len(left)), "failures": "0", "errors": str(len(left)),
                        "skipped": "0", "time": "0"}, lambda: _errors(2, left, base)))
    tests = sum(int(attributes["tests"]) for attributes, _ in suites)
    failures = sum(int(attributes["failures"]) for attributes, _ in suites)
    errors = sum(int(attributes["errors"]) for attributes, _ in suites)
    root = {"name": "dsh-audit check", "tests": str(tests), "failures": str(failures), "errors": str(errors),
            "time": "0"}
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    if not suites:
        yield ET.tostring(ET.Element("testsuites", root), encoding="unicode") + "\n"
        return
    yield _open_tag("testsuites", root)
    for attributes, pieces in suites:
        yield "\n  " + _open_tag("testsuite", attributes)
        yield from pieces()
        yield "\n  </testsuite>"
    yield "\n</testsuites>\n"
