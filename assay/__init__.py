"""assay: a control plane that fences LangGraph agents.

The public names are re-exported here; everything in a module whose name starts with
an underscore is private.
"""

from assay.control_plane import ControlPlane
from assay.errors import (
    AssayError,
    ConfigurationError,
    ContentTooLarge,
    DatabaseError,
    InvalidEntry,
    InvalidMetadata,
    LedgerError,
    LedgerWriteRefused,
    RunError,
    UnknownEntry,
    UnknownKind,
    UnknownRun,
    UsageError,
)
from assay.ledger import (
    EVIDENCE_KINDS,
    RECORD_KINDS,
    ChainReport,
    Ledger,
    LedgerEntry,
    RunInfo,
)

__version__ = "0.1.0"

__all__ = [
    "EVIDENCE_KINDS",
    "RECORD_KINDS",
    "AssayError",
    "ChainReport",
    "ConfigurationError",
    "ContentTooLarge",
    "ControlPlane",
    "DatabaseError",
    "InvalidEntry",
    "InvalidMetadata",
    "Ledger",
    "LedgerEntry",
    "LedgerError",
    "LedgerWriteRefused",
    "RunError",
    "RunInfo",
    "UnknownEntry",
    "UnknownKind",
    "UnknownRun",
    "UsageError",
    "__version__",
]
