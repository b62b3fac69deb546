"""Session 46 (issue 15): the body decoder's two tries that are no body (:mod:`dsh_audit._body_decode`).

A try that decodes bytes and then gives up (a stream with no zlib header that is no whole raw deflate
stream; magic bytes that begin no real data) puts the body's budget back where it was: what it
decoded is no body, so it never counts toward the limits of the layers that follow. And a header that
names a coding whose data the body does not hold (gzip data under ``deflate``) is undone by the bytes'
magic, while text that only starts as a zlib header does is kept as it is.
"""

from __future__ import annotations

import base64
import gzip
import zlib

import pytest

from dsh_audit._body_decode import BodyDecodeError, UndecodableBody, _budget, _inflate_deflate, decoded_body, \
    undo_codings

#: 3 MiB of zeros: its try counts 3 MiB (raw deflate, to its end) or 2 MiB (cut zlib: whole MiB pieces only),
#: so a second try past a 3 MiB limit is refused when the first is still counted, and passes when it is not.
ZEROS = bytes(3 << 20)
BODY = b'{"id": "chatcmpl-1", "choices": [{"message": {"content": "hi"}}]}'


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


#: A whole raw deflate stream of :data:`ZEROS` with bytes after it: no zlib header, no gzip magic, no text.
RAW_WITH_TAIL = _raw_deflate(ZEROS) + b"tail"
#: zlib data of :data:`ZEROS` with its end cut off.
CUT_ZLIB = zlib.compress(ZEROS, 9)[:-8]


@pytest.fixture
def limited(monkeypatch: pytest.MonkeyPatch) -> None:
    """A decoded-size limit of 3 MiB, no ratio limit: only the size counts."""
    monkeypatch.setenv("DSH_AUDIT_MAX_DECODED", "3M")
    monkeypatch.setenv("DSH_AUDIT_MAX_RATIO", "0")


def test_the_bodies_are_what_the_tests_say() -> None:
    assert RAW_WITH_TAIL[0] & 0x0F != 8 and not RAW_WITH_TAIL.startswith(b"\x1f\x8b")  # no header, no magic
    assert zlib.decompressobj(-15).decompress(RAW_WITH_TAIL) == ZEROS
    assert CUT_ZLIB[:2] == b"\x78\xda"


def test_a_raw_deflate_try_that_gives_up_spends_nothing(limited: None) -> None:
    budget = _budget("body")
    assert _inflate_deflate(RAW_WITH_TAIL, budget) is None  # kept as stored: no whole raw deflate stream
    assert budget.decoded == 0  # what the try decoded (3 MiB) is no body


def test_two_failed_deflate_tries_are_not_summed_into_a_refusal(limited: None) -> None:
    """Each layer's try decodes 3 MiB and gives up; counted, the second would pass the 3 MiB limit and
    the body would be refused as a bomb instead of named for what it is."""
    with pytest.raises(BodyDecodeError) as caught:
        undo_codings(RAW_WITH_TAIL, "deflate, deflate")
    assert type(caught.value) is UndecodableBody and caught.value.coding == "deflate"
    assert caught.value.message == "the body's Content-Encoding names deflate, but it holds no deflate data and no text"
    assert caught.value.stored == RAW_WITH_TAIL


def test_a_magic_byte_try_that_gives_up_spends_nothing(limited: None) -> None:
    """Under ``deflate, gzip`` the gzip layer finds no gzip magic and tries the zlib header it sees: cut
    off, the try gives up (2 MiB decoded); the deflate layer then reads the same data within its own
    3 MiB and says it is cut off, not a bomb of 4 MiB."""
    with pytest.raises(BodyDecodeError) as caught:
        decoded_body(base64.b64encode(CUT_ZLIB).decode(), encoding="base64", content_coding="deflate, gzip")
    assert type(caught.value) is UndecodableBody and caught.value.coding == "deflate"
    assert caught.value.message == "the deflate body is cut off"


def test_data_under_a_header_naming_the_other_coding_is_undone_by_its_magic() -> None:
    packed_gzip = base64.b64encode(gzip.compress(BODY, mtime=0)).decode()
    packed_zlib = base64.b64encode(zlib.compress(BODY)).decode()
    assert decoded_body(packed_gzip, encoding="base64", content_coding="deflate") == (BODY, ("gzip",))
    assert decoded_body(packed_zlib, encoding="base64", content_coding="gzip") == (BODY, ("deflate",))
    # stacked: the outer layer (deflate, undone first) holds gzip data, the inner one is gzip again
    twice = base64.b64encode(gzip.compress(gzip.compress(BODY, mtime=0), mtime=0)).decode()
    assert decoded_body(twice, encoding="base64", content_coding="gzip, deflate") == (BODY, ("gzip", "gzip"))


def test_text_that_starts_as_a_zlib_header_does_is_kept_as_it_is() -> None:
    """``x^`` is a valid zlib header (0x785e is a multiple of 31): the magic-byte try fails on what
    follows and the text is the body, nothing undone."""
    assert (0x78 << 8 | ord("^")) % 31 == 0
    assert decoded_body("x^ plain words, no data", content_coding="gzip") == (b"x^ plain words, no data", ())
