"""What the fence's nodes use of a control plane, as a Protocol.

The fence sits below the composition root: its nodes need a ledger, a registry, a
bus, grants, a gate, a verifier, a checkpointer and the database engine, not the
:class:`~assay.ControlPlane` that builds them. Anything with these attributes can
be fenced against, a ``ControlPlane`` included, and a test or a service may compose
its own.
"""

from __future__ import annotations

from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver
from sqlalchemy.engine import Engine

from assay.gate import Gate
from assay.ledger import Ledger
from assay.tool_bus import Grants, ToolBus, ToolRegistry
from assay.verifier import LedgerVerifier

__all__ = ["FenceComponents"]


class FenceComponents(Protocol):
    """The components a fenced graph runs on, all bound to one database."""

    @property
    def engine(self) -> Engine: ...

    @property
    def ledger(self) -> Ledger: ...

    @property
    def registry(self) -> ToolRegistry: ...

    @property
    def bus(self) -> ToolBus: ...

    @property
    def grants(self) -> Grants: ...

    @property
    def gate(self) -> Gate: ...

    @property
    def verifier(self) -> LedgerVerifier: ...

    @property
    def checkpointer(self) -> BaseCheckpointSaver[Any]: ...
