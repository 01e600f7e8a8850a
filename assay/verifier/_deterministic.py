"""The verifier's deterministic checks: what settles a proposition without the model.

A proposition stated word for word in its cited evidence is entailed; one whose
numbers, dates, amounts, identifiers, quoted spans or proper names occur in none of
its cited evidence is missing evidence. Both are plain string work, run before any
model is asked, each in one pass over the proposition and its evidence (what every
value or name asks is read once, not again for each).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assay._text import numbers_in, token_pattern
from assay.grounding import (
    ClaimValue,
    Computation,
    Miscalculation,
    check_values,
    claim_values,
    evidence_index,
    find_numbers,
    ground,
    occurrence_of,
    view_of,
)
from assay.ledger import LedgerEntry
from assay.verifier._text import missing_numbers

_QUOTED = re.compile(r"[\"“«]([^\"”»]{3,})[\"”»]")
_CAPITALISED = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:-[A-Z]?[a-z]+)*(?![\w-])")
#: Month and day names: written out in a claim where the evidence has 2024-10-31.
_CALENDAR = frozenset(
    name.lower()
    for name in (*calendar.month_name, *calendar.month_abbr, *calendar.day_name, *calendar.day_abbr)
    if name
)
_WORDS = token_pattern("hyphenated")
_NAME_RUN = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:[ ]+[A-Z][a-z]+)+(?![\w-])")


def verbatim(text: str, cited: Sequence[LedgerEntry]) -> tuple[LedgerEntry, tuple[int, int]] | None:
    """The cited entry and stored span that contain the proposition word for word (a
    final full stop aside), in the stored text or in a decoded value of a JSON entry:
    what evidence states verbatim needs no model to entail it."""
    needle = text.strip().rstrip(".").strip()
    if len(needle) < 8:
        return None
    for entry in cited:
        start = entry.text.find(needle)
        if start >= 0:
            return entry, (start, start + len(needle))
        view = view_of(entry.text)
        start = view.text.find(needle)
        if start >= 0:
            return entry, view.to_stored(start, start + len(needle))
    return None


@dataclass(frozen=True, kw_only=True)
class Settled:
    """What the deterministic checks found of a proposition's values.

    ``gaps`` occur in no evidence text; ``computations`` are values that occur in
    none but are exactly the computation the proposition says they are ("in total",
    "12 days later") over the evidence; ``miscalculation`` is a value the
    proposition says it computed that the evidence computes differently.
    """

    gaps: list[str]
    computations: list[Computation]
    miscalculation: Miscalculation | None = None


def deterministic_gaps(
    text: str, evidence: Sequence[str], *, derived: Callable[[str], bool] | None = None
) -> Settled:
    """Identifiers, numbers and quoted spans of ``text`` that no evidence text (the
    views of the cited entries) contains, and the values computed from them. A value
    ``derived`` accepts (the result of a verified derivation) counts as grounded."""
    gaps: list[str] = []
    computations: list[Computation] = []
    # The gate grounded these values against the same evidence: this reads its
    # grounding back (assay.grounding.ground keeps it) instead of redoing it.
    for grounded in ground(text, evidence, search_all=False).values:
        if grounded.found_in or (derived is not None and derived(grounded.identifier.value)):
            continue
        if grounded.computation is not None:
            computations.append(grounded.computation)
        elif grounded.miscalculation is not None:
            return Settled(
                gaps=[grounded.identifier.value],
                computations=[],
                miscalculation=grounded.miscalculation,
            )
        else:
            gaps.append(grounded.identifier.value)
    gaps += [quote for quote in _quotes(text) if not any(quote in d for d in evidence)]
    words = evidence_words(evidence)
    written = names_written_joined(text, words)
    known = words | written
    gaps += [
        name
        for name in proper_names(text)
        if name.lower() not in known and name.lower().replace("-", "") not in known
    ]
    return Settled(gaps=list(dict.fromkeys(gaps)), computations=computations)


def _quotes(text: str) -> list[str]:
    """The quoted spans of ``text``, each once. No quote closes after the last
    closing mark, so the search stops there: an opening mark after it would
    otherwise be read to the end of the text, for each one."""
    last = max(text.rfind(mark) for mark in '"”»')
    return list(dict.fromkeys(_QUOTED.findall(text, 0, last + 1)))


def evidence_words(evidence: Sequence[str]) -> set[str]:
    """The words of the evidence texts, lower-cased: each hyphenated compound whole,
    run together and part by part ("rhein-werk", "rheinwerk", "rhein", "werk")."""
    words: set[str] = set()
    for document in evidence:
        for word in _WORDS.findall(document):
            word = word.lower()
            parts = word.split("-")
            words.update((word, "".join(parts), *parts))
    return words


def names_written_joined(text: str, words: set[str]) -> set[str]:
    """The words, lower-cased, of each run of capitalised words in ``text`` that the
    evidence writes as one word: "Castellan Paper" where the evidence has only the
    address ``orders@castellanpaper.example.org``, "Kiln Harbour" for ``KilnHarbour``.
    Only the whole run counts, so "Castellan" alone is not found in
    ``castellanpaper``."""
    found: set[str] = set()
    for match in _NAME_RUN.finditer(text):
        names = match.group(0).split()
        if "".join(names).lower() in words:
            found.update(name.lower() for name in names)
    return found


def in_evidence_terms(text: str, evidence: Sequence[str]) -> str:
    """``text`` with each of its values that an evidence text states in another
    written form (a date, an amount, a quantity in another unit) written as the
    evidence writes it: what the model reads.

    The values are the deterministic checks' to compare, in any form; the model is
    left the relation between them. A small cross-encoder reads "31 October 2024"
    against ``due: 2024-10-31``, or "1,240 rolls" against a row that writes 1240, as
    a different statement: it scores "RTM3 holds 1,240 rolls, of which 1,140 are
    available" against the stock row at 0.04 and the same claim with the row's own
    numbers at 0.56. A value that no evidence states (a computed total) is left as
    written."""
    found = sorted(
        [
            (check.value, check.occurrence)
            for check in check_values(text, evidence)
            if check.status == "found" and check.occurrence is not None
        ],
        key=lambda pair: pair[0].start,
    )
    parts: list[str] = []
    position = 0
    for value, occurrence in found:
        if value.start < position:
            continue  # inside a value already restated
        start, end, restated = _restatement(value, occurrence.text)
        parts += [text[position:start], restated]
        position = end
    return "".join([*parts, text[position:]])


def _restatement(value: ClaimValue, written: str) -> tuple[int, int, str]:
    """The span of the claim to replace and what replaces it. A count keeps its own
    words and takes only the evidence's number: "4 tests" against a line that writes
    "4" must not become "4", which no longer says what was counted."""
    if value.quantity is None or value.quantity.noun is None:
        return value.start, value.end, written
    ours, theirs = find_numbers(value.text), find_numbers(written)
    if not ours or not theirs:
        return value.start, value.end, value.text
    number = ours[0]
    return value.start + number.start, value.start + number.end, theirs[0].text


def proper_names(text: str) -> list[str]:
    """Capitalised words that are not the first word of a sentence: the names a
    narrative confabulation invents (people, places, products). Matching them against
    the evidence is case-insensitive and word by word, so "the Engagement Letter"
    still matches "the engagement letter"."""
    names: list[str] = []
    for match in _CAPITALISED.finditer(text):
        before = match.start()  # the end of the text before it, white space aside
        while before > 0 and text[before - 1].isspace():
            before -= 1
        if not before or text[before - 1] in '.!?:;\n"“(':
            continue
        if match.group(0).lower() in _CALENDAR:
            continue  # part of a date or a day, which the value checks compare as such
        names.append(match.group(0))
    return names


def describe_gaps(
    gaps: Sequence[str], cited: Sequence[LedgerEntry], run_evidence: Sequence[LedgerEntry]
) -> str:
    """Why the gaps are gaps, naming an uncited entry of the run that holds one."""
    cited_ids = {e.id for e in cited}
    parts: list[str] = []
    for gap in gaps:
        elsewhere = [
            e.id
            for e in run_evidence
            if e.id not in cited_ids and (gap in e.text or gap in view_of(e.text).text)
        ]
        where = (
            f" (it appears in {', '.join(elsewhere[:3])}, which is not cited)" if elsewhere else ""
        )
        parts.append(f"“{gap}” occurs in none of its cited evidence{where}")
    return "; ".join(parts)


def clip(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def restates_a_value(premise: str, text: str) -> bool:
    """Whether ``premise`` writes one of ``text``'s dates or quantities with a unit
    (an amount, a duration; not a bare number such as a flight's) as it is:
    an entry that states a clause's own value ("delivered_on: 2025-03-14" for
    "was delivered on March 14, 2025") does not contradict that clause, whatever a
    small model reads into the rest of a joined claim."""
    return any(
        check.status == "found"
        and (check.value.date is not None or _unit_of(check.value) is not None)
        for check in check_values(text, [premise])
    )


def states_another_value(premise: str, text: str) -> bool:
    """Whether ``premise`` gives one of ``text``'s values otherwise, about the same
    thing: it does not state a date or quantity of ``text`` but states one of the
    same kind (a date; an amount in the same unit), and every other number of
    ``text`` (a line number, an hour count) is in it too.

    An amendment's "senior associates are capped at EUR 420 per hour" gives "capped
    at EUR 380 per hour" otherwise. A time entry's "Line 13: 8.0 h in total" leaves
    the rate of "Line 13 bills 8.0 h at EUR 260/h" out, and "Invoice line 2 … EUR
    309/h" is about another line than "Line 1 … EUR 308/h": neither gives it
    otherwise."""
    values = claim_values(text)
    valued = [v for v in values if v.date is not None or _unit_of(v) is not None]
    in_values = {n for v in valued for n in numbers_in(v.text)}
    missing = missing_numbers(text, premise)
    if any(n not in in_values for n in missing):
        return False  # a line number, a count: the premise is about something else
    stated = claim_values(premise)
    dated = any(v.date is not None for v in stated)
    units = {v.quantity.unit for v in stated if v.quantity is not None}
    index = [evidence_index(premise)]
    otherwise: set[str] = set()  # the numbers of the values given otherwise
    for value in values:
        if occurrence_of(value, index) is not None:
            continue
        unit = _unit_of(value)
        if (value.date is not None and dated) or (unit is not None and unit in units):
            otherwise.update(numbers_in(value.text))
    return bool(otherwise) and all(n in otherwise for n in missing)


def _unit_of(value: ClaimValue) -> str | None:
    return value.quantity.unit if value.quantity is not None else None
