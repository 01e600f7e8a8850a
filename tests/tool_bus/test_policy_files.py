"""Policy files are JSON data written once where it applies: what ``load_policy``
refuses in a YAML or JSON file, and that every refusal names the file and the line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from assay.errors import InvalidPolicy
from assay.tool_bus import Condition, Policy, load_policy
from assay.tool_bus._policy import MAX_POLICY_BYTES, MAX_POLICY_DEPTH

RULE_YAML = """\
rules:
  - name: small
    tool: flag
    args:
      amount: {le: 10}
      currency: {in: [EUR, USD]}
"""
RULE: dict[str, Any] = {
    "rules": [
        {
            "name": "small",
            "tool": "flag",
            "args": {"amount": {"le": 10}, "currency": {"in": ["EUR", "USD"]}},
        }
    ]
}


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


def _refusal(tmp_path: Path, name: str, content: str | bytes) -> str:
    with pytest.raises(InvalidPolicy) as caught:
        load_policy(_write(tmp_path, name, content))
    return str(caught.value)


def test_a_plain_policy_loads_from_yaml_json_and_a_mapping(tmp_path: Path) -> None:
    from_yaml = load_policy(_write(tmp_path, "policy.yaml", RULE_YAML))
    from_json = load_policy(_write(tmp_path, "policy.json", json.dumps(RULE, indent=2)))
    assert from_yaml == from_json == load_policy(RULE)
    assert from_yaml.rules[0].matches("flag", "1.0.0", {"amount": 10, "currency": "EUR"})
    assert not from_yaml.rules[0].matches("flag", "1.0.0", {"amount": 11, "currency": "EUR"})
    bom = load_policy(_write(tmp_path, "bom.yaml", "\ufeff" + RULE_YAML))
    assert bom == from_yaml


def test_the_shipped_reference_policy_loads() -> None:
    path = Path(__file__).resolve().parents[2] / "assay" / "apps" / "reference" / "policy.yaml"
    rules = load_policy(path).rules
    bounds = {r.args["currency"].eq: r.args["amount_over_cap"].le for r in rules}
    assert bounds == {"EUR": 500, "USD": 550, "GBP": 450, "CHF": 500, "CAD": 750}
    assert rules[0].name == "small-overages"


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("policy.yaml", b"rules:\n  - name: r\xff\n", "line 2, column 12"),
        ("policy.json", b'{"rules":\n [\xc3\x28]}', "line 2, column 3"),
        ("policy.yaml", b"\xff\xfer\x00u\x00l\x00e\x00s\x00", "line 1, column 1"),
    ],
)
def test_bytes_that_are_not_utf8_are_refused(
    tmp_path: Path, name: str, content: bytes, where: str
) -> None:
    assert f"{name} {where}: not UTF-8" in _refusal(tmp_path, name, content)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("policy.yaml", "rules: " + "[" * 10_000 + "]" * 10_000 + "\n"),
        ("policy.yaml", "rules: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n"),
        ("policy.json", '{"rules": ' + "[" * 10_000 + "]" * 10_000 + "}"),
        ("policy.json", '{"rules": ' + '{"a": ' * 10_000 + "1" + "}" * 10_000 + "}"),
    ],
)
def test_nesting_ten_thousand_deep_is_refused(tmp_path: Path, name: str, content: str) -> None:
    message = _refusal(tmp_path, name, content)
    if name.endswith(".yaml"):  # JSON errors past the parser name no line
        assert f"{name} line 1, column " in message
    assert f"nested deeper than {MAX_POLICY_DEPTH}" in message


def test_nesting_within_the_limit_loads(tmp_path: Path) -> None:
    value: object = 1
    for _ in range(MAX_POLICY_DEPTH - 5):  # policy, rules, rule, args, condition
        value = [value]
    document = {"rules": [{"name": "r", "tool": "t", "args": {"x": {"eq": value}}}]}
    path = _write(tmp_path, "policy.json", json.dumps(document))
    assert load_policy(path).rules[0].args["x"].eq == value
    with pytest.raises(InvalidPolicy, match="nested deeper than"):
        load_policy(_write(tmp_path, "deeper.json", json.dumps({**document, "x": [document]})))


def test_duplicate_keys_are_refused_at_any_depth_in_yaml(tmp_path: Path) -> None:
    later_args = RULE_YAML + "    args: {}\n"
    assert "policy.yaml line 7, column 5: duplicate key 'args'" in _refusal(
        tmp_path, "policy.yaml", later_args
    )
    top = RULE_YAML + "rules: []\n"
    assert "line 7, column 1: duplicate key 'rules'" in _refusal(tmp_path, "policy.yaml", top)
    in_args = RULE_YAML.replace("{le: 10}", "{le: 10, le: 1000000}")
    assert "line 5, column 24: duplicate key 'le'" in _refusal(tmp_path, "policy.yaml", in_args)
    quoted = RULE_YAML + '      "amount": {}\n'
    assert "line 7, column 7: duplicate key 'amount'" in _refusal(tmp_path, "policy.yaml", quoted)


def test_duplicate_keys_are_refused_at_any_depth_in_json(tmp_path: Path) -> None:
    """``json.loads`` finds them; the message names the key (JSON has no node marks)."""
    later_args = (
        '{"rules": [\n'
        '  {"name": "small", "tool": "flag",\n'
        '   "args": {"amount": {"le": 10}},\n'
        '   "args": {}}\n'
        "]}"
    )
    assert "policy.json: duplicate key 'args'" in _refusal(tmp_path, "policy.json", later_args)
    text = json.dumps(RULE, indent=2)
    top = text[:-2] + ',\n  "rules": []\n}'
    assert "duplicate key 'rules'" in _refusal(tmp_path, "policy.json", top)
    in_args = text.replace('"le": 10', '"le": 10, "le": 1000000')
    assert "duplicate key 'le'" in _refusal(tmp_path, "policy.json", in_args)
    escaped = '{"rules": [],\n "\\u0072ules": []}'
    assert "duplicate key 'rules'" in _refusal(tmp_path, "policy.json", escaped)


BILLION_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_an_alias_bomb_is_refused_at_its_first_anchor(tmp_path: Path) -> None:
    """Refused while composing, before any node is expanded: nothing is built."""
    assert len(BILLION_LAUGHS) < 500
    bomb = RULE_YAML.replace("{le: 10}", "{le: 10}\n      lol: {eq: *i}")
    message = _refusal(tmp_path, "policy.yaml", BILLION_LAUGHS + bomb)
    assert message.endswith(
        "policy.yaml line 1, column 4: anchor &a: anchors and aliases are not allowed in a policy"
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (  # one anchor used once: still refused; a policy says each thing where it applies
            RULE_YAML.replace("[EUR, USD]}", "&money [EUR, USD]}")
            + "  - name: big\n    tool: flag\n    args:\n      currency: {in: *money}\n",
            "line 6, column 22: anchor &money:",
        ),
        (RULE_YAML.replace("{le: 10}", "&cap {le: 10}"), "line 5, column 15: anchor &cap:"),
        (RULE_YAML + "  - *r\n", "line 7, column 5: alias *r:"),
        ("rules:\n  - name: r\n    <<: {tool: t}\n", "line 3, column 5: merge keys (<<)"),
    ],
)
def test_anchors_aliases_and_merge_keys_are_refused(
    tmp_path: Path, content: str, problem: str
) -> None:
    assert f"policy.yaml {problem}" in _refusal(tmp_path, "policy.yaml", content)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("rules: !!python/object:os.system {}\n", "line 1, column 8: tag !!python/object:"),
        (
            "rules:\n  - !!python/object/apply:os.system ['echo owned']\n",
            "line 2, column 5: tag !!python/object/apply:os.system is not allowed",
        ),
        ("rules: !!python/name:os.system ''\n", "line 1, column 8: tag !!python/name:"),
        ("rules: !!binary aGVsbG8=\n", "line 1, column 8: tag !!binary is not allowed"),
        ("rules: !!set {a, b}\n", "line 1, column 8: tag !!set is not allowed"),
        ("rules: !local x\n", "line 1, column 8: tag !local is not allowed"),
        (
            RULE_YAML.replace("{le: 10}", "{eq: 2024-01-31}"),
            "line 5, column 20: tag !!timestamp is not allowed: a policy holds JSON data only "
            "(quote it if it is text)",
        ),
    ],
)
def test_tags_other_than_json_data_are_refused(tmp_path: Path, content: str, problem: str) -> None:
    assert f"policy.yaml {problem}" in _refusal(tmp_path, "policy.yaml", content)


@pytest.mark.parametrize("key", ["on", "yes", "1", "null", "[a, b]"])
def test_yaml_keys_that_are_not_strings_are_refused(tmp_path: Path, key: str) -> None:
    content = RULE_YAML.replace("amount:", f"? {key}\n      :")
    message = _refusal(tmp_path, "policy.yaml", content)
    assert "policy.yaml line 5, column 9: " in message and "must be a string" in message
    quoted = RULE_YAML.replace("amount:", f"'{key}':")
    assert key in load_policy(_write(tmp_path, "quoted.yaml", quoted)).rules[0].args


@pytest.mark.parametrize(
    ("name", "number", "problem"),
    [
        (
            "policy.yaml",
            ".inf",
            ".inf is not a finite number in float range (an infinite bound would approve",
        ),
        ("policy.yaml", "-.Inf", "-.Inf is not a finite number"),
        ("policy.yaml", ".nan", ".nan is not a finite number"),
        ("policy.yaml", "1.0e+400", "1.0e+400 is not a finite number"),
        (
            "policy.yaml",
            "1" + "0" * 400,
            "10000000000000000000... is not a finite number in float range",
        ),
        (
            "policy.yaml",
            "1" + "0" * 5000,
            "10000000000000000000... is not a finite number in float range",
        ),
        ("policy.json", "Infinity", "Infinity is not a finite number"),
        ("policy.json", "-Infinity", "-Infinity is not a finite number"),
        ("policy.json", "NaN", "NaN is not a finite number"),
        ("policy.json", "1e400", "1e400 is not a finite number"),
        (
            "policy.json",
            "1" + "0" * 5000,
            "10000000000000000000... is not a finite number in float range",
        ),
    ],
)
def test_numbers_that_are_not_finite_are_refused(
    tmp_path: Path, name: str, number: str, problem: str
) -> None:
    if name.endswith(".json"):
        content = json.dumps(RULE, indent=2).replace('"le": 10', f'"le": {number}')
        assert f"{name}: {problem}" in _refusal(tmp_path, name, content)
    else:
        content = RULE_YAML.replace("{le: 10}", f"{{le: {number}}}")
        assert f"{name} line 5, column 20: {problem}" in _refusal(tmp_path, name, content)


def test_a_mapping_or_model_with_non_finite_bounds_is_refused() -> None:
    for bad in (math.inf, -math.inf, math.nan, 10**400):
        rule = {"name": "r", "tool": "t", "args": {"amount": {"le": bad}}}
        with pytest.raises(InvalidPolicy, match=r"^invalid policy: rules/0/args/amount/le: "):
            load_policy({"rules": [rule]})
    with pytest.raises(InvalidPolicy, match="rules/0/args/x/eq/0: nan is not a finite number"):
        load_policy({"rules": [{"name": "r", "tool": "t", "args": {"x": {"eq": [math.nan]}}}]})
    with pytest.raises(ValidationError, match="finite number"):
        Condition(le=math.inf)
    with pytest.raises(ValidationError, match="finite number"):
        Policy.model_validate({"rules": [{"name": "r", "tool": "t", "ttl_s": math.nan}]})


def test_a_mapping_of_other_than_json_data_is_refused() -> None:
    def policy(args: object) -> dict[str, object]:
        return {"rules": [{"name": "r", "tool": "t", "args": args}]}

    with pytest.raises(InvalidPolicy, match=r"rules/0/args: key 1 is not a string"):
        load_policy(policy({1: {"eq": 1}}))
    with pytest.raises(InvalidPolicy, match=r"rules/0/args/x/eq: key True is not a string"):
        load_policy(policy({"x": {"eq": {True: 1}}}))
    for value in ({1, 2}, b"bytes", object()):
        with pytest.raises(InvalidPolicy, match=r"rules/0/args/x/eq: input was not a valid JSON"):
            load_policy(policy({"x": {"eq": value}}))
    deep: object = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(InvalidPolicy, match=r"nested deeper than 16$"):
        load_policy(policy({"x": {"eq": deep}}))
    cycle: list[object] = []
    cycle.extend([cycle, cycle, cycle])
    with pytest.raises(InvalidPolicy, match=r"rules/0/args/x/in(/2)+: nested deeper than 16$"):
        load_policy(policy({"x": {"in": cycle}}))


def test_a_mapping_that_shares_values_loads_unless_they_multiply() -> None:
    currencies = ["EUR", "USD"]
    rules = [{"name": f"r{i}", "tool": "t", "args": {"c": {"in": currencies}}} for i in range(2)]
    assert len(load_policy({"rules": rules}).rules) == 2
    fan: object = [1]
    for _ in range(10):  # 4**10 values, from a few dozen objects
        fan = [fan, fan, fan, fan]
    with pytest.raises(InvalidPolicy, match="more than 250000 values"):
        load_policy({"rules": [{"name": "r", "tool": "t", "args": {"c": {"eq": fan}}}]})


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    text = json.dumps(RULE)
    padded = text + " " * (MAX_POLICY_BYTES - len(text))
    assert load_policy(_write(tmp_path, "policy.json", padded)).rules[0].name == "small"
    message = _refusal(tmp_path, "policy.json", padded + " ")
    assert f"policy.json: larger than the {MAX_POLICY_BYTES} byte limit" in message
    huge = tmp_path / "huge.json"
    with huge.open("wb") as sparse:  # 1 GiB of nothing on disk; only 1 MiB is ever read
        sparse.truncate(1 << 30)
    with pytest.raises(InvalidPolicy, match=r"huge\.json: larger than"):
        load_policy(huge)
    with pytest.raises(InvalidPolicy, match="not a regular file"):
        load_policy(tmp_path)


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("policy.json", "{not json", "line 1, column 2: does not parse: Expecting property"),
        ("policy.yaml", "rules: [\n", "line 2, column 1: does not parse: while parsing"),
        ("policy.yaml", "rules: []\n---\nrules: []\n", "line 2, column 1: does not parse:"),
        ("policy.yaml", "rules: [\x07]\n", "line 1, column 9: does not parse: special characters"),
        ("policy.json", '{"rules": [\x07]}', "line 1, column 12: does not parse: Expecting value"),
    ],
)
def test_syntax_errors_name_the_line(tmp_path: Path, name: str, content: str, problem: str) -> None:
    assert f"{name} {problem}" in _refusal(tmp_path, name, content)


def test_schema_errors_in_a_file_name_the_line(tmp_path: Path) -> None:
    content = RULE_YAML.replace("{le: 10}", "{between: [1, 2]}") + "  - name: other\n"
    assert _refusal(tmp_path, "policy.yaml", content).endswith(
        "policy.yaml line 5, column 16: invalid policy: "
        "rules/0/args/amount/between: Extra inputs are not permitted; "
        "line 7, column 5: rules/1/tool: Field required"
    )
    content = json.dumps(RULE, indent=2).replace('"le": 10', '"le": "ten"')
    assert (
        "policy.json: invalid policy: rules/0/args/amount/le: Input should be a valid number"
    ) in _refusal(tmp_path, "policy.json", content)
