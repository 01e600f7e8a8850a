"""The append-only, content-hashed, hash-chained citation ledger."""

from assay.ledger._append import LedgerBatch
from assay.ledger._hashing import canonical_json, sha256_hex
from assay.ledger._ledger import DEFAULT_MAX_CONTENT_BYTES, Ledger
from assay.ledger._records import (
    ALL_KINDS,
    EVIDENCE_KINDS,
    GENESIS_HASH,
    RECORD_KINDS,
    ChainReport,
    EvidenceKind,
    Kind,
    LedgerEntry,
    RecordKind,
    RunInfo,
)

__all__ = [
    "ALL_KINDS",
    "DEFAULT_MAX_CONTENT_BYTES",
    "EVIDENCE_KINDS",
    "GENESIS_HASH",
    "RECORD_KINDS",
    "ChainReport",
    "EvidenceKind",
    "Kind",
    "Ledger",
    "LedgerBatch",
    "LedgerEntry",
    "RecordKind",
    "RunInfo",
    "canonical_json",
    "sha256_hex",
]
