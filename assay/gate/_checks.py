"""The gate's built-in checks. Each is ``(run_id, handover, entries) -> [GateFinding]``.

``entries`` holds every ledger entry the hand-over cites that exists (in any run), so
a check never queries the database; citations that fail a check here are still
passed on, and evidence for identifiers is only ever the cited entries that are of
this run and of an evidence kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from graphlib import CycleError, TopologicalSorter
from typing import Any, cast

from pydantic import JsonValue, ValidationError

from assay._canonical import canonical_text, identifier_kind
from assay._limits import (
    MAX_AGENT_CHARS,
    MAX_HANDOVER_BYTES,
    MAX_JSON_DEPTH,
    MAX_PROPOSITION_CHARS,
    json_depth_ok,
)
from assay.contract import Handover, Proposition
from assay.errors import InvalidHandover
from assay.gate._derivation import holding_derivation
from assay.gate._records import GateFinding, path
from assay.grounding import Derived, describe_computation, found_in, ground, states_result, view_of
from assay.grounding import prepared_evidence as prepared
from assay.ledger import EVIDENCE_KINDS, LedgerEntry

Entries = dict[str, LedgerEntry]
Where = tuple[str | int, ...]

_NEEDS_EVIDENCE = frozenset({"Assertion", "Quote"})
#: Kinds whose miss is a wrong value (``unverified_value``): read again, not searched for.
_VALUE_KINDS = frozenset({"amount", "date", "quantity"})
#: Wording by which a statement says its value came from a tool, not from the user.
_TOOL_ORIGIN = re.compile(
    r"\b(?:(?:the\s+)?(?:tool|api|query|search|lookup|database|db|system|endpoint|service|"
    r"crm|registry|server)\s+(?:says|said|shows|showed|returned|returns|reports|reported|"
    r"lists|listed|found|confirms|confirmed|responded)|returned|according\s+to\s+the\s+"
    r"(?:tool|api|database|system|records?|search|lookup|query)|(?:tool|api|lookup|query|"
    r"search)\s+(?:output|result|response)s?|fetched|looked\s+up|retrieved\s+from)\b",
    re.IGNORECASE,
)


# --- schema -----------------------------------------------------------------------


def parse(raw: object) -> tuple[Handover | None, list[GateFinding]]:
    """Validate ``raw`` (a dict or a model) into a :class:`Handover`, or say why not.

    A filled ``entailment`` is reported as ``entailment_preset`` whatever its shape,
    and schema errors under it are not reported twice.

    Raises :class:`~assay.errors.InvalidHandover` for a hand-over that can be
    neither checked nor recorded: nested deeper than ``MAX_JSON_DEPTH``, larger than
    ``MAX_HANDOVER_BYTES``, or with a ``from_agent`` (it becomes the ledger source)
    longer than ``MAX_AGENT_CHARS``. Those are checked first, without recursion, so
    that neither pydantic nor the ledger's serializer ever sees such a value.
    """
    if isinstance(raw, Handover):
        raw = raw.model_dump()
    _check_bounds(raw)
    preset = list(_preset_entailments(raw))
    errors = [
        GateFinding(code="entailment_preset", path=path(*loc), message=_PRESET_MESSAGE)
        for loc in preset
    ]
    try:
        return Handover.model_validate(raw), errors
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            if any(loc[: len(p)] == p for p in preset):
                continue
            errors.append(
                GateFinding(code="schema_violation", path=path(*loc), message=_schema_message(err))
            )
        return None, errors


_PRESET_MESSAGE = "entailment is written by the verifier only; hand over null"


def _check_bounds(raw: object) -> None:
    if not json_depth_ok(raw, MAX_JSON_DEPTH):
        raise InvalidHandover(f"the hand-over is nested deeper than {MAX_JSON_DEPTH} levels")
    size = _approx_json_size(raw, MAX_HANDOVER_BYTES)
    if size > MAX_HANDOVER_BYTES:
        raise InvalidHandover(
            f"the hand-over is over the limit of {MAX_HANDOVER_BYTES} bytes of JSON; "
            "hand over ledger ids that point at large evidence instead of copying it"
        )
    agent = raw.get("from_agent") if isinstance(raw, Mapping) else None
    if isinstance(agent, str) and len(agent) > MAX_AGENT_CHARS:
        raise InvalidHandover(
            f"from_agent is {len(agent)} characters, over the limit of {MAX_AGENT_CHARS}"
        )


def _approx_json_size(value: object, stop_at: int) -> int:
    """A lower bound of the JSON size of a depth-checked ``value``, walked without
    recursion; the walk stops as soon as the bound passes ``stop_at``."""
    total, stack = 0, [value]
    while stack and total <= stop_at:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, Mapping):
            for key, child in cast(Mapping[object, object], item).items():
                total += 2
                stack += [key, child]
        elif isinstance(item, list | tuple):
            total += 2
            stack += cast(list[object], item)
        else:
            total += 1
    return total


def _preset_entailments(raw: object) -> Iterator[tuple[str | int, ...]]:
    if not isinstance(raw, Mapping):
        return
    claims: object = raw.get("claims")
    if not isinstance(claims, list):
        return
    for i, claim in enumerate(claims):
        props = claim.get("propositions") if isinstance(claim, Mapping) else None
        if not isinstance(props, list):
            continue
        for j, prop in enumerate(props):
            if isinstance(prop, Mapping) and prop.get("entailment") is not None:
                yield ("claims", i, "propositions", j, "entailment")


def _schema_message(err: Mapping[str, Any]) -> str:
    if err["type"] == "extra_forbidden":
        return (
            f"unknown field {err['loc'][-1]!r}: a hand-over carries only the fields of "
            "the schema (there is no free-text summary)"
        )
    return str(err["msg"])


# --- built-in checks ----------------------------------------------------------------


def check_run(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    if handover.run_id == run_id:
        return []
    return [
        GateFinding(
            code="run_mismatch",
            path=path("run_id"),
            message=f"the hand-over names run {handover.run_id!r} but is checked in {run_id!r}",
        )
    ]


def check_status(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    if handover.status == "failed" and not handover.errors:
        return [
            GateFinding(
                code="failed_without_errors",
                path=path("errors"),
                message="a failed hand-over must say what failed in errors[]",
            )
        ]
    return []


def check_entailment(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    return [
        GateFinding(
            code="entailment_preset",
            path=path("claims", i, "propositions", j, "entailment"),
            message=_PRESET_MESSAGE,
        )
        for i, claim in enumerate(handover.claims)
        for j, prop in enumerate(claim.propositions)
        if prop.entailment is not None
    ]


def check_sizes(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    """No proposition is longer than ``MAX_PROPOSITION_CHARS``: a proposition is one
    statement to check, and checking one costs time that grows with its length."""
    return [
        GateFinding(
            code="proposition_too_long",
            path=path("claims", i, "propositions", j, "text"),
            message=f"the proposition is {len(prop.text):,} characters, over the limit of "
            f"{MAX_PROPOSITION_CHARS:,}: split it into statements that can each be checked",
        )
        for i, claim in enumerate(handover.claims)
        for j, prop in enumerate(claim.propositions)
        if len(prop.text) > MAX_PROPOSITION_CHARS
    ]


def within_size(prop: Proposition) -> bool:
    """Whether a proposition is short enough to be checked at all."""
    return len(prop.text) <= MAX_PROPOSITION_CHARS


def check_citations(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    """Evidence is required where claimed, exists, is of this run and is citable."""
    errors: list[GateFinding] = []
    for i, claim in enumerate(handover.claims):
        if claim.type in _NEEDS_EVIDENCE and not claim.propositions:
            errors.append(
                GateFinding(
                    code="missing_ledger_ids",
                    path=path("claims", i, "propositions"),
                    message=f"an {claim.type} needs at least one proposition citing evidence",
                )
            )
        for j, prop in enumerate(claim.propositions):
            where = ("claims", i, "propositions", j, "ledger_ids")
            if claim.type in _NEEDS_EVIDENCE and not prop.ledger_ids:
                errors.append(
                    GateFinding(
                        code="missing_ledger_ids",
                        path=path(*where),
                        message=f"an {claim.type} proposition must cite ledger evidence; "
                        "state it as a Conjecture or find the evidence",
                    )
                )
            for k, lid in enumerate(prop.ledger_ids):
                error = _citation_error(run_id, lid, entries.get(lid), path(*where, k))
                if error is not None:
                    errors.append(error)
    return errors


def _citation_error(
    run_id: str, lid: str, entry: LedgerEntry | None, where: str
) -> GateFinding | None:
    if entry is None:
        return GateFinding(
            code="unknown_ledger_id",
            path=where,
            message=f"no ledger entry {lid!r}: cite only entries the ledger holds",
        )
    if entry.run_id != run_id:
        return GateFinding(
            code="foreign_run_ledger_id",
            path=where,
            message=f"{lid!r} belongs to run {entry.run_id!r}, not this run",
        )
    if entry.kind not in EVIDENCE_KINDS:
        return GateFinding(
            code="uncitable_entry",
            path=where,
            message=f"{lid!r} is a {entry.kind!r} record, not evidence; cite the "
            f"{'/'.join(sorted(EVIDENCE_KINDS))} entries it rests on instead",
        )
    return None


def evidence_of(run_id: str, prop: Proposition, entries: Entries) -> list[LedgerEntry]:
    """The cited entries that count as evidence: existing, of this run, citable."""
    found = (entries.get(lid) for lid in prop.ledger_ids)
    return [e for e in found if e is not None and e.run_id == run_id and e.is_evidence]


def check_quotes(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    """A Quote proposition's text occurs character for character in one of its cited
    entries: in the stored text, or in a decoded string of a JSON entry (its view),
    where a quoted line break is a line break and not the two characters ``\\n``."""
    errors: list[GateFinding] = []
    for i, claim in enumerate(handover.claims):
        if claim.type != "Quote":
            continue
        for j, prop in enumerate(claim.propositions):
            evidence = evidence_of(run_id, prop, entries)
            needle = prop.text
            if evidence and not any(
                needle in e.text or needle in view_of(e.text).text for e in evidence
            ):
                errors.append(
                    GateFinding(
                        code="quote_mismatch",
                        path=path("claims", i, "propositions", j, "text"),
                        message="the quoted text does not occur verbatim in any cited entry "
                        f"({', '.join(e.id for e in evidence)})",
                    )
                )
    return errors


def check_dependencies(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    """Every ``depends_on`` names a claim, proposition or action intent; no cycles."""
    known = {c.id for c in handover.claims}
    known |= {p.id for c in handover.claims for p in c.propositions}
    intents = {a.id for a in handover.action_intents}
    errors: list[GateFinding] = []
    graph: dict[str, list[str]] = {}
    for i, intent in enumerate(handover.action_intents):
        graph[intent.id] = [d for d in intent.depends_on if d in intents]
        for k, dep in enumerate(intent.depends_on):
            if dep not in known and dep not in intents:
                errors.append(
                    GateFinding(
                        code="dangling_dependency",
                        path=path("action_intents", i, "depends_on", k),
                        message=f"{dep!r} is not a claim, proposition or action intent of "
                        "this hand-over",
                    )
                )
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        cycle: Sequence[str] = exc.args[1]
        index = next(i for i, a in enumerate(handover.action_intents) if a.id == cycle[0])
        errors.append(
            GateFinding(
                code="dependency_cycle",
                path=path("action_intents", index, "depends_on"),
                message="action intents depend on each other in a cycle: " + " -> ".join(cycle),
            )
        )
    return errors


def check_open_questions(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    return [
        GateFinding(
            code="unresolved_open_question",
            path=path("open_questions", i),
            message=f"question {q.id!r} is still open and the receiving step requires none; "
            "resolve it or forward it",
        )
        for i, q in enumerate(handover.open_questions)
        if q.status == "open"
    ]


# --- identifier provenance -----------------------------------------------------------


def check_identifiers(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    """Every identifier in a claim, proposition or action argument occurs in its evidence."""
    errors: list[GateFinding] = []
    claim_evidence: dict[str, list[LedgerEntry]] = {}
    for i, claim in enumerate(handover.claims):
        union: list[LedgerEntry] = []
        said: list[GateFinding] = []
        derived: list[Derived] = []
        for j, prop in enumerate(claim.propositions):
            evidence = evidence_of(run_id, prop, entries)
            union += evidence
            if within_size(prop):  # a longer one is refused as proposition_too_long
                holding = holding_derivation(run_id, prop, entries)
                derived += [holding] if holding is not None else []
                said += _proposition_provenance(
                    ("claims", i, "propositions", j), prop, evidence, holding
                )
        claim_text = [(("claims", i, "text"), claim.text)]
        errors += said + _unsaid(
            said,
            _text_provenance(
                claim_text, union, tool_origin=_says_tool(claim.text), derived=derived
            ),
        )
        claim_evidence[claim.id] = union
        claim_evidence.update({p.id: evidence_of(run_id, p, entries) for p in claim.propositions})
    for i, intent in enumerate(handover.action_intents):
        evidence = _intent_evidence(handover, intent.id, claim_evidence)
        # A string that is one identifier is checked whole, in canonical form, by the
        # action-argument check; here only the identifiers inside prose arguments.
        texts = [
            (where, text)
            for where, text in _string_leaves(intent.args, ("action_intents", i, "args"))
            if identifier_kind(canonical_text(text).strip()) is None
        ]
        errors += _text_provenance(texts, evidence, tool_origin=False)
    return errors


def _proposition_provenance(
    where: tuple[str | int, ...],
    prop: Proposition,
    evidence: list[LedgerEntry],
    derived: Derived | None,
) -> list[GateFinding]:
    tool_origin = _says_tool(prop.text)
    texts: list[tuple[Where, str]] = [((*where, "text"), prop.text)]
    texts += [((*where, "args", k), a) for k, a in enumerate(prop.args or [])]
    errors = _text_provenance(
        texts, evidence, tool_origin=tool_origin, derived=[derived] if derived else []
    )
    only_user = bool(evidence) and all(e.kind == "human_fact" for e in evidence)
    if tool_origin and only_user and not any(e.code == "provenance_mismatch" for e in errors):
        errors.append(
            GateFinding(
                code="provenance_mismatch",
                path=path(*where, "ledger_ids"),
                message="the proposition says its value came from a tool but cites only "
                "human_fact entries (what the user said)",
            )
        )
    return errors


def _text_provenance(
    texts: list[tuple[Where, str]],
    evidence: list[LedgerEntry],
    *,
    tool_origin: bool,
    derived: Sequence[Derived] = (),
) -> list[GateFinding]:
    # The cited tool outputs ground the texts' identifiers (assay.grounding.ground,
    # whose result the verifier reads again rather than redoing it); what a person
    # said counts only where no tool says it. A JSON entry is read through its view,
    # so that a value is never glued to the escape or the key before it.
    tool_views = [view_of(e.text).text for e in _distinct(evidence) if e.kind != "human_fact"]
    user_texts = [prepared(view_of(e.text).text) for e in evidence if e.kind == "human_fact"]
    errors: list[GateFinding] = []
    for where, text in texts:
        for grounded in ground(text, tool_views, search_all=False).missing:
            ident = grounded.identifier
            if any(states_result(ident.value, d) for d in derived):
                continue  # the result of a derivation that evaluates to it
            if any(found_in(ident, *t) for t in user_texts):
                if tool_origin:
                    errors.append(
                        GateFinding(
                            code="provenance_mismatch",
                            path=path(*where),
                            message=f"{ident.value!r} is said to come from a tool but occurs only "
                            "in human_fact entries: it is the user's value, echoed",
                        )
                    )
                continue
            message = f"{ident.kind} {ident.value!r} does not occur in the cited evidence"
            wrong = grounded.miscalculation
            if wrong is not None:  # stated elsewhere, or not the extreme it says it is
                extreme = wrong.expected.operation in ("maximum", "minimum")
                lead = f"{ident.kind} {ident.value!r} is not the extreme it says it is"
                lead = lead if extreme else f"{message}, and it is not what it says it computes"
                message = f"{lead}: {describe_computation(wrong)}"
            code = "unverified_value" if ident.kind in _VALUE_KINDS else "unverified_identifier"
            errors.append(GateFinding(code=code, path=path(*where), message=message))
    return errors


def _unsaid(said: list[GateFinding], claim_text: list[GateFinding]) -> list[GateFinding]:
    """The claim text's findings that none of its propositions already reports: a
    problem is reported once, on the proposition it belongs to, and on the claim's
    text only when no proposition states the value."""
    reported = {(f.code, f.message) for f in said}
    return [f for f in claim_text if (f.code, f.message) not in reported]


def _distinct(entries: list[LedgerEntry]) -> list[LedgerEntry]:
    """Each entry once, in the order first cited (as the verifier reads them)."""
    return list({e.id: e for e in entries}.values())


def _says_tool(text: str) -> bool:
    return _TOOL_ORIGIN.search(text) is not None


def _intent_evidence(
    handover: Handover, intent_id: str, claim_evidence: dict[str, list[LedgerEntry]]
) -> list[LedgerEntry]:
    """Evidence of the claims an intent depends on, through other intents too."""
    by_id = {a.id: a for a in handover.action_intents}
    seen: set[str] = set()
    todo = [intent_id]
    evidence: list[LedgerEntry] = []
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        evidence += claim_evidence.get(current, [])
        if current in by_id:
            todo += by_id[current].depends_on
    return evidence


def _string_leaves(value: JsonValue, where: Where) -> Iterator[tuple[Where, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _string_leaves(item, (*where, k))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(item, (*where, key))
