"""The refund desk of ``examples/refund_desk.py`` from the command line, each step in a
process of its own, as a person types it: ``assay run`` pauses on the model's own
refund call and prints the command that resumes it; ``assay resume --approve`` runs
the refund once (a second decision is refused), ``--deny`` runs nothing. The desk's
scripted model finds its place in the conversation each new process sends it. The
stand-in NLI model (the verifier is not the subject), on a real SQLite file and a
real PostgreSQL database."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay import ControlPlane
from assay.verifier import LexicalNLI

ROOT = Path(__file__).resolve().parents[2]
GRAPH = "examples.refund_desk:graph"
TASK = json.dumps({"task": "The customer returned order D-4410: refund it."})
TOTAL = "The total of order D-4410 was 29.97 USD."

#: The console script's entry point, its control plane on the stand-in NLI model.
_ASSAY = """
import sys
import assay.cli._main as commands
from assay import ControlPlane
from assay.verifier import LexicalNLI

def open_plane(db, *, migrate=True):
    return ControlPlane.open(db, migrate=migrate, nli=LexicalNLI())

commands.open_plane = open_plane
sys.argv[0] = "assay"
from assay.cli import main
main()
"""

pytestmark = pytest.mark.slow


def assay(*args: str) -> subprocess.CompletedProcess[str]:
    """``assay ARGS`` in a new process, from the repository root."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-c", _ASSAY, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _paused(db: str, thread: str) -> list[str]:
    """Start the desk; the words of the ``assay resume`` it says to type."""
    started = assay("run", "--graph", GRAPH, "--input", TASK, "--thread", thread, "--db", db)
    assert started.returncode == 0, started.stderr
    assert started.stdout.startswith("awaiting_grant run run_")
    assert 'pending grant issue_refund@1.0.0 {"order": "D-4410", "amount": 29.97}' in started.stdout
    [line] = [x for x in started.stdout.splitlines() if x.startswith("resume with: ")]
    words = shlex.split(line.removeprefix("resume with: "))
    assert words == [
        *("assay", "resume", thread, "--graph", GRAPH, "--db", db),
        *("--approve", "--approver", "NAME"),
    ]
    return words[1:]


def _refunds(db: str, run_id: str) -> int:
    """How many refunds the ledger holds for ``run_id`` (outputs of issue_refund)."""
    with ControlPlane.open(db, nli=LexicalNLI()) as cp:
        outputs = cp.ledger.entries(run_id, kinds=["tool_output"])
    return [e.source for e in outputs].count("tool:issue_refund@1.0.0")


def _decided(words: list[str], *decision: str) -> dict[str, Any]:
    done = assay(*words[:-3], *decision, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_run_then_approve_from_the_command_line_refunds_once(db_url: str) -> None:
    words = _paused(db_url, "desk-1")
    # Without --graph, the error names the thread's graph and how to give it.
    unnamed = assay("resume", "desk-1", "--approve", "--approver", "ana", "--db", db_url)
    assert unnamed.returncode == 2 and "belongs to graph 'desk'" in unnamed.stderr
    assert "--graph" in unnamed.stderr and "Traceback" not in unnamed.stderr

    done = _decided(words, "--approve", "--approver", "ana")

    assert done["status"] == "answered"
    actions = [(a["tool"], a["status"], a["approver"]) for a in done["actions"]]
    assert actions == [("issue_refund", "executed", "ana")]
    assert [c["text"] for c in done["claims"]] == [TOTAL, "Refund R-1 was issued."]
    again = assay(*words[:-3], "--approve", "--approver", "bob")
    assert again.returncode == 2 and "already decided" in again.stderr
    assert "approved by 'ana'" in again.stderr and again.stdout == ""
    assert _refunds(db_url, done["run_id"]) == 1


def test_run_then_deny_from_the_command_line_refunds_nothing(db_url: str) -> None:
    words = _paused(db_url, "desk-2")

    done = _decided(words, "--deny", "--approver", "ana", "--reason", "not arrived")

    assert done["status"] == "denied"
    [action] = done["actions"]
    assert (action["status"], action["reason"]) == ("denied", "not arrived")
    assert [c["text"] for c in done["claims"]] == [TOTAL]
    assert _refunds(db_url, done["run_id"]) == 0
