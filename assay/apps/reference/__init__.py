"""The invoice-audit reference application: bundled cases, tools, rule-based agents
and the fenced graph that ``assay demo`` runs."""

from assay.graph.reference._graph import ReferenceApp, cases
from assay.graph.reference._inject import INJECTIONS, Injection
from assay.graph.reference._llm import LLMAgent, llm_agent_from_env, resolve_chat_model
from assay.graph.reference._tools import TOOLS, DocumentStore, Outbox, load_documents

__all__ = [
    "INJECTIONS",
    "TOOLS",
    "DocumentStore",
    "Injection",
    "LLMAgent",
    "Outbox",
    "ReferenceApp",
    "cases",
    "llm_agent_from_env",
    "load_documents",
    "resolve_chat_model",
]
