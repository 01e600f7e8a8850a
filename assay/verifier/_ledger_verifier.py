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
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from assay._search import Bm25Index
from assay.gate import (
    Claim,
    Handover,
    Proposition,
    PropositionVerdict,
    extract_identifiers,
    identifier_in_evidence,
)
from assay.ledger import Ledger, LedgerEntry, canonical_json, sha256_hex
from assay.tool_bus import ClaimStatus
from assay.verifier._cache import EntailmentCache
from assay.verifier._records import Entailment
from assay.verifier._standin import polarity_conflict
from assay.verifier._unsupported import Unsupported
from assay.verifier._verifier import Verifier

#: Claim types whose propositions are asserted and so must be entailed.
ASSERTED_TYPES = frozenset({"Assertion", "Quote", "ActionIntent"})
_QUOTED = re.compile(r"[\"“«]([^\"”»]{3,})[\"”»]")
DETERMINISTIC_MODEL = "assay:deterministic"
_CAPITALISED = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:-[A-Z]?[a-z]+)*(?![\w-])")
_WORDS = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


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
            self._index = Bm25Index([e.text for e in self._texts])
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
        """Fill every asserted proposition's ``entailment`` from ledger evidence."""
        model = handover if isinstance(handover, Handover) else Handover.model_validate(handover)
        self._ledger.run(run_id)
        cited_ids = [i for c in model.claims for p in c.propositions for i in p.ledger_ids]
        cited = self._ledger.get_many(cited_ids)
        run_evidence = _RunEvidence(self._ledger.evidence(run_id))
        digest = sha256_hex(canonical_json(model.model_dump(mode="json")))
        verdicts: list[Verdict] = []
        unsupported: list[Unsupported] = []
        claims: list[Claim] = []
        for claim in model.claims:
            if claim.type not in ASSERTED_TYPES:
                claims.append(claim)
                continue
            props: list[Proposition] = []
            for prop in claim.propositions:
                outcome = self._judge(run_id, prop, cited, run_evidence)
                verdict, missing = self._record(run_id, claim, prop, outcome, digest)
                verdicts.append(verdict)
                if missing is not None:
                    unsupported.append(missing)
                props.append(prop.model_copy(update={"entailment": verdict.verdict}))
            claims.append(claim.model_copy(update={"propositions": props}))
        filled = model.model_copy(update={"claims": claims})
        return VerifiedHandover(
            handover=filled, verdicts=tuple(verdicts), unsupported=tuple(unsupported)
        )

    # --- judging one proposition --------------------------------------------------

    def _judge(
        self,
        run_id: str,
        prop: Proposition,
        cited_by_id: Mapping[str, LedgerEntry],
        run_evidence: _RunEvidence,
    ) -> _Outcome:
        cited = [
            cited_by_id[i]
            for i in dict.fromkeys(prop.ledger_ids)
            if i in cited_by_id and cited_by_id[i].run_id == run_id and cited_by_id[i].is_evidence
        ]
        if not cited:
            return _missing(f"no ledger entry of this run supports “{prop.text}”", 0.0)
        quoted = _verbatim(prop.text, cited)
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
        gaps = _deterministic_gaps(prop.text, cited)
        if gaps:
            return _missing(_describe_gaps(gaps, cited, run_evidence.entries), 0.0)
        for entry in cited:
            span = polarity_conflict(entry.text, prop.text)
            if span is not None:
                return _Outcome(
                    label="contradiction",
                    score=0.0,
                    ledger_id=entry.id,
                    span=span,
                    model=DETERMINISTIC_MODEL,
                    reason=f"{entry.id} says the opposite: “{_clip(entry.text[slice(*span)])}”",
                )
        related = run_evidence.related(prop.text, self.related_k, exclude={e.id for e in cited})
        return self._model_outcome(prop.text, cited, related)

    def _model_outcome(
        self, text: str, cited: Sequence[LedgerEntry], related: Sequence[LedgerEntry]
    ) -> _Outcome:
        documents = [e.text for e in (*cited, *related)]
        joined, offsets = _join(cited)
        if len(cited) > 1:
            documents.append(joined)  # evidence that only holds when read together
        results = self.model.check_many([(d, text) for d in documents], cache=self.cache)
        support = [(cited[i], r) for i, r in enumerate(results[: len(cited)])] + [
            (_entry_at(offsets, r.evidence_span[0]), _shift(r, offsets))
            for r in results[len(cited) + len(related) :]
        ]
        entailing = [pair for pair in support if pair[1].label == "entailment"]
        best_entry, best = max(entailing or support, key=lambda pair: pair[1].score)
        entailed = bool(entailing)
        refuter = _refutation(
            list(zip((*cited, *related), results, strict=False)),
            len(cited),
            self.override_threshold if entailed else self.refute_threshold,
            clear_only=entailed,
        )
        if refuter is not None:
            entry, result = refuter
            snippet = entry.text[result.evidence_span[0] : result.evidence_span[1]]
            return _Outcome(
                label="contradiction",
                score=best.score,
                ledger_id=entry.id,
                span=result.evidence_span,
                model=result.model,
                reason=f"{entry.id} contradicts it: “{_clip(snippet)}”",
            )
        if entailed:
            return _Outcome(
                label="entailment",
                score=best.score,
                ledger_id=best_entry.id,
                span=best.evidence_span,
                model=best.model,
                reason="entailed",
            )
        return _Outcome(
            label="neutral",
            score=best.score,
            ledger_id=best_entry.id,
            span=best.evidence_span,
            model=best.model,
            reason=(
                f"no ledger entry states it; the closest, {best_entry.id}, supports it with "
                f"p={best.score:.2f} (threshold {self.model.threshold:.2f})"
            ),
        )

    # --- recording ----------------------------------------------------------------

    def _record(
        self, run_id: str, claim: Claim, prop: Proposition, outcome: _Outcome, digest: str
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
        entry = self._ledger.append(
            run_id,
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
        stored = self._ledger.append(
            run_id,
            kind="unsupported",
            source="verifier",
            content=canonical_json(missing.to_dict()).decode(),
            metadata={"claim_id": claim.id, "proposition_id": prop.id},
        )
        return record, Unsupported.from_json(stored.text, ledger_id=stored.id)

    # --- the grants' claim-status hook --------------------------------------------

    def claim_status(self, run_id: str, claim_ids: Sequence[str]) -> dict[str, ClaimStatus]:
        """Each claim's proposition labels from its latest verification in this run."""
        latest: dict[str, tuple[str, list[str], list[str]]] = {}
        for entry in self._ledger.entries(run_id, kinds=["verdict"]):
            body = json.loads(entry.text)
            claim_id, digest = body["claim_id"], body["handover_sha256"]
            if claim_id not in latest or latest[claim_id][0] != digest:
                latest[claim_id] = (digest, [], [])
            latest[claim_id][1].append(body["label"])
            latest[claim_id][2].append(body["proposition"])
        return {
            cid: ClaimStatus(
                claim_id=cid,
                known=cid in latest,
                labels=tuple(latest[cid][1]) if cid in latest else (),
                texts=tuple(latest[cid][2]) if cid in latest else (),
            )
            for cid in claim_ids
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


def _verbatim(
    text: str, cited: Sequence[LedgerEntry]
) -> tuple[LedgerEntry, tuple[int, int]] | None:
    """The cited entry and span that contain the proposition word for word (a final
    full stop aside): what evidence states verbatim needs no model to entail it."""
    needle = text.strip().rstrip(".").strip()
    if len(needle) < 8:
        return None
    for entry in cited:
        start = entry.text.find(needle)
        if start >= 0:
            return entry, (start, start + len(needle))
    return None


def _deterministic_gaps(text: str, cited: Sequence[LedgerEntry]) -> list[str]:
    """Identifiers, numbers and quoted spans of ``text`` that no cited entry contains."""
    gaps = [
        ident.value
        for ident in extract_identifiers(text)
        if not any(identifier_in_evidence(ident, e.text) for e in cited)
    ]
    gaps += [quote for quote in _QUOTED.findall(text) if not any(quote in e.text for e in cited)]
    words = {w.lower() for e in cited for w in _WORDS.findall(e.text)}
    gaps += [name for name in proper_names(text) if name.lower() not in words]
    return list(dict.fromkeys(gaps))


def proper_names(text: str) -> list[str]:
    """Capitalised words that are not the first word of a sentence: the names a
    narrative confabulation invents (people, places, products). Matching them against
    the evidence is case-insensitive and word by word, so "the Engagement Letter"
    still matches "the engagement letter"."""
    names: list[str] = []
    for match in _CAPITALISED.finditer(text):
        before = text[: match.start()].rstrip()
        if not before or before[-1] in '.!?:;\n"“(':
            continue
        names.append(match.group(0))
    return names


def _describe_gaps(
    gaps: Sequence[str], cited: Sequence[LedgerEntry], run_evidence: Sequence[LedgerEntry]
) -> str:
    cited_ids = {e.id for e in cited}
    parts: list[str] = []
    for gap in gaps:
        elsewhere = [e.id for e in run_evidence if e.id not in cited_ids and gap in e.text]
        where = (
            f" (it appears in {', '.join(elsewhere[:3])}, which is not cited)" if elsewhere else ""
        )
        parts.append(f"“{gap}” occurs in none of its cited evidence{where}")
    return "; ".join(parts)


def _refutation(
    scored: Sequence[tuple[LedgerEntry, Entailment]],
    n_cited: int,
    threshold: float,
    *,
    clear_only: bool,
) -> tuple[LedgerEntry, Entailment] | None:
    """The entry that refutes the proposition, if any.

    A cited entry refutes when contradiction is its top label; an uncited, related
    entry only when the model is confident (p >= ``threshold``), because the model is
    small. When the cited evidence already entails the proposition (``clear_only``),
    only a confident refutation overrides it, and the caller passes a higher bar
    (``override_threshold``, 0.9): a small cross-encoder reads "senior associates are
    capped at EUR 380" as contradicting "associates are capped at EUR 260" with
    p above 0.8, and overturning what the cited evidence states needs more than that.
    """
    candidates = [
        (entry, result)
        for i, (entry, result) in enumerate(scored)
        if result.label == "contradiction"
        and ((i < n_cited and not clear_only) or result.probs["contradiction"] >= threshold)
    ]
    if not candidates:
        return None
    return max(candidates, key=lambda pair: pair[1].probs["contradiction"])


def _join(entries: Sequence[LedgerEntry]) -> tuple[str, list[tuple[int, LedgerEntry]]]:
    """The cited entries as one document, with the offset at which each starts."""
    offsets: list[tuple[int, LedgerEntry]] = []
    parts: list[str] = []
    position = 0
    for entry in entries:
        offsets.append((position, entry))
        parts.append(entry.text)
        position += len(entry.text) + 1
    return "\n".join(parts), offsets


def _entry_at(offsets: Sequence[tuple[int, LedgerEntry]], position: int) -> LedgerEntry:
    return next(entry for start, entry in reversed(offsets) if start <= position)


def _shift(result: Entailment, offsets: Sequence[tuple[int, LedgerEntry]]) -> Entailment:
    """A joined-document result with its span made relative to the entry it starts in."""
    start = next(s for s, _ in reversed(offsets) if s <= result.evidence_span[0])
    entry = _entry_at(offsets, result.evidence_span[0])
    begin = result.evidence_span[0] - start
    end = min(result.evidence_span[1] - start, len(entry.text))
    return replace(result, evidence_span=(begin, end))


def _clip(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
