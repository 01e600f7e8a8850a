"""The tool bus: the only way an agent's proposed call reaches a handler.

Order of a call, and where each refusal is decided::

    call id seen before?  ─► the first result (the handler never runs twice)
    tool@version known?   ─► unknown_tool / unknown_version
    ledger: tool_call     (canonical arguments, RFC 8785)
    arguments valid?      ─► invalid_arguments      (nothing has run)
    handler bound here?   ─► no_handler
    tool pre-check?       ─► its code (empty_diff, malformed_diff, forbidden_path)
    irreversible: grant?  ─► grant_required / grant_invalid (policy rules may grant)
    start: grant use + call row in one transaction (database keys: single use, once)
    handler               ─► tool_failed / tool_timeout
    output valid?         ─► invalid_output (the bad output kept in an error entry)
    ledger: tool_output   ─► ToolResult(ok=True, ledger_id=<the id to cite>)

Refusals before the start are not remembered under the call id, so the planner can
fix its proposal (or obtain a grant) and retry with the same id; once a handler
has started, that call id always returns what it came to.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from assay._db import write_transaction
from assay.errors import ContentTooLarge
from assay.ledger import Ledger, LedgerEntry, canonical_json
from assay.tool_bus import _tables as t
from assay.tool_bus._errors import InvalidCall, ToolNotFound
from assay.tool_bus._grants import Grants
from assay.tool_bus._records import ErrorDetail, GrantRequest, ToolError, ToolResult, args_sha256
from assay.tool_bus._registry import Binding, ToolRegistry
from assay.tool_bus._run import Outcome, run_async, run_sync
from assay.tool_bus._spec import ToolSpec, loads_canonical
from assay.tool_bus._validation import argument_errors, json_problems, output_errors

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["DEFAULT_TIMEOUT_S", "ToolBus"]

DEFAULT_TIMEOUT_S = 30.0
_MAX_CALL_ID = 200
_SOURCE = "tool_bus"


@dataclass(frozen=True, kw_only=True)
class _Call:
    """A proposed call, normalised."""

    run_id: str
    call_id: str
    fresh: bool
    tool: object
    version: object
    args: object
    args_json: Any  # the canonical arguments parsed back, or None when not JSON
    args_sha256: str | None
    depends_on: tuple[str, ...]
    grant_id: str | None


@dataclass(frozen=True, kw_only=True)
class _Step:
    """A call that passed every check and whose handler is about to run."""

    call: _Call
    spec: ToolSpec
    binding: Binding
    call_entry: LedgerEntry
    timeout_s: float | None
    args: dict[str, Any] = field(default_factory=dict[str, Any])


class ToolBus:
    """Validates, gates, runs and records proposed tool calls."""

    def __init__(
        self,
        engine: Engine,
        ledger: Ledger,
        registry: ToolRegistry,
        grants: Grants,
        *,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._engine = engine
        self._ledger = ledger
        self._registry = registry
        self._grants = grants
        #: Seconds a handler may run (``None``: no limit); a tool's own wins.
        self.timeout_s = timeout_s

    def call(
        self,
        run_id: str,
        tool: str,
        args: Mapping[str, Any],
        *,
        version: str | None = None,
        grant_id: str | None = None,
        call_id: str | None = None,
        depends_on: Sequence[str] = (),
    ) -> ToolResult:
        """Propose one call; every refusal or failure comes back as ``ToolResult.error``.

        Only wiring mistakes raise (an unknown run, a call id that is not a short
        string), and database failures.
        """
        step = self._prepare(_normalise(run_id, tool, args, version, grant_id, call_id, depends_on))
        if isinstance(step, ToolResult):
            return step
        return self._finish(step, run_sync(step.binding.handler, step.args, step.timeout_s))

    async def acall(
        self,
        run_id: str,
        tool: str,
        args: Mapping[str, Any],
        *,
        version: str | None = None,
        grant_id: str | None = None,
        call_id: str | None = None,
        depends_on: Sequence[str] = (),
    ) -> ToolResult:
        """:meth:`call` for coroutines: database work in a worker thread, async
        handlers awaited on the running loop."""
        call = _normalise(run_id, tool, args, version, grant_id, call_id, depends_on)
        step = await asyncio.to_thread(self._prepare, call)
        if isinstance(step, ToolResult):
            return step
        outcome = await run_async(step.binding.handler, step.args, step.timeout_s)
        return await asyncio.to_thread(self._finish, step, outcome)

    def as_langchain_tools(self, run_id: str) -> list[BaseTool]:
        """Every tool with a handler in this process (latest version) as a LangChain
        ``BaseTool`` whose argument schema is the registered JSON Schema."""
        from assay.tool_bus._langchain import langchain_tools

        return langchain_tools(self, self._registry, run_id)

    # --- before the handler -----------------------------------------------------------

    def _prepare(self, call: _Call) -> ToolResult | _Step:
        if not call.fresh:
            earlier = self._earlier(call)
            if earlier is not None:
                return earlier
        try:
            spec = self._registry.get(call.tool, call.version)  # type: ignore[arg-type]
        except ToolNotFound as exc:
            entry = self._record_call(call, None)
            details = [
                ErrorDetail(path="", message=f"did you mean {s!r}?") for s in exc.suggestions
            ]
            return self._refuse(
                call, entry, ToolError(code=exc.code, message=str(exc), details=details)
            )
        entry = self._record_call(call, spec)
        refusal, binding, grant_id = self._check(call, spec)
        if refusal is not None or binding is None:
            assert refusal is not None
            return self._refuse(call, entry, refusal)
        return self._start(call, spec, binding, entry, grant_id)

    def _check(
        self, call: _Call, spec: ToolSpec
    ) -> tuple[ToolError | None, Binding | None, str | None]:
        problems = argument_errors(spec, call.args)
        if problems:
            return (
                ToolError(
                    code="invalid_arguments",
                    message=(
                        f"{len(problems)} problem(s) with the arguments for {spec.ref}; nothing ran"
                    ),
                    details=problems,
                ),
                None,
                None,
            )
        binding = self._registry.binding(spec.name, spec.version)
        if binding is None:
            return (
                ToolError(
                    code="no_handler",
                    message=(f"{spec.ref} is registered but has no handler in this process"),
                ),
                None,
                None,
            )
        if binding.precheck is not None:
            refused = binding.precheck(dict(call.args_json))
            if refused is not None:
                return refused, None, None
        if spec.side_effect != "irreversible":
            return None, binding, None
        refusal, grant_id = self._grant_for(call, spec)
        return refusal, binding, grant_id

    def _grant_for(self, call: _Call, spec: ToolSpec) -> tuple[ToolError | None, str | None]:
        assert call.args_sha256 is not None
        request = GrantRequest(
            run_id=call.run_id,
            tool=spec.name,
            version=spec.version,
            args=call.args_json,
            args_sha256=call.args_sha256,
            depends_on=call.depends_on,
        )
        if call.grant_id is None:
            granted = self._grants.evaluate_policy(call.run_id, request)
            if granted is not None:
                return None, granted.id
            return ToolError(
                code="grant_required",
                message=(
                    f"{spec.ref} is irreversible: it needs a grant for exactly this call "
                    f"(arguments sha256 {call.args_sha256[:12]}…)"
                ),
                request=request,
            ), None
        reason = self._grants.invalid_reason(
            call.grant_id, request, claims_given=bool(call.depends_on)
        )
        if reason is not None:
            return ToolError(
                code="grant_invalid", message=reason, details=[ErrorDetail(path="", message=reason)]
            ), None
        return None, call.grant_id

    def _start(
        self,
        call: _Call,
        spec: ToolSpec,
        binding: Binding,
        entry: LedgerEntry,
        grant_id: str | None,
    ) -> ToolResult | _Step:
        now = datetime.now(UTC)
        assert call.args_sha256 is not None
        try:
            with write_transaction(self._engine) as conn:
                if grant_id is not None:
                    conn.execute(
                        t.grant_uses.insert(),
                        {
                            "grant_id": grant_id,
                            "run_id": call.run_id,
                            "call_id": call.call_id,
                            "used_at": now,
                        },
                    )
                conn.execute(
                    t.calls.insert(),
                    {
                        "run_id": call.run_id,
                        "call_id": call.call_id,
                        "tool": spec.name,
                        "version": spec.version,
                        "args_sha256": call.args_sha256,
                        "call_ledger_id": entry.id,
                        "grant_id": grant_id,
                        "started_at": now,
                    },
                )
        except IntegrityError:
            return self._lost_race(call, entry, grant_id)
        timeout = binding.timeout_s if binding.timeout_s is not None else self.timeout_s
        return _Step(
            call=call,
            spec=spec,
            binding=binding,
            call_entry=entry,
            timeout_s=timeout,
            args=loads_canonical(canonical_json(call.args_json)),
        )

    def _lost_race(self, call: _Call, entry: LedgerEntry, grant_id: str | None) -> ToolResult:
        earlier = self._earlier(call)
        if earlier is not None:
            return earlier
        used = self._grants.used_by(grant_id) if grant_id is not None else None
        reason = f"the grant was already used by call {used!r}"
        return self._refuse(
            call,
            entry,
            ToolError(
                code="grant_invalid", message=reason, details=[ErrorDetail(path="", message=reason)]
            ),
        )

    def _earlier(self, call: _Call) -> ToolResult | None:
        with self._engine.connect() as conn:
            row = conn.execute(
                sa.select(t.calls).where(
                    t.calls.c.run_id == call.run_id, t.calls.c.call_id == call.call_id
                )
            ).first()
            if row is None:
                return None
            done = conn.execute(
                sa.select(t.results.c.result_json).where(
                    t.results.c.run_id == call.run_id, t.results.c.call_id == call.call_id
                )
            ).scalar()
        same_version = call.version is None or call.version == row.version
        if row.tool != call.tool or not same_version or row.args_sha256 != call.args_sha256:
            return ToolResult(
                ok=False,
                error=ToolError(
                    code="call_id_conflict",
                    message=(
                        f"call id {call.call_id!r} was used for another call "
                        f"({row.tool}@{row.version}, arguments sha256 {row.args_sha256[:12]}…)"
                    ),
                ),
            )
        if done is None:
            return ToolResult(
                ok=False,
                ledger_id=row.call_ledger_id,
                error=ToolError(
                    code="call_in_progress",
                    message=(
                        f"call {call.call_id!r} started at {row.started_at} and has no result yet; "
                        "it will not be run again under this call id"
                    ),
                ),
            )
        return ToolResult.from_json(done)

    # --- after the handler ------------------------------------------------------------

    def _finish(self, step: _Step, outcome: Outcome) -> ToolResult:
        result = self._settle(step, outcome)
        with write_transaction(self._engine) as conn:
            conn.execute(
                t.results.insert(),
                {
                    "run_id": step.call.run_id,
                    "call_id": step.call.call_id,
                    "result_json": result.to_json(),
                    "finished_at": datetime.now(UTC),
                },
            )
        return result

    def _settle(self, step: _Step, outcome: Outcome) -> ToolResult:
        ref = step.spec.ref
        if outcome.kind == "timeout":
            return self._refuse(
                step.call,
                step.call_entry,
                ToolError(
                    code="tool_timeout", message=f"{ref} did not finish within {step.timeout_s} s"
                ),
            )
        if outcome.kind == "raised":
            error = outcome.error
            text = f"{type(error).__name__}: {error}"
            return self._refuse(
                step.call,
                step.call_entry,
                ToolError(
                    code="tool_failed",
                    message=f"{ref} raised {text}",
                    details=[ErrorDetail(path="", message=text)],
                ),
            )
        problems = output_errors(step.spec, outcome.value)
        if not problems:
            try:
                return self._record_output(step, outcome.value)
            except ContentTooLarge as exc:
                problems = [ErrorDetail(path="", message=str(exc))]
        return self._refuse(
            step.call,
            step.call_entry,
            ToolError(
                code="invalid_output",
                message=f"{ref} returned output that breaks its schema",
                details=problems,
            ),
            output=outcome.value,
        )

    def _record_output(self, step: _Step, value: Any) -> ToolResult:
        """Append a valid output as ``tool_output``. A text output is stored as the
        text itself, so that quotes, identifiers and spans cited from it match the
        exact characters the tool returned; anything else as canonical JSON. The
        entry's ``encoding`` metadata says which."""
        is_text = isinstance(value, str)
        text = value if is_text else canonical_json(value).decode("utf-8")
        entry = self._ledger.append(
            step.call.run_id,
            kind="tool_output",
            source=f"tool:{step.spec.ref}",
            content=text,
            metadata={
                "call_id": step.call.call_id,
                "call_ledger_id": step.call_entry.id,
                "encoding": "text" if is_text else "json",
            },
        )
        return ToolResult(
            ok=True, output=value if is_text else loads_canonical(text), ledger_id=entry.id
        )

    # --- ledger -----------------------------------------------------------------------

    def _record_call(self, call: _Call, spec: ToolSpec | None) -> LedgerEntry:
        name = call.tool if isinstance(call.tool, str) else repr(call.tool)[:64]
        version = spec.version if spec is not None else call.version
        args = (
            call.args_json
            if call.args_sha256 is not None
            else {"$not_json": repr(call.args)[:2000]}
        )
        content = {
            "tool": name,
            "version": version if isinstance(version, str) else None,
            "args": args,
        }
        metadata: dict[str, Any] = {"call_id": call.call_id, "args_sha256": call.args_sha256}
        if call.grant_id is not None:
            metadata["grant_id"] = call.grant_id
        if call.depends_on:
            metadata["depends_on"] = list(call.depends_on)
        source = f"tool:{spec.ref}" if spec is not None else f"tool:{name}"
        return self._ledger.append(
            call.run_id,
            kind="tool_call",
            source=source,
            content=canonical_json(content).decode("utf-8"),
            metadata=metadata,
        )

    def _refuse(
        self, call: _Call, call_entry: LedgerEntry, error: ToolError, output: Any = None
    ) -> ToolResult:
        body: dict[str, Any] = {**error.as_json(), "call_id": call.call_id}
        if output is not None:
            body["output"] = (
                output if not json_problems(output) else {"$not_json": repr(output)[:10_000]}
            )
        entry = self._ledger.append(
            call.run_id,
            kind="error",
            source=_SOURCE,
            content=canonical_json(body).decode("utf-8"),
            metadata={"call_id": call.call_id, "call_ledger_id": call_entry.id, "code": error.code},
        )
        return ToolResult(ok=False, ledger_id=entry.id, error=error)


def _normalise(
    run_id: str,
    tool: object,
    args: object,
    version: object,
    grant_id: str | None,
    call_id: str | None,
    depends_on: Sequence[str],
) -> _Call:
    if call_id is not None and (
        not isinstance(call_id, str) or not 0 < len(call_id) <= _MAX_CALL_ID
    ):
        raise InvalidCall(f"call_id must be a string of 1 to {_MAX_CALL_ID} characters")
    if isinstance(depends_on, str) or not all(isinstance(c, str) for c in depends_on):
        raise InvalidCall("depends_on must be a sequence of claim id strings")
    if grant_id is not None and not isinstance(grant_id, str):
        raise InvalidCall("grant_id must be a string")
    is_json = not json_problems(args)
    return _Call(
        run_id=run_id,
        call_id=call_id or "call_" + secrets.token_hex(12),
        fresh=call_id is None,
        tool=tool,
        version=version,
        args=args,
        args_json=loads_canonical(canonical_json(args)) if is_json else None,
        args_sha256=args_sha256(args) if is_json else None,
        depends_on=tuple(depends_on),
        grant_id=grant_id,
    )
