"""One proposition as every check reads it, built once.

Each derived reading (the entries' views, the values grounded against them, what is
read of each entry, the typed slots' record, the proposition's clauses) is computed
on first use and then shared, so that a check costs what it alone adds, and a
proposition settled early never pays for a reading only a later check needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

from assay._search import Bm25Index
from assay.contract import Proposition
from assay.gate import cited_value, evaluate_derivation
from assay.grounding import Computation, Derived, describe_computation, states_result, view_of
from assay.ledger import LedgerEntry
from assay.verifier._accounted import Accounted, accounted
from assay.verifier._citations import Cited, CitedSpan, cited_reading, located
from assay.verifier._deterministic import Settled, deterministic_gaps
from assay.verifier._premises import Reading, read
from assay.verifier._slots import Binding, bind
from assay.verifier._text import split_claim, split_clauses


class RunEvidence:
    """A run's evidence entries, with one BM25 index over their text built on first
    use and shared by every proposition of the hand-over."""

    def __init__(self, entries: Sequence[LedgerEntry]) -> None:
        self.entries = entries
        self.by_id = {entry.id: entry for entry in entries}
        self._texts = [e for e in entries if isinstance(e.content, str)]
        self._index: Bm25Index | None = None

    def related(self, text: str, k: int, *, exclude: set[str]) -> list[LedgerEntry]:
        """Up to ``k`` entries most related to ``text``, none of those in ``exclude``."""
        if k <= 0 or not self._texts:
            return []
        if self._index is None:
            self._index = Bm25Index([view_of(e.text).text for e in self._texts])
        hits = self._index.search(text, k + len(exclude))
        return [self._texts[i] for i, _ in hits if self._texts[i].id not in exclude][:k]


class PropositionContext:
    """A proposition, its cited evidence and what the checks read of them.

    ``cited`` holds the entries the proposition cites that are evidence of this
    run, each once, in the order cited. ``readings`` is what is read of each cited
    entry (all of it, or for a long entry the records most related to the
    proposition); ``final_readings`` is what the later checks and the model read:
    the typed slots' record in place of its entry, and each verified computation
    written beside the evidence it was computed from.
    """

    def __init__(
        self,
        *,
        run_id: str,
        proposition: Proposition,
        cited: Sequence[LedgerEntry],
        run_evidence: RunEvidence,
    ) -> None:
        self.run_id = run_id
        self.proposition = proposition
        self.cited = tuple(cited)
        self.run_evidence = run_evidence

    @classmethod
    def build(
        cls, run_id: str, proposition: Proposition, run_evidence: RunEvidence
    ) -> PropositionContext:
        """The context of ``proposition``: its cited entries that are evidence of
        ``run_id`` (an id cited twice counts once; others are left out)."""
        by_id: Mapping[str, LedgerEntry] = run_evidence.by_id
        cited = [
            by_id[i]
            for i in dict.fromkeys(proposition.ledger_ids)
            if i in by_id and by_id[i].run_id == run_id and by_id[i].is_evidence
        ]
        return cls(run_id=run_id, proposition=proposition, cited=cited, run_evidence=run_evidence)

    @property
    def text(self) -> str:
        """The proposition's text."""
        return self.proposition.text

    @property
    def typed(self) -> bool:
        """Whether the proposition carries ``args`` (its slots are bound record by
        record instead of row by row)."""
        return bool(self.proposition.args)

    @cached_property
    def views(self) -> list[str]:
        """Each cited entry's view: a JSON entry as ``path: value`` lines."""
        return [view_of(e.text).text for e in self.cited]

    @cached_property
    def grounded(self) -> Settled:
        """The proposition's values against the views: those found nowhere, those
        computed from the evidence, and a computation done wrong. The result of a
        verified derivation counts as found."""
        verified = self.verified_derivation
        if verified is None:
            return deterministic_gaps(self.text, self.views)
        return deterministic_gaps(
            self.text, self.views, derived=lambda value: states_result(value, verified)
        )

    @cached_property
    def derivation(self) -> Derived | str | None:
        """The proposition's ``derivation`` evaluated over what its citations name
        (:func:`assay.grounding.derive`), or why it cannot be; ``None`` without one."""
        derivation = self.proposition.derivation
        if derivation is None:
            return None
        named = {c.index for group in self.citations.values() for c in group}
        by_id = self.run_evidence.by_id
        cited = [
            cited_value(by_id[cite.ledger_id].text, cite) if k in named else None
            for k, cite in enumerate(self.proposition.cites or ())
        ]
        return evaluate_derivation(self.text, derivation.expr, derivation.result, cited)

    @cached_property
    def verified_derivation(self) -> Derived | None:
        """The derivation, where it evaluates to its stated result."""
        derived = self.derivation
        return derived if isinstance(derived, Derived) and derived.holds else None

    def derivation_record(self, derived: Derived) -> dict[str, Any]:
        """A derivation as a verdict records it, beside the computations: each cited
        value it read with its ledger entry and stored span."""
        cites = self.proposition.cites or ()
        found = {c.index: c.found for group in self.citations.values() for c in group}
        operands: list[dict[str, Any]] = []
        for k in derived.cites:
            span = found.get(k)
            if isinstance(span, CitedSpan):
                operands.append(
                    {"ledger_id": cites[k].ledger_id, "span": list(span.stored), "text": span.shown}
                )
        return {
            "operation": derived.operation,
            "result": derived.value,
            "unit": derived.unit,
            "cue": "derivation",
            "operands": operands,
            "statement": derived.statement,
            "expr": derived.expr,
            "stated": derived.result,
        }

    @cached_property
    def computations(self) -> tuple[dict[str, Any], ...]:
        """The verified computations as a verdict records them (operands with their
        ledger entries and stored spans, so that an auditor can redo them), the
        verified derivation's first."""
        records = [computation_record(c, self.cited) for c in self.grounded.computations]
        verified = self.verified_derivation
        if verified is not None:
            records.insert(0, self.derivation_record(verified))
        return tuple(records)

    @cached_property
    def citations(self) -> dict[str, list[Cited]]:
        """The proposition's citations (``cites``) by the entry they name, each with
        what it names there or why nothing; empty for a proposition without them.
        An entry that is not cited evidence of this run is left out."""
        by_entry: dict[str, list[tuple[int, Any]]] = {}
        for k, cite in enumerate(self.proposition.cites or ()):
            by_entry.setdefault(cite.ledger_id, []).append((k, cite))
        return {e.id: located(e.text, by_entry[e.id]) for e in self.cited if e.id in by_entry}

    def cited_spans(self, entry: LedgerEntry) -> list[CitedSpan]:
        """What the citations of ``entry`` name in it (those that name something)."""
        return [c.found for c in self.citations.get(entry.id, ()) if isinstance(c.found, CitedSpan)]

    @cached_property
    def readings(self) -> list[Reading]:
        """What is read of each cited entry for this proposition, so that the cost
        of what reads it grows with the proposition and not with the evidence: where
        the proposition cites a span or field of the entry, what those name, with
        the records that hold them (:func:`cited_reading`)."""
        if not self.proposition.cites:
            return [read(e.text, self.text) for e in self.cited]
        readings: list[Reading] = []
        for entry in self.cited:
            spans = self.cited_spans(entry)
            readings.append(
                cited_reading(entry.text, spans) if spans else read(entry.text, self.text)
            )
        return readings

    @cached_property
    def binding(self) -> Binding | str | None:
        """The record holding every slot of a typed proposition, or why none does;
        ``None`` for an untyped proposition."""
        args = self.proposition.args
        return bind(args, self.cited) if args else None

    @cached_property
    def accounted(self) -> Accounted | None:
        """The record of a cited entry that holds every value, identifier and name
        of an untyped proposition (:func:`accounted`), or ``None``; a typed one is
        bound by :attr:`binding` instead."""
        return None if self.typed else accounted(self.text, self.cited)

    @cached_property
    def final_readings(self) -> list[Reading]:
        """The readings with the slots' record in place of its entry (the other cited
        entries, a document's title say, stay beside it as context) and each verified
        computation stated beside the evidence."""
        readings = self.readings
        binding = self.binding
        if isinstance(binding, Binding):
            readings = [
                binding.reading if e.id == binding.entry.id else r
                for e, r in zip(self.cited, readings, strict=True)
            ]
        statements = [f"{describe_computation(c)}." for c in self.grounded.computations]
        if self.verified_derivation is not None:
            said = self.verified_derivation.statement
            statements.insert(0, f"{said[:1].upper()}{said[1:]}.")
        if statements:
            stated = " ".join(statements)
            readings = [replace(r, text=f"{r.text}\n{stated}") for r in readings]
        return readings

    @cached_property
    def clauses(self) -> list[str]:
        """The proposition's clauses, sentence by sentence: a proposition that joins
        two facts is also read one fact at a time."""
        return [c for sentence in split_claim(self.text) for c in split_clauses(sentence)]


def computation_record(computation: Computation, cited: Sequence[LedgerEntry]) -> dict[str, Any]:
    """A computation as the verdict records it: each operand with its ledger entry
    and stored span, so that an auditor can redo it."""
    operands: list[dict[str, Any]] = []
    for operand in computation.operands:
        entry = cited[operand.document]
        start, end = view_of(entry.text).to_stored(operand.start, operand.end)
        operands.append(
            {"ledger_id": entry.id, "span": [start, end], "text": entry.text[start:end]}
        )
    return {
        "operation": computation.operation,
        "result": format(computation.result.normalize(), "f"),
        "unit": computation.unit,
        "cue": computation.cue,
        "operands": operands,
        "statement": describe_computation(computation),
    }
