"""The JUnit XML report of ``dsh-audit check``: one testsuite per log, one testcase per request.

The shape is the common Jenkins/Ant JUnit XML one (``testsuites > testsuite > testcase`` with
``failure`` children), which GitHub, GitLab and Jenkins test reporters read. A log also gets a
``log`` testcase that carries the findings about the log as a whole (validation, refusal, missing
capture, cache ratio). Failing findings become ``<failure>`` elements; the other findings are
listed in the testcase's ``<system-out>``. Text that XML 1.0 cannot hold (control characters,
lone surrogates) is written as ``\\uXXXX``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

__all__ = ["format_junit"]

_BAD_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _BAD_XML.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def _label(request: Any) -> str:
    where = "" if request.turn is None else f" turn {request.turn} step {request.step} attempt {request.attempt}"
    return f"request {request.index} ({request.kind}{where})"


def _case(suite: ET.Element, *, name: str, classname: str, findings: Sequence[Any]) -> int:
    case = ET.SubElement(suite, "testcase", name=_clean(name), classname=_clean(classname), time="0")
    failing = [f for f in findings if f.fails]
    for finding in failing:
        node = ET.SubElement(case, "failure", message=_clean(f"{finding.rule}: {finding.message}"), type=finding.rule)
        node.text = _clean(finding.format() + (f"\nhint: {finding.hint}" if finding.hint else ""))
    others = [f for f in findings if not f.fails]
    if others:
        ET.SubElement(case, "system-out").text = _clean("\n".join(f.format() for f in others))
    return 1 if failing else 0


def _suite(root: ET.Element, check: Any) -> tuple[int, int]:
    name = check.session_id or check.path
    suite = ET.SubElement(root, "testsuite", name=_clean(name), file=_clean(check.path))
    classname = _clean(f"dsh-audit.{name}")
    failures = _case(suite, name="log", classname=classname, findings=check.log_findings)
    for request in check.requests:
        failures += _case(suite, name=_label(request), classname=classname,
                          findings=check.request_findings(request.index))
    tests = len(check.requests) + 1
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suite.set("time", "0")
    return tests, failures


def format_junit(result: Any) -> str:
    """The JUnit XML text of a :class:`dsh_audit.gate.CheckResult`.

    Example:
        >>> print(format_junit(result))  # doctest: +SKIP
        <?xml version="1.0" encoding="UTF-8"?>
        <testsuites name="dsh-audit check" tests="4" failures="0" errors="0" time="0">...
    """
    root = ET.Element("testsuites", name="dsh-audit check")
    tests = failures = 0
    for check in result.sessions:
        t, f = _suite(root, check)
        tests, failures = tests + t, failures + f
    loose = list(result.unattached)
    if loose:
        suite = ET.SubElement(root, "testsuite", name="captures")
        failed = _case(suite, name="captures no log explains", classname="dsh-audit.captures", findings=loose)
        for key, value in (("tests", 1), ("failures", failed), ("errors", 0), ("skipped", 0), ("time", 0)):
            suite.set(key, str(value))
        tests, failures = tests + 1, failures + failed
    for key, value in (("tests", tests), ("failures", failures), ("errors", 0), ("time", 0)):
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
