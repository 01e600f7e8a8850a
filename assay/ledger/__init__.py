"""The append-only, content-hashed, hash-chained citation ledger, and the Merkle log
over all its entries: signed checkpoints, inclusion and consistency proofs, offline
audit bundles."""

from assay.ledger._append import LedgerBatch
from assay.ledger._bundle import BUNDLE_FORMAT, VerifiedBundle, verify_bundle
from assay.ledger._hashing import canonical_json, sha256_hex
from assay.ledger._ledger import DEFAULT_MAX_CONTENT_BYTES, Ledger
from assay.ledger._log import InclusionProof, load_signer, load_verifier
from assay.ledger._merkle import leaf_hash, node_hash, verify_consistency, verify_inclusion
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
from assay.ledger._signed_checkpoint import (
    Checkpoint,
    CheckpointVerifier,
    Signer,
    generate_key,
    sign_checkpoint,
    verify_checkpoint,
)

__all__ = [
    "ALL_KINDS",
    "BUNDLE_FORMAT",
    "DEFAULT_MAX_CONTENT_BYTES",
    "EVIDENCE_KINDS",
    "GENESIS_HASH",
    "RECORD_KINDS",
    "ChainReport",
    "Checkpoint",
    "CheckpointVerifier",
    "EvidenceKind",
    "InclusionProof",
    "Kind",
    "Ledger",
    "LedgerBatch",
    "LedgerEntry",
    "RecordKind",
    "RunInfo",
    "Signer",
    "VerifiedBundle",
    "canonical_json",
    "generate_key",
    "leaf_hash",
    "load_signer",
    "load_verifier",
    "node_hash",
    "sha256_hex",
    "sign_checkpoint",
    "verify_bundle",
    "verify_checkpoint",
    "verify_consistency",
    "verify_inclusion",
]
