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

from assay.contract import Claim, Handover, Proposition, PropositionVerdict, Unsupported
from assay.ledger import Ledger, LedgerBatch, LedgerEntry, canonical_json, sha256_hex
from assay.tool_bus import ClaimStatus
from assay.verifier._accounted import ROWS
from assay.verifier._antonyms import in_evidence_words
from assay.verifier._cache import EntailmentCache
from assay.verifier._citations import cite_records, stored_span
from assay.verifier._context import PropositionContext, RunEvidence
from assay.verifier._deterministic import (
    clip,
    in_evidence_terms,
    restates_a_value,
    states_another_value,
)
from assay.verifier._pipeline import (
    ACCOUNTED_BAR,
    ACCOUNTED_CHECK,
    MODEL_CHECK,
    Check,
    first_finding,
    insert_check,
)
from assay.verifier._polarity import polarity_conflict
from assay.verifier._premises import Reading, read
from assay.verifier._records import Entailment
from assay.verifier._text import content_words, coverage, missing_numbers, stem_set
from assay.verifier._verifier import Verifier
from assay.verifier.checks import DEFAULT_CHECKS

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
    check: str
    reason: str
    computations: tuple[dict[str, Any], ...] = ()
    #: The proposition's citations as the verdict records them (where it has any).
    cites: tuple[dict[str, Any], ...] = ()
    #: Where one record accounts for every slot but the model's doubt kept it from
    #: being entailed: the entry, the record and the doubt (what a bar is fitted on).
    accounted: dict[str, Any] | None = None


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
    #: The proposition as the checks read it: whether one record accounts for all
    #: its slots is asked only where the model leaves it open.
    context: PropositionContext
    computations: tuple[dict[str, Any], ...] = ()
    #: Per cited entry, the stored span of what the proposition cites in it, if it does.
    pointed: tuple[tuple[int, int] | None, ...] = ()

    @cached_property
    def doubt_pair(self) -> tuple[str, str] | None:
        """Where one record accounts for the proposition with values code computed
        there, what the model is also asked: the proposition with those values
        written as "some", against the accounting entry's reading. A number the
        premise never writes weighs against entailment (:mod:`assay.verifier._verifier`),
        and a value code proved must not (:meth:`LedgerVerifier._accounted`)."""
        found = self.context.accounted
        if found is None or not found.computed or found.record == ROWS:
            return None
        masked = self.context.text
        for value in found.computed:
            masked = masked.replace(value, "some")
        return self.readings[self.cited.index(found.entry)].text, masked

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Every question to the model: each document with the hypothesis, then the
        :attr:`doubt_pair` where there is one."""
        pairs = [(document, self.hypothesis) for document in self.documents]
        return pairs + ([self.doubt_pair] if self.doubt_pair is not None else [])

    @cached_property
    def documents(self) -> list[str]:
        """The premises, in the order the answers are read back: each cited entry,
        each related one, then (with several cited) the cited entries read together."""
        documents = [r.text for r in self.readings]
        if len(self.cited) > 1:  # evidence that only holds together
            documents.append(_join([r.text for r in self.readings[: len(self.cited)]])[0])
        return documents


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
        accounted_bar: float | None = None,
        checks: Sequence[Check] = DEFAULT_CHECKS,
    ) -> None:
        self._ledger = ledger
        self._checks: tuple[Check, ...] = tuple(checks)
        self._model_loader = model_loader
        self._model: NLIModel | None = None
        self.cache = cache
        self.related_k = related_k
        self.refute_threshold = refute_threshold
        self.override_threshold = override_threshold
        self.accounted_bar = ACCOUNTED_BAR if accounted_bar is None else accounted_bar

    @property
    def checks(self) -> tuple[Check, ...]:
        """The deterministic checks, in the order they are asked (see
        :mod:`assay.verifier.checks`)."""
        return self._checks

    def add_check(self, check: Check, *, before: str | None = None) -> None:
        """Ask ``check`` too: before the check with id ``before``, or after every
        other deterministic check (and so before the model). ``ValueError`` for an
        id already taken or a ``before`` that names no check."""
        self._checks = insert_check(self._checks, check, before=before)

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
        run_evidence = RunEvidence(evidence)
        contexts = [PropositionContext.build(run_id, prop, run_evidence) for prop in props]
        first = [self._judge(context) for context in contexts]
        questions = [item for item in first if isinstance(item, _Question)]
        pairs = [pair for q in questions for pair in q.pairs]
        answers = self.model.check_many(pairs, cache=self.cache) if pairs else []
        outcomes: list[_Outcome] = []
        position = 0
        for item in first:
            if isinstance(item, _Outcome):
                outcomes.append(item)
                continue
            count = len(item.pairs)
            outcomes.append(self._model_outcome(item, answers[position : position + count]))
            position += count
        return [
            replace(outcome, cites=tuple(cite_records(c.proposition.cites, c.citations)))
            if c.proposition.cites
            else outcome
            for outcome, c in zip(outcomes, contexts, strict=True)
        ]

    # --- judging one proposition --------------------------------------------------

    def _judge(self, context: PropositionContext) -> _Outcome | _Question:
        """The outcome the first deterministic check that settles it gives, or the
        question for the model."""
        finding = first_finding(self._checks, context)
        if finding is not None:
            return _Outcome(
                label=finding.label,
                score=1.0 if finding.label == "entailment" else 0.0,
                ledger_id=finding.ledger_id,
                span=finding.span,
                model=DETERMINISTIC_MODEL,
                check=finding.check,
                reason=finding.reason,
                computations=finding.computations,
            )
        readings = context.final_readings
        read_texts = [r.text for r in readings]
        related = context.run_evidence.related(
            context.text, self.related_k, exclude={e.id for e in context.cited}
        )
        return _Question(
            context=context,
            hypothesis=in_evidence_words(in_evidence_terms(context.text, read_texts), read_texts),
            cited=context.cited,
            related=tuple(related),
            readings=(*readings, *(read(e.text, context.text) for e in related)),
            computations=context.computations,
            pointed=tuple(
                stored_span(spans) if (spans := context.cited_spans(e)) else None
                for e in context.cited
            ),
        )

    def _model_outcome(self, question: _Question, results: Sequence[Entailment]) -> _Outcome:
        """The outcome from the model's answers to ``question.documents``.

        Spans in the answers are offsets in what was read; the outcome's span is the
        stored span of the entry it names.
        """
        cited, related = question.cited, question.related
        n_cited = len(cited)
        doubt = results[-1] if question.doubt_pair is not None else None
        results = results[: len(question.documents)]
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
                check=MODEL_CHECK,
                reason=f"{entry.id} contradicts it: “{clip(snippet)}”",
            )
        best_entry, best_reading = cited[best_index], readings[best_index]
        span = best_reading.to_stored(*best.evidence_span)
        if entailed and question.pointed and question.pointed[best_index] is not None:
            span = question.pointed[best_index]  # the bytes the proposition cites
        if entailed:
            return _Outcome(
                label="entailment",
                score=best.score,
                ledger_id=best_entry.id,
                span=span,
                model=best.model,
                check=MODEL_CHECK,
                reason="entailed" + "".join(f"; {c['statement']}" for c in question.computations),
                computations=question.computations,
            )
        accounted = self._accounted(question, support, doubt)
        if isinstance(accounted, _Outcome):
            return accounted
        reason = self._not_stated(question, results, best_entry.id, best.score)
        if accounted is not None:
            reason += (
                f"; every value, identifier and name of it stands in {accounted['ledger_id']} "
                f"({accounted['record'] or 'top level'}), but the model reads a contradiction "
                f"there (p={accounted['doubt']:.2f} >= {self.accounted_bar:.2f})"
            )
        return _Outcome(
            label="neutral",
            score=best.score,
            ledger_id=best_entry.id,
            span=span,
            model=best.model,
            check=MODEL_CHECK,
            reason=reason,
            computations=question.computations,
            accounted=accounted,
        )

    def _accounted(
        self,
        question: _Question,
        support: Sequence[tuple[int, Entailment]],
        masked: Entailment | None,
    ) -> _Outcome | dict[str, Any] | None:
        """Entailment for a proposition the model leaves open but one record of its
        cited evidence accounts for slot by slot (:mod:`assay.verifier._accounted`),
        unless the model reads a contradiction in a cited entry with p >=
        ``accounted_bar``: read with the values code computed in that record
        written as "some" (``masked``, :attr:`_Question.doubt_pair`), so that the
        model judges what the proposition says of them and not the arithmetic. Where
        the model's doubt keeps it out, where it stands and the doubt (for the
        verdict, and for fitting the bar)."""
        found = question.context.accounted
        if found is None:
            return None
        # The entry that accounts for it is the one whose doubt counts; another cited
        # entry that reads as contradicting it has had its say in _refutation.
        index = question.cited.index(found.entry)
        read = masked if masked is not None else support[index][1]
        doubt = read.probs.get("contradiction", 0.0)
        if doubt >= self.accounted_bar:
            return {"ledger_id": found.entry.id, "record": found.record, "doubt": round(doubt, 4)}
        score = max(result.score for _, result in support)
        where = f"{found.entry.id} ({found.record or 'top level'})"
        return _Outcome(
            label="entailment",
            score=score,
            ledger_id=found.entry.id,
            span=question.pointed[index] if question.pointed else None,
            model=support[index][1].model,
            check=ACCOUNTED_CHECK,
            reason=(
                f"every value, identifier and name of it stands in {where}"
                + "".join(f", “{v}” computed there" for v in found.computed)
                + f", and the model reads no contradiction (p={doubt:.2f} < "
                f"{self.accounted_bar:.2f})"
                + "".join(f"; {c['statement']}" for c in question.computations)
            ),
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
            if _gives_otherwise(premise, question.hypothesis) or (
                about and not restates_a_value(premise, question.hypothesis)
            ):
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
            check=outcome.check,
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
        if outcome.cites:
            body["cites"] = list(outcome.cites)
        if outcome.accounted is not None:
            body["accounted"] = outcome.accounted
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


def _gives_otherwise(premise: str, proposition: str) -> bool:
    """Whether ``premise``, which the model reads as contradicting ``proposition``,
    says something else in so many words: the opposite polarity, or one of its values
    given otherwise (:func:`states_another_value`). A small model also reads a
    premise that leaves a detail out as contradicting it."""
    if states_another_value(premise, proposition) and _same_record(premise, proposition):
        return True
    # A premise without all of the proposition's numbers is about another line,
    # date or amount: its polarity says nothing of this one (and is not read).
    return not missing_numbers(proposition, premise) and (
        polarity_conflict(premise, proposition) is not None
    )


def _same_record(premise: str, proposition: str) -> bool:
    """Whether ``premise`` is about what ``proposition`` is about: it writes one of
    its words other than a number, a time or a unit ("series[0].t: 10:30:00Z", a
    metric's timestamp, is about no deploy a claim dates at 10:21)."""
    words = {w for w in content_words(proposition) if not any(c.isdigit() for c in w)}
    return bool(words - _UNIT_WORDS & stem_set(premise))


#: Words of a value that name no record: a time zone, a currency, a unit of time.
_UNIT_WORDS = frozenset({"utc", "gmt", "z", "eur", "usd", "gbp", "h", "min", "s", "ms"})


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
