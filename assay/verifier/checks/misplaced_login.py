"""``misplaced_login``: a person named by a login or handle (``ayesha.k``) that the
cited evidence gives only for another record than the one the proposition names
("deploy D-4412 was made by ayesha.k" where ``ayesha.k`` made ``D-4410``) is not
stated; the reason names the record that gives the login
(:mod:`assay.verifier._handles`)."""

from __future__ import annotations

import json

from assay.verifier._context import PropositionContext
from assay.verifier._deterministic import clip
from assay.verifier._handles import login_elsewhere
from assay.verifier._pipeline import CheckSpec, Example, Finding


def _find(context: PropositionContext) -> Finding | None:
    found = login_elsewhere(context.text, context.cited)
    if found is None:
        return None
    where = found.record or "top level"
    reason = (
        f"{found.entry.id} gives {found.login} for another record ({where}: "
        f"“{clip(found.text.replace(chr(10), '; '))}”), not for the one it names"
    )
    return Finding(label="neutral", reason=reason, check=CHECK.id, ledger_id=found.entry.id)


_DEPLOYS = json.dumps(
    {
        "deploys": [
            {"id": "D-4410", "service": "payments-api", "by": "ayesha.k"},
            {"id": "D-4412", "service": "payments-api", "by": "lee.t"},
        ]
    }
)
_LOG = (
    "2025-07-08 13:02 deploy D-4410 payments-api v2.8.1 author=ayesha.k\n"
    "2025-07-08 14:20 deploy D-4412 payments-api v2.8.2 author=lee.t"
)

CHECK = CheckSpec(
    id="misplaced_login",
    summary="a login given for another record than the one named",
    finder=_find,
    examples=(
        Example(
            proposition="Deploy D-4412 was made by ayesha.k.", evidence=(_DEPLOYS,), finds="neutral"
        ),
        Example(proposition="ayesha.k deployed D-4412.", evidence=(_LOG,), finds="neutral"),
        Example(
            proposition="Deploy D-4410 was made by ayesha.k.", evidence=(_DEPLOYS,), finds=None
        ),
        Example(proposition="lee.t deployed D-4412 at 14:20.", evidence=(_LOG,), finds=None),
        Example(
            proposition="Deploy D-4412 was made by priya.s.",
            evidence=(_LOG,),
            finds=None,
            why="a login the evidence does not give is for the other checks and the model",
        ),
    ),
)
