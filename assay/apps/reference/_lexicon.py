"""The words the invoice audit's readers know, as data: the roles a letter or an
invoice names and the role each stands for, and the words of a ceiling, of the time
a rate is charged by and of a rate. The readers (:mod:`._caps`, :mod:`._lines`) put
them together by the grammar of a sentence; nothing here is a whole phrase.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "ABOVE",
    "BELOW",
    "BELOW_PAIRS",
    "CEILING",
    "DAY_WORDS",
    "HOUR_WORDS",
    "NEGATION",
    "NOT_RATE",
    "RATE_NOUNS",
    "ROLE_KINDS",
    "ROLE_MENTION",
    "role_kind",
    "singular_role",
]

#: Each role a document may name, as written (singular, lower case), and the role it
#: stands for. A role stands for itself first: a letter that caps "senior partners"
#: and "partners" apart is read apart; the kind joins synonyms where a letter caps
#: one and the invoice bills the other.
ROLE_KINDS: Mapping[str, str] = {
    "partner": "partner",
    "principal": "partner",
    "senior partner": "partner",
    "equity partner": "partner",
    "senior associate": "senior associate",
    "associate": "associate",
    "solicitor": "associate",
    "lawyer": "associate",
    "attorney": "associate",
    "counsel": "counsel",
    "of counsel": "counsel",
    "paralegal": "paralegal",
    "trainee": "paralegal",
    "trainee solicitor": "paralegal",
    "clerk": "paralegal",
    "legal assistant": "paralegal",
}
_ROLE_WORDS = "|".join(
    re.escape(r).replace(r"\ ", r"\s+") for r in sorted(ROLE_KINDS, key=len, reverse=True)
)
#: A role as a sentence writes it: any case, plural, possessive ("partners'").
ROLE_MENTION = re.compile(rf"\b(?P<role>{_ROLE_WORDS})(?:e?s)?(?:'s|')?(?![\w-])", re.IGNORECASE)


def singular_role(written: str) -> str | None:
    """The role ``written`` names (``Principals'`` → ``principal``), or ``None``."""
    match = ROLE_MENTION.fullmatch(written.strip())
    return " ".join(match["role"].lower().split()) if match else None


def role_kind(role: str) -> str | None:
    """The role ``role`` stands for (``principal`` → ``partner``), if it is known."""
    return ROLE_KINDS.get(role)


#: Words that set a ceiling on their own ("capped", "maximum", "ceiling").
CEILING = frozenset(
    [
        "cap",
        "caps",
        "capped",
        "capping",
        "maximum",
        "maximums",
        "max",
        "ceiling",
        "ceilings",
        "limit",
        "limits",
        "limited",
        "highest",
    ]
)
#: Words of "more": a ceiling under a negation ("shall not exceed", "no more than").
ABOVE = frozenset(
    ["exceed", "exceeds", "exceeding", "more", "higher", "above", "greater", "over", "beyond"]
)
#: Words of "at most" ("or less", "at or below", "or lower"), and the pairs of words
#: that say it together ("at most", "up to").
BELOW = frozenset(["below", "less", "lower", "under"])
BELOW_PAIRS = frozenset({("at", "most"), ("up", "to")})
#: Negations, as words or as the end of one ("won't", "shall not").
NEGATION = frozenset(["not", "no", "never", "cannot", "n't", "neither", "nor", "without"])
#: The time a rate is charged by.
HOUR_WORDS = frozenset(["hour", "hourly", "hours", "hr", "hrs", "h"])
DAY_WORDS = frozenset(["day", "daily", "days", "diem"])
#: Nouns of a rate: an amount with no time unit caps a rate only near one of these.
RATE_NOUNS = frozenset(
    ["rate", "rates", "fee", "fees", "charge", "charges", "time", "work", "billed", "billing"]
)
#: Words of an amount that is no rate: a total, a budget, a retainer.
NOT_RATE = frozenset(
    ["total", "totals", "budget", "overall", "aggregate", "retainer", "estimate", "deposit"]
)
