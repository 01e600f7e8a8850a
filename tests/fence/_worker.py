"""A separate process for the durable-resume test: ``start`` runs the over-cap case
until it pauses for a grant, reports, and waits to be killed; ``resume`` approves."""

from __future__ import annotations

import sys
import time

from assay import ControlPlane
from assay.graph.reference import cases
from assay.verifier import LexicalNLI


def main(action: str, url: str, thread_id: str, approver: str = "alice") -> None:
    with ControlPlane.open(url, nli=LexicalNLI()) as cp:
        if action == "start":
            folder = cases()["over_cap"]
            result = cp.run((folder / "task.txt").read_text(), folder, thread_id=thread_id)
            print(f"{result.status} {result.thread_id}", flush=True)
            time.sleep(600)  # paused; the test kills this process here
        elif action == "resume":
            result = cp.resume(thread_id, {"approve": True, "approver": approver})
            print(f"{result.status} {len(result.actions)}", flush=True)
        else:  # "resume-as": report who the executed call's grant names
            result = cp.resume(thread_id, {"approve": True, "approver": approver})
            names = [(a.status, a.approver) for a in result.actions]
            print(f"{result.status} {names}", flush=True)
            for record in result.actions:
                if record.error is not None:
                    print(f"error {record.error}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
