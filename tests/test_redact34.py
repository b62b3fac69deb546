"""Session 34 (issue 17, redact): no client or proxy address leaks through ``Via``, ``X-Forwarded-For``
and their kin (fuzz round 14 D7); a placeholder address is still an address (D11: ports 1-65535, octets
0-255); a scheme-less ``host:port/path`` keeps no host; ``--force`` replaces neither a child's parent
log nor another bundle's files; the DSH815 hint of a redacted bundle names its route file; and
``redact/_redact.py`` split into modules under the size guideline."""

from __future__ import annotations

import ipaddress
import json
import random
import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from _cli import invoke
from test_redact32 import _family  # a parent log and its fork child, side by side
from dsh_audit.gate import Policy
from dsh_audit.gate._findings import Judge
from dsh_audit.redact import Placeholders, Redactor, check_bundle, redact
from dsh_audit.redact._capture import _headers
from dsh_audit.redact._addresses import octets as _octets
from dsh_audit.redact._hosts import ADDRESS_HEADERS, _port, host_value, redact_host, redact_url
from dsh_audit.redact._pseudonyms import redact_ascii
from dsh_audit.redact._routes import redacted_routes
from dsh_audit.session._home_routes import _manifest_route_name
from dsh_audit.wire._piai_routes import parse_routes

SALT = b"redact34"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
A_CHAT = CORPUS / "live" / "a-chat"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
needs_corpus = pytest.mark.skipif(not (A_CHAT.is_dir() and C3.is_dir()), reason="../shared/corpus is absent")

#: Every header that names the gateway, the client or a proxy, as a gateway's capture may hold them (names
#: in any letter case; ``Forwarded`` with the blanks some proxies write, a quoted IPv6 node and ``unknown``).
PLANTED = {
    "Host": "gw-secret-host.corp-internal:8443",
    "Via": "1.1 gw-secret-host.corp-internal, HTTP/2 10.77.66.55:8080 (squid/6.1)",
    "X-Forwarded-For": "10.77.66.55, 192.168.1.1",
    "x-real-ip": "10.77.66.55",
    "X-Client-IP": "10.77.66.55",
    "True-Client-IP": "2001:db8::17",
    "CF-Connecting-IP": "10.77.66.55",
    "X-Originating-IP": "[10.77.66.55]",
    "x-remote-ip": "10.77.66.55",
    "X-Remote-Addr": "10.77.66.55",
    "X-Cluster-Client-IP": "10.77.66.55",
    "Fastly-Client-IP": "10.77.66.55",
    "Forwarded": 'for = 10.77.66.55 ; host = gw-secret-host.corp-internal, For="[fd12:3456:789a::1]:4711";BY=unknown;'
                 "proto=https",
    "x-stainless-os": "Linux",
    "user-agent": "deepseek-harness/0.1.0",
}
#: ``PLANTED`` as redacted with SALT: each address the same placeholder wherever it stands, the protocols of
#: ``Via``, ``unknown``, ``proto`` and the headers that identify no one kept.
REDACTED = {
    "Host": "fm-fmrdsz-yxfk.lxno-depuetiy:1799",
    "Via": "1.1 fm-fmrdsz-yxfk.lxno-depuetiy, HTTP/2 192.0.2.236:1000 (xbhhd/1.7)",
    "X-Forwarded-For": "192.0.2.236, 203.0.113.1",
    "x-real-ip": "192.0.2.236",
    "X-Client-IP": "192.0.2.236",
    "True-Client-IP": "2001:db8::32",  # RFC 3849's documentation prefix (session 39)
    "CF-Connecting-IP": "192.0.2.236",
    "X-Originating-IP": "[192.0.2.236]",
    "x-remote-ip": "192.0.2.236",
    "X-Remote-Addr": "192.0.2.236",
    "X-Cluster-Client-IP": "192.0.2.236",
    "Fastly-Client-IP": "192.0.2.236",
    "Forwarded": 'for = 192.0.2.236 ; host = fm-fmrdsz-yxfk.lxno-depuetiy, For="[2001:db8::137:7a0]:1864";BY=unknown;'
                 "proto=https",
    "x-stainless-os": "Linux",
    "user-agent": "deepseek-harness/0.1.0",
}
LEAKS = ("gw-secret-host", "corp-internal", "10.77.66.55", "192.168.1.1", "2001:db8::17", "fd12:3456", "4711")


# --- 1. (D7) Via, X-Forwarded-For and their kin lose their addresses ----------------------------------------


def test_every_header_naming_a_client_or_a_proxy_loses_its_addresses() -> None:
    assert _headers(PLANTED, Redactor(Placeholders(SALT)), [], 0) == REDACTED
    assert {name.lower() for name in PLANTED} - {"host", "via", "forwarded", "x-stainless-os", "user-agent"} \
        == ADDRESS_HEADERS - {"client-ip", "x-envoy-external-address"}


@pytest.mark.parametrize(("name", "value", "redacted"), [
    ("via", "gw.corp", "fm.farx"),  # a hop of one word (no protocol) is its host
    ("VIA", "1.0 fred, 1.1 api.anthropic.com", "1.0 elhk, 1.1 api.anthropic.com"),  # a public API's host stays
    ("x-forwarded-for", "unknown, 10.1.2.3:5678", "unknown, 10.3.2.6:6118"),  # 10/8: as long
    ("client-ip", "10.1.2.3", "10.3.2.6"),
    ("forwarded", 'for="_hidden";by="gw.corp:81', 'for="_ovqkxn";by="fm.farx:28'),  # an unclosed quote stays so
    ("accept", "10.1.2.3", None),  # not a header that names an address
])
def test_address_lists_via_hops_and_forwarded_nodes(name: str, value: str, redacted: str | None) -> None:
    assert host_value(name, value, Redactor(Placeholders(SALT))) == redacted


@needs_corpus
def test_a_capture_with_proxy_headers_keeps_its_verdicts_and_no_address(tmp_path: Path) -> None:
    records = [json.loads(line) for line in (A_CHAT / "wire.jsonl").read_text("utf-8").splitlines()]
    for record in records:
        record["headers"] = {**{k: v for k, v in record["headers"].items() if k != "host"}, **PLANTED}
    capture = tmp_path / "wire.jsonl"
    capture.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    log = next((A_CHAT / "session-logs").glob("*.jsonl"))
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "r.jsonl", salt="redact34", capture=capture)
    assert result.mismatched == () and set(result.verdicts) == {"requests", "breaks", "cache", "diff"}
    written = [json.loads(line) for line in (tmp_path / "out" / "wire.jsonl").read_text("utf-8").splitlines()]
    assert len(written) == len(records)
    for before, after in zip(records, written):
        assert {k: v for k, v in after["headers"].items() if k in PLANTED} == REDACTED
        changed = ("content-length", "x-deepseek-harness-user-id")  # the install's id: a pseudonym (session 38)
        assert {k: v for k, v in after["headers"].items() if k not in PLANTED and k not in changed} == \
            {k: v for k, v in before["headers"].items() if k not in PLANTED and k not in changed}
        user = before["headers"]["x-deepseek-harness-user-id"]
        assert len(after["headers"]["x-deepseek-harness-user-id"]) == len(user) != 0
        assert after["headers"]["x-deepseek-harness-user-id"] != user
    for file in (tmp_path / "out").iterdir():
        assert [leak for leak in LEAKS if leak in file.read_text("utf-8")] == [], file.name
    assert check_bundle(tmp_path / "out" / "r.jsonl").ok


# --- 2. (D11) a placeholder address is still an address ------------------------------------------------------


def test_the_c3_gateway_becomes_an_address_urlsplit_reads() -> None:
    redactor = Redactor(Placeholders(SALT))
    assert redact_url("http://127.0.0.1:18302/v1", redactor) == "http://127.9.1.4:44330/v1"  # loopback stays so
    assert urlsplit("http://127.9.1.4:44330/v1").port == 44330
    # a valid placeholder stays as session 33 drew it (tests/test_redact33.py pins them)
    assert redact_host("api.openai.com:8443", Redactor(Placeholders(b"redact33"))) == "evb.mgwcgf.azs:1277"


def _addresses(count: int) -> list[str]:
    draw = random.Random(34)
    found = []
    for _ in range(count):
        quad = ".".join(str(draw.randrange(256)) for _ in range(4))
        port = str(draw.choice([draw.randrange(1, 10), draw.randrange(10, 100), draw.randrange(1000, 65536),
                                draw.randrange(10000, 65536)]))
        v6 = ":".join(f"{draw.randrange(65536):x}" for _ in range(3)) + "::" + f"{draw.randrange(1, 65536):x}"
        found += [f"{quad}:{port}", f"[{v6}]:{port}", f"gw-{draw.randrange(100)}.corp.example:{port}"]
    return found


def test_every_placeholder_port_and_octet_is_valid_and_as_long() -> None:
    redactor, again = Redactor(Placeholders(SALT)), Redactor(Placeholders(SALT))
    for address in _addresses(400):
        url = f"http://{address}/v1"
        placeholder = redact_url(url, redactor)
        parts = urlsplit(placeholder)  # raises on a bracketed host that is no IPv6 address
        original = urlsplit(url)
        assert parts.port is not None and 1 <= parts.port <= 65535, placeholder
        assert len(str(parts.port)) == len(str(original.port)) and len(placeholder) == len(url)
        assert parts.hostname is not None and original.hostname is not None
        if original.hostname[0].isdigit() or ":" in original.hostname:
            ipaddress.ip_address(parts.hostname)  # raises when it is no address
        assert placeholder == redact_url(url, again)  # deterministic (a run of the same addresses in order)
    # an address alone is the prefix of its host:port's placeholder, whatever the port becomes
    assert redact_host("10.77.66.55:99999", redactor).startswith(redact_host("10.77.66.55", redactor) + ":")


@pytest.mark.parametrize(("port", "placeholder"), [
    ("0", "7"), ("00", "75"), ("080", "792"), ("443", "777"), ("8080", "1558"),  # drawn valid: kept as drawn
    ("65536", "54281"), ("99999", "28313"),  # none before: a port now, of as many digits
    ("123456", "892749"),  # no port has six digits: drawn
])
def test_a_port_keeps_its_digit_count(port: str, placeholder: str) -> None:
    assert redact_host(f"gw:{port}", Redactor(Placeholders(SALT))) == f"fm:{placeholder}"


def test_a_drawn_number_past_a_port_or_an_octet_is_moved_into_range() -> None:
    """Session 33's c3 bundle held ``http://570.9.0.8:79364/v1`` (from ``127.0.0.1:18302``, salt ``s``)."""
    assert [_port(p) for p in ("0", "05", "099", "79364", "65535", "00000", "123456")] == [
        "1", "15", "199", "33828", "65535", "10000", "123456"]
    assert _octets("570.9.0.8:79364") == "170.9.0.8:79364" and _octets("[::ffff:0.300.09.1]") == "[::ffff:0.100.19.1]"


# --- 3. a scheme-less host:port keeps no host -----------------------------------------------------------


@pytest.mark.parametrize(("url", "redacted"), [
    ("gw.corp:8080/v1", "fm.farx:2754/v1"),
    ("gw.corp/v1", "fm.farx/v1"),
    ("gw.corp:8080", "fm.farx:2754"),
    ("  gw.corp:8080/v1", "  fm.farx:2754/v1"),
    ("10.0.0.7:99999/v1", "10.7.3.5:36199/v1"),
    ("api.openai.com/v1", "api.openai.com/v1"),  # a public API's exact host stays
    ("/v1/chat/completions", "/v1/chat/completions"),  # a request path stays
    ("v1/chat/completions", "v1/chat/completions"),
])
def test_a_scheme_less_url_keeps_no_host(url: str, redacted: str) -> None:
    assert redact_url(url, Redactor(Placeholders(SALT))) == redacted


def test_a_route_files_scheme_less_base_url_keeps_no_host() -> None:
    model = {"id": "m", "contextWindow": 65536, "maxTokens": 4096, "reasoningEfforts": False}
    config = parse_routes({"providers": {
        "port": {"api": "openai-completions", "baseURL": "gw.corp:8080/v1", "models": [model]},
        "bare": {"api": "openai-completions", "baseURL": "gw.corp/v1", "models": [model]}}})
    redactor = Redactor(Placeholders(SALT))
    document = redacted_routes(config, url=lambda u: redact_url(u, redactor), value=lambda v: redact_ascii(v, redactor))
    assert {name: route["baseURL"] for name, route in document["providers"].items()} == {
        "port": "fm.farx:2754/v1", "bare": "fm.farx/v1"}
    assert redact_host("gw.corp:8080", redactor) == "fm.farx:2754"  # as its host header would be


# --- 4. --force replaces neither a child's parent log nor another bundle's files ---------------------------


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_force_never_replaces_the_parent_log_beside_the_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    parent, child = _family(tmp_path / "logs")
    before = _tree(tmp_path)
    for extra in ((), ("--alone",)):  # --alone reads no parent, and still may not write over it
        code, out, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(parent), "--force",
                                "--salt", "s", *extra)
        assert (code, out, err) == (2, "", [f"error: {parent}: the output would overwrite the input {parent} "
                                            "(hint: give -o another path)"])
        assert _tree(tmp_path) == before
    # nor over the parent's redaction beside the output (which --alone does not read either)
    (tmp_path / "out").mkdir()
    assert invoke(monkeypatch, capsys, "redact", str(parent), "-o", str(tmp_path / "out" / parent.name),
                  "--salt", "s")[0] == 0
    before = _tree(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(tmp_path / "out" / parent.name),
                            "--force", "--salt", "s", "--alone")
    redacted_parent = tmp_path / "out" / parent.name
    assert (code, out, err) == (2, "", [f"error: {redacted_parent}: the output would overwrite the input "
                                        f"{redacted_parent} (hint: give -o another path)"])
    assert _tree(tmp_path) == before
    # the child beside its parent's redaction, and again over its own bundle with --force: as before
    for force in ((), ("--force",)):
        code, _, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(tmp_path / "out" / child.name),
                              "--salt", "s", *force)
        assert (code, err[0].startswith("note: verdicts compared with the parent session")) == (0, True)
    assert check_bundle(tmp_path / "out" / child.name).ok


@needs_corpus
def test_force_replaces_only_this_bundles_own_capture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((A_CHAT / "session-logs").glob("*.jsonl"))
    capture = tmp_path / "wire.jsonl"
    shutil.copy(A_CHAT / "wire.jsonl", capture)
    out = tmp_path / "out"
    out.mkdir()
    assert invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out / "other.jsonl"), "--salt", "s",
                  "--capture", str(capture))[0] == 0
    before = _tree(out)
    refused = {  # an output -> what it would replace
        ("-o", str(out / "r.jsonl"), "--capture-output", str(out / "wire.jsonl")):
            f"error: {out}/wire.jsonl: the capture output would overwrite the bundle other.jsonl's "
            f"capture {out}/wire.jsonl (hint: give --capture-output another path)",
        ("-o", str(out / "r.jsonl"), "--capture-output", str(out / "other.jsonl")):
            f"error: {out}/other.jsonl: the capture output would overwrite the bundle other.jsonl's log "
            f"{out}/other.jsonl (hint: give --capture-output another path)",
        ("-o", str(out / "r.jsonl"), "--capture-output", str(out / "other.jsonl.manifest.json")):
            f"error: {out}/other.jsonl.manifest.json: the capture output would overwrite the bundle other.jsonl's "
            f"manifest {out}/other.jsonl.manifest.json (hint: give --capture-output another path)",
        ("-o", str(out / "wire.jsonl")):
            f"error: {out}/wire.jsonl: the output would overwrite the bundle other.jsonl's capture "
            f"{out}/wire.jsonl (hint: give -o another path)",
    }
    for args, message in refused.items():
        code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), *args, "--force", "--salt", "t",
                                   "--capture", str(capture))
        assert (code, stdout, err) == (2, "", [message])
        assert _tree(out) == before
    # its own bundle again, with --force: its capture replaced
    code, stdout, _ = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out / "other.jsonl"), "--force",
                             "--salt", "t", "--capture", str(capture))
    assert code == 0 and f"wrote {out}/wire.jsonl: " in stdout  # its own capture, where the views find it
    assert _tree(out)[("wire.jsonl")] != before["wire.jsonl"]


# --- 5. the DSH815 hint of a redacted bundle names its route file -----------------------------------------------


def test_the_routes_hint_of_a_bundle_names_its_route_file(tmp_path: Path) -> None:
    log = tmp_path / "r.jsonl"
    hint = "pass --routes FILE (DSH's llm-pi-ai route configuration)"
    judge = Judge(Policy())
    assert judge.routes_hint(str(log), hint).startswith(f"{hint}, or record the log in a DSH home")  # no manifest
    (tmp_path / "r.jsonl.manifest.json").write_text(json.dumps({"tool": "dsh-audit", "route_file": "r.jsonl.routes.yml"}))
    (tmp_path / "r.jsonl.routes.yml").write_text("{}\n")  # named only when it is there (review 40 B)
    assert Judge(Policy()).routes_hint(str(log), hint) == (
        f"pass --routes {tmp_path}/r.jsonl.routes.yml (DSH's llm-pi-ai route configuration), the redacted route "
        "file of this bundle (its manifest names it)")
    # a name outside the bundle's folder, none, or one with a NUL (file_name refuses it): the plain hint
    for named in ("../x.yml", "", None, "r.jsonl.routes.yml\0"):
        (tmp_path / "r.jsonl.manifest.json").write_text(json.dumps({"tool": "dsh-audit", "route_file": named}))
        assert Judge(Policy()).routes_hint(str(log), hint).startswith(f"{hint}, or record")
        assert _manifest_route_name(str(tmp_path / "r.jsonl.manifest.json")) is None
    assert Judge(Policy(), routes="x.yml").routes_hint(str(log), hint) == hint  # check renders with one already


@needs_corpus
def test_check_of_a_c3_bundle_names_its_route_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    log = next((C3 / "session-logs").glob("*.jsonl"))
    redact(log, "r.jsonl", salt="redact34", capture=C3 / "wire.jsonl", routes=C3 / "inputs" / "pi-ai-routes.patch.yml")
    code, out, _ = invoke(monkeypatch, capsys, "check", "r.jsonl")  # its capture found beside it
    hints = set(re.findall(r"DSH815 .*?\(hint: (.*)\)$", out, flags=re.MULTILINE))
    assert (code, hints) == (1, {"pass --routes r.jsonl.routes.yml (DSH's llm-pi-ai route configuration), the "
                                 "redacted route file of this bundle (its manifest names it)"})
    code, out, _ = invoke(monkeypatch, capsys, "check", "r.jsonl", "--routes", "r.jsonl.routes.yml")
    assert code == 0 and "DSH815" not in out


# --- 6. redact/_redact.py split into modules under the size guideline ------------------------------------------


def test_the_redaction_modules_keep_under_the_size_guideline() -> None:
    folder = Path(redact.__code__.co_filename).parent
    sizes = {name: len((folder / f"{name}.py").read_text("utf-8").splitlines())
             for name in ("_redact", "_bundle", "_family", "_manifest", "_staging", "_notes", "_hosts")}
    assert {name: size for name, size in sizes.items() if size > 400} == {}
