"""Loading a suite: parse, validate, read the files it names, check the gold against
its sources, and give it the id of its canonical content.

Every mistake is reported at once, each naming the file, the case and the field
(:class:`SuiteProblem`); :func:`load_suite` raises them as one
:class:`~assay.errors.UsageError` and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import ValidationError

from assay._strict_json import read_strict_json
from assay.errors import UsageError
from assay.evals._model import SUITE_SCHEMA_ID, CaseModel, Expectation, FileRef, SuiteModel
from assay.fence import RunStatus
from assay.grounding import check_values, view_of
from assay.ledger import canonical_json, sha256_hex

__all__ = [
    "EvalCase",
    "Suite",
    "SuiteProblem",
    "load_suite",
    "parse_suite",
    "source_text",
    "suite_json_schema",
    "suite_json_schema_text",
    "suite_problems",
]

_SCHEMA_FILE = "suite.schema.json"
_RESERVED = ("task", "documents", "fixtures", "context")
InputShape = Literal["context", "flat"]
Review = Literal["none", "approve", "deny"]


@dataclass(frozen=True, kw_only=True)
class SuiteProblem:
    """One mistake in a suite: the file, the case (when it is in one), the field."""

    file: str
    case: str | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"case {self.case!r}: " if self.case is not None else ""
        return f"{self.file}: {where}{self.field or '(top level)'}: {self.message}"


@dataclass(frozen=True, kw_only=True)
class EvalCase:
    """A case with its files read: documents as text, fixtures as their values."""

    id: str
    task: str
    documents: Mapping[str, str]
    fixtures: Mapping[str, Any]
    extra: Mapping[str, Any]
    review: Review
    expect: Expectation

    @property
    def expected_status(self) -> RunStatus:
        return self.expect.status

    def sources(self) -> dict[str, str]:
        """Every document and fixture as the text the gold is read from."""
        texts = dict(self.documents)
        texts.update({name: source_text(value) for name, value in self.fixtures.items()})
        return texts


@dataclass(frozen=True, kw_only=True)
class Suite:
    """A loaded suite. ``id`` is the hash of its canonical content and of every file it
    names, so any change to the suite (a case, the gold, a document) changes it."""

    id: str
    name: str
    file: str
    input_shape: InputShape
    irreversible_tools: frozenset[str]
    cases: tuple[EvalCase, ...]
    description: str = ""
    model: SuiteModel = field(repr=False, compare=False)

    def case(self, case_id: str) -> EvalCase:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise UsageError(f"suite {self.name!r} has no case {case_id!r}")

    def run_input(self, case: EvalCase) -> dict[str, Any]:
        """What the fenced graph is started on for ``case``."""
        sources: dict[str, Any] = {}
        if case.documents:
            sources["documents"] = dict(case.documents)
        if case.fixtures:
            sources["fixtures"] = dict(case.fixtures)
        if self.input_shape == "flat":
            return {"task": case.task, **sources, **case.extra}
        return {"task": case.task, "context": {**sources, **case.extra}}


def source_text(value: Any) -> str:
    """A document's or fixture's text as gold is checked against it: text as it is,
    JSON through its evidence view (one ``path: value`` line per leaf)."""
    if isinstance(value, str):
        return value
    return view_of(canonical_json(value).decode("utf-8")).text


# --- loading ------------------------------------------------------------------------


def load_suite(path: str | Path) -> Suite:
    """Load, validate and hash the suite at ``path`` (``.yaml``, ``.yml`` or ``.json``).

    Raises :class:`~assay.errors.UsageError` listing every problem, each naming the
    file, the case and the field."""
    suite, problems = _load(Path(path))
    if problems or suite is None:
        raise UsageError(_problems_message(problems))
    return suite


def suite_problems(path: str | Path) -> list[SuiteProblem]:
    """Every problem of the suite at ``path``; empty when it loads."""
    return _load(Path(path))[1]


def parse_suite(data: Mapping[str, Any], *, base_dir: str | Path, file: str = "<suite>") -> Suite:
    """A suite from already-parsed data (files are read relative to ``base_dir``)."""
    suite, problems = _build(data, Path(base_dir), file)
    if problems or suite is None:
        raise UsageError(_problems_message(problems))
    return suite


def _problems_message(problems: list[SuiteProblem]) -> str:
    head = f"invalid eval suite ({len(problems)} problem{'s' if len(problems) != 1 else ''})"
    return head + ":\n  " + "\n  ".join(str(p) for p in problems)


def _load(path: Path) -> tuple[Suite | None, list[SuiteProblem]]:
    file = str(path)
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        return None, [_top(file, "a suite is a .yaml, .yml or .json file")]
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [_top(file, "no such file")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [_top(file, f"cannot be read as UTF-8 text ({exc})")]
    try:
        data = _parse_json(text) if path.suffix.lower() == ".json" else _parse_yaml(text)
    except ValueError as exc:
        return None, [_top(file, str(exc))]
    if not isinstance(data, dict):
        return None, [_top(file, "a suite is a mapping with 'suite' and 'cases'")]
    return _build(cast(dict[str, Any], data), path.parent, file)


def _top(file: str, message: str) -> SuiteProblem:
    return SuiteProblem(file=file, case=None, field="", message=message)


def _build(
    data: Mapping[str, Any], base: Path, file: str
) -> tuple[Suite | None, list[SuiteProblem]]:
    try:
        model = SuiteModel.model_validate(dict(data))
    except ValidationError as exc:
        return None, [_problem(file, data, err["loc"], err["msg"]) for err in exc.errors()]
    problems: list[SuiteProblem] = []
    file_hashes: dict[str, str] = {}
    cases = tuple(
        _case(model, i, base, file, problems, file_hashes) for i in range(len(model.cases))
    )
    if problems:
        return None, problems
    # Fields left at their defaults stay out, so a version that adds an optional
    # field keeps every existing suite's id (and its baseline).
    content = model.model_dump(
        mode="json", by_alias=True, exclude={"schema_ref"}, exclude_defaults=True
    )
    digest = sha256_hex(canonical_json({"suite": content, "files": file_hashes}))
    return Suite(
        id="ste_" + digest[:24],
        name=model.suite,
        file=file,
        input_shape=model.input,
        irreversible_tools=frozenset(model.irreversible_tools),
        cases=cases,
        description=model.description,
        model=model,
    ), []


def _problem(
    file: str, data: Mapping[str, Any], loc: tuple[int | str, ...], message: str
) -> SuiteProblem:
    case: str | None = None
    rest = loc
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        case = _case_label(data, loc[1])
        rest = loc[2:]
    return SuiteProblem(file=file, case=case, field=_field(rest), message=message)


def _case_label(data: Mapping[str, Any], index: int) -> str:
    raw = data.get("cases")
    if isinstance(raw, list) and index < len(raw):
        item: Any = raw[index]
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
            return str(item["id"])
    return f"cases[{index}]"


def _field(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# --- parsing --------------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping."""


def _mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        if key in seen:
            mark = key_node.start_mark
            raise ValueError(f"line {mark.line + 1}: the key {key!r} is given twice")
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _parse_yaml(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ValueError(f"not valid YAML: {where}{exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML: {exc}") from None
    except RecursionError:  # the loader recurses once per level of nesting
        raise ValueError("not valid YAML: nested too deeply to read") from None


def _parse_json(text: str) -> Any:
    data, problem = read_strict_json(text)
    if problem is None:
        return data
    if problem.rule == "syntax":
        where = f"line {problem.line}, column {problem.column}"
        raise ValueError(f"not valid JSON: {where}: {problem.message}")
    if problem.rule == "too_deep":
        raise ValueError(f"not valid JSON: {problem.message}")
    raise ValueError(problem.message)


# --- cases: files and gold ------------------------------------------------------------


def _case(
    model: SuiteModel,
    index: int,
    base: Path,
    file: str,
    problems: list[SuiteProblem],
    hashes: dict[str, str],
) -> EvalCase:
    spec = model.cases[index]

    def report(where: str, message: str) -> None:
        problems.append(SuiteProblem(file=file, case=spec.id, field=where, message=message))

    documents: dict[str, str] = {}
    for name, value in spec.documents.items():
        text = value if isinstance(value, str) else _read(base, value, hashes, "text")
        if isinstance(text, _Unreadable):
            report(f"documents.{name}.file", text.why)
        else:
            documents[name] = cast(str, text)
    fixtures: dict[str, Any] = {}
    for name, value in spec.fixtures.items():
        found = value.output if not isinstance(value, FileRef) else _read(base, value, hashes)
        if isinstance(found, _Unreadable):
            report(f"fixtures.{name}.file", found.why)
        else:
            fixtures[name] = found
    for key in spec.extra:
        if key in _RESERVED:
            report(f"extra.{key}", f"{key!r} is set by the suite itself; choose another key")
    case = EvalCase(
        id=spec.id,
        task=spec.task,
        documents=documents,
        fixtures=fixtures,
        extra=dict(spec.extra),
        review=spec.review,
        expect=spec.expect,
    )
    _check_gold(spec, case, report)
    return case


@dataclass(frozen=True)
class _Unreadable:
    why: str


def _read(
    base: Path, ref: FileRef, hashes: dict[str, str], as_: str = "auto"
) -> str | Any | _Unreadable:
    relative = Path(ref.file)
    if relative.is_absolute():
        return _Unreadable("must be a path relative to the suite file")
    path = base / relative
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return _Unreadable(f"no such file: {path}")
    except (OSError, UnicodeDecodeError) as exc:
        return _Unreadable(f"cannot be read as UTF-8 text: {path} ({exc})")
    hashes[relative.as_posix()] = sha256_hex(raw)
    if as_ == "text":
        return text
    try:
        if relative.suffix.lower() == ".json":
            return _parse_json(text)
        if relative.suffix.lower() in (".yaml", ".yml"):
            return _parse_yaml(text)
    except ValueError as exc:
        return _Unreadable(f"{path}: {exc}")
    return text


def _check_gold(spec: CaseModel, case: EvalCase, report: Any) -> None:
    """Each fact that names its source must be stated there: its quote verbatim, its
    numbers, amounts and dates in any written form (gold comes from the sources)."""
    sources = case.sources()
    for i, fact in enumerate(spec.expect.facts):
        where = f"expect.facts[{i}]"
        if fact.source is None:
            continue
        if fact.source not in sources:
            known = ", ".join(sorted(sources)) or "none"
            report(f"{where}.source", f"{fact.source!r} is not a document or fixture ({known})")
            continue
        text = sources[fact.source]
        if fact.quote is not None and fact.quote not in text:
            report(f"{where}.quote", f"is not written verbatim in {fact.source!r}")
        missing = [c.value.text for c in check_values(fact.text, [text]) if not c.ok]
        if missing:
            values = ", ".join(repr(m) for m in missing)
            report(f"{where}.text", f"{values} is not stated in {fact.source!r}")


# --- the published schema ----------------------------------------------------------------


@cache
def suite_json_schema_text() -> str:
    """The suite file's JSON Schema as shipped (``assay/evals/suite.schema.json``)."""
    return (files("assay.evals") / _SCHEMA_FILE).read_text(encoding="utf-8")


def suite_json_schema() -> dict[str, Any]:
    """The suite file's JSON Schema (draft 2020-12), generated from the models."""
    return json.loads(suite_json_schema_text())


def generated_schema() -> dict[str, Any]:
    """The schema as the models generate it now (the shipped file must equal it)."""
    schema = SuiteModel.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SUITE_SCHEMA_ID} | (
        schema
    )
