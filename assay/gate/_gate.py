"""The gate: plain code that decides whether a hand-over may pass, and records why.

Nothing an agent produces reaches the next agent, the verifier or a person unless
:meth:`Gate.check` accepted it. The gate never calls a model; every refusal is a
list of :class:`GateFinding` (code, JSONPath, message), all of them at once, so the
author can fix everything in one more turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from assay.contract import HANDOVER_SCHEMA_VERSION, Handover
from assay.errors import InvalidHandover, ToolNotFound
from assay.gate import _checks, _lookalikes
from assay.gate._arguments import (
    argument_value_errors,
    role_errors,
    unsupported_intent_errors,
)
from assay.gate._citations import check_cites
from assay.gate._derivation import check_derivations
from assay.gate._intent_ids import reused_intent_ids
from assay.gate._records import GateCheck, GateDecision, GateFinding, ReplyReport, path
from assay.gate._reply import Conversation, reply_report
from assay.ledger import Ledger, LedgerEntry, canonical_json
from assay.tool_bus import ToolSpec, argument_errors

GATE_SOURCE = "assay.gate"
_UNKNOWN_AGENT = "unknown-agent"
_MAX_RAW_REPR = 20_000
#: A decision records at most this many errors (the rest are counted), so that a
#: hand-over citing one bad id 200,000 times cannot produce a 30 MB record.
_MAX_RECORDED_ERRORS = 500


class ToolLookup(Protocol):
    """What the gate needs of the tool registry: a spec by name and version."""

    def get(self, name: str, version: str | None = None) -> ToolSpec: ...


class Gate:
    """Checks hand-overs against the schema, the ledger and the tool registry.

    Extra checks (callables ``(run_id, handover, entries_by_id) -> [GateFinding]``)
    run after the built-in ones, in the order they were added; ``entries_by_id``
    holds every ledger entry the hand-over cites that exists.
    """

    def __init__(
        self,
        ledger: Ledger,
        *,
        registry: ToolLookup | None = None,
        extra_checks: Iterable[GateCheck] = (),
    ) -> None:
        self._ledger = ledger
        self._registry = registry
        self._checks: list[GateCheck] = [
            _checks.check_run,
            _checks.check_status,
            _checks.check_entailment,
            _checks.check_sizes,
            _checks.check_citations,
            _checks.check_quotes,
            check_cites,
            check_derivations,
            _checks.check_dependencies,
            self._check_actions,
            self._check_intent_ids,
            _checks.check_identifiers,
            _lookalikes.check_characters,
        ]
        self._checks.extend(extra_checks)

    def add_check(self, check: GateCheck) -> None:
        """Run ``check`` on every hand-over from now on, after the existing checks."""
        self._checks.append(check)

    def check(
        self,
        run_id: str,
        handover: Handover | Mapping[str, Any],
        *,
        require_no_open_questions: bool = False,
    ) -> GateDecision:
        """Decide on ``handover``; append it (kind ``handover``) and the decision, in
        one ledger transaction.

        Raises :class:`~assay.UnknownRun` for a run the ledger does not hold (a usage
        mistake); anything wrong with the hand-over itself is a rejection, never an
        exception.
        """
        self._ledger.require_run(run_id)
        try:
            model, errors = _checks.parse(handover)
        except InvalidHandover as exc:
            # Too deep or too large to check or to store: refused, and recorded as a
            # bounded note of what was refused instead of the value itself.
            model, errors = None, [GateFinding(code="schema_violation", path="$", message=str(exc))]
            handover = {"refused_before_parsing": str(exc)}
        if model is not None:
            errors = self.errors(run_id, model, require_no_open_questions=require_no_open_questions)
        source, content, meta = _handover_record(model, handover)
        # The hand-over and the decision on it are written together, or not at all.
        with self._ledger.batch(run_id) as batch:
            received = batch.append(kind="handover", source=source, content=content, metadata=meta)
            decision = GateDecision(
                accepted=not errors,
                errors=tuple(errors),
                handover=model,
                handover_entry_id=received.id,
            )
            recorded = batch.append(kind="gate_decision", **_decision_record(decision))
        return GateDecision(
            accepted=decision.accepted,
            errors=decision.errors,
            handover=model,
            handover_entry_id=received.id,
            decision_entry_id=recorded.id,
        )

    def errors(
        self, run_id: str, handover: Handover, *, require_no_open_questions: bool = False
    ) -> list[GateFinding]:
        """Every error of an already-validated hand-over, without recording anything."""
        cited = {lid for c in handover.claims for p in c.propositions for lid in p.ledger_ids}
        entries = self._ledger.get_many(cited)
        errors: list[GateFinding] = []
        for check in self._checks:
            errors += check(run_id, handover, entries)
        if require_no_open_questions:
            errors += _checks.check_open_questions(run_id, handover, entries)
        return errors

    def validate_reply(
        self, run_id: str, reply: object, conversation: Conversation | None = None
    ) -> ReplyReport:
        """Check a reply to a person against the run's ledger.

        Tool outputs and retrieval results are the tool results; ``human_fact``
        entries count, like the conversation's messages, only as echoes.
        """
        entries = self._ledger.evidence(run_id)
        tools = [e.text for e in entries if e.kind != "human_fact"]
        echoes = [e.text for e in entries if e.kind == "human_fact"]
        return reply_report(
            reply, tool_results=tools, conversation=conversation, extra_echoes=echoes
        )

    # --- action intents ---------------------------------------------------------------

    def _check_intent_ids(
        self, run_id: str, handover: Handover, entries: Mapping[str, LedgerEntry]
    ) -> list[GateFinding]:
        return reused_intent_ids(self._ledger, run_id, handover)

    def _check_actions(
        self, run_id: str, handover: Handover, entries: Mapping[str, LedgerEntry]
    ) -> list[GateFinding]:
        errors: list[GateFinding] = []
        for i, intent in enumerate(handover.action_intents):
            where = path("action_intents", i, "tool")
            if self._registry is None:
                errors.append(
                    GateFinding(
                        code="unknown_tool",
                        path=where,
                        message="no tool registry is configured for this gate",
                    )
                )
                continue
            try:
                spec = self._registry.get(intent.tool, intent.version)
            except ToolNotFound as exc:
                hint = f" (did you mean {', '.join(exc.suggestions)}?)" if exc.suggestions else ""
                errors.append(GateFinding(code=exc.code, path=where, message=f"{exc}{hint}"))
                continue
            invalid = argument_errors(spec, intent.args)
            for detail in invalid:
                errors.append(
                    GateFinding(
                        code="invalid_action_args",
                        path=path("action_intents", i, "args", *_pointer(detail.path)),
                        message=f"{intent.tool}@{spec.version}: {detail.message}",
                    )
                )
            if not invalid:
                keyed = spec.idempotency_key
                errors += argument_value_errors(
                    handover, i, spec.input_schema, entries, keyed=keyed
                )
                errors += role_errors(handover, i, spec.input_schema)
            if spec.side_effect == "irreversible":
                errors += unsupported_intent_errors(handover, i)
        return errors


# --- recording ------------------------------------------------------------------------


def _handover_record(model: Handover | None, raw: object) -> tuple[str, str, dict[str, Any]]:
    """The source, content and metadata of the ``handover`` entry."""
    if model is not None:
        content = _raw_json(model.model_dump(mode="json"))
        agent = _clean(model.from_agent)
        meta: dict[str, Any] = {"from_agent": agent, "status": model.status, "valid": True}
    else:
        content, agent = _raw_json(raw), _raw_agent(raw)
        meta = {"from_agent": agent, "valid": False}
    source = agent if agent and agent.strip() else _UNKNOWN_AGENT
    meta["schema_version"] = HANDOVER_SCHEMA_VERSION
    return source, content, meta


def _decision_record(decision: GateDecision) -> dict[str, Any]:
    """The source, content and metadata of the ``gate_decision`` entry."""
    kept = decision.errors[:_MAX_RECORDED_ERRORS]
    body = {
        "accepted": decision.accepted,
        "handover_id": decision.handover_entry_id,
        "errors": [{"code": e.code, "path": e.path, "message": e.message} for e in kept],
        "errors_not_recorded": len(decision.errors) - len(kept),
    }
    meta = {
        "handover_id": decision.handover_entry_id,
        "accepted": decision.accepted,
        "codes": sorted(decision.codes),
    }
    return {
        "source": GATE_SOURCE,
        "content": canonical_json(body).decode("utf-8"),
        "metadata": meta,
    }


def _raw_json(raw: object) -> str:
    """What was handed over, as JSON when it is JSON, else as a bounded ``repr``."""
    try:
        return canonical_json(raw).decode("utf-8")
    except Exception:  # rfc8785 refuses many shapes; any refusal means "not JSON"
        text = repr(raw)
        if len(text) > _MAX_RAW_REPR:
            text = text[:_MAX_RAW_REPR] + "…"
        return json.dumps({"unparsed": text})


def _raw_agent(raw: object) -> str | None:
    agent = raw.get("from_agent") if isinstance(raw, Mapping) else None
    return _clean(agent) if isinstance(agent, str) and agent.strip() else None


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _clean(text: str) -> str:
    """``text``, with anything UTF-8 cannot encode (lone surrogates) and control
    characters (which no ledger source may hold) escaped visibly."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def _pointer(pointer: str) -> Sequence[str | int]:
    """JSON-pointer tokens (``/items/0/id``) as path parts; digits become indexes."""
    if not pointer:
        return ()
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]
    return [int(p) if p.isdigit() else p for p in parts]
