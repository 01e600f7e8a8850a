"""A part of a group, counted by code: "three of the five sales were flats", "two
of the three payments-api pods are running".

The group is the rows of one table of the entry, or the elements of one JSON list,
that the proposition counts: all of them where there are as many as it says, else
those that write one of the words it gives the group ("payments-api"). The part is
the rows of the group that write every *telling* word of what it says of them: a
word some rows of the group write and others do not ("flat" against "terraced",
"Running" against "CrashLoopBackOff"); a word every row writes (a column's name)
or none writes tells nothing. The part is counted when there is at least one
telling word and as many rows hold them all as the proposition says.

A count that comes out otherwise is not read as a contradiction here: the words
of a predicate are a weaker match than a field's value, and such a proposition is
left to the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from assay.grounding import EvidenceView, ValueCheck
from assay.verifier._premises import table_rows
from assay.verifier._text import content_words, stem_set

#: A word that may name the members of a group: ``payments-api``, ``Eastgate``.
_GROUP_WORD = re.compile(r"[A-Za-z][\w-]*[A-Za-z0-9]")
_ELEMENT = re.compile(r"^(.*?\[\d+\])")


def counted_part(text: str, part: ValueCheck, whole: ValueCheck, view: EvidenceView) -> bool:
    """Whether ``part`` (a count the proposition ``text`` states, "three") is the
    number of rows of the group ``whole`` counts that what ``text`` says after the
    whole holds of (see the module's docstring)."""
    n, m = _whole_number(part), _whole_number(whole)
    if n is None or m is None or not 0 < n <= m:
        return False
    said = text[whole.value.end :]
    for rows in _groups(view):
        group = _members(rows, m, said)
        if group is not None:
            return _part_size(group, said) == n
    return False


def _whole_number(check: ValueCheck) -> int | None:
    quantity = check.value.quantity
    if quantity is None or len(quantity.values) != 1:
        return None
    (value,) = quantity.values
    return int(value) if value == value.to_integral_value() and value >= 0 else None


def _groups(view: EvidenceView) -> Iterator[list[str]]:
    """The rows of each table and the elements of each JSON list of ``view``."""
    if view.is_json:
        lists: dict[str, dict[str, list[str]]] = {}
        for line in view.lines:
            element = _ELEMENT.match(line.path)
            if element is not None:
                head = element.group(1)
                name = head[: head.rfind("[")]
                lists.setdefault(name, {}).setdefault(head, []).append(f"{line.path}: {line.value}")
        for elements in lists.values():
            yield ["\n".join(lines) for lines in elements.values()]
        return
    rows = [written for _, _, written in table_rows(view.text)]
    if rows:
        yield rows


def _members(rows: Sequence[str], size: int, said: str) -> list[str] | None:
    """The rows of the group: all of ``rows`` where there are ``size`` of them, else
    the ``size`` rows that write one word of ``said`` whole."""
    if len(rows) == size:
        return list(rows)
    for word in dict.fromkeys(_GROUP_WORD.findall(said)):
        pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)
        named = [row for row in rows if pattern.search(row)]
        if len(named) == size:
            return named
    return None


def _part_size(group: Sequence[str], said: str) -> int | None:
    held = [stem_set(row) for row in group]
    telling = [
        stem
        for stem in dict.fromkeys(content_words(said))
        if 0 < sum(stem in stems for stems in held) < len(group)
    ]
    if not telling:
        return None
    return sum(all(stem in stems for stem in telling) for stems in held)
