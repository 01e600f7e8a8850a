"""One entry point for grounding a statement's values in its evidence.

:func:`ground` finds every identifier of a statement (hashes, ids, paths, hosts,
e-mail addresses, amounts, quantities, dates: :func:`extract_identifiers`) and says
of each whether an evidence text states it (and which), whether it is exactly the
computation the statement says it is over the evidence, or a computation done
wrong, or none of these. The gate grounds a proposition against its cited tool
outputs; the verifier reads the same grounding instead of doing it again: results
are kept by the digest of the statement and its evidence texts (within a byte
bound), so the second caller of one hand-over finds the first's. Across processes,
or after a restart, the grounding is simply redone: it is a pure function of its
inputs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from assay.grounding._arithmetic import CUES, Computation, Miscalculation
from assay.grounding._digest_cache import DigestCache
from assay.grounding._identifiers import computation_in, extract_identifiers, identifier_in_evidence
from assay.grounding._patterns import Identifier

__all__ = ["GROUNDING_CACHE", "Grounded", "Grounding", "ground"]

#: Whether a statement says one of its values is the largest or smallest of
#: something: only then is a value the evidence states checked for being that.
_SUPERLATIVE = re.compile(f"{CUES['highest'].pattern}|{CUES['lowest'].pattern}", re.I)


@dataclass(frozen=True, kw_only=True)
class Grounded:
    """One identifier of a statement and how its evidence grounds it.

    ``found_in`` holds the indexes of the evidence texts that state it (in any
    written form the matching rules accept); where none does, ``computation`` is
    the checked computation that gives it, or ``miscalculation`` the computation the
    statement describes that gives another value. A value the statement says is the
    largest or smallest of a column, and that evidence states but is not, has no
    ``found_in`` and the miscalculation that names the right one."""

    identifier: Identifier
    found_in: tuple[int, ...] = ()
    computation: Computation | None = None
    miscalculation: Miscalculation | None = None

    @property
    def established(self) -> bool:
        """Stated by an evidence text, or exactly computed from them."""
        return bool(self.found_in) or self.computation is not None


@dataclass(frozen=True, kw_only=True)
class Grounding:
    """A statement's identifiers, each grounded (:class:`Grounded`), in order."""

    values: tuple[Grounded, ...]

    @property
    def missing(self) -> tuple[Grounded, ...]:
        """The identifiers neither stated nor computed."""
        return tuple(g for g in self.values if not g.established)


def ground(text: str, evidence: Sequence[str], *, search_all: bool = True) -> Grounding:
    """How ``evidence`` (texts, a JSON entry through its view) grounds each
    identifier of ``text``. With ``search_all=False`` the search for an identifier
    stops at the first text that states it (``found_in`` holds that one): what the
    gate and the verifier need, at the cost of one search."""
    return GROUNDING_CACHE.get_keyed(
        _key(text, evidence, search_all), lambda: _ground(text, evidence, search_all=search_all)
    )


def _ground(text: str, evidence: Sequence[str], *, search_all: bool) -> Grounding:
    found: list[Grounded] = []
    superlative = _SUPERLATIVE.search(text) is not None
    for ident in extract_identifiers(text):
        holders = _holders(ident, evidence, search_all=search_all)
        if holders:
            # "the heaviest pallet, at 401.5 kg": stated, but not the heaviest.
            wrong = computation_in(ident, text, evidence) if superlative else None
            if isinstance(wrong, Miscalculation):
                found.append(Grounded(identifier=ident, miscalculation=wrong))
            else:
                found.append(Grounded(identifier=ident, found_in=holders))
            continue
        computed = computation_in(ident, text, evidence)
        found.append(
            Grounded(
                identifier=ident,
                computation=computed if isinstance(computed, Computation) else None,
                miscalculation=computed if isinstance(computed, Miscalculation) else None,
            )
        )
    return Grounding(values=tuple(found))


def _holders(ident: Identifier, evidence: Sequence[str], *, search_all: bool) -> tuple[int, ...]:
    holders: list[int] = []
    for index, document in enumerate(evidence):
        if identifier_in_evidence(ident, document):
            holders.append(index)
            if not search_all:
                break
    return tuple(holders)


def _key(text: str, evidence: Sequence[str], search_all: bool) -> bytes:
    digest = hashlib.sha256(b"all" if search_all else b"first")
    for part in (text, *evidence):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.digest()


#: The groundings of this process, shared by the gate and the verifier, by digest
#: of the statement and its evidence texts (the texts themselves are not held).
GROUNDING_CACHE: DigestCache[Grounding] = DigestCache(
    None, lambda g: 200 * (len(g.values) + 1), max_bytes=8 * 1024 * 1024
)
