"""Signed run heads: the log's statement of how many entries one run holds, and which
is its last, in the tree of one checkpoint.

An audit bundle carries its run's entries and proves each is in the signed tree; a
proof of inclusion cannot show that no entry was left out. The run head closes that
gap: signed by the log's key next to the checkpoint, it names the checkpoint (origin,
size, root), the run (its record's hash, which covers its id, creation time and
metadata) and the run's entry count and head hash in that tree. A bundle that holds
fewer entries, or others, no longer matches it, and whoever passes the bundle on
cannot change it without the key. Its body is a signed note
(https://c2sp.org/signed-note) of labelled lines::

    assay-run-head/1
    log <origin>
    size <tree size, decimal>
    root <base64 of the 32-byte root>
    run <run hash, 64 hex>
    entries <entry count, decimal>
    head <entry hash of the last entry, 64 hex; 64 zeros for none>

The first line and the labels keep a run head and a checkpoint apart: a checkpoint's
second line is a bare number, a run head's never is, so neither can be read as the
other. Parsing is strict: a body is accepted only when it is exactly what
:meth:`RunHead.body` writes.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from assay.errors import InvalidProof
from assay.ledger._signed_checkpoint import Checkpoint, CheckpointVerifier, Signer, open_note

__all__ = ["RUN_HEAD_FORMAT", "RunHead", "sign_run_head", "verify_run_head"]

#: The first line of every run head's body.
RUN_HEAD_FORMAT = "assay-run-head/1"
_LABELS = ("log", "size", "root", "run", "entries", "head")
_HEX64_RE = re.compile(r"[0-9a-f]{64}")
_NUMBER_RE = re.compile(r"0|[1-9][0-9]{0,19}")


@dataclass(frozen=True, kw_only=True)
class RunHead:
    """That the log ``origin`` at ``size`` leaves with root ``root`` holds ``entries``
    entries of the run whose record hashes to ``run_hash``, the last of them
    ``head_hash`` (64 zeros when it holds none)."""

    origin: str
    size: int
    root: bytes
    run_hash: str
    entries: int
    head_hash: str

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem is not None:
            raise ValueError(f"invalid run head: {problem}")

    @classmethod
    def of(cls, checkpoint: Checkpoint, *, run_hash: str, entries: int, head_hash: str) -> RunHead:
        """The run head of a run in the tree of ``checkpoint``."""
        return cls(
            origin=checkpoint.origin,
            size=checkpoint.size,
            root=checkpoint.root,
            run_hash=run_hash,
            entries=entries,
            head_hash=head_hash,
        )

    def matches(self, checkpoint: Checkpoint) -> bool:
        """Whether this run head is stated in the tree of ``checkpoint``."""
        return (self.origin, self.size, self.root) == (
            checkpoint.origin,
            checkpoint.size,
            checkpoint.root,
        )

    def body(self) -> str:
        """The note text of this run head, every line ending in a newline."""
        values = (
            self.origin,
            str(self.size),
            base64.b64encode(self.root).decode("ascii"),
            self.run_hash,
            str(self.entries),
            self.head_hash,
        )
        lines = [
            RUN_HEAD_FORMAT,
            *(f"{label} {value}" for label, value in zip(_LABELS, values, strict=True)),
        ]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse(cls, body: str) -> RunHead:
        """Read a run head's body; anything but exactly what :meth:`body` writes raises
        :class:`~assay.errors.InvalidProof`."""
        lines = body.split("\n")
        if len(lines) != len(_LABELS) + 2 or lines[0] != RUN_HEAD_FORMAT or lines[-1]:
            raise InvalidProof(f"the signed run head is not an {RUN_HEAD_FORMAT} statement")
        fields: list[str] = []
        for label, line in zip(_LABELS, lines[1:-1], strict=True):
            name, _, value = line.partition(" ")
            if name != label or not value:
                raise InvalidProof(f"the signed run head has no {label!r} line where one belongs")
            fields.append(value)
        origin, size, root, run_hash, entries, head_hash = fields
        if not _NUMBER_RE.fullmatch(size) or not _NUMBER_RE.fullmatch(entries):
            raise InvalidProof("the signed run head's size or entry count is not a number")
        try:
            root_bytes = base64.b64decode(root, validate=True)
            head = cls(
                origin=origin,
                size=int(size),
                root=root_bytes,
                run_hash=run_hash,
                entries=int(entries),
                head_hash=head_hash,
            )
        except ValueError as exc:
            raise InvalidProof(f"the signed run head is malformed: {exc}") from None
        if head.body() != body:
            raise InvalidProof("the signed run head is not in its one written form")
        return head


def _problem(head: RunHead) -> str | None:
    """What makes ``head``'s fields not a run head, or None."""
    try:  # the origin, size and root obey a checkpoint's rules
        Checkpoint(head.origin, head.size, head.root)
    except ValueError as exc:
        return str(exc)
    if type(head.entries) is not int or not 0 <= head.entries <= head.size:
        return "the entry count must be an int between 0 and the tree size"
    for what, value in (("run hash", head.run_hash), ("head hash", head.head_hash)):
        if not isinstance(value, str) or not _HEX64_RE.fullmatch(value):
            return f"the {what} must be 64 lowercase hex digits"
    return None


def sign_run_head(head: RunHead, signer: Signer) -> str:
    """The signed note of ``head`` by ``signer`` (the log's key)."""
    return signer.sign(head.body())


def verify_run_head(text: str, verifier: CheckpointVerifier) -> RunHead:
    """The run head of the signed note ``text`` once ``verifier``'s signature on it
    verifies; :class:`~assay.errors.InvalidProof` saying why otherwise."""
    try:
        body = open_note(text, verifier)
    except InvalidProof as exc:
        raise InvalidProof(f"the signed run head: {exc.reason}") from None
    return RunHead.parse(body)
