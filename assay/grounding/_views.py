"""Evidence views: what the gate and the verifier read of a stored evidence entry.

A tool that returns JSON is stored as canonical JSON, where a newline inside a
string is the two characters ``\\n`` and a field's name sits glued to its value:
``{"text":"a.py\\nb.py"}``. Read as plain text, ``b.py`` is then part of the token
``nb.py`` and ``lines[3].rate`` is nowhere. A view reads such an entry through
its decoded leaves instead, one ``path: value`` line per leaf::

    lines[3].rate: EUR 610/h
    text: a.py
    b.py

and keeps, for every character of a value, where it came from in the stored text,
so that a span found in the view (an identifier, a quote, the model's premise)
maps back to the exact stored characters that a person can check
(:meth:`EvidenceView.to_stored`).

A JSON leaf belongs to a *record*: the innermost object or array element that
holds it (``lines[3]`` for ``lines[3].rate``). A text entry's records are its
lines, or its sentences where a line is long prose. Records are the unit a typed
proposition's arguments must share, and the unit premises are chosen from.

:meth:`EvidenceView.sentences` renders each record as short sentences a model
can read (``lines[3] rate: EUR 610/h.``); the rendering is fixed, so a model can
be trained on it.

Text that is not a JSON object or array, JSON nested deeper than
:data:`~assay._limits.MAX_JSON_DEPTH` and text that fails to parse are viewed as
they are: the view's text is the stored text and every span maps to itself.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

from assay._limits import MAX_JSON_DEPTH
from assay._text import sentence_spans

__all__ = ["EvidenceView", "ViewLine", "view_of"]

_WHITESPACE = " \t\n\r"
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A text line longer than this is split into sentences (its ``records`` sentences,
#: :mod:`assay._text`) when records are formed.
_LONG_LINE_CHARS = 240
_DECODER = json.JSONDecoder()
#: The standard library's JSON string decoder: ``scanstring(text, index_after_quote)``
#: returns the decoded string and the index after its closing quote.
_scanstring = cast(Any, json.decoder).scanstring


@dataclass(frozen=True, slots=True)
class ViewLine:
    """One decoded leaf of a JSON entry.

    ``path`` is the leaf's JSONPath without ``$`` (``lines[3].rate``; empty for a
    scalar at the root), ``value`` its text (strings decoded, numbers as written,
    ``true``/``false``/``null``), ``record`` the path of the record that holds it.
    ``start``/``end`` delimit the whole line in the view's text, ``value_start`` its
    value; ``stored`` is the value's token in the stored text (quotes included for a
    string), ``exact`` whether the value's characters map one to one onto the stored
    ones (a string without escapes, or any number, ``true``, ``false``, ``null``).
    """

    path: str
    value: str
    record: str
    start: int
    value_start: int
    end: int
    stored: tuple[int, int]
    exact: bool


@dataclass(frozen=True, slots=True)
class EvidenceView:
    """The readable text of one stored entry and the map back to its stored text."""

    stored: str
    text: str
    is_json: bool
    lines: tuple[ViewLine, ...] = ()
    _line_starts: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def to_stored(self, start: int, end: int) -> tuple[int, int]:
        """The stored span of the view's ``text[start:end]``.

        For a plain-text view that is the same span. For a JSON view, a span inside
        one value that maps one to one is exact; otherwise the span widens to the
        stored tokens of every leaf it touches (a path maps to its value's token).
        """
        if not self.is_json:
            return (start, end)
        touched = self._touched(start, end)
        if not touched:
            return (0, len(self.stored))
        if len(touched) == 1:
            line = touched[0]
            lo, hi = max(start, line.value_start), min(end, line.end)
            if lo < hi:
                a, b = lo - line.value_start, hi - line.value_start
                if line.exact:
                    offset = line.stored[0] + (1 if self.stored[line.stored[0]] == '"' else 0)
                    return (offset + a, offset + b)
                where = _decoded_offsets(self.stored, line.stored)
                return (where[a], where[b - 1] + _escape_width(self.stored, where[b - 1]))
        return (min(t.stored[0] for t in touched), max(t.stored[1] for t in touched))

    def _touched(self, start: int, end: int) -> list[ViewLine]:
        first = max(bisect_right(self._line_starts, start) - 1, 0)
        touched: list[ViewLine] = []
        for line in self.lines[first:]:
            if line.start >= max(end, start + 1):
                break
            if line.end > start or (start == end and line.start <= start <= line.end):
                touched.append(line)
        return touched

    def records(self) -> list[tuple[str, tuple[int, int]]]:
        """Each record's name and its span in the view's text, in order.

        A JSON record is the run of lines with the same ``record``; a text record is
        a non-blank line, or a sentence of a line longer than 240 characters.
        """
        if self.is_json:
            return list(_json_records(self.lines))
        return list(_text_records(self.text))

    def sentences(self) -> list[str]:
        """The entry as short sentences for the model, one list item per record.

        A JSON record becomes ``path: value.`` clauses joined by spaces; a text
        record is its own text.
        """
        if not self.is_json:
            return [self.text[a:b] for _, (a, b) in self.records()]
        out: list[str] = []
        for _, (a, b) in self.records():
            clauses: list[str] = []
            for line in self.lines[self._index(a) :]:
                if line.start >= b:
                    break
                clauses.append(_sentence(line))
            out.append(" ".join(clauses))
        return out

    def _index(self, start: int) -> int:
        return max(bisect_right(self._line_starts, start) - 1, 0)


def _sentence(line: ViewLine) -> str:
    value = " ".join(line.value.split())
    label = line.path or "value"
    return f"{label}: {value}" if value[-1:] in ".!?" else f"{label}: {value}."


def view_of(text: str) -> EvidenceView:
    """The view of one stored entry's text (cached by text)."""
    return _view(text)


@lru_cache(maxsize=256)
def _view(text: str) -> EvidenceView:
    stripped = text.lstrip(_WHITESPACE)
    if not stripped.startswith(("{", "[")):
        return EvidenceView(stored=text, text=text, is_json=False)
    try:
        leaves = list(_leaves(text))
    except (ValueError, _TooDeep):
        return EvidenceView(stored=text, text=text, is_json=False)
    lines: list[ViewLine] = []
    parts: list[str] = []
    position = 0
    for path, record, value, stored, exact in leaves:
        head = f"{path}: " if path else ""
        line = ViewLine(
            path=path,
            value=value,
            record=record,
            start=position,
            value_start=position + len(head),
            end=position + len(head) + len(value),
            stored=stored,
            exact=exact,
        )
        lines.append(line)
        parts.append(head + value)
        position = line.end + 1
    return EvidenceView(
        stored=text,
        text="\n".join(parts),
        is_json=True,
        lines=tuple(lines),
        _line_starts=tuple(line.start for line in lines),
    )


class _TooDeep(Exception):
    """JSON nested deeper than the view follows."""


_Leaf = tuple[str, str, str, tuple[int, int], bool]


def _leaves(text: str) -> Iterator[_Leaf]:
    """Every scalar of the JSON document ``text`` with its path and stored span.

    Raises ``ValueError`` for text that is not exactly one JSON document.
    """
    position = _skip(text, 0)
    leaves: list[_Leaf] = []
    end = _walk(text, position, "", "", 0, leaves)
    if _skip(text, end) != len(text):
        raise ValueError("extra data after the JSON document")
    yield from leaves


def _walk(text: str, i: int, path: str, record: str, depth: int, out: list[_Leaf]) -> int:
    """Walk the value at ``text[i]``; append its leaves; return the index after it."""
    if depth > MAX_JSON_DEPTH:
        raise _TooDeep
    char = text[i : i + 1]
    if char == "{":
        i = _skip(text, i + 1)
        if text[i : i + 1] == "}":
            out.append((path, record, "{}", (i - 1, i + 1), True))
            return i + 1
        nested: list[_Leaf] = []
        while True:
            if text[i : i + 1] != '"':
                raise ValueError("expected a key")
            key, i = _scanstring(text, i + 1)
            i = _skip(text, i)
            if text[i : i + 1] != ":":
                raise ValueError("expected ':'")
            i = _skip(text, i + 1)
            child: list[_Leaf] = []
            i = _walk(text, i, _child(path, key), path, depth + 1, child)
            # A record's own fields come first, then the records nested in it, so
            # that each record is one run of lines.
            (out if all(leaf[1] == path for leaf in child) else nested).extend(child)
            i = _skip(text, i)
            if text[i : i + 1] == "}":
                out.extend(nested)
                return i + 1
            if text[i : i + 1] != ",":
                raise ValueError("expected ',' or '}'")
            i = _skip(text, i + 1)
    if char == "[":
        i = _skip(text, i + 1)
        if text[i : i + 1] == "]":
            out.append((path, record, "[]", (i - 1, i + 1), True))
            return i + 1
        index = 0
        while True:
            item = f"{path}[{index}]"
            # A scalar in a list belongs to the list's record; an object is its own.
            owner = item if text[i : i + 1] in ("{", "[") else record
            i = _walk(text, i, item, owner, depth + 1, out)
            i = _skip(text, i)
            if text[i : i + 1] == "]":
                return i + 1
            if text[i : i + 1] != ",":
                raise ValueError("expected ',' or ']'")
            i = _skip(text, i + 1)
            index += 1
    if char == '"':
        value, end = _scanstring(text, i + 1)
        exact = end - i - 2 == len(value)
        out.append((path, record, value, (i, end), exact))
        return end
    value: Any
    value, end = _DECODER.raw_decode(text, i)
    if isinstance(value, (dict, list)):  # pragma: no cover - handled above
        raise ValueError("unexpected container")
    out.append((path, record, text[i:end], (i, end), True))
    return end


def _decoded_offsets(stored: str, token: tuple[int, int]) -> list[int]:
    """The stored offset of each decoded character of the JSON string ``token``."""
    offsets: list[int] = []
    i, end = token[0] + 1, token[1] - 1
    while i < end:
        offsets.append(i)
        width = _escape_width(stored, i)
        high_surrogate = width == 6 and 0xD800 <= int(stored[i + 2 : i + 6], 16) < 0xDC00
        if high_surrogate and stored[i + 6 : i + 8] == "\\u":
            width = 12  # a surrogate pair decodes to one character
        i += width
    return offsets


def _escape_width(stored: str, i: int) -> int:
    """How many stored characters make the decoded character at ``i``."""
    if stored[i] != "\\":
        return 1
    return 6 if stored[i + 1 : i + 2] == "u" else 2


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WHITESPACE:
        i += 1
    return i


def _child(path: str, key: str) -> str:
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _json_records(lines: tuple[ViewLine, ...]) -> Iterator[tuple[str, tuple[int, int]]]:
    start = 0
    for index, line in enumerate(lines):
        last = index + 1 == len(lines) or lines[index + 1].record != line.record
        if index == 0 or lines[index - 1].record != line.record:
            start = line.start
        if last:
            yield (line.record, (start, line.end))


def _text_records(text: str) -> Iterator[tuple[str, tuple[int, int]]]:
    offset = 0
    for number, raw in enumerate(text.splitlines(keepends=True), start=1):
        line = raw.rstrip("\r\n")
        body = line.strip()
        if body:
            cursor = offset + len(line) - len(line.lstrip())
            if len(body) <= _LONG_LINE_CHARS:
                yield (f"line {number}", (cursor, cursor + len(body)))
            else:
                for count, (a, b) in enumerate(sentence_spans(body, "records"), start=1):
                    yield (f"line {number}, sentence {count}", (cursor + a, cursor + b))
        offset += len(raw)
