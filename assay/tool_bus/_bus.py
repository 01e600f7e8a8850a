"""The tool bus: the only way an agent's proposed call reaches a handler.

Order of a call, and where each refusal is decided::

    call id seen before?  ─► the first result (the handler never runs twice)
    tool@version known?   ─► unknown_tool / unknown_version
    arguments valid?      ─► invalid_arguments      (nothing has run)
    handler bound here?   ─► no_handler
    tool pre-check?       ─► its code (empty_diff, malformed_diff, forbidden_path)
    effect done before?   ─► duplicate_effect (a tool with an idempotency key whose
                             effect another call performed, in any run, unless the
                             grant supersedes that call)
    irreversible: grant?  ─► grant_required / grant_invalid (policy rules may grant)
    start: ledger tool_call (canonical arguments, RFC 8785), grant use, effect claim
           and call row, in one transaction (database keys: single use, once, one
           holder per effect)
    handler               ─► tool_failed / tool_timeout
    output valid?         ─► invalid_output (the bad output kept in an error entry)
    settle: ledger tool_output (or error) and the result row, in one transaction
                          ─► ToolResult(ok=True, ledger_id=<the id to cite>)

A call that runs is two write transactions: its start, committed before the handler
runs (so a replay after a crash finds it and never runs the handler again), and its
result. A refusal writes the ``tool_call`` record and the ``error`` together. An
irreversible call is the exception: its ``tool_call`` record is written on its own
before its grant is looked for, since a policy rule may issue one (a ledger record
of its own) while the call is checked, and the call's record comes first in the
run's chain.

Refusals before the start are not remembered under the call id, so the planner can
fix its proposal (or obtain a grant) and retry with the same id; once a handler
has started, that call id always returns what it came to.

Once a handler has started, whatever it does is settled into a stored result:
a return value (``tool_output``, or ``invalid_output`` when it breaks the schema, is
not JSON, is nested too deep or is over the ledger's content limit), an exception of
any kind, ``BaseException`` included (``tool_failed``, with its type, bounded message
and bounded traceback in the error entry), or a timeout (``tool_timeout``). Only a
database failure while recording, or the process dying while the handler runs, can
leave a started call without a result: its outcome is then unknown, and
:class:`~assay.tool_bus._outcomes.CallSettling` recovers and settles it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from assay._db import InsertIfAbsent
from assay.errors import ContentTooLarge, RunError, ToolNotFound
from assay.ledger import Ledger, LedgerBatch, LedgerEntry, canonical_json
from assay.tool_bus import _tables as t
from assay.tool_bus._context import call_context, with_context
from assay.tool_bus._effects import (
    EffectHolder,
    EffectKey,
    claim_effect,
    duplicate_failure,
    effect_key,
    holder,
)
from assay.tool_bus._grants import Grants
from assay.tool_bus._outcomes import CallSettling
from assay.tool_bus._records import ErrorDetail, GrantRequest, ToolFailure, ToolResult
from assay.tool_bus._registry import Binding, ToolRegistry
from assay.tool_bus._results import conflict_body, earlier_result, started
from assay.tool_bus._run import Outcome, describe, run_async, run_sync
from assay.tool_bus._spec import ToolSpec, loads_canonical
from assay.tool_bus._validation import Call as _Call
from assay.tool_bus._validation import (
    argument_errors,
    bounded_error,
    call_record,
    kept_output,
    name_refusal,
    normalise_call,
    output_errors,
)

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["DEFAULT_TIMEOUT_S", "ToolBus"]

DEFAULT_TIMEOUT_S = 30.0
_SOURCE = "tool_bus"
_NO_OUTPUT: Any = object()
# Built once: a call's start and its result, each a row that exists at most once.
_INSERT_CALL_IF_ABSENT = InsertIfAbsent(t.calls)
_INSERT_RESULT_IF_ABSENT = InsertIfAbsent(t.results)
_INSERT_CALL = t.calls.insert()
_INSERT_GRANT_USE = t.grant_uses.insert()


class _Append(Protocol):
    """Appends one entry to the run being recorded (:meth:`LedgerBatch.append`)."""

    def __call__(
        self,
        *,
        kind: str,
        source: str,
        content: str | bytes,
        metadata: dict[str, Any] | None = None,
    ) -> LedgerEntry: ...


@dataclass(frozen=True, kw_only=True)
class _Checked:
    """What the checks before the start came to: a refusal, or what the start needs."""

    refusal: ToolFailure | None = None
    binding: Binding | None = None
    grant_id: str | None = None
    #: The effect the call performs (a tool with an idempotency key), and the call
    #: that held it when checked (superseded by this call's grant).
    effect: EffectKey | None = None
    after: EffectHolder | None = None


class _EffectTaken(Exception):
    """Another call claimed the effect between the check and the start."""


@dataclass(frozen=True, kw_only=True)
class _Step:
    """A call that passed every check and whose handler is about to run."""

    call: _Call
    spec: ToolSpec
    binding: Binding
    #: The binding's handler, given the call's ``ToolContext`` if it asks for one.
    handler: Callable[..., Any]
    call_entry: LedgerEntry
    timeout_s: float | None
    args: dict[str, Any] = field(default_factory=dict[str, Any])


class ToolBus(CallSettling):
    """Validates, gates, runs and records proposed tool calls; ``effect_scope`` names
    its effects apart from other scopes' (an evaluation's are its own). A call cut short
    by a crash is reported, recovered and settled by :class:`CallSettling`."""

    def __init__(
        self,
        engine: Engine,
        ledger: Ledger,
        registry: ToolRegistry,
        grants: Grants,
        *,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        effect_scope: str | None = None,
    ) -> None:
        self._engine = engine
        self._ledger = ledger
        self._registry = registry
        self._grants = grants
        #: Seconds a handler may run (``None``: no limit); a tool's own wins.
        self.timeout_s = timeout_s
        self.effect_scope = effect_scope

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

        The planner's fields never raise: a tool name or version that cannot exist is
        ``unknown_tool`` / ``unknown_version``, arguments that are not JSON, nested
        too deep or too large are ``invalid_arguments``, and whatever the handler
        does (returns, raises, hangs) is settled as a stored result. Raises, before
        anything is written:

        - :class:`~assay.errors.UnknownRun` for a run the ledger does not hold;
        - :class:`~assay.errors.InvalidCall` for a run id, call id, grant id or
          claim id the bus cannot store (not a string, blank, too long, control
          characters or a lone surrogate), or too many claims in ``depends_on``.

        Raises :class:`~assay.errors.DatabaseError` when the database fails (a started
        call may then stay ``call_in_progress``). A ``KeyboardInterrupt`` that arrives
        in the caller's thread while the handler runs (Ctrl-C) is settled first, as
        ``tool_failed`` naming ``KeyboardInterrupt``, and then re-raised; any other
        ``BaseException`` from the handler (``SystemExit`` too) is only settled.
        """
        step = self._prepare(
            normalise_call(run_id, tool, args, version, grant_id, call_id, depends_on)
        )
        if isinstance(step, ToolResult):
            return step
        outcome = run_sync(step.handler, step.args, step.timeout_s)
        result = self._finish(step, outcome)
        if outcome.reraise and outcome.error is not None:
            raise outcome.error
        return result

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
        handlers awaited on the running loop; raises what :meth:`call` raises.

        When the calling task is cancelled after the call has started (while the
        handler runs, or just before it would), the call is settled as
        ``tool_failed`` naming ``CancelledError`` and the cancellation goes on.
        """
        call = normalise_call(run_id, tool, args, version, grant_id, call_id, depends_on)
        preparing = asyncio.ensure_future(asyncio.to_thread(self._prepare, call))
        try:
            step = await asyncio.shield(preparing)
        except asyncio.CancelledError as exc:
            with contextlib.suppress(Exception):  # a refusal needs no settling
                step = await preparing  # the worker thread finishes regardless
                if isinstance(step, _Step):
                    await asyncio.to_thread(self._finish, step, Outcome(kind="raised", error=exc))
            raise
        if isinstance(step, ToolResult):
            return step
        outcome = await run_async(step.handler, step.args, step.timeout_s)
        result = await asyncio.to_thread(self._finish, step, outcome)
        if outcome.reraise and outcome.error is not None:
            raise outcome.error
        return result

    def as_langchain_tools(self, run_id: str) -> list[BaseTool]:
        """Every tool with a handler in this process (latest version) as a LangChain
        ``BaseTool`` whose argument schema is the registered JSON Schema.

        Raises :class:`~assay.errors.InvalidCall` for a run id the bus cannot store.
        """
        from assay.tool_bus._langchain import langchain_tools

        return langchain_tools(self, self._registry, run_id)

    # --- before the handler -----------------------------------------------------------

    def _prepare(self, call: _Call) -> ToolResult | _Step:
        if not call.fresh:
            earlier = self._earlier(call)
            if earlier is not None:
                return earlier
        refused = name_refusal(call)
        if refused is not None:
            return self._refused(call, None, refused)
        try:
            spec = self._registry.get(call.tool, call.version)  # type: ignore[arg-type]
        except ToolNotFound as exc:
            details = [
                ErrorDetail(path="", message=f"did you mean {s!r}?") for s in exc.suggestions
            ]
            failure = ToolFailure(code=exc.code, message=str(exc), details=details)
            return self._refused(call, None, failure)
        entry = self._record_call(call, spec) if spec.side_effect == "irreversible" else None
        checked = self._check(call, spec)
        if checked.refusal is not None or checked.binding is None:
            assert checked.refusal is not None
            if entry is None:
                return self._refused(call, spec, checked.refusal)
            with self._ledger.batch(call.run_id) as batch:
                return self._refuse(batch.append, call, entry, checked.refusal)
        return self._start(call, spec, entry, checked)

    def _check(self, call: _Call, spec: ToolSpec) -> _Checked:
        problems = list(call.args_problems) or argument_errors(spec, call.args)
        if problems:
            return _Checked(
                refusal=ToolFailure(
                    code="invalid_arguments",
                    message=(
                        f"{len(problems)} problem(s) with the arguments for {spec.ref}; nothing ran"
                    ),
                    details=problems,
                )
            )
        binding = self._registry.binding(spec.name, spec.version)
        if binding is None:
            return _Checked(
                refusal=ToolFailure(
                    code="no_handler",
                    message=(f"{spec.ref} is registered but has no handler in this process"),
                )
            )
        if binding.precheck is not None:
            refused = binding.precheck(dict(call.args_json))
            if refused is not None:
                return _Checked(refusal=refused)
        if spec.side_effect != "irreversible":
            return _Checked(binding=binding)
        key = effect_key(spec, call.args_json, scope=self.effect_scope)
        if isinstance(key, ToolFailure):
            return _Checked(refusal=key)
        earlier = holder(self._engine, key) if key is not None else None
        if earlier is not None and call.grant_id is None:
            # No grant can supersede it: a policy rule's never does, so none is
            # issued for a call that could not run.
            request = self._request(call, spec, supersedes=(earlier.call_ledger_id,))
            return _Checked(refusal=duplicate_failure(spec, earlier, request))
        refusal, grant_id = self._grant_for(call, spec)
        superseded = (
            earlier is None
            or grant_id is None
            or earlier.call_ledger_id in self._grants.get(grant_id).supersedes
        )
        if refusal is None and earlier is not None and not superseded:
            request = self._request(call, spec, supersedes=(earlier.call_ledger_id,))
            return _Checked(refusal=duplicate_failure(spec, earlier, request))
        return _Checked(
            refusal=refusal, binding=binding, grant_id=grant_id, effect=key, after=earlier
        )

    @staticmethod
    def _request(call: _Call, spec: ToolSpec, *, supersedes: tuple[str, ...] = ()) -> GrantRequest:
        """The grant request for exactly this call."""
        assert call.args_sha256 is not None
        return GrantRequest(
            run_id=call.run_id,
            tool=spec.name,
            version=spec.version,
            args=call.args_json,
            args_sha256=call.args_sha256,
            depends_on=call.depends_on,
            call_id=call.call_id,
            supersedes=supersedes,
        )

    def _grant_for(self, call: _Call, spec: ToolSpec) -> tuple[ToolFailure | None, str | None]:
        assert call.args_sha256 is not None
        request = self._request(call, spec)
        if call.grant_id is None:
            granted = self._grants.evaluate_policy(call.run_id, request)
            if granted is not None:
                return None, granted.id
            return ToolFailure(
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
            return ToolFailure(
                code="grant_invalid", message=reason, details=[ErrorDetail(path="", message=reason)]
            ), None
        return None, call.grant_id

    def _start(
        self, call: _Call, spec: ToolSpec, entry: LedgerEntry | None, checked: _Checked
    ) -> ToolResult | _Step:
        """Record the call (unless its ``tool_call`` entry is already written) and its
        start row, the grant's use and the effect's claim, in one transaction,
        committed before the handler runs; a call id, grant or effect that another
        start took first is a lost race."""
        assert call.args_sha256 is not None and checked.binding is not None
        binding, grant_id = checked.binding, checked.grant_id
        with self._ledger.batch(call.run_id) as batch:
            if entry is None:
                entry = self._append_call(batch.append, call, spec)
            row = {
                "run_id": call.run_id,
                "call_id": call.call_id,
                "tool": spec.name,
                "version": spec.version,
                "args_sha256": call.args_sha256,
                "call_ledger_id": entry.id,
                "grant_id": grant_id,
                "started_at": datetime.now(UTC),
            }
            try:
                won = _insert_start(batch.connection, row, checked)
            except _EffectTaken:
                won = None
        if won is None:
            return self._effect_taken(call, spec, entry, checked)
        if not won:
            return self._lost_race(call, entry, grant_id)
        timeout = binding.timeout_s if binding.timeout_s is not None else self.timeout_s
        context = call_context(row, effect=checked.effect, after=checked.after)
        return _Step(
            call=call,
            spec=spec,
            binding=binding,
            handler=with_context(binding.handler, binding.context_parameter, context),
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
        failure = ToolFailure(
            code="grant_invalid", message=reason, details=[ErrorDetail(path="", message=reason)]
        )
        with self._ledger.batch(call.run_id) as batch:
            return self._refuse(batch.append, call, entry, failure)

    def _effect_taken(
        self, call: _Call, spec: ToolSpec, entry: LedgerEntry, checked: _Checked
    ) -> ToolResult:
        """Another call claimed the effect after this one was checked: the call is
        refused as a duplicate of whichever call holds the effect now."""
        earlier = self._earlier(call)
        if earlier is not None:
            return earlier
        assert checked.effect is not None
        now = holder(self._engine, checked.effect)
        assert now is not None  # the claim that won is committed before ours failed
        request = self._request(call, spec, supersedes=(now.call_ledger_id,))
        with self._ledger.batch(call.run_id) as batch:
            return self._refuse(batch.append, call, entry, duplicate_failure(spec, now, request))

    def _earlier(self, call: _Call) -> ToolResult | None:
        return earlier_result(self._engine, self._ledger, call)

    def prior_effect(
        self, tool: str, args: Mapping[str, Any], *, version: str | None = None
    ) -> EffectHolder | None:
        """The call that already performed the effect a call of ``tool`` with ``args``
        would perform (its tool declares an idempotency key and a call with the same
        key values, in any run of this scope, has started); ``None`` otherwise. What a
        reviewer sees before approving a repeat, a grant's ``supersedes`` names."""
        spec = self._registry.get(tool, version)
        key = effect_key(spec, args, scope=self.effect_scope)
        return holder(self._engine, key) if isinstance(key, EffectKey) else None

    def call_started(self, run_id: str, call_id: str) -> bool:
        """Whether a handler was ever started under ``call_id`` in ``run_id``."""
        return started(self._engine, run_id, call_id)

    # --- after the handler ------------------------------------------------------------

    def _finish(self, step: _Step, outcome: Outcome) -> ToolResult:
        """Settle ``outcome`` and store the result under the call id, with the ledger
        entry that records it, in one transaction. The output is checked against its
        schema before the transaction opens. Nothing the handler did can make this
        raise; only a database failure can."""
        failure, exception = self._failure(step, outcome)
        call = step.call
        with self._ledger.batch(call.run_id) as batch:
            result = self._settle(batch, step, outcome, failure, exception)
            row = {
                "run_id": call.run_id,
                "call_id": call.call_id,
                "result_json": result.to_json(),
                "finished_at": datetime.now(UTC),
            }
            if not _INSERT_RESULT_IF_ABSENT(batch.connection, row):
                # a row for this call id was written outside the bus
                batch.append(
                    kind="error",
                    source=_SOURCE,
                    content=canonical_json(conflict_body(call.call_id, result)).decode("utf-8"),
                    metadata={"call_id": call.call_id, "code": "result_conflict"},
                )
        return result

    def _failure(
        self, step: _Step, outcome: Outcome
    ) -> tuple[ToolFailure | None, dict[str, str] | None]:
        """What went wrong with the call, if anything, and the handler's exception as
        the error entry keeps it; ``(None, None)`` for an output that fits its schema."""
        ref = step.spec.ref
        if outcome.kind == "timeout":
            message = f"{ref} did not finish within {step.timeout_s} s"
            return ToolFailure(code="tool_timeout", message=message), None
        if outcome.kind == "raised":
            assert outcome.error is not None
            info = describe(outcome.error)
            detail = ErrorDetail(path="", message=info.summary)
            failed = ToolFailure(
                code="tool_failed", message=f"{ref} raised {info.summary}", details=[detail]
            )
            return failed, info.as_json()
        try:
            problems = output_errors(step.spec, outcome.value)
        except ContentTooLarge as exc:
            problems = [ErrorDetail(path="", message=str(exc))]
        except RunError:
            raise
        except Exception as exc:  # an output whose own methods raise while it is read
            problems = [ErrorDetail(path="", message=_unreadable(exc))]
        return (_invalid_output(ref, problems) if problems else None), None

    def _settle(
        self,
        batch: LedgerBatch,
        step: _Step,
        outcome: Outcome,
        failure: ToolFailure | None,
        exception: dict[str, str] | None,
    ) -> ToolResult:
        """Append what the call came to: its output, or the failure."""
        if failure is None:
            try:
                return self._record_output(batch.append, step, outcome.value)
            except (RunError, DBAPIError):
                raise
            except ContentTooLarge as exc:
                problems = [ErrorDetail(path="", message=str(exc))]
            except Exception as exc:  # refused before anything was written
                problems = [ErrorDetail(path="", message=_unreadable(exc))]
            failure = _invalid_output(step.spec.ref, problems)
        output = outcome.value if outcome.kind == "ok" else _NO_OUTPUT
        return self._refuse(batch.append, step.call, step.call_entry, failure, output, exception)

    def _record_output(self, append: _Append, step: _Step, value: Any) -> ToolResult:
        """Append a valid output as ``tool_output``. A text output is stored as the
        text itself, so that quotes, identifiers and spans cited from it match the
        exact characters the tool returned; anything else as canonical JSON. The
        entry's ``encoding`` metadata says which."""
        is_text = isinstance(value, str)
        text = str.__str__(value) if is_text else canonical_json(value).decode("utf-8")
        entry = append(
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
            ok=True, output=text if is_text else loads_canonical(text), ledger_id=entry.id
        )

    # --- ledger -----------------------------------------------------------------------

    def _record_call(self, call: _Call, spec: ToolSpec | None) -> LedgerEntry:
        with self._ledger.batch(call.run_id) as batch:
            return self._append_call(batch.append, call, spec)

    @staticmethod
    def _append_call(append: _Append, call: _Call, spec: ToolSpec | None) -> LedgerEntry:
        source, content, metadata = call_record(call, spec)
        return append(kind="tool_call", source=source, content=content, metadata=metadata)

    def _refused(self, call: _Call, spec: ToolSpec | None, error: ToolFailure) -> ToolResult:
        """A call refused before it started: its ``tool_call`` record and the error,
        in one transaction."""
        with self._ledger.batch(call.run_id) as batch:
            entry = self._append_call(batch.append, call, spec)
            return self._refuse(batch.append, call, entry, error)

    @staticmethod
    def _refuse(
        append: _Append,
        call: _Call,
        call_entry: LedgerEntry,
        error: ToolFailure,
        output: Any = _NO_OUTPUT,
        exception: dict[str, str] | None = None,
    ) -> ToolResult:
        """Record ``error`` (bounded: see :func:`bounded_error`) in an ``error`` entry,
        with what is kept of a refused ``output`` and the handler's ``exception``."""
        error = bounded_error(error)
        body: dict[str, Any] = {**error.as_json(), "call_id": call.call_id}
        if output is not _NO_OUTPUT:
            body["output"] = kept_output(output)
        if exception is not None:
            body["exception"] = exception
        metadata = {"call_id": call.call_id, "call_ledger_id": call_entry.id, "code": error.code}
        try:
            content = canonical_json(body).decode("utf-8")
            entry = append(kind="error", source=_SOURCE, content=content, metadata=metadata)
        except ContentTooLarge as exc:  # a ledger configured smaller than the record
            short = {"code": error.code, "call_id": call.call_id, "message": str(exc)}
            entry = append(
                kind="error",
                source=_SOURCE,
                content=canonical_json(short).decode("utf-8"),
                metadata=metadata,
            )
        return ToolResult(ok=False, ledger_id=entry.id, error=error)


def _insert_start(conn: Connection, row: dict[str, Any], checked: _Checked) -> bool:
    """Insert a call's start row, its grant's use when it has a grant and its effect's
    claim when its tool has an idempotency key; False when the call id (or the grant)
    was taken first, :class:`_EffectTaken` when the effect was, and nothing of the
    three is written either way."""
    if row["grant_id"] is None:
        return _INSERT_CALL_IF_ABSENT(conn, row)
    use = {k: row[k] for k in ("grant_id", "run_id", "call_id")} | {"used_at": row["started_at"]}
    try:
        with conn.begin_nested():  # a savepoint: the call's ledger record stays
            conn.execute(_INSERT_GRANT_USE, use)
            conn.execute(_INSERT_CALL, row)
            if checked.effect is not None:
                try:
                    with conn.begin_nested():
                        claim_effect(conn, checked.effect, after=checked.after, start=row)
                except IntegrityError as exc:
                    raise _EffectTaken from exc  # undoes the use and the call row too
    except IntegrityError:
        return False
    return True


def _invalid_output(ref: str, problems: list[ErrorDetail]) -> ToolFailure:
    return ToolFailure(
        code="invalid_output",
        message=f"{ref} returned output that breaks its schema",
        details=problems,
    )


def _unreadable(exc: Exception) -> str:
    return f"the output could not be read: {describe(exc).summary}"
