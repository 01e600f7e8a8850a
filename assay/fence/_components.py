"""What the fence's nodes run on: the components of one database, as a frozen record.

The fence sits below the composition root: its nodes need a ledger, a registry, a
bus, grants, a gate, a verifier, a checkpointer and the database engine, not the
:class:`~assay.ControlPlane` that builds them (a ``ControlPlane`` is one of these
records, with a lifecycle of its own). A variant is another record, never a change
to this one: :func:`policy_scoped` is ``dataclasses.replace`` with grants and a bus
of their own, :func:`effect_scoped` with a bus whose effects are named in a scope.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from sqlalchemy.engine import Engine

from assay.fence._checkpointer import Checkpointer
from assay.gate import Gate
from assay.ledger import Ledger
from assay.tool_bus import Grants, Policy, ToolBus, ToolRegistry
from assay.verifier import LedgerVerifier

__all__ = ["FenceComponents", "effect_scoped", "policy_scoped"]

_C = TypeVar("_C", bound="FenceComponents")


@dataclass(frozen=True, kw_only=True, eq=False)
class FenceComponents:
    """The components a fenced graph runs on, all bound to one database.

    ``checkpoints`` owns LangGraph's durable saver on that database, opened on first
    use (:attr:`checkpointer`), so components that never run a graph never open it.
    Records compare by identity: two records are the same components only when they
    are the same object.
    """

    engine: Engine
    ledger: Ledger
    registry: ToolRegistry
    bus: ToolBus
    grants: Grants
    gate: Gate
    verifier: LedgerVerifier
    checkpoints: Checkpointer

    @property
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """LangGraph's durable saver on this database (SQLite or PostgreSQL), opened
        on first use; paused runs survive the process."""
        return self.checkpoints.saver


def policy_scoped(components: _C, policy: Policy) -> _C:
    """``components`` with grants and a bus of their own, which hold ``policy``, so
    that its rules approve one graph's calls and nobody else's. Everything else is
    shared; the clock is the original grants' (read on every use)."""
    base = components.grants
    grants = Grants(
        components.engine,
        components.ledger,
        components.registry,
        claim_status_source=base.claim_status_source,
        policy=policy,
        clock=lambda: base.clock(),
    )
    bus = ToolBus(
        components.engine,
        components.ledger,
        components.registry,
        grants,
        timeout_s=components.bus.timeout_s,
        effect_scope=components.bus.effect_scope,
    )
    return replace(components, grants=grants, bus=bus)


def effect_scoped(components: _C, scope: str) -> _C:
    """``components`` with a bus whose effects are named in ``scope``: a call repeats
    an effect only of a call in the same scope (an evaluation's cases run in one of
    their own). Everything else is shared."""
    bus = ToolBus(
        components.engine,
        components.ledger,
        components.registry,
        components.grants,
        timeout_s=components.bus.timeout_s,
        effect_scope=scope,
    )
    return replace(components, bus=bus)
