"""Suites: their id is the hash of their canonical content, their schema is published,
and a bad suite is refused with every problem naming the file, the case and the field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from assay.errors import UsageError
from assay.evals import load_suite, suite_json_schema, suite_problems
from assay.evals._suite import generated_schema
from tests.evals.conftest import SUITE, write_suite


def test_the_id_is_the_same_for_the_same_content_in_any_form(tmp_path: Path) -> None:
    first = load_suite(write_suite(tmp_path))
    reformatted = "# the same suite, commented and as JSON\n" + SUITE
    again = load_suite(write_suite(tmp_path, reformatted, "again.yaml"))
    as_json = json.dumps(yaml.safe_load(SUITE), indent=4)
    from_json = load_suite(write_suite(tmp_path, as_json, "suite.json"))
    assert first.id == again.id == from_json.id
    assert first.id.startswith("ste_") and len(first.id) == 28


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("text: W-12 holds 120 units,", "text: W-12 holds 120 units of BT-105,"),  # gold
        ("status: awaiting_grant", "status: abstained"),  # expected status
        ("review: approve", "review: deny"),  # how a grant request is answered
        ("How many units does W-12 hold? Order nothing.", "How many units?"),  # a task
    ],
)
def test_changing_the_suite_changes_its_id(tmp_path: Path, old: str, new: str) -> None:
    assert old in SUITE
    before = load_suite(write_suite(tmp_path)).id
    after = load_suite(write_suite(tmp_path, SUITE.replace(old, new, 1), "changed.yaml")).id
    assert before != after


def test_changing_a_document_the_suite_names_changes_its_id(tmp_path: Path) -> None:
    path = write_suite(tmp_path)
    before = load_suite(path)
    (tmp_path / "docs" / "request.md").write_text(
        "Purchase request PR-7 asks for 40 units of SKU BT-105, urgently.\n", encoding="utf-8"
    )
    after = load_suite(path)
    assert before.id != after.id
    assert after.case("order").documents["request.md"].endswith("urgently.\n")


def test_cases_carry_their_documents_into_the_run_input(suite_file: Path) -> None:
    suite = load_suite(suite_file)
    order = suite.case("order")
    assert suite.run_input(order) == {
        "task": "Order what purchase request PR-7 asks for.",
        "context": {
            "documents": dict(order.documents),
            "order": {"sku": "BT-105", "units": 40},
        },
    }
    flat = load_suite(write_suite(suite_file.parent, "input: flat\n" + SUITE, "flat.yaml"))
    assert flat.run_input(flat.case("quiet")) == {
        "task": "How many units does W-12 hold? Order nothing.",
        "documents": {"stock.md": flat.case("quiet").documents["stock.md"]},
    }


def test_the_shipped_schema_is_the_models_and_accepts_the_suite(suite_file: Path) -> None:
    schema = suite_json_schema()
    assert schema == generated_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(yaml.safe_load(SUITE))
    bad = yaml.safe_load(SUITE.replace("status: answered", "status: done", 1))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(bad))


def _problems(tmp_path: Path, text: str) -> list[tuple[str | None, str, str]]:
    path = write_suite(tmp_path, text, "bad.yaml")
    found = suite_problems(path)
    assert found, "the suite should have been refused"
    assert {p.file for p in found} == {str(path)}
    with pytest.raises(UsageError) as caught:
        load_suite(path)
    assert str(path) in str(caught.value)
    return [(p.case, p.field, p.message) for p in found]


def test_a_wrong_value_names_the_case_and_the_field(tmp_path: Path) -> None:
    text = SUITE.replace("status: awaiting_grant", "status: waiting")
    [(case, field, message)] = _problems(tmp_path, text)
    assert (case, field) == ("paused", "expect.status")
    assert "answered" in message


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    text = (
        SUITE.replace("review: approve", "review: yes")
        .replace("    task: How many units does W-12 hold? Order nothing.\n", "")
        .replace("must_not_claim:", "must_not_say:")
    )
    found = _problems(tmp_path, text)
    assert ("order", "review") in [(c, f) for c, f, _ in found]
    assert ("quiet", "task") in [(c, f) for c, f, _ in found]
    assert ("stock", "expect.must_not_say") in [(c, f) for c, f, _ in found]


@pytest.mark.parametrize(
    ("old", "new", "case", "field", "words"),
    [
        (
            "{file: docs/request.md}",
            "{file: docs/missing.md}",
            "order",
            "documents.request.md.file",
            "no such file",
        ),
        (
            "source: stock.md\n          quote:",
            "source: stock.md\n          quote: holds 12 units\n          x:",
            "stock",
            "expect.facts[0].x",
            "Extra inputs",
        ),
        (
            "quote: holds 120 units of SKU BT-105",
            "quote: holds 200 units",
            "stock",
            "expect.facts[0].quote",
            "verbatim",
        ),
        (
            "text: W-12 holds 120 units,",
            "text: W-12 holds 130 units,",
            "quiet",
            "expect.facts[0].text",
            "'130 units' is not stated in 'stock.md'",
        ),
        (
            "source: request.md}",
            "source: letter.md}",
            "order",
            "expect.facts[0].source",
            "not a document",
        ),
        (
            "extra: {order: {sku: BT-105, units: 40}}\n    review",
            "extra: {task: x}\n    review",
            "order",
            "extra.task",
            "set by the suite",
        ),
        ("  - id: quiet", "  - id: stock", None, "cases", "used twice"),
    ],
)
def test_mistakes_in_a_case(
    tmp_path: Path, old: str, new: str, case: str | None, field: str, words: str
) -> None:
    assert old in SUITE
    found = _problems(tmp_path, SUITE.replace(old, new, 1))
    assert any(c == case and f == field and words in m for c, f, m in found), found


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("suite: a\nsuite: b\ncases: []\n", "the key 'suite' is given twice"),
        ("suite: [unclosed\n", "not valid YAML: line 2"),
        ("- a list\n", "a mapping"),
    ],
)
def test_a_file_that_is_not_a_suite(tmp_path: Path, text: str, words: str) -> None:
    [(case, field, message)] = _problems(tmp_path, text)
    assert case is None and field == "" and words in message


def test_json_suites_refuse_duplicate_keys_and_nan(tmp_path: Path) -> None:
    path = write_suite(tmp_path, '{"suite": "a", "suite": "b"}', "dup.json")
    assert "given twice" in suite_problems(path)[0].message
    path = write_suite(tmp_path, '{"suite": NaN}', "nan.json")
    assert "NaN is not JSON" in suite_problems(path)[0].message


@pytest.mark.parametrize("name", ["deep.json", "deep.yaml"])
def test_a_suite_nested_too_deeply_is_a_problem_not_a_crash(tmp_path: Path, name: str) -> None:
    path = write_suite(tmp_path, "[" * 50_000 + "]" * 50_000, name)
    [problem] = suite_problems(path)
    assert "nested too deeply to read" in problem.message


def test_a_missing_file_or_another_format(tmp_path: Path) -> None:
    assert "no such file" in suite_problems(tmp_path / "none.yaml")[0].message
    assert ".yaml" in suite_problems(tmp_path / "suite.toml")[0].message


def test_yaml_values_are_not_coerced(tmp_path: Path) -> None:
    text = SUITE.replace("suite: stock-desk", "suite: 2025")
    [(case, field, _)] = _problems(tmp_path, text)
    assert (case, field) == (None, "suite")
