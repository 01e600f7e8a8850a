"""The gate's internal records: errors, decisions, identifiers and reply reports."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from assay.contract import Handover
from assay.grounding import Identifier
from assay.ledger import LedgerEntry

#: The codes the built-in checks emit. Extra checks may add their own.
GATE_ERROR_CODES: frozenset[str] = frozenset(
    {
        "schema_violation",
        "run_mismatch",
        "missing_ledger_ids",
        "unknown_ledger_id",
        "foreign_run_ledger_id",
        "uncitable_entry",
        "quote_mismatch",
        "fabricated_citation",
        "bad_derivation",
        "entailment_preset",
        "unknown_tool",
        "unknown_version",
        "invalid_action_args",
        "ungrounded_argument",
        "ungrounded_intent",
        "unbound_argument",
        "dangling_dependency",
        "dependency_cycle",
        "intent_id_reused",
        "failed_without_errors",
        "unresolved_open_question",
        "unverified_identifier",
        "unverified_value",
        "suspicious_characters",
        "provenance_mismatch",
        "proposition_too_long",
    }
)


@dataclass(frozen=True, kw_only=True)
class GateFinding:
    """One reason a hand-over is refused.

    ``path`` is a JSONPath into the hand-over (``$`` is the whole document, e.g.
    ``$.claims[0].propositions[1].ledger_ids[0]``), so the author can fix exactly
    that place; ``code`` is stable and machine-readable, ``message`` is for people.
    """

    code: str
    path: str
    message: str


@dataclass(frozen=True, kw_only=True)
class GateDecision:
    """The gate's verdict on one hand-over, with every error found.

    ``handover`` is the validated model, or ``None`` when the input did not match the
    schema. ``handover_entry_id`` and ``decision_entry_id`` are the ledger entries
    that record the hand-over as received and this decision.
    """

    accepted: bool
    errors: tuple[GateFinding, ...]
    handover: Handover | None
    handover_entry_id: str | None = None
    decision_entry_id: str | None = None

    @property
    def codes(self) -> frozenset[str]:
        """The distinct error codes, for quick membership tests."""
        return frozenset(e.code for e in self.errors)


#: An extra gate check: ``(run_id, handover, ledger_entries_by_id) -> errors``. The
#: entries are every ledger entry the hand-over cites that exists, in any run.
GateCheck = Callable[[str, Handover, dict[str, LedgerEntry]], list[GateFinding]]


@dataclass(frozen=True, kw_only=True)
class ReplyReport:
    """Where each identifier of a reply to a person came from.

    ``found``: in a tool result. ``user_origin``: only in the conversation's own
    user or assistant messages (an echo, not a verified value). ``unverified``: in
    neither. ``known``: every distinct identifier value the context held.
    """

    unverified: tuple[Identifier, ...]
    user_origin: tuple[Identifier, ...]
    found: tuple[Identifier, ...]
    known: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Whether every identifier of the reply came from a tool result."""
        return not self.unverified and not self.user_origin


def path(*parts: str | int) -> str:
    """A JSONPath such as ``$.claims[0].text`` from ``("claims", 0, "text")``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{part}"
        else:
            out += "[" + _quote(part) + "]"
    return out


def _quote(text: str) -> str:
    escaped = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return "'" + escaped.replace("'", "\\'") + "'"
