"""Write the agent-grounding dev set as an eval suite for ``assay eval``.

    python evals/agent_grounding/build_suite.py [--data PATH] [--out DIR] [--limit N]

``--data`` is the dev set's folder or its ``agent_grounding_dev.jsonl`` (default:
``../shared/data/agent-grounding-dev`` beside the repository). The data is never
copied into the repository: the suite is written to ``--out`` (default
``evals/agent_grounding/build/``, which git ignores). Each item becomes one case: its
tool results are the case's fixtures, its claim goes to the graph as
``context["claim"]``, and its human label is the gold (``supported``: the run answers
the claim; ``unsupported``: it abstains and never answers the claim). Run it with the
replay graph beside this script:

    assay eval DIR/suite.json --graph evals.agent_grounding.replay:graph

Exit status 0 when written, 2 when the data is missing or malformed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "agent-grounding-dev"
DEFAULT_OUT = HERE / "build"
DATA_FILE = "agent_grounding_dev.jsonl"
TASK = "Check the claim against the tool results and report it only if they support it."


class DataError(Exception):
    """The dev set is not where it was looked for, or not in its documented shape."""


def data_file(path: Path) -> Path:
    """The JSONL file of the dev set at ``path`` (its folder or the file itself)."""
    found = path / DATA_FILE if path.is_dir() else path
    if not found.is_file():
        raise DataError(f"no agent-grounding dev set at {path} (looked for {found})")
    return found


def case_of(item: dict[str, Any]) -> dict[str, Any]:
    """One suite case from one labelled item."""
    fixtures: dict[str, Any] = {}
    for entry in item["evidence"]:
        name, n = str(entry["source"]), 2
        while name in fixtures:  # the same tool called twice: keep both results
            name, n = f"{entry['source']} #{n}", n + 1
        fixtures[name] = {"output": entry["content"]}
    claim = str(item["claim"])
    if item["label"] == "supported":
        expect: dict[str, Any] = {"status": "answered", "facts": [{"id": "claim", "text": claim}]}
    elif item["label"] == "unsupported":
        expect = {"status": "abstained", "must_not_claim": [claim]}
    else:
        raise DataError(f"{item['id']}: unknown label {item['label']!r}")
    return {
        "id": str(item["id"]),
        "task": TASK,
        "fixtures": fixtures,
        "extra": {"claim": claim},
        "expect": expect,
    }


def build(data: Path, *, limit: int | None = None) -> dict[str, Any]:
    """The suite of the dev set at ``data`` (its first ``limit`` items, if given)."""
    lines = data_file(data).read_text(encoding="utf-8").splitlines()
    try:
        items = [json.loads(line) for line in lines if line.strip()]
        cases = [case_of(item) for item in items[:limit]]
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{data}: not the agent-grounding dev set's format ({exc})") from exc
    return {
        "suite": "agent-grounding-dev",
        "description": "The agent-grounding dev set (tool results and one claim each, "
        "labelled by people) run through a fenced graph that replays the tool results.",
        "cases": cases,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the agent-grounding dev set as a suite.")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the dev set")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write it")
    parser.add_argument("--limit", type=int, default=None, help="only the first N items")
    args = parser.parse_args(argv)
    try:
        suite = build(args.data, limit=args.limit)
    except DataError as exc:
        print(f"build_suite: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / "suite.json"
    target.write_text(json.dumps(suite, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{target}: {len(suite['cases'])} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
