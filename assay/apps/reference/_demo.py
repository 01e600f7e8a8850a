"""What ``assay demo`` shows: the bundled cases, run through the fenced audit.

The command line renders and decides; this module only says what to run. The
over-cap case is the one audited at the end: it pauses for a human grant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.apps.reference._graph import case_input, graph
from assay.fence import FenceComponents, FencedGraph

DEMO_CASES = ("compliant", "over_cap", "small_overage", "uncovered_rate")


@dataclass(frozen=True, kw_only=True)
class DemoCase:
    """One case of the demo: its name, its task, the run input."""

    name: str
    task: str
    input: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Demo:
    """A demo any runner can show: the graph factory, the cases in order, and the
    case whose run is audited at the end."""

    graph: Callable[[FenceComponents], FencedGraph]
    cases: tuple[DemoCase, ...]
    audited: str


def demo() -> Demo:
    """The invoice-audit demo (``assay demo`` loads ``assay.apps.reference:demo``)."""
    inputs = [(name, case_input(name)) for name in DEMO_CASES]
    return Demo(
        graph=graph,
        cases=tuple(DemoCase(name=n, task=str(i["task"]), input=i) for n, i in inputs),
        audited="over_cap",
    )
