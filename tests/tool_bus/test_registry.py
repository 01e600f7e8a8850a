"""The registry's contract on SQLite and PostgreSQL: specs, versions, immutability."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from assay import ControlPlane, LedgerWriteRefused, UsageError
from assay.errors import InvalidToolSpec, RegistryConflict, ToolBusError, ToolNotFound
from assay.tool_bus import RegistryView, ToolSpec
from tests.tool_bus._tools import ADD, Counter


def _add_v(version: str, **changes: Any) -> ToolSpec:
    fields: dict[str, Any] = {**ADD.as_json(), "version": version, **changes}
    return ToolSpec(**fields)


def test_spec_checks_everything_at_construction() -> None:
    with pytest.raises(InvalidToolSpec) as caught:
        ToolSpec("bad name", "1.0", "", {"type": "string"}, {"type": 5}, "maybe")  # type: ignore[arg-type]
    problems = " | ".join(caught.value.problems)
    for fragment in (
        "name 'bad name'",
        "semantic version",
        "description",
        "side_effect 'maybe'",
        "input_schema must be",
        "output_schema is not valid",
    ):
        assert fragment in problems
    assert isinstance(caught.value, UsageError) and isinstance(caught.value, ToolBusError)


def test_spec_refuses_another_dialect_and_non_json() -> None:
    with pytest.raises(InvalidToolSpec, match=r"only https://json-schema\.org/draft/2020-12"):
        _add_v(
            "1.0.0",
            input_schema={"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        )
    with pytest.raises(InvalidToolSpec, match="canonical JSON"):
        _add_v("1.0.0", output_schema={"const": float("nan")})


def test_spec_is_immutable_and_detached_from_the_callers_dict() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    spec = _add_v("1.0.0", input_schema=schema)
    schema["properties"]["a"]["type"] = "string"
    assert spec.input_schema["properties"]["a"]["type"] == "integer"
    with pytest.raises(TypeError):
        spec.input_schema["type"] = "array"  # type: ignore[index]
    with pytest.raises(AttributeError):
        spec.version = "2.0.0"  # type: ignore[misc]
    assert ToolSpec.from_json(spec.canonical) == spec and hash(spec) == hash(
        ToolSpec.from_json(spec.canonical)
    )


def test_register_is_idempotent_and_conflicts_are_refused(plane: ControlPlane) -> None:
    counter = Counter()
    plane.registry.register(ADD, counter.add)
    plane.registry.register(ToolSpec.from_json(ADD.canonical), counter.add)  # same spec: no-op
    assert [s.ref for s in plane.registry.list()] == ["add@1.0.0"]
    with pytest.raises(RegistryConflict, match="differs in description"):
        plane.registry.register(_add_v("1.0.0", description="Add, differently."), counter.add)
    with pytest.raises(RegistryConflict, match="another handler"):
        plane.registry.register(ADD, lambda a: 0)
    with pytest.raises(InvalidToolSpec, match="not callable"):
        plane.registry.register(_add_v("1.0.1"), "add")  # type: ignore[arg-type]


def test_latest_version_is_resolved_by_semver(plane: ControlPlane) -> None:
    counter = Counter()
    for version in ("1.2.0", "1.10.0", "1.9.3", "2.0.0-rc.1"):
        plane.registry.register(_add_v(version), counter.add)
    assert plane.registry.versions("add") == ["1.2.0", "1.9.3", "1.10.0", "2.0.0-rc.1"]
    assert plane.registry.get("add").version == "2.0.0-rc.1"
    assert plane.registry.get("add", "1.9.3").version == "1.9.3"
    assert [s.version for s in plane.registry.list()] == plane.registry.versions("add")


def test_unknown_tool_and_version_name_close_matches(plane: ControlPlane) -> None:
    plane.registry.register(ADD, Counter().add)
    with pytest.raises(ToolNotFound) as tool:
        plane.registry.get("ad")
    assert tool.value.code == "unknown_tool" and tool.value.suggestions == ["add"]
    with pytest.raises(ToolNotFound) as version:
        plane.registry.get("add", "1.0.1")
    assert version.value.code == "unknown_version" and version.value.suggestions == ["1.0.0"]
    with pytest.raises(ToolNotFound):
        plane.registry.get(["add"])  # type: ignore[arg-type]


def test_specs_persist_across_control_planes(db_url: str) -> None:
    with ControlPlane.open(db_url) as first:
        first.registry.register(ADD, Counter().add)
    with ControlPlane.open(db_url) as second:
        assert second.registry.get("add") == ADD
        assert second.registry.binding("add", "1.0.0") is None  # handlers stay in-process
        with pytest.raises(RegistryConflict):
            second.registry.register(_add_v("1.0.0", side_effect="reversible"), Counter().add)


def test_view_is_read_only(plane: ControlPlane) -> None:
    plane.registry.register(ADD, Counter().add)
    view = plane.registry.view()
    assert isinstance(view, RegistryView)
    assert view.get("add") == ADD and view.list() == [ADD] and view.versions("add") == ["1.0.0"]
    assert not hasattr(view, "register") and not hasattr(view, "binding")
    with pytest.raises(AttributeError):
        view.extra = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tool_registry SET spec_json = '{}'",
        "DELETE FROM tool_registry",
    ],
)
def test_the_database_refuses_changes_to_registry_rows(plane: ControlPlane, statement: str) -> None:
    plane.registry.register(ADD, Counter().add)
    with pytest.raises(LedgerWriteRefused, match="append-only"), plane.engine.begin() as conn:
        conn.execute(sa.text(statement))
    assert plane.registry.get("add") == ADD
