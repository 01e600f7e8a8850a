"""Unified-diff payload checks for patch-applying tools.

A patch is checked before it reaches a handler: not empty, parseable (file headers,
at least one hunk per file, hunk line counts that add up) and touching only paths
inside the allowed roots — no absolute path, no ``..``, and, when the base
directory is known, no path that leaves the roots through a symlink. Parsing is
done by ``unidiff``; the path rules are ours.

Use it three ways: :func:`check_unified_diff` on a string, :func:`diff_precheck`
as a tool's pre-check (``registry.register(..., precheck=...)``), or the schema
keyword ``"x-unified-diff": true`` / ``{"allowed_roots": [...]}`` inside an input
schema (lexical path rules only; symlinks need the pre-check's ``base_dir``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from assay.tool_bus._records import ErrorDetail, ToolFailure

__all__ = ["DiffCode", "PreCheck", "check_unified_diff", "diff_precheck", "diff_problems"]

DiffCode = Literal["empty_diff", "malformed_diff", "forbidden_path"]
#: A tool's pre-check: validated arguments in, ``None`` or the error to return.
PreCheck = Callable[[Mapping[str, Any]], ToolFailure | None]

_DEV_NULL = "/dev/null"
_DRIVE = re.compile(r"^[A-Za-z]:")
_ORDER: dict[DiffCode, int] = {"empty_diff": 0, "malformed_diff": 1, "forbidden_path": 2}


def diff_problems(
    text: object,
    *,
    allowed_roots: Sequence[str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> list[tuple[DiffCode, str]]:
    """Every problem of a unified diff, as ``(code, message)``; empty when it is fine.

    ``allowed_roots`` are directories relative to the repository root (``None``: the
    whole repository); ``base_dir`` is that root on disk, for the symlink check.
    """
    if not isinstance(text, str) or not text.strip():
        return [("empty_diff", "the diff is empty")]
    try:
        patch = PatchSet(text)
    except UnidiffParseError as exc:
        return [("malformed_diff", f"cannot parse the diff: {str(exc).strip()}")]
    if len(patch) == 0:
        return [("malformed_diff", "no file headers (--- / +++) found")]
    problems: list[tuple[DiffCode, str]] = []
    roots = _roots(allowed_roots)
    for patched in patch:
        if len(patched) == 0:
            problems.append(("malformed_diff", f"file {patched.path!r} has no hunk"))
        sides = ((patched.source_file, "a/"), (patched.target_file, "b/"))
        strip = all(raw == _DEV_NULL or raw.startswith(prefix) for raw, prefix in sides)
        for raw in (patched.source_file, patched.target_file):
            if raw == _DEV_NULL:
                continue
            name = raw[2:] if strip else raw
            reason = _path_problem(name, roots, base_dir)
            if reason is not None:
                problems.append(("forbidden_path", f"{raw!r}: {reason}"))
    return problems


def check_unified_diff(
    text: object,
    *,
    allowed_roots: Sequence[str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    pointer: str = "",
) -> ToolFailure | None:
    """:func:`diff_problems` as a :class:`ToolFailure` (``None`` when the diff is fine).

    The code is the first kind of problem found in the order empty, malformed,
    forbidden path; every problem is listed in ``details`` at ``pointer``.
    """
    problems = diff_problems(text, allowed_roots=allowed_roots, base_dir=base_dir)
    if not problems:
        return None
    codes: list[DiffCode] = [c for c, _ in problems]
    code = min(codes, key=lambda c: _ORDER[c])
    return ToolFailure(
        code=code,
        message=f"the diff at {pointer or '/'} was refused: {problems[0][1]}",
        details=[ErrorDetail(path=pointer, message=f"{c}: {m}") for c, m in problems],
    )


def diff_precheck(
    field: str,
    *,
    allowed_roots: Sequence[str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> PreCheck:
    """A pre-check that applies :func:`check_unified_diff` to argument ``field``."""
    pointer = "/" + field.replace("~", "~0").replace("/", "~1")

    def precheck(args: Mapping[str, Any]) -> ToolFailure | None:
        return check_unified_diff(
            args.get(field), allowed_roots=allowed_roots, base_dir=base_dir, pointer=pointer
        )

    return precheck


def _roots(allowed_roots: Sequence[str] | None) -> list[PurePosixPath]:
    if allowed_roots is None:
        return [PurePosixPath(".")]
    return [PurePosixPath(os.path.normpath(r.replace("\\", "/")) or ".") for r in allowed_roots]


def _path_problem(
    name: str, roots: list[PurePosixPath], base_dir: str | os.PathLike[str] | None
) -> str | None:
    if not name or "\x00" in name:
        return "empty path or NUL byte"
    posix = name.replace("\\", "/")
    if posix.startswith("/") or _DRIVE.match(posix) or posix.startswith("~"):
        return "absolute paths are not allowed"
    parts = PurePosixPath(posix).parts
    if ".." in parts:
        return "'..' is not allowed"
    path = PurePosixPath(*parts) if parts else PurePosixPath(".")
    inside = [r for r in roots if r == PurePosixPath(".") or path.is_relative_to(r)]
    if not inside:
        return "outside the allowed roots " + ", ".join(str(r) for r in roots)
    if base_dir is not None:
        base = Path(base_dir).resolve()
        real = (base / path).resolve()
        within = any(real.is_relative_to((base / r).resolve()) for r in inside)
        if not within or not real.is_relative_to(base):
            return "leaves the allowed roots through a symlink"
    return None
