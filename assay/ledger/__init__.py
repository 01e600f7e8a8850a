"""The append-only, content-hashed, hash-chained citation ledger, and the Merkle log
over all its entries: signed checkpoints, inclusion and consistency proofs, offline
audit bundles."""

import typing

from assay._lazy import exports as _exports

if typing.TYPE_CHECKING:
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


# Each name is imported from its home when first used (PEP 562): importing the
# package loads none of them.
__getattr__, __dir__ = _exports(
    __name__,
    {
        "LedgerBatch": "assay.ledger._append",
        "BUNDLE_FORMAT": "assay.ledger._bundle",
        "VerifiedBundle": "assay.ledger._bundle",
        "verify_bundle": "assay.ledger._bundle",
        "canonical_json": "assay.ledger._hashing",
        "sha256_hex": "assay.ledger._hashing",
        "DEFAULT_MAX_CONTENT_BYTES": "assay.ledger._ledger",
        "Ledger": "assay.ledger._ledger",
        "InclusionProof": "assay.ledger._log",
        "load_signer": "assay.ledger._log",
        "load_verifier": "assay.ledger._log",
        "leaf_hash": "assay.ledger._merkle",
        "node_hash": "assay.ledger._merkle",
        "verify_consistency": "assay.ledger._merkle",
        "verify_inclusion": "assay.ledger._merkle",
        "ALL_KINDS": "assay.ledger._records",
        "EVIDENCE_KINDS": "assay.ledger._records",
        "GENESIS_HASH": "assay.ledger._records",
        "RECORD_KINDS": "assay.ledger._records",
        "ChainReport": "assay.ledger._records",
        "EvidenceKind": "assay.ledger._records",
        "Kind": "assay.ledger._records",
        "LedgerEntry": "assay.ledger._records",
        "RecordKind": "assay.ledger._records",
        "RunInfo": "assay.ledger._records",
        "Checkpoint": "assay.ledger._signed_checkpoint",
        "CheckpointVerifier": "assay.ledger._signed_checkpoint",
        "Signer": "assay.ledger._signed_checkpoint",
        "generate_key": "assay.ledger._signed_checkpoint",
        "sign_checkpoint": "assay.ledger._signed_checkpoint",
        "verify_checkpoint": "assay.ledger._signed_checkpoint",
    },
)
