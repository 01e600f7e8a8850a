"""A quantity as :mod:`assay.grounding._quantities` reads it: the record every reader
of values shares."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

__all__ = ["Approximation", "Quantity", "QuantityKind"]

QuantityKind = Literal["money", "percent", "measure", "count", "number"]
#: How a claim hedges a value: ``about`` it, ``over`` it or ``under`` it.
Approximation = Literal["about", "over", "under"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Quantity:
    """One quantity written in a text: ``text[start:end]`` and how it reads.

    ``unit`` is a registry expression (``EUR``, ``kilowatt_hour``, ``EUR / hour``,
    ``/ kilometre`` for a rate without a unit, ``percent``); ``word`` a unit word
    the registry does not know (``m``, ``pounds``), compared as written; ``noun``
    what a count counts.
    """

    start: int
    end: int
    text: str
    values: frozenset[Decimal]
    decimals: int
    kind: QuantityKind
    unit: str | None = None
    word: str | None = None
    noun: str | None = None
    approximation: Approximation | None = None
    spelled: bool = False
    #: Where the hedge (``about``, ``a little over``) starts, when there is one.
    hedge_start: int | None = None

    @property
    def value(self) -> Decimal:
        """One reading (the largest), for messages; compare with :func:`same`."""
        return max(self.values)
