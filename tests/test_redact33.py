"""Session 33: redact's outputs go through the one output guard, and only a public API's exact host stays.

1. ``redact`` kept its own output checks beside :meth:`dsh_audit.log.ProtectedInputs.guard`, so its
   refusals were worded otherwise than every other command's. The guard now has the modes redact
   needs (an output that must be new unless ``--force``, renamed into place; an output that is a
   folder), and outputs of one run are checked against each other (:meth:`ProtectedInputs.claim`).
2. The gateway's address: a host under a vendor's domain or shaped like a vendor's, a vendor's host on
   another port, a non-ASCII look-alike, user information, a URL read otherwise by another parser,
   and IPv6 (whose placeholder no longer parsed, so a HAR naming an IPv6 gateway could not be
   redacted) are checked with exact placeholders.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import os
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.capture import load_capture
from dsh_audit.errors import UsageError
from dsh_audit.log import ProtectedInputs
from dsh_audit.redact import Placeholders, Redactor, redact
from dsh_audit.redact._capture import _headers
from dsh_audit.redact._hosts import is_public_host, redact_host, redact_url
from dsh_audit.redact._pseudonyms import redact_ascii
from dsh_audit.redact._routes import redacted_routes
from dsh_audit.session import open_session
from dsh_audit.wire._piai_routes import parse_routes
from _cli import chat_log, invoke

HINT = "(hint: write it to another path)"


def _listing(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


# --- 1. the one guard: a folder output, outputs of one run, staging -------------------------------


def _refusal(evidence: ProtectedInputs, target: Path, **options: Any) -> str:
    with pytest.raises(UsageError) as caught:
        evidence.guard(target, **options)
    return str(caught.value)


def test_a_folder_output_is_refused_in_the_guards_one_wording(tmp_path: Path) -> None:
    log = chat_log(tmp_path / "in" / "session.jsonl", "s-guard")
    bodies = tmp_path / "in" / "bodies"
    bodies.mkdir()
    (bodies / "1.json").write_text("{}")
    evidence = ProtectedInputs()
    for item in (log, bodies):
        evidence.add(str(item))
    out = tmp_path / "out" / "x.jsonl"
    evidence.claim(out, what="output")
    folder = {"what": "capture output", "folder": True, "force": True, "replaces": (".json",)}
    overwrite = f"the capture output would overwrite the input {bodies} {HINT}"
    assert _refusal(evidence, bodies, **folder) == f"{bodies}: {overwrite}"
    assert _refusal(evidence, bodies / "redacted", **folder) == f"{bodies / 'redacted'}: {overwrite}"
    assert _refusal(evidence, tmp_path / "in", **folder) == (
        f"{tmp_path / 'in'}: the capture output would replace the folder holding the input {log} {HINT}")
    (tmp_path / "out").mkdir()
    assert _refusal(evidence, tmp_path / "out", **folder) == (
        f"{tmp_path / 'out'}: the capture output would replace the folder holding the output {out} {HINT}")
    assert _refusal(evidence, out, what="capture output", force=True) == (
        f"{out}: the capture output would overwrite the output {out} {HINT}")
    target = tmp_path / "red"
    target.write_text("a file")
    assert _refusal(evidence, target, **folder) == (
        f"{target}: cannot write the capture output: it is a file (hint: name a folder)")
    target.unlink()
    target.mkdir()
    assert _refusal(evidence, target, **{**folder, "force": False}) == (
        f"{target}: the capture output already exists (hint: pass --force to replace it)")
    (target / "1.json").write_text("{}")
    (target / "notes.txt").write_text("mine")
    assert _refusal(evidence, target, **folder) == (
        f"{target}: the capture output holds 'notes.txt': --force replaces only a folder of *.json files "
        "(hint: name another folder, or move that entry away)")
    (target / "notes.txt").unlink()
    evidence.guard(target, **folder)  # a folder of *.json files: --force replaces it
    missing = tmp_path / "no" / "red"
    assert _refusal(evidence, missing, **folder) == (
        f"{missing}: cannot write the capture output: its folder {missing.parent} does not exist "
        "(hint: create the folder first, or name a file in a folder that exists)")
    with pytest.raises(UsageError) as caught:
        evidence.guard("", **folder)
    assert str(caught.value) == "the capture output path is empty (hint: name a folder)"


def test_an_output_that_must_be_new_is_refused_in_the_guards_one_wording(tmp_path: Path) -> None:
    evidence = ProtectedInputs()
    (tmp_path / "old.jsonl").write_text("mine\n")
    assert _refusal(evidence, tmp_path / "old.jsonl", what="output", force=False) == (
        f"{tmp_path / 'old.jsonl'}: the output already exists (hint: pass --force to replace it)")
    evidence.guard(tmp_path / "old.jsonl", what="output", force=True)
    evidence.guard(tmp_path / "old.jsonl", what="report")  # a report replaces a file, as it always did
    assert _refusal(evidence, tmp_path, what="output", force=True) == (
        f"{tmp_path}: cannot write the output: it is a folder (hint: name a file in it)")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _refusal(evidence, fifo, what="output", force=True) == (
        f"{fifo}: cannot write the output: it is a FIFO (hint: name a file)")
    evidence.guard(fifo, what="report")  # a report is written through to it (write_atomic)


def test_a_staged_output_leaves_nothing_when_the_block_fails(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"before")
    with pytest.raises(UsageError) as caught:
        with ProtectedInputs.staged(target, what="the output", hint="free some space") as temp:
            temp.write_bytes(b"half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert str(caught.value) == f"{target}: cannot write the output: No space left on device (hint: free some space)"
    with pytest.raises(RuntimeError):
        with ProtectedInputs.staged(tmp_path / "bodies", what="the capture output", folder=True) as temp:
            (temp / "1.json").write_text("{}")
            raise RuntimeError("the verdicts moved")
    assert _listing(tmp_path) == {"out.jsonl": b"before"}
    with pytest.raises(UsageError) as caught:
        with ProtectedInputs.staged(tmp_path / "no" / "out.jsonl", what="the output"):
            pass
    assert str(caught.value).startswith(f"{tmp_path / 'no' / 'out.jsonl'}: cannot write the output: No such file")


def test_a_folder_output_replaces_the_old_one_whole_and_puts_it_back_when_the_rename_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "bodies"
    target.mkdir()
    (target / "7.json").write_text("old")
    with ProtectedInputs.staged(target, what="the capture output", folder=True) as temp:
        (temp / "1.json").write_text("new")
        real = os.replace

        def refuse(src: Any, dst: Any) -> None:
            if Path(src) == temp:
                raise OSError(errno.EXDEV, "Invalid cross-device link")
            real(src, dst)

        monkeypatch.setattr(os, "replace", refuse)
        with pytest.raises(OSError):
            ProtectedInputs.commit(temp, target)
        assert _listing(tmp_path) == {"bodies": None, "bodies/7.json": b"old", temp.name: None,
                                      f"{temp.name}/1.json": b"new"}  # the old folder put back
        monkeypatch.setattr(os, "replace", real)
        ProtectedInputs.commit(temp, target)
    assert _listing(tmp_path) == {"bodies": None, "bodies/1.json": b"new"}
    assert oct(target.stat().st_mode & 0o777) == oct(0o777 & ~_umask())  # an ordinary folder, not mkdtemp's 0700


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    """A one-request log and its wire.jsonl capture (its body rendered from the log)."""
    log = chat_log(tmp_path / "s" / "session.jsonl", "session-redact33")
    session = open_session(log)
    body = session.bodies.render(session.requests[0], session.route(session.requests[0]).adapter)
    wire = tmp_path / "s" / "wire.jsonl"
    wire.write_text(json.dumps({"seq": 0, "method": "POST", "path": "/chat/completions",
                                "headers": {"host": "gw.corp.example:8443"}, "body": body.decode()}) + "\n")
    return log, wire


def test_redact_to_a_folder_is_refused_as_every_command_refuses_it(tmp_path: Path) -> None:
    """(The command line refuses ``-o FOLDER`` itself, in click's words; the library, in the guard's.)"""
    log, _ = _inputs(tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(UsageError) as caught:
        redact(log, tmp_path / "s", salt="s", force=True)
    assert str(caught.value) == f"{tmp_path / 's'}: cannot write the output: it is a folder (hint: name a file in it)"
    assert _listing(tmp_path) == before


@pytest.mark.parametrize("case", ["o-no-folder", "capture-is-o", "capture-is-manifest", "o-is-fifo"])
def test_redact_refuses_its_outputs_as_every_command_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], case: str) -> None:
    log, wire = _inputs(tmp_path)
    out = tmp_path / "out.jsonl"
    extra: list[str] = []
    if case == "o-no-folder":
        out = tmp_path / "missing" / "out.jsonl"
        message = (f"{out}: cannot write the output: its folder {out.parent} does not exist (hint: create the folder "
                   "first, or name a file in a folder that exists)")
    elif case == "o-is-fifo":
        os.mkfifo(out)
        message = f"{out}: cannot write the output: it is a FIFO (hint: name a file)"
    elif case == "capture-is-o":  # was "the capture output is the redacted log or its manifest"
        extra = ["--capture", str(wire), "--capture-output", str(out)]
        message = (f"{out}: the capture output would overwrite the output {out} (hint: give --capture-output another "
                   "path)")
    else:
        manifest = Path(f"{out}.manifest.json")
        extra = ["--capture", str(wire), "--capture-output", str(manifest)]
        message = (f"{manifest}: the capture output would overwrite the manifest {manifest} (hint: give "
                   "--capture-output another path)")
    before = _listing(tmp_path)
    code, text, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "s", "--force", *extra)
    assert (code, text, err) == (2, "", [f"error: {message}"])
    assert _listing(tmp_path) == before


def test_redact_force_replaces_a_body_folder_it_wrote_and_leaves_no_temporary(tmp_path: Path) -> None:
    log, wire = _inputs(tmp_path)
    bodies = tmp_path / "bodies"
    bodies.mkdir()
    (bodies / "001.json").write_bytes(load_capture(wire)[0].body)
    (tmp_path / "out").mkdir()
    first = redact(log, tmp_path / "out" / "session.jsonl", salt="s", capture=bodies)
    assert first.capture == tmp_path / "out" / "session.jsonl.bodies"
    before = (first.capture / "001.json").read_bytes()
    again = redact(log, tmp_path / "out" / "session.jsonl", salt="t", capture=bodies, force=True)
    assert again.capture == first.capture and again.mismatched == ()
    assert sorted(_listing(tmp_path / "out")) == ["session.jsonl", "session.jsonl.bodies",
                                                  "session.jsonl.bodies/001.json", "session.jsonl.manifest.json"]
    assert (again.capture / "001.json").read_bytes() != before  # the other salt's placeholders: replaced


# --- 2. which hosts stay: only a public API's exact host --------------------------------------------

REDACTOR_SALT = b"redact33"

HOSTS = {  # the host as a header holds it -> as redacted with REDACTOR_SALT
    "api.anthropic.com": "api.anthropic.com",
    "API.OpenAI.com": "API.OpenAI.com",  # letter case is no other host
    "api.deepseek.com:443": "api.deepseek.com:443",  # HTTPS's own port
    "bedrock-runtime.us-east-1.amazonaws.com": "bedrock-runtime.us-east-1.amazonaws.com",  # a listed region
    "api.openai.com:8443": "evb.mgwcgf.azs:1277",  # another port: not the vendor's endpoint
    "gw.internal.anthropic.com": "kc.amfajlxx.gbrxyysga.miq",
    "api.deepseek.com.corp.example": "evb.bycoecvx.hsx.yfzc.yvacfnn",
    "api.anthropic.com.": "evb.ytyyxurfw.cdq.",
    "api.openai.com:8443@evil": "evb.mgwcgf.azs:0277@hhgx",
    "xn--api-nthropic-xyz.com": "ee--mbs-hfeesdda-cmr.ceh",
    "api.\u212aimi.com": "evb.puif.xek",  # the Kelvin sign lower-cases to k: no look-alike stays
    "10.0.0.7": "10.6.5.9",  # an address of 8 characters: 10.0.0.0/8's
    "[fd00::1]:8080": "[100::9f]:1341",  # RFC 6666's discard-only 100::/64: as long (session 39)
    "fd00::1": "100::9f",  # a HAR's serverIPAddress: the prefix of its bracketed form's placeholder
    "[::ffff:192.168.10.1]:443": "[::ffff:198.51.100.6]:122",  # still mapped: the IPv4 address's own placeholder
}

URLS = {  # a captured or configured URL -> as redacted with REDACTOR_SALT
    "https://api.anthropic.com/v1/messages": "https://api.anthropic.com/v1/messages",
    "https://gw.internal.anthropic.com/v1/messages": "https://kc.amfajlxx.gbrxyysga.miq/v1/messages",
    "https://api.deepseek.com.corp.example/v1": "https://evb.bycoecvx.hsx.yfzc.yvacfnn/v1",
    "https://api.openai.com:8443/v1": "https://evb.mgwcgf.azs:1277/v1",
    "https://api.openai.com:8443@evil.example/v1": "https://evb.mgwcgf.azs:0277@ihrd.oeueobf/v1",
    "https://svc:hunter2@api.openai.com/v1": "https://zqr:afapby1@api.openai.com/v1",  # user information goes
    "https://api.openai.com\\@evil.example/v1": "https://evb.mgwcgf.azs\\@ihrd.oeueobf/v1",  # urlsplit: evil's
    "http://[fd00::1]:8080/v1/chat/completions": "http://[100::9f]:1341/v1/chat/completions",
    "https:/gw.corp.example/v1": "https:/kc.rxgt.pjqcarz/v1",  # WHATWG reads the host after one slash
    "ht\ttps://gw.corp.example/v1": "ht\ttps://kc.rxgt.pjqcarz/v1",  # a tab is dropped before parsing
    "https://gw.co\trp.example/v1": "https://kc.rxnmv.wuzcfsy/v1",
    "//gw.corp.example/v1": "//kc.rxgt.pjqcarz/v1",
    "/v1/chat/completions": "/v1/chat/completions",
    "https://api.openai.com#@evil.example/": "https://api.openai.com#@evil.example/",  # a fragment, not a host
}


@pytest.mark.parametrize("host", HOSTS)
def test_only_a_public_apis_exact_host_stays(host: str) -> None:
    redactor = Redactor(Placeholders(REDACTOR_SALT))
    assert redact_host(host, redactor) == HOSTS[host]
    assert is_public_host(host) == (HOSTS[host] == host)


@pytest.mark.parametrize("url", URLS)
def test_a_url_keeps_only_a_public_apis_exact_host(url: str) -> None:
    assert redact_url(url, Redactor(Placeholders(REDACTOR_SALT))) == URLS[url]


def test_a_redacted_ipv6_address_is_still_one_and_its_bracketed_form_extends_it() -> None:
    """(An IPv4 address alone keeps only its shape: ``urlsplit`` checks only a bracketed host.)"""
    redactor = Redactor(Placeholders(REDACTOR_SALT))
    for address in ("fd00::1", "2001:db8:cafe::17", "FE80::A:BCDE", "::ffff:255.255.255.255", "::ffff:10.0.0.1",
                    "fe80::1%25eth0"):
        placeholder = redact_host(address, redactor)
        assert len(placeholder) == len(address) and placeholder != address
        ipaddress.ip_address(placeholder.replace("%25", "%"))  # raises when it is no address
        assert redact_host(f"[{address}]:443", redactor).startswith(f"[{placeholder}]:")
    assert redact_host("203.0.113.254", redactor) == redact_host("203.0.113.254:80", redactor)[:13]


def test_every_header_naming_the_gateway_keeps_only_a_public_host() -> None:
    redactor = Redactor(Placeholders(REDACTOR_SALT))
    assert _headers({"Host": "api.openai.com:8443", "x-forwarded-host": "api.deepseek.com",
                     "origin": "https://gw.internal.anthropic.com",
                     "Forwarded": 'for="[fd00::1]:8080";host=api.anthropic.com;proto=https'}, redactor, [], 0) == {
        "Host": "evb.mgwcgf.azs:1277", "x-forwarded-host": "api.deepseek.com",
        "origin": "https://kc.amfajlxx.gbrxyysga.miq",
        "Forwarded": 'for="[100::9f]:1341";host=api.anthropic.com;proto=https'}


def test_a_route_files_base_url_keeps_only_a_public_apis_exact_host() -> None:
    config = parse_routes({"providers": {
        "look-alike": {"api": "openai-completions", "baseURL": "https://api.deepseek.com.corp.example/v1",
                       "models": [{"id": "m", "contextWindow": 65536, "maxTokens": 4096, "reasoningEfforts": False}]},
        "vendor-port": {"api": "openai-completions", "baseURL": "https://api.openai.com:8443/v1",
                        "models": [{"id": "m", "contextWindow": 65536, "maxTokens": 4096, "reasoningEfforts": False}]},
        "vendor": {"api": "openai-completions", "baseURL": "https://api.deepseek.com:443/v1",
                   "models": [{"id": "m", "contextWindow": 65536, "maxTokens": 4096, "reasoningEfforts": False}]}}})
    redactor = Redactor(Placeholders(REDACTOR_SALT))
    document = redacted_routes(config, url=lambda u: redact_url(u, redactor), value=lambda v: redact_ascii(v, redactor))
    assert {name: route["baseURL"] for name, route in document["providers"].items()} == {
        "look-alike": "https://evb.bycoecvx.hsx.yfzc.yvacfnn/v1", "vendor-port": "https://evb.mgwcgf.azs:1277/v1",
        "vendor": "https://api.deepseek.com:443/v1"}


def test_a_har_naming_an_ipv6_gateway_is_redacted_and_still_loads(tmp_path: Path) -> None:
    """The placeholder of ``[fd00::1]`` held letters past ``f`` (``[my30::5]``), which ``urlsplit``
    refuses: the redacted HAR could not be read back, so redact failed on the capture it had written."""
    log, wire = _inputs(tmp_path)
    body = load_capture(wire)[0].body.decode()
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "proxy", "version": "1"}, "entries": [{
        "startedDateTime": "2026-12-06T10:00:00.000Z", "time": 5, "serverIPAddress": "fd00::1",
        "request": {"method": "POST", "url": "http://[fd00::1]:8080/v1/chat/completions", "httpVersion": "HTTP/1.1",
                    "headers": [{"name": "Host", "value": "[fd00::1]:8080"}], "cookies": [], "queryString": [],
                    "postData": {"mimeType": "application/json", "text": body}, "headersSize": -1,
                    "bodySize": len(body)},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [], "cookies": [],
                     "content": {"size": 0, "mimeType": "application/json"}, "redirectURL": "", "headersSize": -1,
                     "bodySize": -1},
        "cache": {}, "timings": {"send": 1, "wait": 3, "receive": 1}}]}}))
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=REDACTOR_SALT, capture=har)
    assert result.mismatched == () and result.capture is not None
    entry = json.loads(result.capture.read_text())["log"]["entries"][0]
    assert (entry["serverIPAddress"], entry["request"]["url"], entry["request"]["headers"]) == (
        "100::9f", "http://[100::9f]:1341/v1/chat/completions", [{"name": "Host", "value": "[100::9f]:1341"}])
    assert [c.path for c in load_capture(result.capture)] == ["/v1/chat/completions"]
