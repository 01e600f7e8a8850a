"""The check pipeline: every registered check settles its own declared examples,
verdicts name the check that decided them, and a check of one's own is one call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import ControlPlane
from assay.contract import Derivation, PointerCitation, Proposition, QuoteCitation
from assay.ledger import Ledger
from assay.verifier import LexicalNLI
from assay.verifier.checks import (
    DEFAULT_CHECKS,
    MODEL_CHECK,
    Check,
    CheckSpec,
    Example,
    Finding,
    PropositionContext,
    RunEvidence,
)
from tests.verifier.test_ledger_verifier import handover

CASES = [
    pytest.param(check, example, id=f"{check.id}-{n}-{'finds' if example.finds else 'silent'}")
    for check in DEFAULT_CHECKS
    for n, example in enumerate(check.examples)
]


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ledger]:
    with ControlPlane.open(f"sqlite:///{tmp_path_factory.mktemp('checks') / 'a.db'}") as cp:
        yield cp.ledger


def context_of(ledger: Ledger, example: Example) -> PropositionContext:
    """The example as the verifier reads it: its evidence appended to a fresh run of
    a real ledger, every entry cited."""
    run = ledger.start_run()
    entries = [
        ledger.append(run, kind="tool_output", source=f"tool:e{i}", content=text)
        for i, text in enumerate(example.evidence)
    ]
    proposition = Proposition(
        id="p",
        text=example.proposition,
        pred=example.pred,
        args=list(example.args) if example.args is not None else None,
        ledger_ids=[e.id for e in entries],
        cites=[
            QuoteCitation(ledger_id=entries[c.entry].id, quote=c.quote)
            if c.quote is not None
            else PointerCitation(ledger_id=entries[c.entry].id, pointer=c.pointer or "")
            for c in example.cites
        ]
        or None,
        derivation=Derivation(expr=example.derivation[0], result=example.derivation[1])
        if example.derivation is not None
        else None,
    )
    return PropositionContext.build(run, proposition, RunEvidence(ledger.evidence(run)))


def test_every_check_declares_examples_both_ways() -> None:
    ids = [check.id for check in DEFAULT_CHECKS]
    assert len(ids) == len(set(ids)) and MODEL_CHECK not in ids
    for check in DEFAULT_CHECKS:
        kinds = {example.finds is None for example in check.examples}
        assert kinds == {True, False}, f"{check.id} needs an example it settles and one it leaves"


@pytest.mark.parametrize(("check", "example"), CASES)
def test_each_check_settles_its_examples_as_declared(
    ledger: Ledger, check: Check, example: Example
) -> None:
    context = context_of(ledger, example)
    found = check.find(context) if check.applies(context) else None
    if example.finds is None:
        assert found is None, f"{check.id} should leave it: {found}"
        return
    assert found is not None, f"{check.id} should settle it ({example.why})"
    assert (found.check, found.label) == (check.id, example.finds)
    if found.span is not None:
        entry = next(e for e in context.cited if e.id == found.ledger_id)
        assert 0 <= found.span[0] <= found.span[1] <= len(entry.text)


def test_a_verdict_names_the_check_that_decided_it(db_url: str) -> None:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        run = cp.ledger.start_run()
        table = cp.ledger.append(
            run, kind="tool_output", source="tool:psql", content="region | orders\nQLD | 992"
        )
        verified = cp.verifier.verify(
            run,
            handover(
                run,
                ("QLD had 992 orders.", [table.id]),
                ("QLD had 993 orders.", [table.id]),
                ("The regional table lists QLD.", [table.id]),
            ),
        )
        checks = [v.verdict.check for v in verified.verdicts]
        assert checks[1] == "unstated_values"
        assert checks[2] == MODEL_CHECK
        for verdict in verified.verdicts:
            body = json.loads(cp.ledger.get(verdict.ledger_id).text)
            assert body["check"] == verdict.verdict.check
            assert (body["model"] == "assay:deterministic") == (body["check"] != MODEL_CHECK)


def _holiday(context: PropositionContext) -> Finding | None:
    """A check of one's own: a claim about a public holiday needs a calendar entry."""
    if "holiday" in context.text.lower() and not any("calendar" in e.source for e in context.cited):
        return Finding(
            label="missing_evidence", reason="cite the holiday calendar", check="holiday_calendar"
        )
    return None


HOLIDAY = CheckSpec(
    id="holiday_calendar",
    summary="a holiday claim cites the calendar",
    finder=_holiday,
    examples=(
        Example(proposition="Friday is a holiday.", evidence=("Friday: closed",), finds=None),
    ),
)


def test_a_check_of_ones_own_is_asked_in_its_place(tmp_path: Path) -> None:
    with ControlPlane.open(f"sqlite:///{tmp_path / 'a.db'}", nli=LexicalNLI()) as cp:
        cp.verifier.add_check(HOLIDAY, before="verbatim")
        ids = [c.id for c in cp.verifier.checks]
        assert ids.index("holiday_calendar") == ids.index("verbatim") - 1
        with pytest.raises(ValueError, match="already registered"):
            cp.verifier.add_check(HOLIDAY)
        with pytest.raises(ValueError, match="no check with id 'nope'"):
            cp.verifier.add_check(CheckSpec(id="other", summary="", finder=_holiday), before="nope")
        run = cp.ledger.start_run()
        note = cp.ledger.append(
            run, kind="tool_output", source="tool:notes", content="Friday is a holiday."
        )
        (verdict,) = cp.verifier.verify(
            run, handover(run, ("Friday is a holiday.", [note.id]))
        ).verdicts
        # Before ``verbatim``: the word-for-word statement no longer settles it.
        assert (verdict.verdict.check, verdict.verdict.label) == (
            "holiday_calendar",
            "missing_evidence",
        )
