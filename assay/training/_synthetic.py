"""Seeded premise/hypothesis pairs over made-up agent evidence.

Why: public NLI sets teach a small model about image captions and Wikipedia, not
about the tool outputs an agent cites (invoices, logs, listings, JSON records,
tickets, e-mails, config). Here every scene is one short, focused premise, the kind
the verifier builds for a claim (one record, row, log line or a few sentences), with
*twin* hypotheses: a faithful rewrite (entailment) and the same rewrite with exactly
one slot edited (not entailment). The edits are those agents make: a near-miss
number, the right value on the wrong row or role, flipped polarity, planned reported
as done, a hedge made certain, an error reported as success, an invented detail,
the wrong unit, period or currency. Pairs come in twins, so labels are balanced and
the model can only tell them apart by the edited slot.

Every name, identifier and figure is drawn at random from the pools below; nothing
is copied from any data set.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from assay.training._data import CONTRA, ENTAIL, NEUTRAL, NOT_ENTAIL, Pair
from assay.training._synthetic_scenes import SCENES
from assay.training._synthetic_values import Scene

__all__ = ["SyntheticPair", "generate", "pairs"]

#: Label of a one-slot edit by phenomenon: a value the premise states otherwise is a
#: contradiction; an addition the premise never states is neutral; edits whose
#: status depends on reading (scope, tense) train p(entailment) only.
PHENOMENON_LABEL = {
    "number_swap": CONTRA,
    "date_error": CONTRA,
    "entity_swap": CONTRA,
    "negation": CONTRA,
    "error_as_success": CONTRA,
    "unit_error": CONTRA,
    "bad_count": CONTRA,
    "bad_arithmetic": CONTRA,
    "misattribution": NOT_ENTAIL,
    "tense_shift": NOT_ENTAIL,
    "overgeneralisation": NOT_ENTAIL,
    "modality_shift": NEUTRAL,
    "invented_detail": NEUTRAL,
    "invented_identifier": NEUTRAL,
}


@dataclass(frozen=True, kw_only=True)
class SyntheticPair:
    """One generated pair with what it tests (``phenomenon``) and its scene's domain."""

    premise: str
    hypothesis: str
    label: int
    domain: str
    phenomenon: str

    def to_pair(self) -> Pair:
        return Pair(
            premise=self.premise, hypothesis=self.hypothesis, label=self.label, source="synthetic"
        )


#: Capitalised first words that come from a template, not from a name.
_TEMPLATE_OPENERS = frozenset({"The", "On", "In", "For", "According", "Consumption", "Every"})
Claim = tuple[str, str, str]  # faithful claim, its edited twin, the edit's phenomenon


def _claims(scene: Scene, rng: random.Random) -> Claim | None:
    """A faithful claim and one edited twin of it (same template, one slot changed)."""
    template = rng.choice(scene.templates)
    names = [n for n in scene.slots if "{" + n + "}" in template]
    chosen = {n: rng.choice(scene.slots[n].good) for n in names}
    positive = _finish(template.format(**chosen))
    edits = [(n, wrong, ph) for n in names for wrong, ph in scene.slots[n].bad]
    options: list[tuple[str, str]] = []
    if edits:
        # Phenomenon first, then an edit of it: rare kinds of edit (tense, polarity)
        # are drawn as often as the many number and entity edits.
        kind = rng.choice(sorted({ph for _, _, ph in edits}))
        slot, wrong, phenomenon = rng.choice([e for e in edits if e[2] == kind])
        options.append((_finish(template.format(**{**chosen, slot: wrong})), phenomenon))
    if scene.additions and (not options or rng.random() < 0.2):
        extra, phenomenon = rng.choice(scene.additions)
        options = [(_finish(positive.rstrip(".") + extra), phenomenon)]
    if scene.whole and rng.random() < 0.15:
        options = [rng.choice(scene.whole)]
    if not options or _finish(options[0][0]) == positive:
        return None
    return positive, _finish(options[0][0]), options[0][1]


def _twins(premise: str, domain: str, claim: Claim) -> list[SyntheticPair]:
    positive, negative, phenomenon = claim
    return [
        SyntheticPair(
            premise=premise,
            hypothesis=positive,
            label=ENTAIL,
            domain=domain,
            phenomenon="faithful",
        ),
        SyntheticPair(
            premise=premise,
            hypothesis=negative,
            label=PHENOMENON_LABEL[phenomenon],
            domain=domain,
            phenomenon=phenomenon,
        ),
    ]


def _joined(first: str, second: str) -> str:
    """Two claims as one sentence (the verifier checks a claim sentence by sentence)."""
    head = first.rstrip(".")
    tail = second.rstrip(".")
    if tail.split(" ", 1)[0] in _TEMPLATE_OPENERS:
        tail = tail[:1].lower() + tail[1:]
    return _finish(f"{head}, and {tail}" if len(head) < 90 else f"{head}; {tail}")


def _scene_pairs(rng: random.Random) -> list[SyntheticPair]:
    """Twins over one scene; sometimes over two pieces of evidence, where the claim
    needs both (one edit in either half) or the second is only a distractor."""
    first = rng.choice(SCENES)(rng)
    claim = _claims(first, rng)
    if claim is None:
        return []
    mode = rng.random()
    if mode >= 0.25:
        return _twins(first.premise, first.domain, claim)
    second = rng.choice(SCENES)(rng)
    premises = [first.premise, second.premise]
    rng.shuffle(premises)
    premise = "\n".join(premises)
    if mode < 0.12:
        return _twins(premise, first.domain, claim)
    other = _claims(second, rng)
    if other is None:
        return []
    positive = _joined(claim[0], other[0])
    if rng.random() < 0.5:
        negative, phenomenon = _joined(claim[1], other[0]), claim[2]
    else:
        negative, phenomenon = _joined(claim[0], other[1]), other[2]
    return _twins(premise, f"{first.domain}+{second.domain}", (positive, negative, phenomenon))


def _finish(text: str) -> str:
    """Capitalise a plain first word (never an identifier) and end with a full stop."""
    text = " ".join(text.split())
    first = text.split(" ", 1)[0]
    if first.isalpha() and first.islower():
        text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def generate(n: int, seed: int) -> list[SyntheticPair]:
    """``n`` pairs (half entailment, half not), the same list for the same seed."""
    rng = random.Random(seed)
    out: list[SyntheticPair] = []
    while len(out) < n:
        out += _scene_pairs(rng)
    return out[:n]


def pairs(n: int, seed: int) -> list[Pair]:
    """:func:`generate` as training :class:`Pair` records (source ``synthetic``)."""
    return [p.to_pair() for p in generate(n, seed)]
