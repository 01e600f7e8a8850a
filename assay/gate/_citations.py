"""Citations: where in a ledger entry a proposition's evidence says it.

A proposition may point at its evidence more closely than by ledger id
(``cites`` in the contract): a ``quote`` that occurs in the entry's stored text, or
in one decoded string of a JSON entry, character for character after NFKC; or an
RFC 6901 ``pointer`` into a JSON entry. :func:`locate` finds the cited bytes, or
says why there are none; the gate refuses a citation that names nothing
(``fabricated_citation``), and the verifier reads what a citation names in place of
the whole entry.

A pointer may name a scalar (that field) or an object or array (every field under
it): pointing at a record is pointing at each of its fields. The work is linear in
the entry and the quote: the entry is normalised once (and not at all when it is
already NFKC), a quote is one substring search, a pointer one walk down its tokens.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from jsonpointer import JsonPointer, JsonPointerException

from assay.contract import Handover, PointerCitation, QuoteCitation
from assay.gate._records import GateFinding, path
from assay.grounding import EvidenceView, ViewLine, view_of
from assay.ledger import LedgerEntry

__all__ = ["CitedSpan", "check_cites", "locate", "nfkc"]

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX = re.compile(r"0|[1-9][0-9]*")
#: A value shown for a pointer to an object or array is clipped to this length.
_SHOWN_CHARS = 240


@dataclass(frozen=True, kw_only=True)
class CitedSpan:
    """What one citation names in one entry.

    ``stored`` is the cited bytes' span in the stored text (for a pointer, the
    value's token, its quotes included for a string; for a record, from its first
    field's value to its last); ``view`` the same in the entry's view
    (:func:`assay.grounding.view_of`); ``lines`` the JSON leaves it names (none
    for a quote in a text entry);
    ``shown`` what a person is shown: the quoted text, or ``pointer: value``.
    """

    stored: tuple[int, int]
    view: tuple[int, int]
    lines: tuple[ViewLine, ...]
    shown: str


def nfkc(text: str) -> str:
    """``text`` in NFKC, the form in which a quote and its entry are compared."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def locate(text: str, cite: QuoteCitation | PointerCitation) -> CitedSpan | str:
    """What ``cite`` names in the stored entry ``text``, or why it names nothing."""
    if isinstance(cite, QuoteCitation):
        return _locate_quote(text, cite.quote)
    return _locate_pointer(text, cite.pointer)


# --- quotes -----------------------------------------------------------------------


def _locate_quote(text: str, quote: str) -> CitedSpan | str:
    needle = nfkc(quote)
    view = view_of(text)
    normal, starts = _normal_form(text)
    at = normal.find(needle)
    if at >= 0:
        stored = (starts[at], starts[at + len(needle)]) if starts else (0, len(text))
        return CitedSpan(
            stored=stored, view=_view_span(view, stored), lines=_touched(view, stored), shown=quote
        )
    for line in view.lines:  # a decoded string of a JSON entry
        value, starts = _normal_form(line.value)
        at = value.find(needle)
        if at >= 0:
            a, b = (starts[at], starts[at + len(needle)]) if starts else (0, len(line.value))
            span = (line.value_start + a, line.value_start + b)
            return CitedSpan(stored=view.to_stored(*span), view=span, lines=(line,), shown=quote)
    return "the quote does not occur in the entry (compared after NFKC)"


@lru_cache(maxsize=64)
def _normal_form(text: str) -> tuple[str, tuple[int, ...] | None]:
    """``text`` in NFKC and, for each of its characters (and its end), the offset in
    ``text`` of the character it came from. A base character and the combining marks
    after it are normalised together, as NFKC composes them; where NFKC composes
    across them too (Hangul jamo), there is no map (``None``) and a span found in
    the normal form stands for the whole text."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text, tuple(range(len(text) + 1))
    parts: list[str] = []
    starts: list[int] = []
    for start, cluster in _clusters(text):
        normal = unicodedata.normalize("NFKC", cluster)
        parts.append(normal)
        starts += [start] * len(normal)
    joined = "".join(parts)
    whole = unicodedata.normalize("NFKC", text)
    if joined != whole:
        return whole, None
    return joined, (*starts, len(text))


def _clusters(text: str) -> Iterator[tuple[int, str]]:
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or not unicodedata.combining(text[i]):
            yield start, text[start:i]
            start = i


def _touched(view: EvidenceView, stored: tuple[int, int]) -> tuple[ViewLine, ...]:
    """The JSON leaves whose stored token overlaps ``stored``."""
    return tuple(
        line for line in view.lines if line.stored[0] < stored[1] and stored[0] < line.stored[1]
    )


def _view_span(view: EvidenceView, stored: tuple[int, int]) -> tuple[int, int]:
    """The view's span of a stored span: itself for text; the leaves it touches for
    JSON (the next leaf where it touches only punctuation or a key)."""
    if not view.is_json:
        return stored
    lines = (
        _touched(view, stored)
        or tuple(line for line in view.lines if line.stored[0] >= stored[0])[:1]
    )
    if not lines:
        return (0, len(view.text))
    return (lines[0].start, lines[-1].end)


# --- pointers ---------------------------------------------------------------------


def _locate_pointer(text: str, pointer: str) -> CitedSpan | str:
    view = view_of(text)
    if not view.is_json:
        return "the entry is not JSON, so a pointer names nothing in it; cite it by a quote"
    try:
        tokens: list[str] = JsonPointer(pointer).parts
    except JsonPointerException as exc:
        return f"the pointer is not an RFC 6901 JSON Pointer: {exc}"
    value: Any = _decoded(text)
    path, walked = "", ""
    for token in tokens:
        if isinstance(value, dict):
            named = cast(dict[str, Any], value)
            if token not in named:
                return f"the pointer does not resolve: no key {token!r} at {walked or '/'}"
            value, path = named[token], _child(path, token)
        elif isinstance(value, list):
            items = cast(list[Any], value)
            if not _INDEX.fullmatch(token) or int(token) >= len(items):
                return (
                    f"the pointer does not resolve: {token!r} is not an index of the "
                    f"{len(items)} items at {walked or '/'}"
                )
            value, path = items[int(token)], f"{path}[{token}]"
        else:
            return f"the pointer does not resolve: {walked or '/'} is a value, not a record"
        walked += "/" + token.replace("~", "~0").replace("/", "~1")
    lines = _under(view, path, container=isinstance(value, dict | list))
    if not lines:  # pragma: no cover - every decoded value has a leaf in the view
        return "the pointer does not resolve in the entry's fields"
    stored = (min(line.stored[0] for line in lines), max(line.stored[1] for line in lines))
    return CitedSpan(
        stored=stored,
        view=(lines[0].start, lines[-1].end),
        lines=lines,
        shown=f"{pointer or '(the whole entry)'}: {_shown(value)}",
    )


@lru_cache(maxsize=16)
def _decoded(text: str) -> Any:
    return json.loads(text)


def _child(path: str, key: str) -> str:
    """The view's path of ``key`` under ``path`` (as :func:`view_of` writes it)."""
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _under(view: EvidenceView, path: str, *, container: bool) -> tuple[ViewLine, ...]:
    if not container:
        return tuple(line for line in view.lines if line.path == path)
    if not path:
        return view.lines
    return tuple(
        line
        for line in view.lines
        if line.path == path or line.path.startswith((f"{path}.", f"{path}["))
    )


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 1] + "…"


# --- the gate's check -------------------------------------------------------------


def check_cites(
    run_id: str, handover: Handover, entries: dict[str, LedgerEntry]
) -> list[GateFinding]:
    """Every citation names something in its entry: a quote occurs in it, a pointer
    resolves in it. A citation of an entry that is not evidence of this run is left
    to the citation check, which reports the entry at its place in ``ledger_ids``."""
    errors: list[GateFinding] = []
    for i, claim in enumerate(handover.claims):
        for j, prop in enumerate(claim.propositions):
            for k, cite in enumerate(prop.cites or ()):
                entry = entries.get(cite.ledger_id)
                if entry is None or entry.run_id != run_id or not entry.is_evidence:
                    continue
                found = locate(entry.text, cite)
                if isinstance(found, str):
                    errors.append(
                        GateFinding(
                            code="fabricated_citation",
                            path=path("claims", i, "propositions", j, "cites", k),
                            message=f"{cite.ledger_id}: {found}",
                        )
                    )
    return errors
