"""The verifier wired to the ledger: the only writer of a proposition's ``entailment``.

Evidence comes only from the ledger: the entries a proposition cites, then the run's
other evidence entries most related to it (BM25), so that a refutation the author
did not cite is still found. Cheap deterministic checks run first — every number,
date, amount, identifier, quoted span and proper name of the proposition must occur
in its cited evidence (else ``missing_evidence``), and a cited sentence that says the
same with the opposite polarity is a ``contradiction`` — without calling the model. Each verdict is
appended to the ledger as kind ``verdict``, each proposition not entailed as kind
``unsupported``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Protocol

from assay._limits import MAX_PROPOSITION_CHARS
from assay._search import Bm25Index
from assay.contract import (
    Claim,
    Handover,
    Proposition,
    PropositionVerdict,
    Unsupported,
    VerdictLabel,
)
from assay.gate import describe_computation
from assay.grounding import Computation, Miscalculation, view_of
from assay.ledger import Ledger, LedgerBatch, LedgerEntry, canonical_json, sha256_hex
from assay.tool_bus import ClaimStatus
from assay.verifier._antonyms import action_conflict, in_evidence_words
from assay.verifier._cache import EntailmentCache
from assay.verifier._deterministic import (
    clip,
    describe_gaps,
    deterministic_gaps,
    in_evidence_terms,
    states_another_value,
    verbatim,
)
from assay.verifier._direction import direction_conflict
from assay.verifier._expected import expected_as_done
from assay.verifier._fields import wrong_field, wrong_party
from assay.verifier._flags import flag_conflict, flag_support, state_conflict
from assay.verifier._premises import Reading, read
from assay.verifier._records import Entailment
from assay.verifier._rows import row_mismatch
from assay.verifier._slots import bind
from assay.verifier._standin import polarity_conflict
from assay.verifier._text import coverage, missing_numbers, split_claim, split_clauses
from assay.verifier._verifier import Verifier

#: Claim types whose propositions are asserted and so must be entailed.
ASSERTED_TYPES = frozenset({"Assertion", "Quote", "ActionIntent"})
DETERMINISTIC_MODEL = "assay:deterministic"
#: A premise is about a proposition when it writes at least this share of the
#: proposition's content words (or gives one of its values otherwise); only then
#: can an entry contradict it.
_ABOUT_IT = 0.5


class NLIModel(Protocol):
    """What the ledger verifier needs of a model: :class:`Verifier` is one, and so is
    the deterministic stand-in :class:`LexicalNLI`."""

    @property
    def threshold(self) -> float: ...

    def check_many(
        self, pairs: Iterable[tuple[str, str]], *, cache: EntailmentCache | None = None
    ) -> list[Entailment]: ...


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The verdict on one proposition and the ledger entry that records it."""

    claim_id: str
    proposition_id: str
    proposition: str
    verdict: PropositionVerdict
    ledger_id: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class VerifiedHandover:
    """The hand-over with every asserted proposition's ``entailment`` filled in."""

    handover: Handover
    verdicts: tuple[Verdict, ...]
    unsupported: tuple[Unsupported, ...]

    @property
    def all_entailed(self) -> bool:
        """Whether every asserted proposition was found entailed."""
        return not self.unsupported

    def claim_labels(self, claim_id: str) -> tuple[str, ...]:
        """The labels of one claim's propositions."""
        return tuple(v.verdict.label for v in self.verdicts if v.claim_id == claim_id)


@dataclass(frozen=True, kw_only=True)
class _Outcome:
    label: str
    score: float
    ledger_id: str | None
    span: tuple[int, int] | None
    model: str
    reason: str
    computations: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, kw_only=True)
class _Question:
    """A proposition the deterministic checks left open: what the model is asked.

    ``hypothesis`` is the proposition with its values, and its words for an action,
    written as the cited evidence writes them (:func:`in_evidence_terms`,
    :func:`in_evidence_words`)."""

    hypothesis: str
    cited: tuple[LedgerEntry, ...]
    related: tuple[LedgerEntry, ...]
    readings: tuple[Reading, ...]  # one per cited entry, then one per related entry
    computations: tuple[dict[str, Any], ...] = ()

    @cached_property
    def documents(self) -> list[str]:
        """The premises, in the order the answers are read back: each cited entry,
        each related one, then (with several cited) the cited entries read together."""
        documents = [r.text for r in self.readings]
        if len(self.cited) > 1:  # evidence that only holds together
            documents.append(_join([r.text for r in self.readings[: len(self.cited)]])[0])
        return documents


class _RunEvidence:
    """A run's evidence entries, with one BM25 index over their text built on first
    use and shared by every proposition of the hand-over."""

    def __init__(self, entries: Sequence[LedgerEntry]) -> None:
        self.entries = entries
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


class LedgerVerifier:
    """``cp.verifier``: verifies hand-overs against the run's ledger evidence.

    The NLI model is loaded on first use (``model_loader``, default
    :meth:`Verifier.default`), so opening a control plane stays cheap. It also serves
    as the grants' claim-status source: a claim's status is read back from the
    ``verdict`` entries of the run, so it survives a restart.
    """

    def __init__(
        self,
        ledger: Ledger,
        *,
        model_loader: Callable[[], NLIModel] = Verifier.default,
        cache: EntailmentCache | None = None,
        related_k: int = 3,
        refute_threshold: float = 0.8,
        override_threshold: float = 0.9,
    ) -> None:
        self._ledger = ledger
        self._model_loader = model_loader
        self._model: NLIModel | None = None
        self.cache = cache
        self.related_k = related_k
        self.refute_threshold = refute_threshold
        self.override_threshold = override_threshold

    @property
    def model(self) -> NLIModel:
        """The NLI model (loaded on first use)."""
        if self._model is None:
            self._model = self._model_loader()
        return self._model

    def verify(self, run_id: str, handover: Handover | Mapping[str, Any]) -> VerifiedHandover:
        """Fill every asserted proposition's ``entailment`` from ledger evidence.

        The run's evidence is read once; the propositions the deterministic checks
        leave open go to the model in one call; the verdicts (and each ``Unsupported``)
        are appended in one ledger transaction, after the model has answered.
        """
        model = handover if isinstance(handover, Handover) else Handover.model_validate(handover)
        evidence = self._ledger.evidence(run_id)  # UnknownRun for a run it does not hold
        asserted = [
            (claim, prop)
            for claim in model.claims
            if claim.type in ASSERTED_TYPES
            for prop in claim.propositions
        ]
        outcomes = self._judge_all(run_id, [prop for _, prop in asserted], evidence)
        recorded: list[tuple[Verdict, Unsupported | None]] = []
        if asserted:
            digest = sha256_hex(canonical_json(model.model_dump(mode="json")))
            with self._ledger.batch(run_id) as batch:
                recorded = [
                    self._record(batch, claim, prop, outcome, digest)
                    for (claim, prop), outcome in zip(asserted, outcomes, strict=True)
                ]
        verdicts = iter(verdict for verdict, _ in recorded)
        claims = [
            claim
            if claim.type not in ASSERTED_TYPES
            else claim.model_copy(
                update={
                    "propositions": [
                        p.model_copy(update={"entailment": next(verdicts).verdict})
                        for p in claim.propositions
                    ]
                }
            )
            for claim in model.claims
        ]
        return VerifiedHandover(
            handover=model.model_copy(update={"claims": claims}),
            verdicts=tuple(verdict for verdict, _ in recorded),
            unsupported=tuple(missing for _, missing in recorded if missing is not None),
        )

    def _judge_all(
        self, run_id: str, props: Sequence[Proposition], evidence: Sequence[LedgerEntry]
    ) -> list[_Outcome]:
        """Every proposition's outcome: the deterministic checks first, then one model
        call for all the propositions they left open."""
        by_id = {entry.id: entry for entry in evidence}
        run_evidence = _RunEvidence(evidence)
        first = [self._judge(run_id, prop, by_id, run_evidence) for prop in props]
        questions = [item for item in first if isinstance(item, _Question)]
        pairs = [(document, q.hypothesis) for q in questions for document in q.documents]
        answers = self.model.check_many(pairs, cache=self.cache) if pairs else []
        outcomes: list[_Outcome] = []
        position = 0
        for item in first:
            if isinstance(item, _Outcome):
                outcomes.append(item)
                continue
            count = len(item.documents)
            outcomes.append(self._model_outcome(item, answers[position : position + count]))
            position += count
        return outcomes

    # --- judging one proposition --------------------------------------------------

    def _judge(
        self,
        run_id: str,
        prop: Proposition,
        cited_by_id: Mapping[str, LedgerEntry],
        run_evidence: _RunEvidence,
    ) -> _Outcome | _Question:
        """The outcome the deterministic checks settle, or the question for the model."""
        cited = [
            cited_by_id[i]
            for i in dict.fromkeys(prop.ledger_ids)
            if i in cited_by_id and cited_by_id[i].run_id == run_id and cited_by_id[i].is_evidence
        ]
        if not cited:
            return _missing(f"no ledger entry of this run supports “{prop.text}”", 0.0)
        if len(prop.text) > MAX_PROPOSITION_CHARS:
            return _missing(
                f"the proposition is {len(prop.text):,} characters, over the limit of "
                f"{MAX_PROPOSITION_CHARS:,}; split it into statements that can be checked",
                0.0,
            )
        quoted = verbatim(prop.text, cited)
        if quoted is not None:
            entry, span = quoted
            return _Outcome(
                label="entailment",
                score=1.0,
                ledger_id=entry.id,
                span=span,
                model=DETERMINISTIC_MODEL,
                reason="stated verbatim in the cited evidence",
            )
        views = [view_of(e.text).text for e in cited]
        settled = deterministic_gaps(prop.text, views)
        if settled.miscalculation is not None:
            return _miscalculated(settled.gaps[0], settled.miscalculation, cited)
        if settled.gaps:
            return _missing(describe_gaps(settled.gaps, cited, run_evidence.entries), 0.0)
        # A typed proposition's slots are bound record by record below instead.
        for k in range(len(cited)) if not prop.args else ():
            wrong_row = row_mismatch(cited[k].text, prop.text, [*views[:k], *views[k + 1 :]])
            if wrong_row is not None:
                return _missing(f"{cited[k].id}: {wrong_row}", 0.0)
        computed = tuple(_computation_record(c, cited) for c in settled.computations)
        # What the checks below and the model read of each entry: all of it, or for a
        # long one the records most related to the proposition, so that their cost
        # grows with the proposition and not with the evidence.
        readings = [read(e.text, prop.text) for e in cited]
        misplaced = _misplaced(cited, readings, prop.text)
        if misplaced is not None:
            return misplaced
        if prop.args:
            binding = bind(prop.args, cited)
            if isinstance(binding, str):
                return _missing(binding, 0.0)
            # The entry that holds the slots is read as that one record; the other
            # cited entries (a document's title, say) stay beside it as context.
            readings = [
                binding.reading if e.id == binding.entry.id else r
                for e, r in zip(cited, readings, strict=True)
            ]
        if settled.computations:
            # The model reads what was computed beside the evidence it was computed from.
            stated = " ".join(f"{describe_computation(c)}." for c in settled.computations)
            readings = [replace(r, text=f"{r.text}\n{stated}") for r in readings]
        # A true/false field is read first: a line that only names the record
        # ("key: OPS-2281") is no sentence to read "is not blocked" against.
        flagged = _read_flags(cited, readings, prop.text) if not settled.computations else None
        if flagged is not None:
            return flagged
        clauses = [c for sentence in split_claim(prop.text) for c in split_clauses(sentence)]
        for entry, reading in zip(cited, readings, strict=True):
            span = _says_the_opposite(reading.text, prop.text, clauses)
            if span is not None:
                line = clip(reading.text[slice(*span)])
                return _deterministic(
                    "contradiction", entry, reading, span, f"{entry.id} says the opposite: “{line}”"
                )
        for entry, reading in zip(cited, readings, strict=True):
            span = expected_as_done(reading.text, prop.text)
            if span is not None:
                label = clip(reading.text[slice(*span)])
                return _deterministic(
                    "neutral",
                    entry,
                    reading,
                    span,
                    f"{entry.id} gives the date only as expected, not as done: “{label}”",
                )
        related = run_evidence.related(prop.text, self.related_k, exclude={e.id for e in cited})
        read_texts = [r.text for r in readings]
        return _Question(
            hypothesis=in_evidence_words(in_evidence_terms(prop.text, read_texts), read_texts),
            cited=tuple(cited),
            related=tuple(related),
            readings=(*readings, *(read(e.text, prop.text) for e in related)),
            computations=computed,
        )

    def _model_outcome(self, question: _Question, results: Sequence[Entailment]) -> _Outcome:
        """The outcome from the model's answers to ``question.documents``.

        Spans in the answers are offsets in what was read; the outcome's span is the
        stored span of the entry it names.
        """
        cited, related = question.cited, question.related
        n_cited = len(cited)
        readings = question.readings
        _, offsets = _join([r.text for r in readings[:n_cited]])
        scored: list[tuple[int, Entailment]] = [
            *enumerate(results[: n_cited + len(related)]),
            *(
                (_at(offsets, r.evidence_span[0]), _shift(r, offsets))
                for r in results[n_cited + len(related) :]
            ),
        ]
        support = [pair for pair in scored if pair[0] < n_cited]
        entailing = [pair for pair in support if pair[1].label == "entailment"]
        best_index, best = max(entailing or support, key=lambda pair: pair[1].score)
        entailed = bool(entailing)
        refuter = self._refutation(question, scored, clear_only=entailed)
        if refuter is not None:
            index, result = refuter
            entry, reading = (*cited, *related)[index], readings[index]
            snippet = reading.text[result.evidence_span[0] : result.evidence_span[1]]
            return _Outcome(
                label="contradiction",
                score=best.score,
                ledger_id=entry.id,
                span=reading.to_stored(*result.evidence_span),
                model=result.model,
                reason=f"{entry.id} contradicts it: “{clip(snippet)}”",
            )
        best_entry, best_reading = cited[best_index], readings[best_index]
        span = best_reading.to_stored(*best.evidence_span)
        if entailed:
            return _Outcome(
                label="entailment",
                score=best.score,
                ledger_id=best_entry.id,
                span=span,
                model=best.model,
                reason="entailed" + "".join(f"; {c['statement']}" for c in question.computations),
                computations=question.computations,
            )
        return _Outcome(
            label="neutral",
            score=best.score,
            ledger_id=best_entry.id,
            span=span,
            model=best.model,
            reason=self._not_stated(question, results, best_entry.id, best.score),
            computations=question.computations,
        )

    def _not_stated(
        self, question: _Question, results: Sequence[Entailment], closest: str, score: float
    ) -> str:
        """Why a proposition is not entailed, naming an uncited entry that states it."""
        n_cited = len(question.cited)
        elsewhere = [
            (question.related[i], question.readings[n_cited + i], result)
            for i, result in enumerate(results[n_cited : n_cited + len(question.related)])
            if result.label == "entailment"
        ]
        if elsewhere:
            entry, reading, result = max(elsewhere, key=lambda item: item[2].score)
            snippet = reading.text[result.evidence_span[0] : result.evidence_span[1]]
            return (
                f"its cited evidence does not state it, but {entry.id}, which it does not "
                f"cite, does: “{clip(snippet)}”; cite {entry.id}"
            )
        return (
            f"its cited evidence does not state it; the closest, {closest}, supports it "
            f"with p={score:.2f} (threshold {self.model.threshold:.2f})"
        )

    def _refutation(
        self, question: _Question, scored: Sequence[tuple[int, Entailment]], *, clear_only: bool
    ) -> tuple[int, Entailment] | None:
        """The entry (by index into cited + related) that refutes the proposition.

        Only a premise about the proposition can refute it: one that writes at
        least half of its content words, or says one of its values otherwise, or the
        opposite polarity (:func:`_gives_otherwise`). A small cross-encoder also
        answers "contradiction" for a premise that leaves most of the claim out
        (``flight: NX 482`` against a claim about that flight's delay), and for the
        supported and the edited twin of a claim alike; such an entry is silent, and
        naming it would send the author to the wrong place. A cited entry about the
        proposition refutes when contradiction is the model's top label; an uncited,
        related one only when the model is also confident (p >=
        ``refute_threshold``) and the entry writes at least half of the
        proposition's words (a release note's date is no other value for the time an
        incident's alert fired). When the cited evidence already entails the
        proposition (``clear_only``), only a confident refutation
        (``override_threshold``) that says something else in so many words
        overrides it: the model reads "senior associates are capped at EUR 380" as
        contradicting "associates are capped at EUR 260" with p above 0.8, and a
        time entry "8.0 h in total" as contradicting "8.0 h at EUR 260/h".
        """
        n_cited = len(question.cited)
        threshold = self.override_threshold if clear_only else self.refute_threshold
        candidates: list[tuple[int, Entailment]] = []
        for index, result in scored:
            if result.label != "contradiction":
                continue
            confident = result.probs["contradiction"] >= threshold
            if not (confident or (index < n_cited and not clear_only)):
                continue
            reading = question.readings[index]
            premise = reading.text[result.evidence_span[0] : result.evidence_span[1]]
            words_about = coverage(question.hypothesis, premise) >= _ABOUT_IT
            if index >= n_cited and not words_about:
                continue  # an uncited entry that writes few of its words is about else
            about = not clear_only and words_about
            if about or _gives_otherwise(premise, question.hypothesis):
                candidates.append((index, result))
        if not candidates:
            return None
        return max(candidates, key=lambda pair: pair[1].probs["contradiction"])

    # --- recording ----------------------------------------------------------------

    def _record(
        self, batch: LedgerBatch, claim: Claim, prop: Proposition, outcome: _Outcome, digest: str
    ) -> tuple[Verdict, Unsupported | None]:
        verdict = PropositionVerdict(
            label=outcome.label,  # type: ignore[arg-type]
            score=round(min(max(outcome.score, 0.0), 1.0), 6),
            ledger_id=outcome.ledger_id,
            span=outcome.span,
            model=outcome.model,
        )
        body = {
            "claim_id": claim.id,
            "proposition_id": prop.id,
            "proposition": prop.text,
            "ledger_ids": list(prop.ledger_ids),
            "handover_sha256": digest,
            "reason": outcome.reason,
            **verdict.model_dump(mode="json"),
        }
        if prop.pred is not None or prop.args is not None:
            # What a policy reads an argument's role from (``x-assay-role``).
            body["pred"] = prop.pred
            body["args"] = list(prop.args or ())
        if outcome.computations:
            body["computations"] = list(outcome.computations)
        entry = batch.append(
            kind="verdict",
            source="verifier",
            content=canonical_json(body).decode(),
            metadata={"claim_id": claim.id, "proposition_id": prop.id, "label": outcome.label},
        )
        record = Verdict(
            claim_id=claim.id,
            proposition_id=prop.id,
            proposition=prop.text,
            verdict=verdict,
            ledger_id=entry.id,
            reason=outcome.reason,
        )
        if outcome.label == "entailment":
            return record, None
        missing = Unsupported(
            proposition=prop.text,
            missing_evidence=outcome.reason,
            claim_id=claim.id,
            proposition_id=prop.id,
            label=outcome.label,  # type: ignore[arg-type]
            ledger_ids=tuple(prop.ledger_ids),
            contradicting_ledger_id=outcome.ledger_id if outcome.label == "contradiction" else None,
            contradicting_span=outcome.span if outcome.label == "contradiction" else None,
        )
        stored = batch.append(
            kind="unsupported",
            source="verifier",
            content=canonical_json(missing.to_dict()).decode(),
            metadata={"claim_id": claim.id, "proposition_id": prop.id},
        )
        return record, Unsupported.from_json(stored.text, ledger_id=stored.id)

    # --- the grants' claim-status hook --------------------------------------------

    def claim_status(self, run_id: str, claim_ids: Sequence[str]) -> dict[str, ClaimStatus]:
        """Each claim's proposition labels from its latest verification in this run."""
        latest: dict[str, tuple[str, list[dict[str, Any]]]] = {}
        for entry in self._ledger.entries(run_id, kinds=["verdict"]):
            body = json.loads(entry.text)
            claim_id, digest = body["claim_id"], body["handover_sha256"]
            if claim_id not in latest or latest[claim_id][0] != digest:
                latest[claim_id] = (digest, [])
            latest[claim_id][1].append(body)
        return {
            cid: _claim_status(cid, latest[cid][1] if cid in latest else None) for cid in claim_ids
        }

    def unsupported(self, run_id: str) -> list[Unsupported]:
        """Every ``Unsupported`` recorded in this run, oldest first."""
        return [
            Unsupported.from_json(e.text, ledger_id=e.id)
            for e in self._ledger.entries(run_id, kinds=["unsupported"])
        ]


def _missing(reason: str, score: float) -> _Outcome:
    return _Outcome(
        label="missing_evidence",
        score=score,
        ledger_id=None,
        span=None,
        model=DETERMINISTIC_MODEL,
        reason=reason,
    )


def _computation_record(computation: Computation, cited: Sequence[LedgerEntry]) -> dict[str, Any]:
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


def _miscalculated(
    value: str, miscalculation: Miscalculation, cited: Sequence[LedgerEntry]
) -> _Outcome:
    """A value the proposition says it computed, which the evidence computes otherwise:
    a contradiction that names the right value and where its operands stand."""
    record = _computation_record(miscalculation.expected, cited)
    first = record["operands"][0] if record["operands"] else None
    return _Outcome(
        label="contradiction",
        score=0.0,
        ledger_id=first["ledger_id"] if first else cited[0].id,
        span=(first["span"][0], first["span"][1]) if first else None,
        model=DETERMINISTIC_MODEL,
        reason=f"“{value}” is not what it says it computes: {record['statement']}",
        computations=(record,),
    )


def _join(texts: Sequence[str]) -> tuple[str, list[int]]:
    """Several texts as one document, with the offset at which each starts."""
    offsets: list[int] = []
    position = 0
    for text in texts:
        offsets.append(position)
        position += len(text) + 1
    return "\n".join(texts), offsets


def _at(offsets: Sequence[int], position: int) -> int:
    """The index of the text of a joined document that ``position`` falls in."""
    return max(i for i, start in enumerate(offsets) if start <= position)


def _shift(result: Entailment, offsets: Sequence[int]) -> Entailment:
    """A joined-document result with its span made relative to the text it starts in."""
    start = offsets[_at(offsets, result.evidence_span[0])]
    return replace(
        result,
        evidence_span=(result.evidence_span[0] - start, max(result.evidence_span[1] - start, 0)),
    )


def _says_the_opposite(
    text: str, proposition: str, clauses: Sequence[str]
) -> tuple[int, int] | None:
    """The span of ``text`` that says the opposite of the proposition or of one of
    its clauses (:func:`polarity_conflict`, :func:`direction_conflict`,
    :func:`action_conflict`), or None.

    A clause is read on its own because a proposition that joins two facts
    ("Lovelace is on floor 3; food is allowed in quiet rooms") shares too few words
    with the one sentence that denies one of them for the whole to be read against
    it."""
    found = (
        polarity_conflict(text, proposition)
        or direction_conflict(text, proposition)
        or action_conflict(text, proposition)
    )
    for clause in clauses:
        if found is not None:
            break
        found = (
            polarity_conflict(text, clause, shared_negation=True)
            or direction_conflict(text, clause)
            or action_conflict(text, clause)
        )
    return found


def _deterministic(
    label: VerdictLabel, entry: LedgerEntry, reading: Reading, span: tuple[int, int], reason: str
) -> _Outcome:
    """An outcome a deterministic check settled, pointing at ``span`` of what was read
    of ``entry`` (its stored span in the verdict): entailed with score 1, else 0."""
    return _Outcome(
        label=label,
        score=1.0 if label == "entailment" else 0.0,
        ledger_id=entry.id,
        span=reading.to_stored(*span),
        model=DETERMINISTIC_MODEL,
        reason=reason,
    )


def _misplaced(
    cited: Sequence[LedgerEntry], readings: Sequence[Reading], proposition: str
) -> _Outcome | None:
    """The outcome where the proposition puts a name in another field's or another
    party's role in a cited entry (:mod:`._fields`), or None."""
    for entry, reading in zip(cited, readings, strict=True):
        found = wrong_field(reading.text, proposition) or wrong_party(reading.text, proposition)
        if found is not None:
            span, _, given = found
            line = clip(reading.text[slice(*span)])
            return _deterministic(
                "neutral", entry, reading, span, f"{entry.id} gives “{line}”, not {given}"
            )
    return None


def _read_flags(
    cited: Sequence[LedgerEntry], readings: Sequence[Reading], proposition: str
) -> _Outcome | None:
    """The outcome a cited JSON entry's true/false or outcome field settles
    (:mod:`._flags`): a contradiction where the proposition states the field with
    the other value, an entailment where it states just that field with its value;
    None where no field settles it."""
    for entry, reading in zip(cited, readings, strict=True):
        text = reading.text
        span = flag_conflict(text, proposition) or state_conflict(text, proposition)
        if span is not None:
            line = clip(text[slice(*span)])
            return _deterministic(
                "contradiction", entry, reading, span, f"{entry.id} says the opposite: “{line}”"
            )
    for entry, reading in zip(cited, readings, strict=True):
        span = flag_support(reading.text, proposition)
        if span is not None:
            line = clip(reading.text[slice(*span)])
            return _deterministic(
                "entailment", entry, reading, span, f"stated by the field “{line}”"
            )
    return None


def _gives_otherwise(premise: str, proposition: str) -> bool:
    """Whether ``premise``, which the model reads as contradicting ``proposition``,
    says something else in so many words: the opposite polarity, or one of its values
    given otherwise (:func:`states_another_value`). A small model also reads a
    premise that leaves a detail out as contradicting it."""
    if states_another_value(premise, proposition):
        return True
    # A premise without all of the proposition's numbers is about another line,
    # date or amount: its polarity says nothing of this one (and is not read).
    return not missing_numbers(proposition, premise) and (
        polarity_conflict(premise, proposition) is not None
    )


def _claim_status(claim_id: str, verdicts: list[dict[str, Any]] | None) -> ClaimStatus:
    """A claim's status from the bodies of its latest verdicts (``None``: unknown)."""
    if verdicts is None:
        return ClaimStatus(claim_id=claim_id, known=False)
    return ClaimStatus(
        claim_id=claim_id,
        known=True,
        labels=tuple(v["label"] for v in verdicts),
        texts=tuple(v["proposition"] for v in verdicts),
        slots=tuple((v.get("pred"), tuple(v.get("args") or ())) for v in verdicts),
    )
