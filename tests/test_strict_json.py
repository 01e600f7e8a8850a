"""The strict reader of JSON a person writes: each thing ``json.loads`` would accept
silently is refused, naming the rule, the token and (for syntax) the place."""

from __future__ import annotations

import pytest

from assay._strict_json import JsonTextError, loads_strict


def test_plain_json_reads_as_the_standard_parser_does() -> None:
    text = '{"rules": [{"tool": "pay", "le": 1.5e3, "n": -12, "ok": true, "x": null}]}'
    assert loads_strict(text) == {
        "rules": [{"tool": "pay", "le": 1500.0, "n": -12, "ok": True, "x": None}]
    }


@pytest.mark.parametrize(
    ("text", "problem", "token"),
    [
        ('{"a": 1, "a": 2}', "duplicate_key", "a"),
        ('{"outer": {"b": 1, "b": 1}}', "duplicate_key", "b"),
        ('{"le": NaN}', "not_finite", "NaN"),
        ('{"le": -Infinity}', "not_finite", "-Infinity"),
        ('{"le": 1e999}', "not_finite", "1e999"),
        ('{"le": ' + "9" * 309 + "}", "not_finite", "9" * 309),
    ],
)
def test_what_the_standard_parser_would_accept_is_refused(
    text: str, problem: str, token: str
) -> None:
    with pytest.raises(JsonTextError) as caught:
        loads_strict(text)
    assert caught.value.problem == problem
    assert caught.value.token == token


def test_the_largest_integer_a_float_holds_still_reads() -> None:
    assert loads_strict("9" * 308) == int("9" * 308)


def test_a_syntax_error_says_where() -> None:
    with pytest.raises(JsonTextError) as caught:
        loads_strict('{\n  "a": 1,\n  "b" 2\n}')
    assert (caught.value.problem, caught.value.line, caught.value.column) == ("syntax", 3, 7)
    assert "Expecting ':'" in caught.value.message


def test_nesting_too_deep_to_parse_is_refused_not_a_recursion_error() -> None:
    with pytest.raises(JsonTextError) as caught:
        loads_strict("[" * 100_000 + "]" * 100_000)
    assert caught.value.problem == "too_deep"
