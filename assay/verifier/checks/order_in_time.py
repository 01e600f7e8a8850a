"""``order_in_time``: a proposition that puts one event after another ("the p99
spike at 10:40 followed deploy D-2291") where the cited evidence dates them the
other way round (``D-2291`` deployed at 10:52) is contradicted; the finding points
at the timestamp that dates it. Each side is dated by a time it writes, or by the
one timestamp of the one record holding its identifier; a side the evidence does
not date settles nothing (:mod:`assay.verifier._sequence`)."""

from __future__ import annotations

import json

from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier._sequence import out_of_order
from assay.verifier.checks._common import pointed


def _find(context: PropositionContext) -> Finding | None:
    readings = context.readings
    found = out_of_order(context.text, [r.text for r in readings])
    if found is None:
        return None
    entry, reading = context.cited[found.reading], readings[found.reading]
    reason = (
        f"it says “{found.first}” ({found.first_at}) {found.word} “{found.second}” "
        f"({found.second_at}), but {entry.id} dates them the other way round"
    )
    return pointed(CHECK.id, "contradiction", entry, reading, found.span, reason)


_DEPLOYS = json.dumps(
    {
        "deploys": [
            {"id": "D-2290", "service": "search", "at": "2025-06-02T10:21:00Z"},
            {"id": "D-2291", "service": "checkout", "at": "2025-06-02T10:52:00Z"},
        ]
    }
)
_ALERT = json.dumps({"alert": "ALR-553", "fired_at": "2025-06-02T10:40:00Z"})

CHECK = CheckSpec(
    id="order_in_time",
    summary="one event said to follow another the evidence dates after it",
    finder=_find,
    examples=(
        Example(
            proposition="The p99 latency spike at 10:40 UTC followed deploy D-2291.",
            evidence=(_DEPLOYS,),
            finds="contradiction",
        ),
        Example(
            proposition="The p99 latency spike at 10:40 UTC followed deploy D-2290.",
            evidence=(_DEPLOYS,),
            finds=None,
        ),
        Example(
            proposition="Alert ALR-553 fired after deploy D-2291.",
            evidence=(_ALERT, _DEPLOYS),
            finds="contradiction",
        ),
        Example(
            proposition="Deploy D-2291 came after alert ALR-553.",
            evidence=(_ALERT, _DEPLOYS),
            finds=None,
        ),
        Example(
            proposition="Alert ALR-553 fired before deploy D-2290.",
            evidence=(_ALERT, _DEPLOYS),
            finds="contradiction",
        ),
        Example(
            proposition="The checkout errors began after the deploy.",
            evidence=(_DEPLOYS,),
            finds=None,
            why="a side the evidence does not date settles nothing",
        ),
    ),
)
