"""The hand-over contract as models and as the shipped, versioned JSON Schema."""

from __future__ import annotations

import importlib.resources
import json

import jsonschema
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

import assay.gate
from assay import HANDOVER_SCHEMA_VERSION, Handover, Proposition, PropositionVerdict
from assay.cli import app
from assay.contract import HANDOVER_SCHEMA_ID, handover_json_schema


def test_shipped_schema_equals_the_generated_one() -> None:
    shipped = importlib.resources.files("assay.gate").joinpath("handover.schema.json")
    assert json.loads(shipped.read_text("utf-8")) == handover_json_schema()


def test_schema_is_versioned_and_closed() -> None:
    schema = handover_json_schema()
    assert HANDOVER_SCHEMA_VERSION == "1.0"
    assert schema["$id"] == HANDOVER_SCHEMA_ID and "/1.0/" in schema["$id"]
    assert schema["version"] == "1.0"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    assert all(
        d.get("additionalProperties") is False
        for name, d in schema["$defs"].items()
        if name != "JsonValue"
    )
    assert "summary" not in schema["properties"]


def test_cli_prints_the_schema() -> None:
    result = CliRunner().invoke(app, ["gate", "schema"])
    assert result.exit_code == 0
    assert json.loads(result.output) == handover_json_schema()


def test_schema_and_models_agree_on_a_valid_hand_over() -> None:
    document = {
        "run_id": "run_1",
        "from_agent": "a",
        "status": "ok",
        "claims": [
            {
                "id": "c",
                "type": "Quote",
                "text": "t",
                "confidence": 1,
                "propositions": [{"id": "p", "text": "t", "ledger_ids": ["led_1"]}],
            }
        ],
    }
    jsonschema.validate(document, handover_json_schema())
    assert Handover.model_validate(document).claims[0].propositions[0].entailment is None


@pytest.mark.parametrize(
    "change",
    [
        {"summary": "prose"},
        {"status": "done"},
        {"claims": [{"id": "c", "type": "Assertion", "text": "t", "confidence": "0.5"}]},
        {"action_intents": [{"id": "a", "tool": "t", "requires_grant": "true"}]},
        {"open_questions": [{"id": "q", "text": "t", "status": "forwarded"}]},
    ],
)
def test_models_refuse_coercion_and_extra_fields(change: dict[str, object]) -> None:
    document = {"run_id": "run_1", "from_agent": "a", "status": "ok", **change}
    with pytest.raises(ValidationError):
        Handover.model_validate(document)


def test_the_verifier_fills_entailment_with_model_copy() -> None:
    prop = Proposition(id="p", text="t", ledger_ids=["led_1"])
    verdict = PropositionVerdict(
        label="entailment", score=0.97, ledger_id="led_1", span=(3, 9), model="nli-small@1"
    )
    filled = prop.model_copy(update={"entailment": verdict})
    assert filled.entailment is not None and filled.entailment.span == (3, 9)
    assert PropositionVerdict.model_validate_json(verdict.model_dump_json()) == verdict
    with pytest.raises(ValidationError):
        PropositionVerdict(label="maybe", score=0.5, model="m")  # type: ignore[arg-type]


def test_gate_package_exports_match_all() -> None:
    # dir(): the names the package exports, loaded or not (they load on first use).
    public = {n for n in dir(assay.gate) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(assay.gate, n)).__name__ == "module"}
    assert set(assay.gate.__all__) == public - modules
    assert list(assay.gate.__all__) == sorted(assay.gate.__all__, key=lambda n: (n.upper() != n, n))
