"""A proposition whose every slot stands in one record of its evidence.

Code can settle what a proposition's values and names are; a small cross-encoder
reads them poorly ("came to USD 84.50 and was delivered on March 14, 2025" against
``{"delivered_on": "2025-03-14", "total": 84.5, "currency": "USD"}`` scores 0.26).
A proposition is *accounted for* when one record of one cited entry (a JSON object
with the scalar fields of the objects that hold it, a text line or sentence) holds
every one of its slots:

* each date, time and quantity, written there in any form the grounding engine
  reads, or computed there by the checked arithmetic from fields the proposition
  is about (:func:`accounted`): "the outage lasted 2.5 hours" computed from a
  maintenance window's start and end is right arithmetic over the wrong fields,
  and accounts for nothing;
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

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assay.grounding import (
    Computation,
    EvidenceView,
    Identifier,
    ValueCheck,
    check_values,
    claim_values,
    extract_identifiers,
    identifier_in_evidence,
    view_of,
)
from assay.ledger import LedgerEntry
from assay.verifier._part_counts import counted_part
from assay.verifier._slots import holds, scopes
from assay.verifier._text import content_words, stem_set

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
    """The record of a cited entry that holds every slot of a proposition, and the
    values of it that are computed there (``computed``: their texts)."""

    entry: LedgerEntry
    record: str
    computed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Slots:
    """What of a proposition must bind in one record: its identifiers and names."""

    identifiers: tuple[Identifier, ...]
    names: tuple[str, ...]

    def bind(self, scope: str) -> bool:
        return all(identifier_in_evidence(i, scope) for i in self.identifiers) and all(
            holds(scope, name) for name in self.names
        )


def accounted(text: str, cited: Sequence[LedgerEntry]) -> Accounted | None:
    """The first record of ``cited`` that holds every slot of ``text``, or ``None``
    (none does, or ``text`` has no value or identifier to anchor it).

    A value may be *computed* there (:func:`assay.grounding.check_values`: a sum, a
    difference, a count, an extreme, a time between two timestamps, a date plus
    days, a percentage the proposition says it is) where its operands are fields of
    the record the proposition is about (:func:`_about`). A value computed over
    several records of one entry (a sum of a column, a count of rows, a difference
    of two readings) is accounted for by that entry where the proposition's
    identifiers and names bind in one of its records and each operand stands in a
    row the proposition is about (:func:`_rows_account`)."""
    values = claim_values(text)
    taken = [(v.start, v.end) for v in values]
    identifiers = [
        i for i in extract_identifiers(text) if not any(s < i.end and i.start < e for s, e in taken)
    ]
    if not values and not identifiers:
        return None
    names = list(_names(text, [*taken, *((i.start, i.end) for i in identifiers)]))
    slots = _Slots(identifiers=tuple(identifiers), names=tuple(names))
    stems = frozenset(content_words(text))
    for entry in cited:
        view = view_of(entry.text)
        named = _named_fields(stems, view) if view.is_json else frozenset()
        bound: list[str] = []
        for record, reading in scopes(view):
            if not slots.bind(reading.text):
                continue
            bound.append(record)
            computed = _accounts(text, reading.text, named)
            if computed and _said_of_another(stems, reading.text, view):
                continue
            if computed is not None:
                return Accounted(entry=entry, record=record, computed=computed)
        if bound and values:
            computed = _rows_account(text, view, bound, slots)
            if computed:
                return Accounted(entry=entry, record=ROWS, computed=computed)
    return None


#: The ``record`` of a proposition accounted for by several records of one entry.
ROWS = "its rows"
#: Computations over a column or a set of rows, rather than over two given values.
_AGGREGATES = frozenset({"sum", "count", "maximum", "minimum"})


def _accounts(text: str, scope: str, named: frozenset[str]) -> tuple[str, ...] | None:
    """The texts of the values of ``text`` that ``scope`` computes, where it states or
    computes every one of them (and each computation's operands are fields the
    proposition names, :func:`_about`); else ``None``."""
    checks = check_values(text, [scope])
    if _part_stated(text, checks) or _misbound(text, scope, checks):
        return None
    computed: list[str] = []
    for check in checks:
        if check.status == "computed" and check.computation is not None:
            if not _about(check.computation, scope, named):
                return None
            computed.append(check.value.text)
        elif check.status != "found":
            return None
    return tuple(computed)


def _rows_account(
    text: str, view: EvidenceView, bound: Sequence[str], slots: _Slots
) -> tuple[str, ...] | None:
    """The values of ``text`` computed over several records of ``view``, where every
    value is stated or computed in the whole entry and each operand stands in a row
    the proposition is about: for a sum, count or extreme, a record where its
    identifiers and names bind (``bound``); for a time between two timestamps, a
    value the proposition states itself; for any other computation, a record that
    states one of its values, or a bound record where they do not bind in every
    record. ``None`` where a value is neither, or none is computed."""
    records = view.records()
    spans = dict(records)
    every = len(bound) == len(records) or not (slots.identifiers or slots.names)
    about = [span for _, span in records] if every else [spans[r] for r in bound if r in spans]
    checks = check_values(text, [view.text])
    parts = _parts(text, checks)
    if not all(counted_part(text, part, whole, view) for part, whole in parts):
        return None
    stated = [(c.occurrence.start, c.occurrence.end) for c in checks if c.occurrence is not None]
    stating = [span for span in spans.values() if any(_inside(s, span) for s in stated)]
    counted = {id(part) for part, _ in parts}
    computed: list[str] = [part.value.text for part, _ in parts]
    for check in checks:
        computation = check.computation
        if check.status == "found" or id(check) in counted:
            continue
        if check.status != "computed" or computation is None:
            return None
        if computation.operation in _AGGREGATES:
            rows = about
        elif computation.operation == "elapsed":
            rows = stated
        else:
            rows = [*stating, *([] if every else about)]
        if not all(
            any(_inside((o.start, o.end), row) for row in rows) for o in computation.operands
        ):
            return None
        computed.append(check.value.text)
    return tuple(computed) or None


def _misbound(text: str, scope: str, checks: Sequence[ValueCheck]) -> bool:
    """Whether a value of ``text`` is found in ``scope`` only in a field the
    proposition does not name, while a numeric field it does name holds a value it
    does not state: "Order A-1093's total was $48.50" where ``total: 84.5`` and an
    item's ``price: 48.5``. Right number, wrong field; the record accounts for
    nothing (the model then reads it without that help)."""
    said = stem_set(text)
    stated = {str(c.occurrence.text).strip() for c in checks if c.occurrence is not None}
    named: list[str] = []  # the values of the numeric fields the proposition names
    for line in scope.splitlines():
        path, _, value = line.partition(": ")
        if _NUMBER.fullmatch(value) and said & stem_set(_path_words(path.rsplit(".", 1)[-1])):
            named.append(value)
    if not named:
        return False
    for check in checks:
        occurrence = check.occurrence
        if check.status != "found" or occurrence is None or check.value.quantity is None:
            continue  # a date is not a field's number
        start = scope.rfind("\n", 0, occurrence.start) + 1
        path = scope[start:].partition(": ")[0]
        if said & stem_set(_path_words(path)):
            continue  # found in a field it names
        if any(value not in stated for value in named):
            return True
    return False


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _part_stated(text: str, checks: Sequence[ValueCheck]) -> bool:
    """Whether ``text`` states a part of a group it counts ("three of the five sales
    were flats"): the 3 of another column, or a count of something else, is no
    count of the flats, and a group computed is no proof that the part is a count
    of it. Only the rows of a whole entry can count it
    (:func:`assay.verifier._part_counts.counted_part`)."""
    return bool(_parts(text, checks))


def _parts(text: str, checks: Sequence[ValueCheck]) -> list[tuple[ValueCheck, ValueCheck]]:
    """Each part of a computed group (written in the evidence, computed as some
    other count, or not found at all), with the group it is a part of."""
    return [
        (part, whole)
        for part, whole in itertools.pairwise(checks)
        if whole.status == "computed"
        and _OF_THE.fullmatch(text[part.value.end : whole.value.start])
    ]


#: What stands between a part and the group it is of: "three *of the* five".
_OF_THE = re.compile(r"\s+of\s+(?:the|its|their|all|all\s+the)\s+", re.IGNORECASE)


def _inside(span: tuple[int, int], outer: tuple[int, int]) -> bool:
    return outer[0] <= span[0] and span[1] <= outer[1]


def _said_of_another(stems: frozenset[str], scope: str, view: EvidenceView) -> bool:
    """Whether the proposition writes a word that its entry writes, but not in the
    record ``scope``: "the lint job ran for 11 minutes 30 seconds" is about the job
    named ``lint``, whatever the job named ``test`` computes to."""
    return bool((stems & stem_set(view.text)) - stem_set(scope))


def _named_fields(stems: frozenset[str], view: EvidenceView) -> frozenset[str]:
    """The words of the JSON entry's field paths that the proposition writes
    (``outage`` of ``outage.started_at``)."""
    paths = (line.partition(": ")[0] for line in view.text.splitlines())
    return stems & stem_set(" ".join(_path_words(p) for p in paths))


def _about(computation: Computation, scope: str, named: frozenset[str]) -> bool:
    """Whether every operand of ``computation`` is a field the proposition is about:
    where the proposition names words of the entry's field paths (``named``), each
    operand's path must hold one of them. Right arithmetic over the wrong fields
    ("the outage lasted 2.5 hours" from a maintenance window's start and end) is not
    accounted for."""
    if not named:
        return True
    for operand in computation.operands:
        line_start = scope.rfind("\n", 0, operand.start) + 1
        path = scope[line_start:].partition(": ")[0]
        if not named & stem_set(_path_words(path)):
            return False
    return True


def _path_words(path: str) -> str:
    """The words of a field path (``lines[2].fines_eur`` → ``lines fines eur``)."""
    return " ".join(w for w in re.split(r"[^A-Za-z]+", path) if len(w) > 1)


def names_of(text: str) -> list[str]:
    """The names of ``text`` (runs of capitalised words outside its values and
    identifiers; see :func:`accounted`)."""
    values = claim_values(text)
    taken = [(v.start, v.end) for v in values]
    taken += [(i.start, i.end) for i in extract_identifiers(text)]
    return list(_names(text, taken))


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
