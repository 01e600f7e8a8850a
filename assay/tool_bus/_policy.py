"""Declarative auto-approval rules, loaded from YAML or JSON.

A rule names a tool (and optionally a version) and conditions on the call's
arguments: equality (``eq``), enums (``in``) and bounds (``lt``, ``le``, ``gt``,
``ge``). A rule only ever *proposes* a grant: the grant is issued through the
same path as a human's, so every claim the call depends on must still be
verified as entailed. The evaluator is plain code over parsed data; nothing is
ever passed to ``eval``. ::

    rules:
      - name: small-flags
        tool: flag_invoice_line
        claims: all_entailed
        args:
          amount_over_cap: {le: 500}
          currency: {in: [EUR, USD]}
        ttl_s: 300

An argument is named by its top-level key or by a JSON pointer (``/line/amount``).
A missing argument, or a bound applied to a non-number, fails the condition.

Files are read by ``assay.tool_bus._policy_file``, which says what it refuses and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from assay.errors import InvalidPolicy
from assay.ledger import canonical_json
from assay.tool_bus._policy_file import (
    MAX_POLICY_BYTES,
    MAX_POLICY_DEPTH,
    Loc,
    Locate,
    at,
    non_finite,
    read_policy_file,
)

__all__ = ["MAX_POLICY_BYTES", "MAX_POLICY_DEPTH", "Condition", "Policy", "Rule", "load_policy"]

_MISSING = object()


class Condition(BaseModel):
    """Conditions on one argument; every condition given must hold."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    eq: JsonValue = None
    in_: list[JsonValue] | None = Field(default=None, alias="in")
    lt: float | None = None
    le: float | None = None
    gt: float | None = None
    ge: float | None = None

    def holds(self, value: object) -> bool:
        if value is _MISSING:
            return False
        if "eq" in self.model_fields_set and not _same(value, self.eq):
            return False
        if self.in_ is not None and not any(_same(value, v) for v in self.in_):
            return False
        return self._bounds_hold(value)

    def _bounds_hold(self, value: object) -> bool:
        bounds = (self.lt, self.le, self.gt, self.ge)
        if all(b is None for b in bounds):
            return True
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        number = float(value)
        return (
            (self.lt is None or number < self.lt)
            and (self.le is None or number <= self.le)
            and (self.gt is None or number > self.gt)
            and (self.ge is None or number >= self.ge)
        )


class Rule(BaseModel):
    """Approve calls of ``tool`` whose arguments meet ``args`` (claims permitting)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    tool: str
    version: str | None = None
    claims: Literal["all_entailed"] = "all_entailed"
    args: dict[str, Condition] = Field(default_factory=dict[str, Condition])
    ttl_s: float = Field(default=300.0, gt=0, le=86_400)

    def matches(self, tool: str, version: str, args: Mapping[str, Any]) -> bool:
        if tool != self.tool or (self.version is not None and version != self.version):
            return False
        return all(cond.holds(argument_value(args, key)) for key, cond in self.args.items())

    def unmet(self, tool: str, version: str, args: Mapping[str, Any]) -> list[str]:
        """Why the rule does not match this call, one line per condition it fails
        (empty when it matches): what a reviewer is told of a rule that did not apply."""
        if tool != self.tool:
            return [f"it is for {self.tool}, not {tool}"]
        if self.version is not None and version != self.version:
            return [f"it is for version {self.version}, not {version}"]
        unmet: list[str] = []
        for key, cond in self.args.items():
            value = argument_value(args, key)
            if not cond.holds(value):
                bounds = canonical_json(cond.model_dump(by_alias=True, exclude_unset=True))
                shown = "missing" if value is _MISSING else f"is {_json_text(value)}"
                unmet.append(f"{key} {shown}, the rule requires {bounds.decode()}")
        return unmet


class Policy(BaseModel):
    """An ordered list of rules; the first rule whose grant is issued wins."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: list[Rule] = Field(default_factory=list[Rule])


def argument_value(args: Mapping[str, Any], key: str) -> object:
    if not key.startswith("/"):
        return args.get(key, _MISSING)
    node: object = args
    for raw in key[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = cast(list[Any], node)[int(part)]
        else:
            return _MISSING
    return node


def _json_text(value: object) -> str:
    try:
        text = canonical_json(value).decode()
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _same(a: object, b: object) -> bool:
    """JSON equality: ``1 == 1.0`` but ``True != 1`` and ``"5" != 5``."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return canonical_json(a) == canonical_json(b)
    except (TypeError, ValueError):
        return False


_MAX_VALUES = 250_000
"""Values a mapping passed in directly may hold (a policy file holds far fewer)."""
_MAX_ERRORS = 10
"""Schema errors listed in one message."""


def load_policy(source: str | Path | Mapping[str, Any] | Policy) -> Policy:
    """A :class:`Policy` from a YAML/JSON file path, a mapping, or a Policy."""
    if isinstance(source, Policy):
        return source
    if isinstance(source, str | Path):
        path = Path(source)
        data, locate = read_policy_file(path)
        problem = _data_problem(data)
        if problem is not None:
            raise InvalidPolicy(f"{path}: invalid policy: {problem}")
        return _validate(data, str(path), locate)
    problem = _data_problem(source)
    if problem is not None:
        raise InvalidPolicy(f"invalid policy: {problem}")
    return _validate(source)


def _validate(data: object, name: str | None = None, locate: Locate | None = None) -> Policy:
    """Validate against the schema; for a file, each error says where it is."""
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
    head, items = "invalid policy: ", list[str]()
    for i, error in enumerate(errors[:_MAX_ERRORS]):
        item = f"{'/'.join(str(p) for p in error['loc']) or 'the policy'}: {error['msg']}"
        where = None if locate is None else locate(error["loc"])
        if name is not None and i == 0:
            head = f"{at(name, where)}: {head}"
        elif where is not None:
            item = f"line {where[0]}, column {where[1]}: {item}"
        items.append(item)
    if len(errors) > _MAX_ERRORS:
        items.append(f"and {len(errors) - _MAX_ERRORS} more")
    raise InvalidPolicy(head + "; ".join(items)) from None


def _data_problem(data: object) -> str | None:
    """Why the data breaks the depth, string-key or finite-number rules, if it does.

    Iterative, and bounded by a count of values visited, so that neither a cycle nor
    a list that holds the same list many times over can keep it (or pydantic) busy.
    """
    todo: list[tuple[object, Loc]] = [(data, ())]
    for _ in range(_MAX_VALUES):
        if not todo:
            return None
        value, loc = todo.pop()
        problem = None
        if isinstance(value, Mapping | list | tuple) and len(loc) >= MAX_POLICY_DEPTH:
            problem = f"nested deeper than {MAX_POLICY_DEPTH}"
        elif isinstance(value, Mapping):
            items = cast(Mapping[object, object], value).items()
            bad = [key for key, _ in items if not isinstance(key, str)]
            problem = f"key {bad[0]!r} is not a string" if bad else None
            todo.extend((item, (*loc, cast(str, key))) for key, item in items)
        elif isinstance(value, list | tuple):
            todo.extend((item, (*loc, i)) for i, item in enumerate(cast(list[object], value)))
        elif isinstance(value, float | int) and not isinstance(value, bool):
            problem = non_finite(value)
        if problem is not None:
            here = "/".join(str(p) for p in loc) or "the policy"
            return f"{here}: {problem}"
    return f"more than {_MAX_VALUES} values"
