"""Named training mixes: which sets, how many pairs of each, under which licence.

A mix is chosen by name (``assay verifier train --mix commercial``) and recorded in
``train_report.json`` with every source's licence, so a model's card can say exactly
what it was trained on. ``full`` is the mix of the first shipped model, which
includes non-commercial sets; ``commercial`` (the default, and the shipped model's
mix) keeps only sets whose stated licence allows commercial use, plus synthetic
agent-evidence pairs (:mod:`assay.training._synthetic`) and negation pairs
(:mod:`assay.training._negation`); ``commercial+anli+sick`` adds the two
non-commercial NLI sets back, to measure what leaving them out costs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from assay.errors import UsageError
from assay.training import _data as data
from assay.training._data import Pair

Reader = Callable[[Path], Iterator[Pair]]


@dataclass(frozen=True, kw_only=True)
class Source:
    name: str
    reader: Reader
    count: int
    licence: str
    commercial: bool


@dataclass(frozen=True, kw_only=True)
class Mix:
    name: str
    sources: tuple[Source, ...]
    #: Two-fact FEVER conjunctions (needs ``fever`` in the mix).
    conjunctions: int
    #: Synthetic agent-evidence pairs (half entailment, half one-slot edits).
    synthetic: int
    #: Negation pairs built from the mix's own single-sentence NLI pairs
    #: (:mod:`assay.training._negation`; needs ``snli``, ``mnli`` or ``cad``).
    negations: int = 0


_CC_BY_SA_3 = "CC BY-SA 3.0 (Wikipedia)"


def _s(name: str, reader: Reader, count: int, licence: str, commercial: bool = True) -> Source:
    return Source(name=name, reader=reader, count=count, licence=licence, commercial=commercial)


def _snli(n: int) -> Source:
    return _s("snli", lambda r: data.snli(r, "dev"), n, "CC BY-SA 4.0")


def _mnli(n: int) -> Source:
    licence = "OANC (free, commercial use) + CC BY-SA 3.0 / CC BY 3.0 fiction"
    return _s("mnli", lambda r: data.mnli(r, "train"), n, licence)


def _anli(n: int) -> Source:
    return _s("anli", lambda r: data.anli(r, "dev"), n, "CC BY-NC 4.0", False)


def _sick(n: int) -> Source:
    return _s("sick", lambda r: data.sick(r, ("TRAIN", "TRIAL")), n, "CC BY-NC-SA 3.0", False)


def _fever(n: int) -> Source:
    return _s("fever", data.fever, n, "CC BY-SA 3.0 (FEVER; the copy's repository states none)")


def _vitaminc(n: int) -> Source:
    return _s("vitaminc", data.vitaminc, n, _CC_BY_SA_3)


def _fm2(n: int) -> Source:
    return _s("fm2", data.fm2, n, "Apache-2.0 (Wikipedia text CC BY-SA)")


def _cad(n: int) -> Source:
    return _s("cad", data.cad_nli, n, "Apache-2.0 (SNLI train text CC BY-SA 4.0)")


def _med(n: int) -> Source:
    return _s("med", data.med, n, "CC BY-SA 4.0")


FULL = Mix(
    name="full",
    sources=(
        _snli(4000),
        _mnli(5000),
        _anli(3200),
        _sick(2500),
        _fever(9000),
        _vitaminc(6000),
        _s(
            "summedits",
            lambda r: data.summedits(r, data.TRAIN_SUMMEDITS),
            3400,
            "Apache-2.0 (samsum domain: SAMSum CC BY-NC-ND 4.0)",
            False,
        ),
        _s("dnli", lambda r: data.dnli(r, "train"), 2000, "MIT (British National Corpus text)"),
        _fm2(1200),
        _s("covidfact", data.covidfact, 1500, "not stated", False),
        _s("healthver", data.healthver, 1000, "not stated", False),
        _s("scifact", data.scifact, 600, "CC BY-NC", False),
        _s("climate_fever", data.climate_fever, 1500, "not stated", False),
        _s("control", data.control, 800, "CC BY-NC-SA 4.0", False),
    ),
    conjunctions=3000,
    synthetic=0,
)

_COMMERCIAL_SOURCES = (
    _snli(3000),
    _mnli(4000),
    _fever(5000),
    _vitaminc(4000),
    _s(
        "summedits",
        lambda r: data.summedits(r, data.COMMERCIAL_SUMMEDITS),
        1800,
        "Apache-2.0 (domains qmsumm, sales_call, sales_email, scitldr only)",
    ),
    _fm2(900),
    _cad(2500),
    _med(800),
)
COMMERCIAL = Mix(
    name="commercial",
    sources=_COMMERCIAL_SOURCES,
    conjunctions=1500,
    synthetic=12500,
    negations=4000,
)
COMMERCIAL_PLUS_NC = Mix(
    name="commercial+anli+sick",
    sources=(*_COMMERCIAL_SOURCES, _anli(2400), _sick(1800)),
    conjunctions=1500,
    synthetic=12500,
)
MIXES = {m.name: m for m in (FULL, COMMERCIAL, COMMERCIAL_PLUS_NC)}


def get_mix(name: str) -> Mix:
    try:
        return MIXES[name]
    except KeyError:
        raise UsageError(f"unknown mix {name!r}; choose one of {sorted(MIXES)}") from None
