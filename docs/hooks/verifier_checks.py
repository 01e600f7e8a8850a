"""The verifier's check table, from the registered checks themselves: their order,
ids, what each finds, when it applies and the verdicts its examples settle."""

from __future__ import annotations

from collections.abc import Sequence

from assay.verifier.checks import DEFAULT_CHECKS, CheckSpec


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _when(check: object) -> str:
    condition = check.condition if isinstance(check, CheckSpec) else None
    if condition is None:
        return "always"
    return _cell((condition.__doc__ or condition.__name__).strip())


def verifier_checks_table(checks: Sequence[object] = DEFAULT_CHECKS) -> str:
    """A Markdown table of ``checks`` in the order the verifier asks them."""
    lines = [
        "| # | check | finds | applies to | verdict | examples |",
        "|---|---|---|---|---|---|",
    ]
    for n, check in enumerate(checks, 1):
        if not isinstance(check, CheckSpec):
            continue
        labels = sorted({e.finds for e in check.examples if e.finds is not None})
        lines.append(
            f"| {n} | `{check.id}` | {_cell(check.summary)} | {_when(check)} | "
            f"{', '.join(f'`{label}`' for label in labels)} | {len(check.examples)} |"
        )
    return "\n".join(lines)
