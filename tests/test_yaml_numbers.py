"""Numbers in DSH's YAML files are read as DSH's readers read them, not as PyYAML's YAML 1.1 does.

Patch layers and route files go through js-yaml 4.2.0's JSON schema, ``settings.yaml`` through the
``yaml`` package 2.9.0's core schema (``wire/_piai_yaml.py``). The expected values below were
recorded by running both JavaScript libraries on each scalar as ``k: <scalar>`` (Node 20; numbers
printed as JavaScript's ``String(number)``); ``-0`` (``yaml`` keeps a negative zero, which
``JSON.stringify`` writes ``0``) is the one difference left, by choice.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from dsh_audit.wire import load_routes
from dsh_audit.wire._piai_yaml import _yaml12_loader

#: (scalar, js-yaml 4.2.0 JSON_SCHEMA, yaml 2.9.0 core schema)
RECORDED = [
    ('1e3', 'num:1000', 'num:1000'),
    ('1E3', 'num:1000', 'num:1000'),
    ('1.5e3', 'num:1500', 'num:1500'),
    ('-1e3', 'num:-1000', 'num:-1000'),
    ('+1e3', 'num:1000', 'num:1000'),
    ('1e+3', 'num:1000', 'num:1000'),
    ('1e-3', 'num:0.001', 'num:0.001'),
    ('.5', 'num:0.5', 'num:0.5'),
    ('5.', 'num:5', 'num:5'),
    ('+.5', 'str:+.5', 'num:0.5'),
    ('-.5', 'str:-.5', 'num:-0.5'),
    ('0o17', 'num:15', 'num:15'),
    ('0O17', 'str:0O17', 'str:0O17'),
    ('017', 'num:17', 'num:17'),
    ('0x1F', 'num:31', 'num:31'),
    ('0X1F', 'str:0X1F', 'str:0X1F'),
    ('-0x1F', 'num:-31', 'str:-0x1F'),
    ('+0x1F', 'num:31', 'str:+0x1F'),
    ('0b101', 'num:5', 'str:0b101'),
    ('-0b101', 'num:-5', 'str:-0b101'),
    ('1_000', 'str:1_000', 'str:1_000'),
    ('1_000.5', 'str:1_000.5', 'str:1_000.5'),
    ('0', 'num:0', 'num:0'),
    ('-0', 'num:0', 'num:-0'),
    ('+0', 'num:0', 'num:0'),
    ('00', 'num:0', 'num:0'),
    ('+12', 'num:12', 'num:12'),
    ('-12', 'num:-12', 'num:-12'),
    ('12.0', 'num:12', 'num:12'),
    ('1.0e3', 'num:1000', 'num:1000'),
    ('.inf', 'num:Infinity', 'num:Infinity'),
    ('.Inf', 'num:Infinity', 'num:Infinity'),
    ('.INF', 'num:Infinity', 'num:Infinity'),
    ('-.inf', 'num:-Infinity', 'num:-Infinity'),
    ('+.inf', 'num:Infinity', 'num:Infinity'),
    ('.nan', 'num:NaN', 'num:NaN'),
    ('.NaN', 'num:NaN', 'num:NaN'),
    ('.NAN', 'num:NaN', 'num:NaN'),
    ('null', 'null', 'null'),
    ('Null', 'null', 'null'),
    ('NULL', 'null', 'null'),
    ('~', 'null', 'null'),
    ('true', 'true', 'true'),
    ('True', 'true', 'true'),
    ('TRUE', 'true', 'true'),
    ('yes', 'str:yes', 'str:yes'),
    ('on', 'str:on', 'str:on'),
    ('1:20', 'str:1:20', 'str:1:20'),
    ('190:20:30', 'str:190:20:30', 'str:190:20:30'),
    ('0x_1F', 'str:0x_1F', 'str:0x_1F'),
    ('0b_1', 'str:0b_1', 'str:0b_1'),
    ('0o', 'str:0o', 'str:0o'),
    ('0x', 'str:0x', 'str:0x'),
    ('1__0', 'str:1__0', 'str:1__0'),
    ('_1', 'str:_1', 'str:_1'),
    ('1_', 'str:1_', 'str:1_'),
    ('9007199254740993', 'num:9007199254740992', 'num:9007199254740992'),
    ('123456789012345678901234567890', 'num:1.2345678901234568e+29', 'num:1.2345678901234568e+29'),
    ('0.1e1', 'num:1', 'num:1'),
    ('1.', 'num:1', 'num:1'),
    ('-.inf', 'num:-Infinity', 'num:-Infinity'),
    ('.5e3', 'num:500', 'num:500'),
    ('1e', 'str:1e', 'str:1e'),
    ('e3', 'str:e3', 'str:e3'),
    ('0b2', 'str:0b2', 'str:0b2'),
    ('0o8', 'str:0o8', 'str:0o8'),
    ('+', 'str:+', 'str:+'),
    ('.', 'str:.', 'str:.'),
    ('=', 'str:=', 'str:='),
    ('9007199254740993', 'num:9007199254740992', 'num:9007199254740992'),
    ('4096.0', 'num:4096', 'num:4096'),
    ('1e400', 'str:1e400', 'num:Infinity'),
    ('-1e400', 'str:-1e400', 'num:-Infinity'),
    ('.5E-3', 'num:0.0005', 'num:0.0005'),
    ('0b', 'str:0b', 'str:0b'),
    ('+0o7', 'num:7', 'str:+0o7'),
    ('-0o7', 'num:-7', 'str:-0o7'),
    ('0o7', 'num:7', 'num:7'),
]


def _shown(value: Any) -> str:
    """A loaded value as the recording printed it (``String(number)`` for numbers)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return "num:NaN"
        if isinstance(value, float) and math.isinf(value):
            return "num:Infinity" if value > 0 else "num:-Infinity"
        if isinstance(value, float) and not value.is_integer():
            return "num:" + repr(value)
        number = float(value)
        return "num:" + (str(int(number)) if abs(number) < 1e21 else repr(number))
    assert isinstance(value, str), value
    return "str:" + value


@pytest.mark.parametrize(("scalar", "js_yaml", "yaml_package"), RECORDED, ids=[row[0] for row in RECORDED])
def test_a_scalar_is_what_each_dsh_reader_makes_of_it(scalar: str, js_yaml: str, yaml_package: str) -> None:
    assert _shown(yaml.load(f"k: {scalar}", Loader=_yaml12_loader("js-yaml"))["k"]) == js_yaml  # noqa: S506
    expected = "num:0" if scalar == "-0" else yaml_package
    assert _shown(yaml.load(f"k: {scalar}", Loader=_yaml12_loader("yaml"))["k"]) == expected  # noqa: S506


def test_whole_numbers_are_ints_and_past_two_to_the_53_the_double_javascript_holds() -> None:
    loaded = yaml.load("[4096.0, 1e3, 9007199254740993, 0x20000000000001, 400000000000000000000000]",  # noqa: S506
                       Loader=_yaml12_loader("js-yaml"))
    assert loaded == [4096, 1000, 2 ** 53, 2 ** 53, 4e23]
    assert [type(v) for v in loaded] == [int, int, int, int, float]  # 2**53 itself is exact


def test_a_number_past_a_double_is_a_string_to_js_yaml_and_infinity_to_yaml() -> None:
    huge = "9" * 400
    assert yaml.load(f"k: {huge}", Loader=_yaml12_loader("js-yaml")) == {"k": huge}  # noqa: S506
    assert yaml.load(f"k: {huge}", Loader=_yaml12_loader("yaml")) == {"k": math.inf}  # noqa: S506
    hexa = "0x" + "f" * 300
    assert yaml.load(f"k: {hexa}", Loader=_yaml12_loader("js-yaml")) == {"k": hexa}  # noqa: S506


def test_a_route_file_may_write_counts_as_javascript_reads_them(tmp_path: Path) -> None:
    """``1.6e4`` is 16000 to DSH (PyYAML alone read it as a string and refused the route), ``017``
    is seventeen (not octal 15), ``1_000`` is a string (DSH's schema refuses it, so does dsh-audit)."""
    path = tmp_path / "routes.yml"
    path.write_text("providers:\n  gw:\n    api: openai-completions\n    baseURL: http://h/v1\n"
                    "    models: [{id: m, contextWindow: 1.6e4, maxTokens: 017}]\n")
    model = load_routes(path).models["gw", "m"]
    assert (model.context_window, model.max_tokens) == (16000, 17)
    path.write_text("providers:\n  gw:\n    api: openai-completions\n    baseURL: http://h/v1\n"
                    "    models: [{id: m, contextWindow: 1_000}]\n")
    with pytest.raises(Exception) as refused:
        load_routes(path)
    assert "contextWindow" in str(refused.value) and "must be a positive integer" in str(refused.value)


def test_an_explicit_number_tag_on_no_number_is_refused_at_its_line() -> None:
    """js-yaml: "cannot resolve a node with !<tag:yaml.org,2002:int> explicit tag"; never a traceback."""
    loader = _yaml12_loader("js-yaml")
    assert yaml.load("k: !!int 12\nf: !!float .5", Loader=loader) == {"k": 12, "f": 0.5}  # noqa: S506
    for text, why in (("k: !!int abc", "'abc' is not a YAML int"), ("k: !!float 1_0", "'1_0' is not a YAML float")):
        with pytest.raises(yaml.constructor.ConstructorError) as refused:
            yaml.load(text, Loader=loader)  # noqa: S506
        assert (refused.value.problem, refused.value.problem_mark.line) == (why, 0)
