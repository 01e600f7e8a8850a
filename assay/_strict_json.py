"""Reading JSON that a person wrote (a policy, an eval suite, a case's evidence file),
strictly: what the standard parser would accept silently is refused with a reason.

``json.loads`` keeps the last of two equal keys, reads ``NaN`` and ``Infinity``,
turns ``1e999`` into infinity, and raises ``RecursionError`` (not a parse error) on
text nested a few thousand deep. Each of those is a mistake in a file a reviewer
reads, and each reader of such files refuses them the same way through
:func:`read_strict_json`. Like the validators of :mod:`assay._limits`, it returns
the problem and leaves the exception to the caller, which words the refusal in its
own error (a policy's ``InvalidPolicy``, a suite's located problem).

This module imports nothing from assay: it sits at the bottom of the layers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Literal

__all__ = ["JsonProblem", "read_strict_json"]

Rule = Literal["syntax", "duplicate_key", "not_finite", "too_deep"]

#: An integer with more digits than this overflows every float a reader may turn
#: it into (the largest double is about 1.8e308).
_MAX_INT_DIGITS = 308


@dataclass(frozen=True, kw_only=True)
class JsonProblem:
    """Why a JSON text is refused: ``rule`` says which, ``message`` how, ``token``
    the offending key or number, ``line`` and ``column`` (1-based) where, for a
    syntax error."""

    rule: Rule
    message: str
    token: str | None = None
    line: int | None = None
    column: int | None = None


class _Refused(Exception):
    def __init__(self, problem: JsonProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def read_strict_json(text: str) -> tuple[object, JsonProblem | None]:
    """The data of a JSON text and ``None``, or ``None`` and the problem: a syntax
    error, a key given twice in one object, a number that is not finite (``NaN``,
    ``Infinity``, ``1e999``, an integer of more than 308 digits), or nesting too deep
    to parse."""
    try:
        data = json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            parse_int=_finite_int,
        )
    except _Refused as exc:
        return None, exc.problem
    except json.JSONDecodeError as exc:
        return None, JsonProblem(rule="syntax", message=exc.msg, line=exc.lineno, column=exc.colno)
    except RecursionError:
        return None, JsonProblem(rule="too_deep", message="nested too deeply to read")
    return data, None


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    data: dict[str, object] = {}
    for key, value in pairs:
        if key in data:
            message = f"the key {key!r} is given twice"
            raise _Refused(JsonProblem(rule="duplicate_key", message=message, token=key))
        data[key] = value
    return data


def _not_finite(token: str, message: str) -> _Refused:
    return _Refused(JsonProblem(rule="not_finite", message=message, token=token))


def _shown(token: str) -> str:
    return token if len(token) <= 24 else token[:20] + "..."


def _refuse_constant(token: str) -> object:
    raise _not_finite(token, f"{token} is not JSON")


def _finite_int(token: str) -> int:
    if len(token.lstrip("-")) > _MAX_INT_DIGITS:
        raise _not_finite(token, f"{_shown(token)} is not a finite number")
    return int(token)


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _not_finite(token, f"{_shown(token)} is not a finite number")
    return value
