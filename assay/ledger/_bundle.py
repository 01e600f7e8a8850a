"""Offline audit bundles: one run's entries with their inclusion proofs, a signed
checkpoint and a signed run head, checked with nothing but the log's verifier key.

A bundle is canonical JSON (RFC 8785)::

    {"bundle": "assay-ledger-bundle/2",
     "checkpoint": "<signed note>",
     "run_head": "<signed note>",
     "run": {"run_id", "created_at", "metadata", "run_hash"},
     "entries": [{"entry_id", "seq", "kind", "source", "content" | "content_base64",
                  "sha256", "metadata", "prev_hash", "entry_hash", "created_at",
                  "format", "leaf_index", "inclusion": ["<hex>", ...]}, ...]}

:func:`verify_bundle` re-derives everything from the bundle's bytes: the checkpoint's
signature, the run record's hash, each entry's digest, hash and chain link, and each
entry's inclusion in the signed tree. Inclusion shows that what the bundle holds is in
the log, not that it holds all of the run: the run head (:mod:`assay.ledger._runhead`),
signed by the same key for the same tree, names the run's entry count and last entry
hash, and the bundle must hold exactly that chain. So a bundle cut to fewer entries,
down to none, or mixed with another run's, fails as surely as an edited one, each with
:class:`~assay.errors.InvalidProof` and a reason. Bundles of the first format carry no
run head and cannot show that nothing was cut: they are refused unless the caller
accepts that explicitly, and the result then says completeness is not proven.

The bundle shows what the run recorded up to its checkpoint; entries appended later
are not in it. That a claim is *true* is what its verdict and evidence spans let a
reader judge.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, cast

from assay.errors import InvalidProof
from assay.ledger._hashing import (
    ENTRY_FORMAT,
    canonical_json,
    entry_hash,
    entry_id_for,
    format_fields,
    run_hash,
    sha256_hex,
    timestamp_text,
)
from assay.ledger._merkle import leaf_hash, verify_inclusion
from assay.ledger._records import GENESIS_HASH, LedgerEntry, RunInfo
from assay.ledger._runhead import RunHead, verify_run_head
from assay.ledger._signed_checkpoint import Checkpoint, CheckpointVerifier, verify_checkpoint

BUNDLE_FORMAT = "assay-ledger-bundle/2"
#: The first format: no signed run head, so nothing shows whether entries were cut.
UNPROVEN_BUNDLE_FORMAT = "assay-ledger-bundle/1"
#: A bundle larger than this is refused before it is parsed.
MAX_BUNDLE_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class VerifiedBundle:
    """What a bundle proves once :func:`verify_bundle` accepts it.

    ``complete`` is true when a run head signed for the checkpoint proves that
    ``entries`` are every entry of the run in the checkpoint's tree; ``run`` then
    carries that head (``head_seq``, ``head_hash``). It is false only for a bundle of
    the first format accepted with ``allow_unproven_completeness``, and ``warnings``
    then says so."""

    checkpoint: Checkpoint
    run: RunInfo
    entries: tuple[LedgerEntry, ...]
    complete: bool
    warnings: tuple[str, ...] = ()

    @property
    def completeness(self) -> str:
        """One line on whether the bundle holds all of its run up to its checkpoint."""
        held = len(self.entries)
        if self.complete:
            return (
                f"complete: {held} of {self.run.head_seq} entries of run {self.run.run_id} "
                f"up to the checkpoint at tree size {self.checkpoint.size}"
            )
        return (
            f"completeness not proven: {held} entries of run {self.run.run_id}, in a "
            f"bundle of format {UNPROVEN_BUNDLE_FORMAT}, which does not show whether "
            "any were cut"
        )

    def claims(self) -> list[dict[str, Any]]:
        """Each verdict of the run: its proposition, label, score, and the evidence
        entry and span it rests on, with the span's text when the bundle holds it."""
        by_id = {entry.id: entry for entry in self.entries}
        found: list[dict[str, Any]] = []
        for entry in self.entries:
            if entry.kind != "verdict":
                continue
            try:
                body = json.loads(entry.text)
            except ValueError:
                continue
            if not isinstance(body, dict):
                continue
            verdict = cast("dict[str, Any]", body)
            evidence = by_id.get(str(verdict.get("ledger_id")))
            span = verdict.get("span")
            quoted = None
            if evidence is not None and isinstance(span, list) and len(span) == 2:
                start, end = cast("list[Any]", span)
                if isinstance(start, int) and isinstance(end, int):
                    quoted = evidence.text[start:end]
            found.append(
                {
                    "verdict_entry": entry.id,
                    "proposition": verdict.get("proposition"),
                    "label": verdict.get("label"),
                    "score": verdict.get("score"),
                    "evidence": verdict.get("ledger_id"),
                    "span": span,
                    "quote": quoted,
                }
            )
        return found


def make_bundle(
    checkpoint: str,
    run_head: str,
    run: RunInfo,
    entries: Sequence[tuple[LedgerEntry, int, Sequence[bytes]]],
) -> str:
    """The bundle's text: ``checkpoint`` and ``run_head`` are signed notes for the same
    tree; ``entries`` are (entry, format, inclusion proof) in seq order."""
    body: dict[str, Any] = {
        "bundle": BUNDLE_FORMAT,
        "checkpoint": checkpoint,
        "run_head": run_head,
        "run": {
            "run_id": run.run_id,
            "created_at": timestamp_text(run.created_at),
            "metadata": run.metadata,
            "run_hash": run.run_hash,
        },
        "entries": [_entry_json(entry, fmt, proof) for entry, fmt, proof in entries],
    }
    return canonical_json(body).decode("utf-8")


def _entry_json(entry: LedgerEntry, fmt: int, proof: Sequence[bytes]) -> dict[str, Any]:
    item: dict[str, Any] = {
        "entry_id": entry.id,
        "seq": entry.seq,
        "kind": entry.kind,
        "source": entry.source,
        "sha256": entry.sha256,
        "metadata": entry.metadata,
        "prev_hash": entry.prev_hash,
        "entry_hash": entry.entry_hash,
        "created_at": timestamp_text(entry.created_at),
        "format": fmt,
        "leaf_index": entry.leaf_index,
        "inclusion": [h.hex() for h in proof],
    }
    if isinstance(entry.content, str):
        item["content"] = entry.content
    else:
        item["content_base64"] = base64.b64encode(entry.content).decode("ascii")
    return item


def verify_bundle(
    text: str | bytes,
    verifier_key: str | CheckpointVerifier,
    *,
    allow_unproven_completeness: bool = False,
) -> VerifiedBundle:
    """Check a bundle completely, offline; :class:`~assay.errors.InvalidProof` naming
    the first thing that fails.

    A bundle of the first format (:data:`UNPROVEN_BUNDLE_FORMAT`) cannot show that
    none of its run's entries were cut, so it is refused, unless
    ``allow_unproven_completeness`` accepts it knowingly: everything else is checked,
    and the result says ``complete=False`` with a warning."""
    bundle = _parse(text)
    unproven = _unproven(bundle, allowed=allow_unproven_completeness)
    verifier = (
        verifier_key
        if isinstance(verifier_key, CheckpointVerifier)
        else CheckpointVerifier.from_text(verifier_key)
    )
    checkpoint = verify_checkpoint(_string(bundle.get("checkpoint"), "checkpoint"), verifier)
    if checkpoint.origin != verifier.name:
        raise InvalidProof(
            f"the checkpoint is of the log {checkpoint.origin!r}, not {verifier.name!r}"
        )
    head = None if unproven else _signed_head(bundle, verifier, checkpoint)
    run = _run(_object(bundle.get("run"), "run"))
    if head is not None and head.run_hash != run.run_hash:
        raise InvalidProof(
            "the bundle's run is not the run its signed run head names: the run record "
            "or the run head was swapped"
        )
    entries = _entries(bundle.get("entries"), run, checkpoint)
    if head is None:
        found = VerifiedBundle(checkpoint=checkpoint, run=run, entries=entries, complete=False)
        return replace(found, warnings=(found.completeness,))
    _check_complete(entries, head)
    run = replace(run, head_seq=head.entries, head_hash=head.head_hash)
    return VerifiedBundle(checkpoint=checkpoint, run=run, entries=entries, complete=True)


def _parse(text: object) -> dict[str, Any]:
    """The bundle's JSON object, once it is shown to be a bundle in canonical form."""
    if isinstance(text, bytes):
        if len(text) > MAX_BUNDLE_BYTES:
            raise InvalidProof(f"the bundle is larger than {MAX_BUNDLE_BYTES} bytes")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidProof(f"the bundle is not UTF-8 text (byte {exc.start})") from None
    if not isinstance(text, str):
        raise InvalidProof(f"a bundle is text, not {type(text).__name__}")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise InvalidProof(f"the bundle is not valid JSON: {exc}") from None
    bundle = _object(data, "the bundle")
    if bundle.get("bundle") not in (BUNDLE_FORMAT, UNPROVEN_BUNDLE_FORMAT):
        raise InvalidProof(f"not an assay ledger bundle (expected {BUNDLE_FORMAT!r})")
    try:
        canonical = canonical_json(bundle).decode("utf-8")
    except Exception as exc:
        raise InvalidProof(f"the bundle cannot be re-encoded: {exc}") from None
    if canonical != text.strip():
        raise InvalidProof("the bundle is not in canonical form: it was edited or re-encoded")
    return bundle


def _unproven(bundle: Mapping[str, Any], *, allowed: bool) -> bool:
    """Whether the bundle is of the first format, which carries no run head: refused
    unless ``allowed``, since a cut bundle of that format looks like a whole one."""
    if bundle.get("bundle") != UNPROVEN_BUNDLE_FORMAT:
        return False
    if not allowed:
        raise InvalidProof(
            f"a bundle of format {UNPROVEN_BUNDLE_FORMAT} does not prove that it holds "
            "every entry of its run: entries may have been cut from it. Export the run "
            "again for a bundle that proves it (in Python, verify_bundle(..., "
            "allow_unproven_completeness=True) checks the rest knowingly)"
        )
    return True


def _signed_head(
    bundle: Mapping[str, Any], verifier: CheckpointVerifier, checkpoint: Checkpoint
) -> RunHead:
    """The run head the log signed for the bundle's checkpoint."""
    if "run_head" not in bundle:
        raise InvalidProof(
            "the bundle has no signed run head, so nothing shows it holds all of its run"
        )
    head = verify_run_head(_string(bundle["run_head"], "the signed run head"), verifier)
    if not head.matches(checkpoint):
        raise InvalidProof(
            f"the signed run head is for the log {head.origin!r} at tree size {head.size}, "
            f"not for the bundle's checkpoint ({checkpoint.origin!r} at {checkpoint.size})"
        )
    return head


def _entries(raw_entries: object, run: RunInfo, checkpoint: Checkpoint) -> tuple[LedgerEntry, ...]:
    """The bundle's entries, each checked for its hash, its link to the one before it
    (from the genesis hash on, seq 1, 2, ... without a gap) and its inclusion in the
    checkpoint's tree."""
    if not isinstance(raw_entries, list):
        raise InvalidProof("the bundle's entries are not a list")
    entries: list[LedgerEntry] = []
    prev = GENESIS_HASH
    for position, raw in enumerate(cast("list[Any]", raw_entries), start=1):
        entry = _entry(_object(raw, f"entry {position}"), run, position, prev)
        proof = _hashes(cast("dict[str, Any]", raw).get("inclusion"), position)
        try:
            verify_inclusion(
                leaf_hash(bytes.fromhex(entry.entry_hash)),
                entry.leaf_index,
                checkpoint.size,
                proof,
                checkpoint.root,
            )
        except InvalidProof as exc:
            raise InvalidProof(
                f"entry seq {position}: not in the signed log: {exc.reason}"
            ) from None
        entries.append(entry)
        prev = entry.entry_hash
    return tuple(entries)


def _check_complete(entries: Sequence[LedgerEntry], head: RunHead) -> None:
    """That ``entries`` are the whole chain the signed run head names."""
    held, signed = len(entries), head.entries
    signed_for = f"the log signed for its run at tree size {head.size}"
    if held < signed:
        gap = f"seq {signed}" if held + 1 == signed else f"seq {held + 1} to {signed}"
        raise InvalidProof(
            f"the bundle is incomplete: it holds {held} of the {signed} entries {signed_for}; "
            f"{gap} missing"
        )
    if held > signed:
        raise InvalidProof(f"the bundle holds {held} entries, more than the {signed} {signed_for}")
    last = entries[-1].entry_hash if entries else GENESIS_HASH
    if last != head.head_hash:
        raise InvalidProof(
            f"the bundle's last entry (seq {held}) is not the run's head that the log signed"
        )


def _run(raw: Mapping[str, Any]) -> RunInfo:
    run_id = _string(raw.get("run_id"), "run id")
    created = _time(raw.get("created_at"), "the run's creation time")
    metadata = _object(raw.get("metadata"), "the run's metadata")
    stored = _string(raw.get("run_hash"), "run hash")
    text = canonical_json(metadata).decode("utf-8")
    if run_hash(run_id=run_id, created_at=created, metadata=metadata, metadata_text=text) != stored:
        raise InvalidProof("the run record was edited: it no longer matches its hash")
    return RunInfo(
        run_id=run_id,
        created_at=created,
        metadata=metadata,
        head_seq=0,
        head_hash="",
        run_hash=stored,
    )


def _entry(raw: Mapping[str, Any], run: RunInfo, seq: int, prev: str) -> LedgerEntry:
    where = f"entry seq {seq}"
    if raw.get("seq") != seq:
        raise InvalidProof(
            f"{where} is missing: the bundle's entries are not the run's chain from seq 1 "
            "without a gap"
        )
    if "content" in raw:
        content: str | bytes = _string(raw["content"], f"{where}: content")
        data = content.encode("utf-8")
    else:
        try:
            data = base64.b64decode(
                _string(raw.get("content_base64"), f"{where}: content"), validate=True
            )
        except (binascii.Error, ValueError):
            raise InvalidProof(f"{where}: content is not base64") from None
        content = data
    digest = _string(raw.get("sha256"), f"{where}: digest")
    if sha256_hex(data) != digest:
        raise InvalidProof(f"{where}: content was edited: its sha256 no longer matches")
    if raw.get("prev_hash") != prev:
        raise InvalidProof(f"{where}: broken link to the entry before it")
    fmt = raw.get("format")
    if fmt not in (1, ENTRY_FORMAT) or isinstance(fmt, bool):
        raise InvalidProof(f"{where}: unknown entry format {fmt!r}")
    created = _time(raw.get("created_at"), f"{where}: creation time")
    metadata = _object(raw.get("metadata"), f"{where}: metadata")
    kind = _string(raw.get("kind"), f"{where}: kind")
    source = _string(raw.get("source"), f"{where}: source")
    extra = format_fields(
        fmt, is_text=isinstance(content, str), created_at=created, run_record=run.run_hash
    )
    recomputed = entry_hash(
        run_id=run.run_id,
        seq=seq,
        kind=kind,
        source=source,
        content_sha256=digest,
        metadata=metadata,
        prev_hash=prev,
        extra=extra,
    )
    if recomputed != raw.get("entry_hash") or raw.get("entry_id") != entry_id_for(recomputed):
        raise InvalidProof(
            f"{where}: entry hash mismatch: a field of the entry was edited, or it is an "
            "entry of another run"
        )
    leaf = raw.get("leaf_index")
    if not isinstance(leaf, int) or isinstance(leaf, bool) or leaf < 0:
        raise InvalidProof(f"{where}: leaf index {leaf!r} is not a leaf")
    return LedgerEntry(
        id=entry_id_for(recomputed),
        run_id=run.run_id,
        seq=seq,
        kind=kind,
        source=source,
        content=content,
        sha256=digest,
        metadata=metadata,
        prev_hash=prev,
        entry_hash=recomputed,
        created_at=created,
        leaf_index=leaf,
    )


def _hashes(value: object, seq: int) -> list[bytes]:
    if not isinstance(value, list):
        raise InvalidProof(f"entry seq {seq}: its inclusion proof is not a list")
    hashes: list[bytes] = []
    for item in cast("list[Any]", value):
        try:
            hashes.append(bytes.fromhex(_string(item, "proof hash")))
        except ValueError:
            raise InvalidProof(f"entry seq {seq}: a proof hash is not hex") from None
    return hashes


def _object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidProof(f"{what} is not a JSON object")
    return cast("dict[str, Any]", value)


def _string(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidProof(f"{what} is not text")
    return value


def _time(value: object, what: str) -> datetime:
    text = _string(value, what)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidProof(f"{what} {text[:40]!r} is not a time") from None
    if timestamp_text(parsed) != text:
        raise InvalidProof(f"{what} {text[:40]!r} is not in the hashed form")
    return parsed


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")
