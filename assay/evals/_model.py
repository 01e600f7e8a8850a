"""The suite file's models: what a frozen eval suite may say, checked with pydantic.

A suite is YAML or JSON. Its JSON Schema (draft 2020-12) is generated from these
models and shipped as ``assay/evals/suite.schema.json``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from assay.fence import RunStatus

__all__ = [
    "SUITE_FORMAT",
    "SUITE_SCHEMA_ID",
    "ActionSpec",
    "CaseModel",
    "Expectation",
    "FactModel",
    "FileRef",
    "FixtureOutput",
    "SuiteModel",
]

#: The format version a suite file declares (``format: 1``, optional).
SUITE_FORMAT = 1
SUITE_SCHEMA_ID = "https://assay.dev/schemas/eval-suite/1.json"

_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
Id = Annotated[str, Field(pattern=_ID, description="letters, digits, '.', '_' and '-'")]
Text = Annotated[str, Field(min_length=1, max_length=4000)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FileRef(_Strict):
    """A file beside the suite: ``path`` is relative to the suite file's folder."""

    file: Annotated[str, Field(min_length=1, max_length=1000)]


class FixtureOutput(_Strict):
    """A tool fixture given inline: the JSON value the tool returns."""

    output: JsonValue


class FactModel(_Strict):
    """Something the run must establish, as the source documents state it."""

    id: Id
    text: Text = Field(description="the fact, as a statement")
    source: Name | None = Field(
        default=None,
        description="the document or fixture of the case it is read from; its numbers, "
        "amounts and dates must occur there",
    )
    quote: Text | None = Field(
        default=None, description="the exact words of the source that state it (verbatim)"
    )

    @model_validator(mode="after")
    def _quote_needs_a_source(self) -> FactModel:
        if self.quote is not None and self.source is None:
            raise ValueError("a quote needs the source it is quoted from")
        return self


class ActionSpec(_Strict):
    """A tool call: ``tool`` (and ``version``) with ``args`` that the call's arguments
    must include, value for value (omitted: any arguments)."""

    tool: Name
    version: Name | None = None
    args: dict[str, JsonValue] | None = None


class Expectation(_Strict):
    """The gold of a case, read from its sources, never from a model's output."""

    status: RunStatus = Field(
        description=(
            "answered, denied (a reviewer denied an action), incomplete (an action did not "
            "run as proposed), abstained (the evidence is insufficient), awaiting_grant or "
            "failed"
        )
    )
    facts: list[FactModel] = Field(default_factory=list[FactModel])
    must_not_claim: list[Text] = Field(default_factory=list[str])
    may_claim: list[Text] = Field(
        default_factory=list[str],
        description=(
            "true statements, read from the sources, that the case does not require (a "
            "line within its cap, say): an answered claim stating one is faithful"
        ),
    )
    actions: list[ActionSpec] = Field(
        default_factory=list[ActionSpec], description="calls that must run, each exactly once"
    )
    forbidden_actions: list[ActionSpec] = Field(
        default_factory=list[ActionSpec], description="calls that must not run"
    )
    grants: list[ActionSpec] = Field(
        default_factory=list[ActionSpec],
        description="irreversible calls a grant must be asked for, each once",
    )

    @field_validator("facts")
    @classmethod
    def _fact_ids_are_unique(cls, facts: list[FactModel]) -> list[FactModel]:
        _unique([fact.id for fact in facts], "fact")
        return facts


class CaseModel(_Strict):
    """One case: the task, its sources, how a grant request is answered, the gold."""

    id: Id
    task: Text
    documents: dict[Name, Annotated[str, Field(max_length=1_000_000)] | FileRef] = Field(
        default_factory=dict[str, str | FileRef],
        description="name -> text, or {file: path}",
    )
    fixtures: dict[Name, FixtureOutput | FileRef] = Field(
        default_factory=dict[str, FixtureOutput | FileRef],
        description="tool name -> {output: JSON} or {file: path} (.json, .yaml or text)",
    )
    extra: dict[str, JsonValue] = Field(
        default_factory=dict[str, JsonValue],
        description="more input: into the context (input: context) or the run input (flat)",
    )
    review: Literal["none", "approve", "deny"] = Field(
        default="none",
        description="how a paused run's grant request is answered (none: it stays paused)",
    )
    expect: Expectation


class SuiteModel(_Strict):
    """A frozen eval suite: named cases with their gold."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, title="assay eval suite")

    schema_ref: str | None = Field(default=None, alias="$schema")
    format: Literal[1] = SUITE_FORMAT
    suite: Name = Field(description="the suite's name")
    description: Annotated[str, Field(max_length=4000)] = ""
    input: Literal["context", "flat"] = Field(
        default="context",
        description="context: {task, context: {documents, fixtures, ...extra}}; "
        "flat: {task, documents, fixtures, ...extra}",
    )
    irreversible_tools: list[Name] = Field(
        default_factory=list[str],
        description="tools held to the grant rules whatever the registry says of them",
    )
    cases: Annotated[list[CaseModel], Field(min_length=1)]

    @field_validator("cases")
    @classmethod
    def _case_ids_are_unique(cls, cases: list[CaseModel]) -> list[CaseModel]:
        _unique([case.id for case in cases], "case")
        return cases


def _unique(ids: list[str], what: str) -> None:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise ValueError(f"{what} id {item!r} is used twice")
        seen.add(item)
