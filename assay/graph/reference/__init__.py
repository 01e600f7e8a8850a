"""The invoice-audit reference application: bundled cases, tools, rule-based agents
and the fenced graph that ``assay demo`` runs."""

from assay.graph.reference._graph import ReferenceApp, cases
from assay.graph.reference._inject import INJECTIONS, Injection
from assay.graph.reference._tools import TOOLS, DocumentStore, Outbox, load_documents

__all__ = [
    "INJECTIONS",
    "TOOLS",
    "DocumentStore",
    "Injection",
    "Outbox",
    "ReferenceApp",
    "cases",
    "load_documents",
]
