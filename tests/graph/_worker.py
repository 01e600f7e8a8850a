"""A separate process for the durable-resume test: ``start`` runs the over-cap case
until it pauses for a grant, reports, and waits to be killed; ``resume`` approves."""

from __future__ import annotations

import sys
import time

from assay import ControlPlane
from assay.graph.reference import cases
from assay.verifier import LexicalNLI


def main(action: str, url: str, thread_id: str) -> None:
    with ControlPlane.open(url, nli=LexicalNLI()) as cp:
        if action == "start":
            folder = cases()["over_cap"]
            result = cp.run((folder / "task.txt").read_text(), folder, thread_id=thread_id)
            print(f"{result.status} {result.thread_id}", flush=True)
            time.sleep(600)  # paused; the test kills this process here
        else:
            result = cp.resume(thread_id, {"approve": True, "approver": "alice"})
            print(f"{result.status} {len(result.actions)}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
