"""The invoice audit, an application on assay's public API: bundled cases, tools,
rule-based and chat-model agents, its auto-approval policy, and the fenced graph that
``assay run`` / ``assay resume`` load by default (``assay.apps.reference:graph``) and
``assay demo`` shows."""

from assay.apps.reference._demo import DEMO_CASES, Demo, DemoCase, demo
from assay.apps.reference._graph import (
    GRAPH_NAME,
    GRAPH_VERSION,
    ReferenceApp,
    app_for,
    case_input,
    cases,
    graph,
    llm_graph,
    prepare_input,
    served_graph,
)
from assay.apps.reference._inject import INJECTIONS, Injection
from assay.apps.reference._llm import LLMAgent, llm_agent_from_env, resolve_chat_model
from assay.apps.reference._tools import TOOLS, DocumentStore, Outbox, load_documents

__all__ = [
    "DEMO_CASES",
    "GRAPH_NAME",
    "GRAPH_VERSION",
    "INJECTIONS",
    "TOOLS",
    "Demo",
    "DemoCase",
    "DocumentStore",
    "Injection",
    "LLMAgent",
    "Outbox",
    "ReferenceApp",
    "app_for",
    "case_input",
    "cases",
    "demo",
    "graph",
    "llm_agent_from_env",
    "llm_graph",
    "load_documents",
    "prepare_input",
    "resolve_chat_model",
    "served_graph",
]
