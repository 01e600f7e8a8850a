"""The invoice audit as ``assay serve`` runs it in the load tests: on the
deterministic stand-in NLI model, since the service's workers open their own control
plane (with the shipped model) and the model is not what these tests measure.

Served as ``--graph invoices=tests.service._load_graph:served_graph`` from the
repository root; same graph name and version as the reference audit.
"""

from __future__ import annotations

from assay import ControlPlane
from assay.apps import reference
from assay.fence import FencedGraph
from assay.verifier import LedgerVerifier, LexicalNLI


def served_graph(cp: ControlPlane) -> FencedGraph:
    """:func:`assay.apps.reference.served_graph` on ``cp`` with the verifier's model
    replaced by :class:`LexicalNLI` (for this worker's control plane only)."""
    cp.verifier = LedgerVerifier(cp.ledger, model_loader=LexicalNLI)
    cp.grants.claim_status_source = cp.verifier
    return reference.served_graph(cp)
