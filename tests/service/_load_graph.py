"""The invoice audit as ``assay serve`` runs it in the load tests: on the
deterministic stand-in NLI model, since the service's workers open their own control
plane (with the shipped model) and the model is not what these tests measure.

Served as ``--graph invoices=tests.service._load_graph:served_graph`` from the
repository root; same graph name and version as the reference audit.
"""

from __future__ import annotations

from dataclasses import replace

from assay import ControlPlane
from assay.apps import reference
from assay.fence import FencedGraph
from assay.tool_bus import Grants, ToolBus
from assay.verifier import LedgerVerifier, LexicalNLI


def served_graph(cp: ControlPlane) -> FencedGraph:
    """:func:`assay.apps.reference.served_graph` on a variant of ``cp`` whose verifier
    runs :class:`LexicalNLI`, with grants (and their bus) that read claim status from
    that verifier; ``cp`` itself is left as it is."""
    verifier = LedgerVerifier(cp.ledger, model_loader=LexicalNLI)
    grants = Grants(
        cp.engine,
        cp.ledger,
        cp.registry,
        claim_status_source=verifier,
        policy=cp.grants.policy,
        clock=cp.grants.clock,
    )
    bus = ToolBus(cp.engine, cp.ledger, cp.registry, grants, timeout_s=cp.bus.timeout_s)
    return reference.served_graph(replace(cp, verifier=verifier, grants=grants, bus=bus))
