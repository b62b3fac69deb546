"""Session 34 (task L, a tidier tree): one URL check, one JSON writer, one home for each moved name.

* A HAR entry's ``request.url`` and a route file's ``baseURL`` are judged by one function,
  :func:`dsh_audit._urls.url_problem`, which says what is wrong in the project's words (a HAR
  loader showed Python's ``urlsplit`` wording, "Invalid IPv6 URL", and read a URL holding an
  escape sequence as a host or a path).
* ``validate --sarif`` writes with :func:`dsh_audit.report.dumps_pretty`, as ``check --sarif``
  does: the layout of ``json.dumps(indent=2)``, text as raw UTF-8 (``§``, not ``\\u00a7``).
* The names moved out of ``wire._piai``, ``wire._piai_models``, ``capture._align`` and
  ``redact._placeholder`` live in one module each: the old homes no longer hand them on.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import json
import re
from pathlib import Path

import pytest

from _cli import invoke
from test_layers import _statements
from dsh_audit import _urls
from dsh_audit.capture import _har as har_loader
from dsh_audit.capture import load_capture
from dsh_audit.errors import CaptureError
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import _piai_routes

HAR_HINT = 'a HAR file is one JSON object {"log": {"entries": [...]}} (HAR 1.2)'


def _har(path: Path, url: str) -> Path:
    request = {"method": "post", "url": url, "postData": {"text": "{}"}}
    path.write_text(json.dumps({"log": {"entries": [{"request": request}]}}), encoding="utf-8")
    return path


def _log(path: Path) -> Path:
    b = LogBuilder(session_id="s-tidy")
    with b.turn("Hi"), b.step():
        b.assistant("Hello")
    path.write_text("".join(line + "\n" for line in b.lines(packed=False)), encoding="utf-8")
    return path


def test_the_route_file_and_the_har_loader_share_one_url_check() -> None:
    assert _piai_routes.url_problem is har_loader.url_problem is _urls.url_problem
    assert not hasattr(_piai_routes, "_url_problem")


def test_the_url_check_says_each_problem_in_words() -> None:
    result = doctest.testmod(_urls)  # tests/test_doctests.py does not list the module
    assert (result.failed, result.attempted) == (0, 2)
    assert _urls.url_problem("http://ex\uff03ample.com/v1") == (
        "its host holds a character that Unicode normalisation turns into / ? # @ or :")
    assert _urls.url_problem("https://api.example/v1\x7f") == "it holds a control character"


@pytest.mark.parametrize(("url", "problem"), [
    ("http://[::1/v1", "its host has a [ without a ] or a ] without a ["),
    ("http://gw.corp\x1b]0;x\x07.example/v1", "it holds a control character"),
    ("https://api.example/v1\x1b[2J/messages", "it holds a control character"),  # urlsplit took it as path
])
def test_a_har_request_url_that_is_no_url_is_named_in_the_projects_words(tmp_path: Path, url: str,
                                                                          problem: str) -> None:
    har = _har(tmp_path / "capture.har", url)
    with pytest.raises(CaptureError) as caught:
        load_capture(har)
    assert (str(caught.value), caught.value.hint) == (
        f"{har}: entries[0]: request.url is not a URL ({problem}) (hint: {HAR_HINT})", HAR_HINT)


def test_the_har_error_is_one_inert_line_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path / "session.jsonl")
    for url, problem in (("http://[::1/v1", "its host has a [ without a ] or a ] without a ["),
                         ("http://gw.corp\x1b]0;x\x07.example/v1", "it holds a control character")):
        har = _har(tmp_path / "capture.har", url)
        assert invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(har)) == (2, "", [
            f"error: {har}: entries[0]: request.url is not a URL ({problem}) (hint: {HAR_HINT})"])


def test_a_har_request_url_that_is_one_still_gives_its_path(tmp_path: Path) -> None:
    for url, path in (("https://api.example/v1/messages?beta=true", "/v1/messages?beta=true"),
                      ("http://[::1]:8080/v1/chat/completions", "/v1/chat/completions"),
                      ("/v1/messages", "/v1/messages")):
        (capture,) = load_capture(_har(tmp_path / "capture.har", url))
        assert (capture.method, capture.path) == ("POST", path)


# -- validate --sarif: the writer check --sarif uses ----------------------------------------------


def test_validate_sarif_is_laid_out_as_before_in_raw_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    Path("empty.jsonl").write_bytes(b"")
    Path("bad.jsonl").write_bytes(b'{"type":"nope"}\nnot json\n')
    code, _, _ = invoke(monkeypatch, capsys, "validate", "empty.jsonl", "bad.jsonl", "--sarif", "out.sarif")
    assert code == 1
    written = Path("out.sarif").read_bytes()
    value = json.loads(written)
    # the old writer's layout (json.dumps(indent=2)), its text now raw UTF-8 as check --sarif writes it
    assert written == (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    assert "\u00a7" in written.decode("utf-8") and b"\\u00a7" not in written  # a rule's help cites "§6.2"
    results = value["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        ("DSH201", 1), ("DSH202", 1), ("DSH203", 1), ("DSH207", 1), ("DSH208", 1), ("DSH209", 1), ("DSH106", 2)]


def test_validate_sarif_escapes_active_characters_as_every_json_output_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    name = "bad\u202e.jsonl"  # a bidi override in the file name, which the SARIF uri and message carry
    Path(name).write_bytes(b"")
    code, out, _ = invoke(monkeypatch, capsys, "validate", name, "--sarif", "-")
    assert code == 1
    assert "\u202e" not in out and json.loads(out)["runs"][0]["results"][0]["ruleId"] == "DSH201"


# -- one home per moved name ----------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
#: The modules a split of this session moved names out of (to ``wire._piai_js``, ``_piai_context``,
#: ``_piai_transform``, ``_piai_facts``, ``_piai_catalog``, ``_piai_call``; ``capture._evidence``,
#: ``_content``, ``_monotone``; ``redact._shifts``, ``_plain``, ``_json_text``, ``_json_secrets``;
#: ``validate._stream``, ``_spans``, ``_paths``; ``fleet._measures``, ``_costs``, ``_ranks``, ``_store``,
#: ``_copies``; ``importers._base``, ``_anthropic``, ``_responses``; ``cache._sums``; ``cache._earlier``,
#: ``_breakpoints``, ``_causes``; ``cache._prompt``, ``_retention_body``;
#: ``session._route_evidence``, ``_route_notes``; ``cli._check_files``, ``_check_options``;
#: ``cache._rule_data``, ``_zdr``, ``_body_json``).
OLD_HOMES = ("dsh_audit.wire._piai", "dsh_audit.wire._piai_models", "dsh_audit.capture._align",
             "dsh_audit.redact._placeholder", "dsh_audit.wire._piai_routes", "dsh_audit.report._html",
             "dsh_audit.cache._prices", "dsh_audit.cli._common", "dsh_audit.validate._trace",
             "dsh_audit.validate._engine", "dsh_audit.fleet._stats", "dsh_audit.fleet._index",
             "dsh_audit.importers._claude_code", "dsh_audit.importers._codex", "dsh_audit.cache._money",
             "dsh_audit.cache._account", "dsh_audit.cache._prefix",
             "dsh_audit.session._routes", "dsh_audit.cli._check",
             "dsh_audit.cache._rules", "dsh_audit._pyproject")

_FROM_OLD_HOME = re.compile(r"[.\s](?:_piai|_piai_models|_align|_placeholder|_piai_routes|_html|_prices|_common"
                            r"|_trace|_engine|_stats|_index|_claude_code|_codex|_money|_account|_prefix|_routes|_check|_rules"
                            r"|_pyproject) import ")


def _defined(module: str) -> set[str]:
    """The names ``module``'s own top-level statements define (not those it imports)."""
    tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


@pytest.mark.parametrize("module", OLD_HOMES)
def test_an_old_home_lists_only_what_it_defines(module: str) -> None:
    exported = importlib.import_module(module).__all__
    assert sorted(set(exported) - _defined(module)) == []


def test_nothing_imports_a_moved_name_from_its_old_home() -> None:
    defined = {module: _defined(module) for module in OLD_HOMES}
    found: list[str] = []
    for path in sorted([*(ROOT / "dsh_audit").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        text = path.read_text(encoding="utf-8")
        if not _FROM_OLD_HOME.search(text):
            continue
        package = ".".join(path.relative_to(ROOT).parts[:-1])
        for node in _statements(ast.parse(text).body):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            if module in defined:
                found += [f"{path.relative_to(ROOT)}:{node.lineno} {module}.{alias.name}"
                          for alias in node.names if alias.name not in defined[module]]
    assert found == []
