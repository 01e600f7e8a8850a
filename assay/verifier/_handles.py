"""People named by logins or handles, bound to the record they act in.

A deploy log writes one login per deploy (``by: ayesha.k``, ``author=ayesha.k``);
"deploy D-4412 was made by ayesha.k" names a login the log gives, but for another
deploy. A small model reads such a sentence as entailed; code reads it record by
record: each login of the proposition (a lower-case handle with a dot or an
underscore, ``ayesha.k``, ``m_haas``, ``@rtanaka.dev``) must stand in a record of
the cited evidence that also holds one of the proposition's identifiers or codes
(``D-4412``, :func:`assay.verifier._sequence.anchors`). Where the records holding
those hold none of its logins, and another record holds the login, the login is
given for something else, where that record holds an identifier or code of its own
(``D-4410``): a login on a line of its own is left to the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assay.grounding import view_of
from assay.ledger import LedgerEntry
from assay.verifier._sequence import anchors
from assay.verifier._slots import scopes

__all__ = ["LoginElsewhere", "login_elsewhere"]

#: A login or handle: lower-case words joined by dots or underscores, none of them a
#: number alone (``v2.8.1`` is a version), not part of a path, an address or a host.
_HANDLE = re.compile(r"(?<![\w@./-])@?[a-z][a-z0-9]*(?:[._][a-z][a-z0-9]*)+(?![\w@/-]|\.\w)")


@dataclass(frozen=True, kw_only=True, slots=True)
class LoginElsewhere:
    """A login of the proposition that its cited evidence gives only in records
    other than those of the proposition's identifiers: ``entry`` and ``record`` are
    the first record that gives it."""

    login: str
    entry: LedgerEntry
    record: str
    text: str


def login_elsewhere(text: str, cited: Sequence[LedgerEntry]) -> LoginElsewhere | None:
    """The first login of ``text`` given in ``cited`` only in records that hold none
    of ``text``'s identifiers or codes, where some record holds one of those."""
    logins = [m.group().lstrip("@") for m in _HANDLE.finditer(text) if _login(m.group())]
    tests = anchors(text)
    if not logins or not tests:
        return None
    records = [
        (entry, name, reading.text)
        for entry in cited
        for name, reading in scopes(view_of(entry.text))
    ]
    anchored = [r for r in records if any(test(r[2]) for test in tests)]
    if not anchored:
        return None
    for login in logins:
        word = re.compile(rf"(?<![\w.@-]){re.escape(login)}(?![\w@-]|\.\w)", re.IGNORECASE)
        if any(word.search(r[2]) for r in anchored):
            continue
        # The login stands in a record of its own identifier: given for that one.
        holder = next((r for r in records if word.search(r[2]) and anchors(r[2])), None)
        if holder is not None:
            return LoginElsewhere(login=login, entry=holder[0], record=holder[1], text=holder[2])
    return None


#: Last parts that make a dotted name a host, not a login.
_HOSTS = frozenset({"com", "org", "net", "io", "dev", "local", "internal", "example"})


def _login(token: str) -> bool:
    """Whether a handle-shaped token is a login: not a host (``registry.example.org``)
    and not letters alone (``p.m``, ``e.g``)."""
    parts = re.split(r"[._]", token.lstrip("@"))
    return parts[-1] not in _HOSTS and any(len(p) > 1 for p in parts)
