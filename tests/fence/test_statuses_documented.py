"""The statuses a run and its actions end in are the ones ``docs/fence.md`` tabulates,
no more and no fewer, so the page stays true to the code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from assay.fence import RunStatus
from assay.fence._result import ActionStatus

PAGE = Path(__file__).resolve().parents[2] / "docs" / "fence.md"


def _first_column(header: str) -> set[str]:
    """The code values in the first column of the table under ``header``."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("### Statuses", 1)[1].split("\n## ", 1)[0]
    table = section.split(f"| {header} |", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", table, re.MULTILINE))


def test_every_run_status_is_in_the_table_and_only_those() -> None:
    assert _first_column("run `status`") == set(get_args(RunStatus))


def test_every_action_status_is_in_the_table_and_only_those() -> None:
    assert _first_column("action `status`") == set(get_args(ActionStatus))
