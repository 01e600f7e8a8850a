"""A proposition whose every slot stands in one record of its evidence.

Code can settle what a proposition's values and names are; a small cross-encoder
reads them poorly ("came to USD 84.50 and was delivered on March 14, 2025" against
``{"delivered_on": "2025-03-14", "total": 84.5, "currency": "USD"}`` scores 0.26).
A proposition is *accounted for* when one record of one cited entry (a JSON object
with the scalar fields of the objects that hold it, a text line or sentence) holds
every one of its slots:

* each date, time and quantity, written there in any form the grounding engine
  reads (a value computed from the record is not enough: "the outage lasted 2.5
  hours" computed from a maintenance window's start and end is right arithmetic
  over the wrong fields);
* each identifier (an id, a code, a hash, a path);
* each name: a run of capitalised words that is not the first word of a sentence,
  a month, a weekday or a time zone.

and it has at least one value or identifier to anchor it. Its relation (what it
says of those slots) is then what the model and the conflict checks judge; the
verifier entails an accounted proposition the model leaves open unless the model
reads a contradiction in a cited entry above a bar calibrated on the tuning half of
the development set (:attr:`LedgerVerifier.accounted_bar`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assay.grounding import (
    check_values,
    claim_values,
    extract_identifiers,
    identifier_in_evidence,
    view_of,
)
from assay.ledger import LedgerEntry
from assay.verifier._slots import holds, scopes

#: A run of capitalised words, with the small words a name may hold ("Bank of
#: Ireland", "Rue des Tanneurs").
_NAME = re.compile(
    r"[A-Z][\w'\u2019.&-]*(?:\s+(?:(?:of|the|de|des|du|la|le|van|von|and|&)\s+)?[A-Z][\w'\u2019.&-]*)*"
)
#: Capitalised words that are part of a date or a time, not names.
_CALENDAR = re.compile(
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|utc|gmt|cet|cest|z",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Accounted:
    """The record of a cited entry that holds every slot of a proposition."""

    entry: LedgerEntry
    record: str


def accounted(text: str, cited: Sequence[LedgerEntry]) -> Accounted | None:
    """The first record of ``cited`` that holds every slot of ``text``, or ``None``
    (none does, or ``text`` has no value or identifier to anchor it)."""
    values = claim_values(text)
    taken = [(v.start, v.end) for v in values]
    identifiers = [
        i for i in extract_identifiers(text) if not any(s < i.end and i.start < e for s, e in taken)
    ]
    if not values and not identifiers:
        return None
    names = list(_names(text, [*taken, *((i.start, i.end) for i in identifiers)]))
    for entry in cited:
        for record, reading in scopes(view_of(entry.text)):
            scope = reading.text
            if not all(identifier_in_evidence(i, scope) for i in identifiers):
                continue
            if not all(holds(scope, name) for name in names):
                continue
            if all(check.status == "found" for check in check_values(text, [scope])):
                return Accounted(entry=entry, record=record)
    return None


def _names(text: str, taken: Sequence[tuple[int, int]]) -> Iterator[str]:
    """The names of ``text``: runs of capitalised words outside its values and
    identifiers; a single word that starts a sentence is not one."""
    masked = list(text)
    for start, end in taken:  # a value or an identifier ends a run of names
        masked[start:end] = ";" * (end - start)
    for match in _NAME.finditer("".join(masked)):
        run = match.group().strip()
        before = text[: match.start()].rstrip()
        if " " not in run and (not before or before[-1] in ".!?:;"):
            continue
        words = [w for w in re.sub(r"['\u2019]s$", "", run).rstrip(".").split() if w]
        words = [w for w in words if not _CALENDAR.fullmatch(w)]
        if words and not all(len(w) <= 3 and w.isupper() for w in words):
            yield " ".join(words)
