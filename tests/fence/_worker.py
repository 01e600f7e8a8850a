"""A separate process for the durable-resume test: ``start`` runs the over-cap case
until it pauses for a grant, reports, and waits to be killed; ``resume`` approves;
``resume-as`` approves as a named reviewer and reports the executed call's grant, or
the decision that stood when another process decided first."""

from __future__ import annotations

import sys
import time

from assay import AlreadyDecided, ControlPlane
from assay.apps import reference
from assay.verifier import LexicalNLI


def main(action: str, url: str, thread_id: str, approver: str = "alice") -> None:
    with ControlPlane.open(url, nli=LexicalNLI()) as cp:
        graph = reference.graph(cp)
        if action == "start":
            result = cp.run(graph, reference.case_input("over_cap"), thread_id=thread_id)
            print(f"{result.status} {result.thread_id}", flush=True)
            time.sleep(600)  # paused; the test kills this process here
        elif action == "resume":
            try:
                result = cp.resume(graph, thread_id, {"approve": True, "approver": approver})
            except AlreadyDecided as exc:
                print(f"already_decided {exc.decision['approver']}", flush=True)
                return
            print(f"{result.status} {len(result.actions)}", flush=True)
        else:  # "resume-as": report who the executed call's grant names
            try:
                result = cp.resume(graph, thread_id, {"approve": True, "approver": approver})
            except AlreadyDecided as exc:
                print(f"already_decided {exc.decision['approver']}", flush=True)
                return
            names = [(a.status, a.approver) for a in result.actions]
            print(f"{result.status} {names}", flush=True)
            for record in result.actions:
                if record.error is not None:
                    print(f"error {record.error}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
