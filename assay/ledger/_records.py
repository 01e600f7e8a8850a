"""The ledger's records: entry kinds, entries, runs and chain reports."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

EvidenceKind = Literal["retrieval", "tool_output", "human_fact"]
RecordKind = Literal[
    "tool_call",
    "handover",
    "gate_decision",
    "verdict",
    "unsupported",
    "grant",
    "error",
    "settlement",
]
Kind = EvidenceKind | RecordKind

#: Kinds that a claim may cite: what the world said, never what an agent said.
EVIDENCE_KINDS: frozenset[str] = frozenset(get_args(EvidenceKind))
#: Kinds that form the audit trail; they are never evidence.
RECORD_KINDS: frozenset[str] = frozenset(get_args(RecordKind))
ALL_KINDS: frozenset[str] = EVIDENCE_KINDS | RECORD_KINDS

GENESIS_HASH = "0" * 64


@dataclass(frozen=True, kw_only=True)
class LedgerEntry:
    """One appended entry. ``content`` is returned as it was appended: ``str`` for
    text, ``bytes`` for binary content (``sha256`` is over the exact bytes, UTF-8
    for text)."""

    id: str
    run_id: str
    seq: int
    kind: str
    source: str
    content: str | bytes
    sha256: str
    metadata: dict[str, Any]
    prev_hash: str
    entry_hash: str
    created_at: datetime
    #: The entry's position in the Merkle log over the whole ledger (append order).
    leaf_index: int

    @property
    def is_evidence(self) -> bool:
        """Whether a claim may cite this entry."""
        return self.kind in EVIDENCE_KINDS

    @property
    def content_bytes(self) -> bytes:
        """The exact bytes the ``sha256`` was computed over."""
        return self.content.encode("utf-8") if isinstance(self.content, str) else self.content

    @property
    def text(self) -> str:
        """The content as text (binary content decoded as UTF-8 with replacement)."""
        if isinstance(self.content, str):
            return self.content
        return self.content.decode("utf-8", errors="replace")


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    """A run and its chain head (``head_seq`` 0 and the genesis hash when empty).
    ``run_hash`` covers the run's id, creation time and metadata; every entry binds it."""

    run_id: str
    created_at: datetime
    metadata: dict[str, Any]
    head_seq: int
    head_hash: str
    run_hash: str


@dataclass(frozen=True, kw_only=True)
class ChainReport:
    """The result of re-deriving a chain from its stored rows.

    ``checked`` counts the entries examined; when ``ok`` is false, ``run_id``,
    ``first_bad_seq`` and ``entry_id`` name the first entry that fails and
    ``reason`` says how.
    """

    ok: bool
    checked: int
    first_bad_seq: int | None = None
    reason: str | None = None
    run_id: str | None = None
    entry_id: str | None = None
    runs: int = 0
