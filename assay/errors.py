"""Every exception assay raises, in one tree.

Every exception assay raises derives from :class:`AssayError`. Two branches tell the
caller whose fault it is: :class:`UsageError` for a mistake in how assay was called
(fix the call, retrying will not help) and :class:`RunError` for a failure at run time
(the database refused a write, the stored chain is broken, a driver failed, a model
would not load). Component roots (:class:`LedgerError`, :class:`ToolBusError`,
:class:`VerifierError`) sit beside the branches, so a caller can catch "anything the
ledger raised" as well as "any usage mistake"::

    AssayError
    ├── UsageError                          the caller's mistake
    │   ├── ConfigurationError              bad URL, unsupported engine, schema not at head
    │   ├── InvalidHandover                 a hand-over too large or too deep to check
    │   ├── InvalidDecision                 a resume value that is not a decision
    │   │   └── AlreadyDecided              the intent was decided before (.decision)
    │   ├── UnknownThread                   a thread id with no run behind it
    │   ├── ThreadInUse                     a thread id that already holds a run
    │   ├── WrongGraph                      a thread resumed with another graph
    │   ├── (LedgerError) ──┬─ UnknownKind
    │   │                   ├─ UnknownRun
    │   │                   ├─ UnknownEntry
    │   │                   ├─ InvalidEntry       bad source, content not (Unicode) text
    │   │                   ├─ InvalidMetadata    not canonical JSON, too deep, too large
    │   │                   ├─ ContentTooLarge
    │   │                   └─ InvalidKey         a signing or verifier key that cannot be read
    │   ├── (ToolBusError) ─┬─ InvalidToolSpec    a spec that is not a valid ToolSpec
    │   │                   ├─ RegistryConflict   name@version already holds another spec
    │   │                   ├─ ToolNotFound       unknown tool or version (.code, .suggestions)
    │   │                   ├─ InvalidCall        a call id or claim id the bus cannot store
    │   │                   ├─ UnknownGrant       a grant id that was never issued
    │   │                   ├─ GrantRefused       a grant that may not be issued (.reasons)
    │   │                   │  └─ GrantExists     a call's grant is live or used (.grant)
    │   │                   └─ InvalidPolicy      a policy document that does not parse
    │   └── (VerifierError) ┬─ ModelConfigError   a model whose labels assay cannot map
    │                       └─ InvalidPair        an empty claim, a non-str document
    └── RunError                            a failure at run time
        ├── DatabaseError                   a driver error, translated at the boundary
        ├── UnreadableCheckpoint            a stored checkpoint this version cannot read
        ├── (LedgerError) ──┬─ LedgerWriteRefused  UPDATE/DELETE refused by the database
        │                   ├─ InvalidProof   a proof, checkpoint or bundle that fails (.reason)
        │                   └─ LedgerCorrupted  a stored row no entry can be read from
        └── (VerifierError) ─ ModelLoadError      weights or tokenizer failed to load

What an agent or a planner does wrong is never an exception: a rejected hand-over is
a :class:`~assay.gate.GateDecision` listing :class:`~assay.gate.GateFinding` records,
a refused tool call is a :class:`~assay.tool_bus.ToolResult` carrying a
:class:`~assay.tool_bus.ToolFailure`. Those records are data, and their names do not
end in ``Error`` so that nobody tries to ``except`` them. Every size and shape limit
these errors enforce is a named constant in ``assay._limits``.

Driver and loader exceptions never escape: they are translated with
``raise ... from exc`` so the original stays available as ``__cause__``.
"""

from __future__ import annotations

# Modules, not names, so that this module's public names are exactly its exceptions.
import collections.abc as abc
import typing

if typing.TYPE_CHECKING:
    from assay.tool_bus import Grant

__all__ = [
    "AlreadyDecided",
    "AssayError",
    "ConfigurationError",
    "ContentTooLarge",
    "DatabaseError",
    "GrantExists",
    "GrantRefused",
    "InvalidCall",
    "InvalidDecision",
    "InvalidEntry",
    "InvalidHandover",
    "InvalidKey",
    "InvalidMetadata",
    "InvalidPair",
    "InvalidPolicy",
    "InvalidProof",
    "InvalidToolSpec",
    "LedgerCorrupted",
    "LedgerError",
    "LedgerWriteRefused",
    "ModelConfigError",
    "ModelLoadError",
    "RegistryConflict",
    "RunError",
    "ThreadInUse",
    "ToolBusError",
    "ToolNotFound",
    "UnknownEntry",
    "UnknownGrant",
    "UnknownKind",
    "UnknownRun",
    "UnknownThread",
    "UnreadableCheckpoint",
    "UsageError",
    "VerifierError",
    "WrongGraph",
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
    written; every smaller mistake is a :class:`~assay.gate.GateFinding` instead."""


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


class InvalidKey(LedgerError, UsageError):
    """A checkpoint signing key or verifier key that cannot be read: not in the
    signed-note key format, of an unsupported algorithm, or with a wrong key hash."""


class LedgerCorrupted(LedgerError, RunError):
    """A stored ledger row that cannot be read back as what was written (a column of
    the wrong type, a NULL, unreadable metadata): the database was edited around the
    ledger or damaged. ``entry_id`` names the row when it can; ``assay ledger verify``
    reports the first bad entry of the chain."""

    def __init__(self, reason: str, entry_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.entry_id = entry_id


class InvalidProof(LedgerError, RunError):
    """A Merkle proof, signed checkpoint or audit bundle that does not verify: the
    evidence was altered, or it belongs to another log. ``reason`` says what failed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# -- the tool bus -------------------------------------------------------------------


class ToolBusError(AssayError):
    """Root of the tool bus's exceptions."""


class InvalidToolSpec(ToolBusError, UsageError):
    """A tool spec that cannot be registered; ``problems`` lists every reason."""

    def __init__(self, problems: abc.Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("invalid tool spec: " + "; ".join(self.problems))


class RegistryConflict(ToolBusError, UsageError):
    """``name@version`` is already registered with a different spec (or handler)."""


class ToolNotFound(ToolBusError, UsageError):
    """No such tool, or no such version of it; ``suggestions`` are close matches."""

    def __init__(
        self,
        message: str,
        *,
        code: typing.Literal["unknown_tool", "unknown_version"],
        suggestions: abc.Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.code: typing.Literal["unknown_tool", "unknown_version"] = code
        self.suggestions = list(suggestions)


class InvalidCall(ToolBusError, UsageError):
    """A call id, run id or claim id of a shape the bus cannot record."""


class UnknownGrant(ToolBusError, UsageError):
    """A grant id that this database never issued."""


class GrantRefused(ToolBusError, UsageError):
    """A grant that may not be issued; ``reasons`` says why, one line per reason."""

    def __init__(self, reasons: abc.Sequence[str]) -> None:
        self.reasons = list(reasons)
        super().__init__("grant refused: " + "; ".join(self.reasons))


class GrantExists(GrantRefused):
    """The call already has a grant that is live or was used: at most one may exist
    per pending call, so a second approval (two reviewers, two resuming processes)
    is refused and ``grant`` names the one that stands."""

    def __init__(self, grant: Grant, reason: str) -> None:
        self.grant = grant
        super().__init__([reason])


class InvalidPolicy(ToolBusError, UsageError):
    """A policy document (YAML or JSON) that does not match the policy schema."""


# -- the verifier ------------------------------------------------------------------


class VerifierError(AssayError):
    """Root of the verifier's exceptions (usage and run-time alike)."""


class ModelConfigError(VerifierError, UsageError):
    """An NLI model whose ``id2label`` does not name entailment (and neutral/contradiction)."""


class InvalidPair(VerifierError, UsageError):
    """A (document, claim) pair that cannot be checked: not strings, or an empty claim."""


class ModelLoadError(VerifierError, RunError):
    """The model's weights, config or tokenizer could not be loaded."""


# -- the fence and its runner ------------------------------------------------------


class InvalidDecision(UsageError):
    """A resume value that is not a decision on the pending calls; nothing was done."""


class AlreadyDecided(InvalidDecision):
    """A decision on an intent that was already decided; ``decision`` is the earlier
    one (who, when, approve or deny), which stands."""

    def __init__(self, message: str, *, decision: dict[str, typing.Any]) -> None:
        super().__init__(message)
        self.decision = decision


class UnknownThread(UsageError):
    """A thread id with no run behind it."""


class ThreadInUse(UsageError):
    """A thread id that already holds a run; resume it or choose another id."""


class UnreadableCheckpoint(RunError):
    """A thread's stored checkpoint that this version cannot read back (its bytes do
    not decode, or its state is in a shape no version wrote): the run it holds can be
    neither resumed nor shown, and nothing was changed. ``thread_id`` names the thread
    where it is known; ``code`` is ``unreadable_checkpoint``."""

    code = "unreadable_checkpoint"

    def __init__(self, message: str, *, thread_id: str | None = None) -> None:
        super().__init__(message)
        self.thread_id = thread_id


class WrongGraph(UsageError):
    """A thread resumed with a graph other than the one it was started with; the
    thread is left as it was."""
