"""The strict reader of JSON a person writes: each thing ``json.loads`` would accept
silently is refused, naming the rule, the token and (for syntax) the place."""

from __future__ import annotations

import pytest

from assay._strict_json import JsonProblem, read_strict_json


def _problem(text: str) -> JsonProblem:
    data, problem = read_strict_json(text)
    assert data is None and problem is not None
    return problem


def test_plain_json_reads_as_the_standard_parser_does() -> None:
    text = '{"rules": [{"tool": "pay", "le": 1.5e3, "n": -12, "ok": true, "x": null}]}'
    assert read_strict_json(text) == (
        {"rules": [{"tool": "pay", "le": 1500.0, "n": -12, "ok": True, "x": None}]},
        None,
    )


@pytest.mark.parametrize(
    ("text", "rule", "token"),
    [
        ('{"a": 1, "a": 2}', "duplicate_key", "a"),
        ('{"outer": {"b": 1, "b": 1}}', "duplicate_key", "b"),
        ('{"le": NaN}', "not_finite", "NaN"),
        ('{"le": -Infinity}', "not_finite", "-Infinity"),
        ('{"le": 1e999}', "not_finite", "1e999"),
        ('{"le": ' + "9" * 309 + "}", "not_finite", "9" * 309),
    ],
)
def test_what_the_standard_parser_would_accept_is_refused(text: str, rule: str, token: str) -> None:
    problem = _problem(text)
    assert (problem.rule, problem.token) == (rule, token)


def test_the_largest_integer_a_float_holds_still_reads() -> None:
    assert read_strict_json("9" * 308) == (int("9" * 308), None)


def test_a_syntax_error_says_where() -> None:
    problem = _problem('{\n  "a": 1,\n  "b" 2\n}')
    assert (problem.rule, problem.line, problem.column) == ("syntax", 3, 7)
    assert "Expecting ':'" in problem.message


def test_nesting_too_deep_to_parse_is_refused_not_a_recursion_error() -> None:
    assert _problem("[" * 100_000 + "]" * 100_000).rule == "too_deep"
