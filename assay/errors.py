"""Exceptions raised by assay.

Every exception assay raises derives from :class:`AssayError`. Two branches tell the
caller whose fault it is: :class:`UsageError` for a mistake in how assay was called
(fix the call, retrying will not help) and :class:`RunError` for a failure at run time
(the database refused a write, the stored chain is broken, a driver failed).
Component roots such as :class:`LedgerError` sit beside the branches, so a caller can
catch "anything the ledger raised" as well as "any usage mistake"::

    AssayError
    ├── UsageError                      the caller's mistake
    │   ├── ConfigurationError          bad URL, unsupported engine, schema not at head
    │   ├── InvalidHandover             a hand-over too large or too deep to check
    │   └── (LedgerError) ─┬─ UnknownKind
    │                      ├─ UnknownRun
    │                      ├─ UnknownEntry
    │                      ├─ InvalidEntry      bad source, content not (Unicode) text
    │                      ├─ InvalidMetadata   not canonical JSON, too deep, too large
    │                      └─ ContentTooLarge
    └── RunError                        a failure at run time
        ├── DatabaseError               a driver error, translated at the boundary
        └── (LedgerError) ─── LedgerWriteRefused   UPDATE/DELETE refused by the database

The tool bus (``ToolBusError``: ``InvalidCall`` and friends, in
:mod:`assay.tool_bus`) and the verifier (``VerifierError``, in :mod:`assay.verifier`)
draw their own branches of this tree in their modules. Every size and shape limit
these errors enforce is a named constant in ``assay._limits``.

Driver exceptions never escape: they are translated with ``raise ... from exc`` so the
original stays available as ``__cause__``.
"""

from __future__ import annotations

__all__ = [
    "AssayError",
    "ConfigurationError",
    "ContentTooLarge",
    "DatabaseError",
    "InvalidEntry",
    "InvalidHandover",
    "InvalidMetadata",
    "LedgerError",
    "LedgerWriteRefused",
    "RunError",
    "UnknownEntry",
    "UnknownKind",
    "UnknownRun",
    "UsageError",
]


class AssayError(Exception):
    """Root of every exception assay raises."""


class UsageError(AssayError):
    """The caller used assay wrongly; the same call will fail again."""


class RunError(AssayError):
    """Something failed at run time: the database, a driver, stored data."""


class ConfigurationError(UsageError):
    """A database URL or setting that assay cannot work with."""


class DatabaseError(RunError):
    """A database driver error, translated; the driver's exception is ``__cause__``."""


class LedgerError(AssayError):
    """Root of the ledger's exceptions (usage and run-time alike)."""


class UnknownKind(LedgerError, UsageError):
    """An entry kind that is neither an evidence kind nor a record kind."""


class UnknownRun(LedgerError, UsageError):
    """A run id that the ledger has never started."""


class UnknownEntry(LedgerError, UsageError):
    """An entry id that the ledger does not hold."""


class InvalidHandover(UsageError):
    """A hand-over the gate cannot even check or record: nested deeper than
    ``MAX_JSON_DEPTH``, larger than ``MAX_HANDOVER_BYTES``, or naming an agent
    (``from_agent``) longer than ``MAX_AGENT_CHARS``. Raised before anything is
    written; every smaller mistake is a :class:`~assay.gate.GateError` instead."""


class InvalidEntry(LedgerError, UsageError):
    """An entry field of the wrong type or shape: an empty, over-long or control-laden
    source, content that is not str/bytes or not valid Unicode text."""


class InvalidMetadata(LedgerError, UsageError):
    """Metadata that is not a JSON object expressible in canonical (RFC 8785) JSON, or
    that is nested deeper than ``MAX_JSON_DEPTH`` or larger than ``MAX_METADATA_BYTES``."""


class ContentTooLarge(LedgerError, UsageError):
    """Content larger than the ledger's configured size limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"content is {size} bytes, over the ledger's limit of {limit} bytes; "
            "store large artifacts elsewhere and append a reference to them"
        )
        self.size = size
        self.limit = limit


class LedgerWriteRefused(LedgerError, RunError):
    """The database refused to UPDATE or DELETE ledger rows: the ledger is append-only."""
