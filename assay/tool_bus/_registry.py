"""The versioned tool registry: specs in the database, handlers in the process.

A row per ``name@version`` holds the canonical spec JSON and its sha256; the
database refuses to update or delete it. Registering the same spec again is a
no-op, a different spec under the same ``name@version`` is a
:class:`RegistryConflict`. Specs are cached by ``name@version`` because they never
change; "latest" is looked up in the database each time, since another process may
have registered a newer version.
"""

from __future__ import annotations

import difflib
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import semver
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from assay._db import write_transaction
from assay.errors import AssayError, InvalidToolSpec, RegistryConflict, ToolNotFound
from assay.tool_bus import _tables as t
from assay.tool_bus._context import context_parameter
from assay.tool_bus._diff import PreCheck
from assay.tool_bus._records import Lookup
from assay.tool_bus._spec import SideEffect, ToolSpec

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["Handler", "RegistryView", "ToolRegistry"]

#: A tool's implementation: the validated arguments as one dict in, the output out
#: (a plain function or an ``async def``); it may also take a ``ToolContext``.
Handler = Callable[..., Any]


@dataclass(frozen=True, kw_only=True)
class Binding:
    """What this process runs for one ``name@version``."""

    handler: Handler
    timeout_s: float | None
    precheck: PreCheck | None
    #: Says whether an effect happened, by its key values (settles unknown outcomes).
    lookup: Lookup | None = None
    #: The handler's parameter annotated ``ToolContext``, which receives the call's.
    context_parameter: str | None = None


class ToolRegistry:
    """Registers specs (persisted) and binds handlers (in this process)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._specs: dict[tuple[str, str], ToolSpec] = {}
        self._bindings: dict[tuple[str, str], Binding] = {}
        self._lock = threading.Lock()

    def register(
        self,
        spec: ToolSpec,
        handler: Handler,
        *,
        timeout_s: float | None = None,
        precheck: PreCheck | None = None,
        lookup: Lookup | None = None,
    ) -> ToolSpec:
        """Store ``spec`` (once) and bind ``handler`` to it in this process.

        ``timeout_s`` overrides the bus's timeout for this tool; ``precheck`` runs on
        the validated arguments before any grant check or handler; ``lookup`` (a tool
        with an idempotency key only) tells, from an effect's key values, whether the
        effect happened, so that a call cut short by a crash can be settled without a
        person (:meth:`~assay.tool_bus.ToolBus.recover`). A handler with a parameter
        annotated :class:`~assay.tool_bus.ToolContext` receives the call's context there.
        """
        if not isinstance(spec, ToolSpec):
            raise InvalidToolSpec([f"expected a ToolSpec, got {type(spec).__name__}"])
        if not callable(handler):
            raise InvalidToolSpec([f"the handler for {spec.ref} is not callable"])
        if timeout_s is not None and not timeout_s > 0:
            raise InvalidToolSpec([f"timeout_s for {spec.ref} must be positive"])
        if lookup is not None and not (callable(lookup) and spec.idempotency_key):
            why = "must be callable, and the tool must name its effect by an idempotency_key"
            raise InvalidToolSpec([f"a lookup for {spec.ref} {why}"])
        self._store(spec)
        binding = Binding(
            handler=handler,
            timeout_s=timeout_s,
            precheck=precheck,
            lookup=lookup,
            context_parameter=context_parameter(handler),
        )
        with self._lock:
            bound = self._bindings.setdefault((spec.name, spec.version), binding)
        if bound is not binding and bound != binding:
            raise RegistryConflict(f"{spec.ref} already has another handler in this process")
        return spec

    def register_tool(
        self,
        tool: BaseTool,
        *,
        side_effect: SideEffect,
        version: str = "1.0.0",
        timeout_s: float | None = None,
        **spec: Any,
    ) -> ToolSpec:
        """Register a LangChain tool (a ``@tool`` function): its spec
        (:meth:`ToolSpec.from_tool`, which takes the keyword arguments in ``spec``)
        bound to the tool's own function, called with the validated arguments as
        keywords. A parameter of the function annotated
        ``Annotated[ToolContext, InjectedToolArg]`` receives the call's context."""
        from assay.tool_bus._from_tool import tool_handler

        built = ToolSpec.from_tool(tool, side_effect=side_effect, version=version, **spec)
        return self.register(built, tool_handler(tool), timeout_s=timeout_s)

    def _store(self, spec: ToolSpec) -> None:
        existing = self._row(spec.name, spec.version)
        if existing is None:
            try:
                with write_transaction(self._engine) as conn:
                    conn.execute(
                        t.registry.insert().values(
                            name=spec.name,
                            version=spec.version,
                            spec_json=spec.canonical,
                            spec_sha256=spec.sha256,
                            registered_at=datetime.now(UTC),
                        )
                    )
            except IntegrityError:
                existing = self._row(spec.name, spec.version)  # registered concurrently
        if existing is not None and existing.spec_sha256 != spec.sha256:
            stored = _stored_spec(existing)
            if stored is None:
                raise RegistryConflict(
                    f"{spec.ref}'s stored row fails its own sha256 (it was written outside "
                    "assay); publish a new version"
                )
            fields = [k for k, v in spec.as_json().items() if stored.as_json()[k] != v]
            raise RegistryConflict(
                f"{spec.ref} is already registered with a different spec "
                f"(differs in {', '.join(fields)}); publish a new version instead"
            )
        with self._lock:
            self._specs.setdefault((spec.name, spec.version), spec)

    def get(self, name: str, version: str | None = None) -> ToolSpec:
        """The spec of ``name@version``, or of the latest version of ``name``."""
        if not isinstance(name, str) or not (version is None or isinstance(version, str)):
            raise ToolNotFound(f"no tool named {name!r}", code="unknown_tool")
        if version is None:
            versions = self.versions(name)
            if not versions:
                raise self._not_found(name, None)
            version = versions[-1]
        cached = self._specs.get((name, version))
        if cached is not None:
            return cached
        row = self._row(name, version)
        if row is None:
            raise self._not_found(name, version)
        spec = _stored_spec(row)
        if spec is None:
            raise ToolNotFound(
                f"{name}@{version}'s stored spec does not match its recorded sha256 or is not "
                "a valid spec (the registry row was written outside assay); it is not used",
                code="unknown_version",
            )
        with self._lock:
            return self._specs.setdefault((name, version), spec)

    def versions(self, name: str) -> list[str]:
        """Every registered version of ``name``, oldest first (semver order)."""
        if not isinstance(name, str):
            return []
        with self._engine.connect() as conn:
            found = (
                conn.execute(sa.select(t.registry.c.version).where(t.registry.c.name == name))
                .scalars()
                .all()
            )
        return sorted((v for v in found if _is_semver(v)), key=semver.Version.parse)

    def list(self) -> list[ToolSpec]:
        """Every registered ``name@version``, by name, then semver."""
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(t.registry.c.name, t.registry.c.version)).all()
        valid = [r for r in rows if _is_semver(r.version)]
        ordered = sorted(valid, key=lambda r: (r.name, semver.Version.parse(r.version)))
        specs: list[ToolSpec] = []
        for r in ordered:
            try:
                specs.append(self.get(r.name, r.version))
            except ToolNotFound:
                continue  # a row that fails its hash check is not listed as a tool
        return specs

    def registered_at(self, name: str, version: str) -> datetime:
        """When ``name@version`` was first registered."""
        row = self._row(name, version)
        if row is None:
            raise self._not_found(name, version)
        stamp: datetime = row.registered_at
        return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)

    def binding(self, name: str, version: str) -> Binding | None:
        """The handler this process has for ``name@version``, if any."""
        return self._bindings.get((name, version))

    def is_async(self, name: str, version: str) -> bool:
        found = self._bindings.get((name, version))
        return found is not None and inspect.iscoroutinefunction(found.handler)

    def view(self) -> RegistryView:
        """A read-only view for agents: look up and list, never register."""
        return RegistryView(self)

    def _row(self, name: str, version: str) -> Any:
        with self._engine.connect() as conn:
            return conn.execute(
                sa.select(t.registry).where(
                    t.registry.c.name == name, t.registry.c.version == version
                )
            ).first()

    def _not_found(self, name: str, version: str | None) -> ToolNotFound:
        versions = self.versions(name)
        if versions:
            close = difflib.get_close_matches(str(version), versions, n=3, cutoff=0.0)
            return ToolNotFound(
                f"{name} has no version {version!r}; registered: {', '.join(versions)}",
                code="unknown_version",
                suggestions=close,
            )
        with self._engine.connect() as conn:
            names = conn.execute(sa.select(t.registry.c.name).distinct()).scalars().all()
        close = difflib.get_close_matches(str(name), list(names), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return ToolNotFound(f"no tool named {name!r}{hint}", code="unknown_tool", suggestions=close)


class RegistryView:
    """What an agent may see of the registry: specs, never handlers or registration."""

    __slots__ = ("_registry",)

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry

    def get(self, name: str, version: str | None = None) -> ToolSpec:
        return self._registry.get(name, version)

    def list(self) -> list[ToolSpec]:
        return self._registry.list()

    def versions(self, name: str) -> list[str]:
        return self._registry.versions(name)


def _is_semver(version: object) -> bool:
    """Rows written outside assay may hold any text; only semver versions count."""
    return isinstance(version, str) and semver.Version.is_valid(version)


def _stored_spec(row: Any) -> ToolSpec | None:
    """The spec in a registry row, or None when the row fails its own hash."""
    try:
        spec = ToolSpec.from_json(row.spec_json)
    except (AssayError, ValueError, TypeError, KeyError):
        return None
    if spec.sha256 != row.spec_sha256 or (spec.name, spec.version) != (row.name, row.version):
        return None
    return spec
