"""Units that evidence declares apart from its numbers.

A tool rarely writes ``6.1 %`` in one string. It writes the number in one field and
the unit in another: beside it (``{"value": 6.1, "unit": "%"}``), in a ``units``
object that names the fields it applies to (``"units": {"wind": "km/h"}`` beside
``"wind_max": 41``, or ``{"p99_latency": "ms"}`` beside a series of records), or in
a table's header (``Temp (°C)``, ``Amount (USD)``, ``rate (CAD/h)``). This module
reads those declarations, so that :mod:`assay.grounding._evidence` can lend each
bare number the unit its evidence gives it, and nothing else: a unit declared for
``wind`` is not one of ``rain_total``, and one declared in a record's ``units`` is
not one of the records outside it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from assay.grounding._quantities import find_quantities
from assay.grounding._units import unit_of

__all__ = ["Declarations", "header_unit", "unit_named"]

#: The names of an object that maps field names to their units.
UNITS_OBJECTS = frozenset({"units", "unit", "uom"})
#: A unit written in brackets at the end of a column's name: ``Temp (°C)``.
_BRACKETED = re.compile(r"[(\[]\x20?([^()\[\]]{1,16}?)\x20?[)\]]\x20*$")
_INDEX = re.compile(r"\[\d+\]")


@lru_cache(maxsize=1024)
def unit_named(text: str) -> str | None:
    """The unit ``text`` names when written alone, as a field or a header writes it
    (``%``, ``kWh``, ``g/L``, ``km/h``, ``CAD/h``, ``EUR``), else ``None``: read as the
    unit of the quantity ``1 <text>``, so it is read exactly as a claim's unit is."""
    spelling = text.strip()
    if not spelling or len(spelling) > 16:
        return None
    named = unit_of(spelling)
    if named is not None:
        return named
    found = find_quantities("1 " + spelling)
    if len(found) != 1 or found[0].kind == "number" or found[0].text != "1 " + spelling:
        return None
    return found[0].unit


def header_unit(name: str) -> str | None:
    """The unit a column's name writes in brackets at its end: ``Temp (°C)`` →
    degrees Celsius, ``Amount (USD)`` → USD, ``rate (CAD/h)`` → CAD per hour."""
    m = _BRACKETED.search(name)
    return unit_named(m.group(1)) if m is not None else None


class Declarations:
    """The ``units`` objects of one JSON view: for each, the path of the record that
    holds it (its scope) and the unit of each field it names."""

    def __init__(self) -> None:
        self._scopes: dict[str, dict[str, str]] = {}

    def note(self, head: str, key: str, value: str) -> bool:
        """Read the line ``head.key: value``; whether it is a field of a ``units``
        object (``units.wind: km/h``), whose unit is then noted."""
        parent, _, name = head.rpartition(".")
        if name.lower() not in UNITS_OBJECTS or not key:
            return False
        unit = unit_named(value)
        if unit is not None:
            scope = _INDEX.sub("[*]", parent)
            self._scopes.setdefault(scope, {})[key.lower()] = unit
        return True

    def unit_for(self, series: str, key: str) -> str | None:
        """The unit a ``units`` object declares for the field ``key`` at ``series``
        (a path whose indexes are ``[*]``): one whose scope holds the field and that
        names it whole or as the first or last word of its name (``wind`` for
        ``wind_max``, ``temp`` for ``max_temp``); the nearest scope first."""
        if not self._scopes:
            return None
        lowered = key.lower()
        for scope in sorted(self._scopes, key=len, reverse=True):
            if scope and not (series.startswith(scope + ".") or series.startswith(scope + "[")):
                continue
            units = self._scopes[scope]
            for name, unit in units.items():
                if lowered == name or lowered.startswith(name + "_"):
                    return unit
                if lowered.endswith("_" + name):
                    return unit
        return None
