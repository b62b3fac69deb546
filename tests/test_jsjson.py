import json

import pytest

from dsh_audit.jsjson import js_number, sha256_hex, stringify


@pytest.mark.parametrize("value, text", [
    (1.0, "1"), (1e-7, "1e-7"), (1e21, "1e+21"), (1e20, "100000000000000000000"), (0.1, "0.1"),
    (-2.5e-10, "-2.5e-10"), (5e-324, "5e-324"), (123456789000000.0, "123456789000000"),
    (0.000001, "0.000001"), (1.5, "1.5"), (-0.0, "0"), (10**22, "1e+22"), (7, "7"), (1e300, "1e+300"),
])
def test_numbers_spelled_as_javascript(value, text):
    assert js_number(value) == text


def test_strings_escape_exactly_like_json_stringify():
    assert stringify("a\"b\\c\n\t\b\f\r\x01\x1f/\u2028é😀") == '"a\\"b\\\\c\\n\\t\\b\\f\\r\\u0001\\u001f/\u2028é😀"'


def test_lone_surrogates_escaped_and_pairs_joined():
    assert stringify("x\ud800y") == '"x\\ud800y"'
    assert stringify(json.loads('"\\ud83d\\ude00"')) == '"😀"'
    assert stringify("\udc00") == '"\\udc00"'


def test_containers_keep_key_order_and_have_no_whitespace():
    assert stringify({"b": [1, {"z": None, "a": True}], "a": {}}) == '{"b":[1,{"z":null,"a":true}],"a":{}}'


def test_digest_is_sha256_of_utf8():
    assert sha256_hex([]) == "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"


@pytest.mark.parametrize("value", [
    1.0, {"a": [2.0, -3.0]}, 1e16, 12345678901234567.0, 1e20, "x\ud800", 2**70, {"k": 0.5, "s": "1.0 e+16"},
    [1e-7, 1.5e300, 123.25, "\u2028\x7f\x00"], {"lost_cost": 9.15e-6}, [1e-6, 3.3e-6, 1e-5],
])
def test_fast_path_never_changes_the_answer(value):
    assert stringify(value) == __import__("dsh_audit.jsjson", fromlist=["_exact"])._exact(value)


def test_floats_from_1e_6_to_1e_5_are_decimals_as_javascript_writes_them():
    """orjson writes 9.15e-6 with an exponent; JSON.stringify writes decimals down to 1e-6 (node:
    JSON.stringify([9.15e-6, 1e-6, 1.5e-7]) is '[0.00000915,0.000001,1.5e-7]')."""
    assert stringify([9.15e-6, 1e-6, 1.5e-7]) == "[0.00000915,0.000001,1.5e-7]"
