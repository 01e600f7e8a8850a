"""Units a tool call gives in another of its arguments.

A tool that takes an amount in any currency takes the currency beside it
(``{"amount_over_cap": 600.0, "currency": "USD"}``) and says so in its schema, with
``"x-assay-unit": {"argument": "currency"}`` on the amount. :func:`with_units` reads
the schema of one call with each such unit replaced by the value the call gives it,
so that the amount is checked in that unit (``USD 600.00`` establishes it, ``EUR
600.00`` does not); a unit argument that is absent or not a string gives a unit that
no text states.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["NO_UNIT", "UNIT_KEYWORD", "unit_sources", "with_units"]

#: Schema keyword naming the unit of a numeric argument (``EUR``, ``h``, ``%``), or
#: ``{"argument": name}``: the unit is the value of the call's argument ``name``.
UNIT_KEYWORD = "x-assay-unit"
#: The unit of an amount whose unit argument is absent or not a string.
NO_UNIT = "(no unit given)"


def _properties(schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    props = (schema or {}).get("properties")
    return cast(Mapping[str, Any], props) if isinstance(props, Mapping) else {}


def unit_sources(schema: Mapping[str, Any] | None) -> dict[str, str]:
    """Each top-level property whose unit another argument gives, with that
    argument's name: ``{"amount_over_cap": "currency"}``."""
    found: dict[str, str] = {}
    for key, prop in _properties(schema).items():
        unit = (
            cast(Mapping[str, Any], prop).get(UNIT_KEYWORD) if isinstance(prop, Mapping) else None
        )
        name = cast(Mapping[str, Any], unit).get("argument") if isinstance(unit, Mapping) else None
        if isinstance(name, str):
            found[key] = name
    return found


def with_units(args: Mapping[str, Any], schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``schema`` with each unit that names an argument replaced by that argument's
    value in ``args``."""
    sources = unit_sources(schema)
    if schema is None or not sources:
        return schema or {}
    props: dict[str, Any] = dict(_properties(schema))
    for key, name in sources.items():
        unit = args.get(name)
        given = unit.strip() if isinstance(unit, str) and unit.strip() else NO_UNIT
        props[key] = {**cast(Mapping[str, Any], props[key]), UNIT_KEYWORD: given}
    return {**schema, "properties": props}
