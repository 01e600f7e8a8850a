"""Unified-diff payload checks: as a function, as a tool pre-check, as a schema keyword."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assay import ControlPlane
from assay.tool_bus import ToolSpec, argument_errors, check_unified_diff, diff_precheck

GOOD = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"
NEW_FILE = (
    "diff --git a/src/n.py b/src/n.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/src/n.py\n@@ -0,0 +1 @@\n+hi\n"
)


def _diff(path: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty_diff"),
        ("  \n", "empty_diff"),
        (None, "empty_diff"),
        ("just some prose\n", "malformed_diff"),
        ("@@ -1 +1 @@\n-a\n+b\n", "malformed_diff"),
        ("--- a/src/app.py\n+++ b/src/app.py\n", "malformed_diff"),
        ("--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,1 @@\n-a\n+b\n", "malformed_diff"),
        ("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "forbidden_path"),
        (_diff("src/../../etc/passwd"), "forbidden_path"),
        (_diff("docs/readme.md"), "forbidden_path"),
    ],
)
def test_codes(text: Any, code: str) -> None:
    error = check_unified_diff(text, allowed_roots=["src", "tests"], pointer="/patch")
    assert error is not None and error.code == code
    assert error.details and all(d.path == "/patch" for d in error.details)


def test_good_diffs_pass() -> None:
    assert check_unified_diff(GOOD, allowed_roots=["src"]) is None
    assert check_unified_diff(NEW_FILE, allowed_roots=["src"]) is None
    assert check_unified_diff(_diff("anything/at/all.txt")) is None


def test_every_problem_is_listed_and_the_worst_code_named() -> None:
    text = _diff("src/ok.py") + "--- a/src/empty.py\n+++ b/src/empty.py\n" + _diff("/abs")
    error = check_unified_diff(text, allowed_roots=["src"])
    assert error is not None and error.code == "malformed_diff"
    assert len(error.details) == 3  # no hunk; /abs as source; /abs as target


def test_a_symlink_that_leaves_the_roots_is_forbidden(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    outside.mkdir()
    os.symlink(outside, repo / "src" / "link")
    escape = check_unified_diff(_diff("src/link/x.py"), allowed_roots=["src"], base_dir=repo)
    assert escape is not None and escape.code == "forbidden_path"
    assert "symlink" in escape.details[0].message
    assert check_unified_diff(_diff("src/x.py"), allowed_roots=["src"], base_dir=repo) is None


def test_the_precheck_runs_before_the_handler(plane: ControlPlane) -> None:
    applied: list[str] = []
    spec = ToolSpec(
        "apply_patch",
        "1.0.0",
        "Apply a unified diff.",
        {"type": "object", "properties": {"patch": {"type": "string"}}, "required": ["patch"]},
        {"type": "boolean"},
        "reversible",
    )
    plane.registry.register(
        spec,
        lambda a: applied.append(a["patch"]) is None,
        precheck=diff_precheck("patch", allowed_roots=["src"]),
    )
    run = plane.ledger.start_run()
    refused = plane.bus.call(run, "apply_patch", {"patch": _diff("../secrets")})
    assert refused.error is not None and refused.error.code == "forbidden_path"
    empty = plane.bus.call(run, "apply_patch", {"patch": ""})
    assert empty.error is not None and empty.error.code == "empty_diff"
    assert applied == []
    assert plane.bus.call(run, "apply_patch", {"patch": GOOD}).ok and applied == [GOOD]


def test_the_schema_keyword_checks_inside_arguments() -> None:
    spec = ToolSpec(
        "patcher",
        "1.0.0",
        "Patches.",
        {
            "type": "object",
            "properties": {
                "patch": {"type": "string", "x-unified-diff": {"allowed_roots": ["src"]}}
            },
        },
        True,
        "reversible",
    )
    assert argument_errors(spec, {"patch": GOOD}) == []
    found = argument_errors(spec, {"patch": _diff("lib/x.py")})
    assert len(found) == 2  # the source and the target header
    assert all(d.path == "/patch" and d.message.startswith("forbidden_path:") for d in found)
