"""Session 43, issue 17 at its edges: a request id's dotted quads and its escapes decoded more than once.

1. A version is no address: a dotted number after a ``v`` that starts a word (``v1.2.3.4``, ``app-v1.2.3.4-x``) stays,
   as it does in any other text; ``build-1.2.3.4`` is no version, being what ``gw-10.77.66.55`` is (a host's label,
   then its address: fuzz 24), nor is a ``v`` inside a word (``xv10.77.66.55``, ``srv10.77.66.55``).
2. A quad glued to more digits is read, the leftmost reading first: ``10.77.66.5510.77.66.55`` kept every octet (its
   ``5510`` one run replaced, the others short runs kept); ``1110.77.66.55`` kept ``.77.66.55``.
3. Decoded twice, an id held a control (``%%10.77.66.55`` was ``%%3192.0.2.183``: ``%192...``, then U+0019; ``%25`` and
   a placeholder starting ``10``): printable however many times it is decoded now.
"""

from __future__ import annotations

from urllib.parse import unquote

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from dsh_audit.redact import Placeholders, Redactor
from dsh_audit.redact._printable import printable_decoded
from dsh_audit.redact._request_ids import pseudonym

EDGES = {  # with salt b43, 10.77.66.55 is 203.0.113.4, 1.2.3.4 0.9.7.0, 110.77.66.55 203.0.113.39
    "v1.2.3.4": "v1.2.3.4", "app-v1.2.3.4-x": "app-v1.2.3.4-x", "V10.0.0.1.2": "V10.0.0.1.2",
    "v1.2.3.4.5": "v1.2.3.4.5", "build-1.2.3.4": "skkwj-0.9.7.0", "xv10.77.66.55": "xv203.0.113.4",
    "srv10.77.66.55": "srv203.0.113.4", "gw-10.77.66.55.ab": "gw-203.0.113.4.ab",
    "10.77.66.5510.77.66.55": "203.0.113.4203.0.113.4",
    "req-10.77.66.5510.77.66.55:443": "req-203.0.113.4203.0.113.4:884",
    "1110.77.66.55": "1203.0.113.39", "10.77.66.5510": "203.0.113.410",
    "%%10.77.66.55": "%%3203.0.113.4", "-:x:-%%F2::F52": "-:x:-%%6800::80", "%2510.0.0.1": "%25h0.3.7.8",
    "%25fe80::1": "%25h00::75"}


def _readings(text: str) -> list[str]:
    """``text`` and each decoding of it, until one changes nothing."""
    out = [text]
    while (decoded := unquote(out[-1])) != out[-1]:
        out.append(decoded)
    return out


def test_a_request_id_keeps_a_version_and_loses_every_quad_glued_to_digits_or_a_label() -> None:
    r = Redactor(Placeholders(b"b43"))
    assert {value: pseudonym(value, r) for value in EDGES} == EDGES
    kept = [value for value, written in EDGES.items() if "77.66.55" in value and "77.66.55" in written]
    assert kept == []
    assert [printable_decoded(t) for t in ("%2510.8.5.6", "%%3100::aa", "%2541%25E2%2580%25AE", "a%41b")] == [
        "%25h0.8.5.6", "%%6800::aa", "%2541%25K2%2580%25AE", "a%41b"]


@settings(max_examples=40, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(("%", "%25", "%2", "%31", "%30", "%F2", "%E2%80%AE", "1", "0", "F", "x", ".", ":",
                                 "10.0.0.1", "fe80::1", "192.168.1.1")), max_size=8))
@example(["%", "%", "F2::F52"]).via("fuzz: %%3100::aa, twice decoded U+0010")
@example(["%25", "10.0.0.1"]).via("a %25 then a placeholder starting 10")
def test_a_request_id_is_printable_however_many_times_it_is_decoded(tokens: list[str]) -> None:
    written = pseudonym("".join(tokens), Redactor(Placeholders(b"b43")))
    assert [reading for reading in _readings(written) if not reading.isprintable()] == []
