"""Reading a policy file: YAML or JSON data, held to what a reviewer can read.

A policy file is a short document that a person reviews: JSON data, each thing
said once where it applies. ``load_policy`` refuses anything else with
:class:`InvalidPolicy`, naming the file and the line (and column):

- a file over 256 KiB (read no further) or not a regular file; bytes not UTF-8;
- a duplicate key at any depth, which parsers resolve silently to the last one
  (a later ``args: {}`` would erase the bounds above it);
- nesting deeper than 16 (a rule needs 6), which would exhaust the parser's stack;
- every YAML anchor and alias, even one used once: one edit should not change
  several rules, and aliases let a few hundred bytes expand into billions of
  nodes. They are refused while composing, before anything is built, so there
  is no budget to tune;
- YAML tags other than null, bool, int, float, str, seq and map (``!!python/*``;
  ``!!timestamp``: quote the date; ``!!binary``, ``!!set``, merge keys ``<<``);
- keys that are not strings (YAML reads ``on``, ``yes``, ``1`` as bool or int);
- numbers that are not finite: an infinite ``le`` would approve any amount, and
  NaN is not JSON.

A mapping passed in directly is held to the depth, key and number rules; pydantic
refuses what else is not JSON data (sets, bytes, dates, cycles).
"""

from __future__ import annotations

import math
import stat
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml
from yaml.events import AliasEvent, CollectionStartEvent, NodeEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError

from assay._strict_json import read_strict_json
from assay.errors import InvalidPolicy

__all__ = ["MAX_POLICY_BYTES", "MAX_POLICY_DEPTH", "read_policy_file"]

MAX_POLICY_BYTES = 256 << 10
"""Larger files are refused unread. Some 1,500 rules fit; the bound is on load time,
as YAML is parsed in Python, at tens of KiB a second for the densest files."""
MAX_POLICY_DEPTH = 16
"""Containers nested deeper than this are refused (the schema itself needs 6)."""

Loc = tuple[int | str, ...]
Where = tuple[int, int]
"""A 1-based (line, column)."""
Locate = Callable[[Loc], "Where | None"]
_T = TypeVar("_T")


class _Refused(Exception):
    """A policy file refused while it is read; ``load_policy`` adds the file name."""

    def __init__(self, problem: str, where: Where | None = None) -> None:
        super().__init__(problem, where)
        self.problem, self.where = problem, where


def read_policy_file(path: Path) -> tuple[object, Locate]:
    """The data of a policy file and a function from a value's location to its place
    in the file; :class:`InvalidPolicy` (naming the file and line) for anything refused."""
    try:
        text = _read_text(path)
        if path.suffix.lower() == ".json":
            return _parse_json(text)
        return _parse_yaml(text)
    except _Refused as exc:
        raise InvalidPolicy(f"{at(str(path), exc.where)}: {exc.problem}") from None


def at(name: str, where: Where | None) -> str:
    return name if where is None else f"{name} line {where[0]}, column {where[1]}"


def line_column(text: str, offset: int) -> Where:
    return (text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset))


def _read_text(path: Path) -> str:
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise _Refused("not a regular file")
        with path.open("rb") as stream:
            raw = stream.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise InvalidPolicy(f"cannot read policy file {path}: {exc}") from exc
    if len(raw) > MAX_POLICY_BYTES:
        raise _Refused(f"larger than the {MAX_POLICY_BYTES} byte limit of a policy file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8")
        where = line_column(before, len(before))
        raise _Refused(f"not UTF-8 text (byte 0x{raw[exc.start]:02x})", where) from None
    return text.removeprefix("\ufeff")


def deepest(index: Mapping[Loc, _T], loc: Loc) -> _T | None:
    """Where the longest known prefix of ``loc`` sits in the file.

    Parts the file does not have (pydantic's union tags such as ``list``) are skipped.
    """
    path: Loc = ()
    found = index.get(path)
    for part in loc:
        if (*path, part) in index:
            path = (*path, part)
            found = index[path]
    return found


def non_finite(value: float, shown: str | None = None) -> str | None:
    """Why ``value`` may not stand in a policy, or None when it is a finite float."""
    try:
        if math.isfinite(value):
            return None
    except OverflowError:  # an int beyond float range
        pass
    shown = repr(value) if shown is None else shown
    shown = shown if len(shown) <= 24 else shown[:20] + "..."
    return (
        f"{shown} is not a finite number in float range "
        "(an infinite bound would approve any amount, and NaN is not JSON)"
    )


# --- JSON ------------------------------------------------------------------------


def _parse_json(text: str) -> tuple[object, Locate]:
    """JSON through the strict reader: duplicate keys and non-finite numbers refused;
    a syntax error carries its line, the others name the key or number."""
    data, problem = read_strict_json(text)
    if problem is None:
        return data, lambda _loc: None
    if problem.rule == "syntax":
        where = (problem.line or 1, problem.column or 1)
        raise _Refused(f"does not parse: {problem.message}", where)
    if problem.rule == "too_deep":
        raise _Refused(f"nested deeper than {MAX_POLICY_DEPTH}")
    if problem.rule == "duplicate_key":
        raise _Refused(f"duplicate key {problem.token!r}")
    token = problem.token or ""
    raise _Refused(non_finite(float(token), token) or token)


# --- YAML ------------------------------------------------------------------------

_YAML = "tag:yaml.org,2002:"
_NO_ALIASES = "anchors and aliases are not allowed in a policy"
_JSON_TAGS = frozenset(_YAML + t for t in ("null", "bool", "int", "float", "str", "seq", "map"))


def _mark(node: Node | NodeEvent) -> Where | None:
    mark = node.start_mark
    return None if mark is None else (mark.line + 1, mark.column + 1)


class _PolicyLoader(yaml.SafeLoader):
    """SafeLoader, less anchors, aliases, deep nesting, non-JSON tags and duplicates."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event = cast(NodeEvent, self.peek_event())
        if isinstance(event, AliasEvent):
            raise _Refused(f"alias *{event.anchor}: {_NO_ALIASES}", _mark(event))
        if event.anchor is not None:
            raise _Refused(f"anchor &{event.anchor}: {_NO_ALIASES}", _mark(event))
        nested = isinstance(event, CollectionStartEvent)
        self._depth += nested
        if self._depth > MAX_POLICY_DEPTH:
            raise _Refused(f"nested deeper than {MAX_POLICY_DEPTH}", _mark(event))
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= nested
        if node is not None and node.tag not in _JSON_TAGS:
            raise _Refused(_tag_problem(node.tag), _mark(node))
        return node

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        mapping: dict[Hashable, Any] = {}
        for key_node, value_node in cast(list[tuple[Node, Node]], node.value):
            if not isinstance(key_node, ScalarNode):
                raise _Refused("a key must be a string, not a list or mapping", _mark(key_node))
            if key_node.tag != _YAML + "str":
                raise _Refused(
                    f"key {key_node.value!r} must be a string (quote it)", _mark(key_node)
                )
            key = self.construct_scalar(key_node)
            if key in mapping:
                raise _Refused(f"duplicate key {key!r}", _mark(key_node))
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_number(self, node: ScalarNode) -> float:
        try:
            if node.tag == _YAML + "int":
                value: float = self.construct_yaml_int(node)
            else:
                value = self.construct_yaml_float(node)
        except ValueError:  # more digits than int() reads
            value = math.inf
        problem = non_finite(value, cast(str, node.value))
        if problem is not None:
            raise _Refused(problem, _mark(node))
        return value


_PolicyLoader.add_constructor(_YAML + "float", _PolicyLoader.construct_number)
_PolicyLoader.add_constructor(_YAML + "int", _PolicyLoader.construct_number)


def _tag_problem(tag: str) -> str:
    short = "!!" + tag.removeprefix(_YAML) if tag.startswith(_YAML) else tag
    if tag == _YAML + "merge":
        return "merge keys (<<) are not allowed"
    hint = " (quote it if it is text)" if tag == _YAML + "timestamp" else ""
    return f"tag {short} is not allowed: a policy holds JSON data only{hint}"


def _parse_yaml(text: str) -> tuple[object, Locate]:
    loader = None
    try:
        loader = _PolicyLoader(text)  # the reader refuses control characters here
        root = loader.get_single_node()
        data: object = None if root is None else loader.construct_document(root)
    except ReaderError as exc:
        where = line_column(text, cast(int, exc.position))
        raise _Refused(f"does not parse: {exc.reason}", where) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = None if mark is None else (mark.line + 1, mark.column + 1)
        problem = ", ".join(p for p in (exc.context, exc.problem) if p)
        raise _Refused(f"does not parse: {problem}", where) from None
    except yaml.YAMLError as exc:
        raise _Refused(f"does not parse: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()
    marks = _node_marks(root)
    return data, lambda loc: _mark_at(marks, loc)


def _node_marks(root: Node | None) -> dict[Loc, Node]:
    marks: dict[Loc, Node] = {}
    todo: list[tuple[Node, Loc]] = [] if root is None else [(root, ())]
    while todo:
        node, loc = todo.pop()
        marks.setdefault(loc, node)
        if isinstance(node, MappingNode):
            for key_node, value_node in cast(list[tuple[ScalarNode, Node]], node.value):
                marks[(*loc, cast(str, key_node.value))] = key_node
                todo.append((value_node, (*loc, cast(str, key_node.value))))
        elif isinstance(node, SequenceNode):
            todo.extend((item, (*loc, i)) for i, item in enumerate(cast(list[Node], node.value)))
    return marks


def _mark_at(marks: dict[Loc, Node], loc: Loc) -> Where | None:
    node = deepest(marks, loc)
    return None if node is None else _mark(node)
