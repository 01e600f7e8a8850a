"""A bundle proves it holds every entry of its run up to its checkpoint, on both
engines: cut in any way (its end, its start, its middle, down to nothing, or mixed
with another run's entries) it fails with a reason, however its own JSON is rewritten,
because the run's entry count and head are signed with the checkpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Connection
from typer.testing import CliRunner

from assay import ControlPlane, InvalidProof, LedgerCorrupted
from assay.cli import app
from assay.ledger import (
    BUNDLE_FORMAT,
    GENESIS_HASH,
    canonical_json,
    generate_key,
    sign_checkpoint,
    verify_bundle,
    verify_checkpoint,
)
from assay.ledger._bundle import UNPROVEN_BUNDLE_FORMAT
from assay.ledger._runhead import RUN_HEAD_FORMAT, RunHead, sign_run_head, verify_run_head
from assay.ledger._signed_checkpoint import Checkpoint, Signer, open_note
from tests.ledger._tamper import tamper

NAME = "audit.example.org/ledger"
runner = CliRunner()
Bundle = dict[str, Any]


@pytest.fixture
def keys() -> tuple[str, str]:
    return generate_key(NAME)


def _runs(plane: ControlPlane) -> tuple[str, str]:
    """A run of two entries, then the audited run of four: evidence, an error, a
    verdict and a grant, the kinds a cut bundle would hide."""
    other = plane.ledger.start_run(metadata={"task": "other"})
    plane.ledger.append_many(
        other, [{"kind": "retrieval", "source": f"o{i}", "content": f"other {i}"} for i in range(2)]
    )
    run = plane.ledger.start_run(metadata={"task": "audit"})
    plane.ledger.append(run, kind="tool_output", source="invoices@1", content="Line 3: 2.0 h")
    plane.ledger.append(run, kind="error", source="tool_bus", content="timeout")
    plane.ledger.append(run, kind="verdict", source="verifier", content='{"label":"neutral"}')
    plane.ledger.append(run, kind="grant", source="reviewer", content="approved flag_invoice")
    return other, run


def _load(text: str) -> Bundle:
    return json.loads(text)


def _dump(bundle: Bundle) -> str:
    """What anyone passing a bundle along can write: any JSON, in canonical form."""
    return canonical_json(bundle).decode("utf-8")


def _cut(text: str, change: Callable[[list[Any]], list[Any]]) -> str:
    bundle = _load(text)
    bundle["entries"] = change(bundle["entries"])
    return _dump(bundle)


def test_an_intact_bundle_says_it_is_complete(plane: ControlPlane, keys: tuple[str, str]) -> None:
    signer, verifier = keys
    _, run = _runs(plane)
    verified = verify_bundle(plane.ledger.export_bundle(run, signer), verifier)
    assert verified.complete and verified.warnings == ()
    assert [e.seq for e in verified.entries] == [1, 2, 3, 4]
    assert (verified.run.head_seq, verified.run.head_hash) == (4, verified.entries[-1].entry_hash)
    assert verified.completeness == (
        f"complete: 4 of 4 entries of run {run} up to the checkpoint at tree size 6"
    )


def test_an_empty_run_is_complete_with_no_entries(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    signer, verifier = keys
    _runs(plane)
    empty = plane.ledger.start_run()
    verified = verify_bundle(plane.ledger.export_bundle(empty, signer), verifier)
    assert verified.complete and verified.entries == ()
    assert (verified.run.head_seq, verified.run.head_hash) == (0, GENESIS_HASH)
    assert verified.completeness.startswith("complete: 0 of 0 entries")


_CUTS: dict[str, tuple[Callable[[list[Any]], list[Any]], str]] = {
    "last entry removed": (lambda e: e[:-1], "incomplete: it holds 3 of the 4 entries the log"),
    "suffix removed": (lambda e: e[:1], "holds 1 of the 4 entries the log signed for its run at"),
    "every entry removed": (lambda e: [], "it holds 0 of the 4 entries"),
    "first entry removed": (lambda e: e[1:], "entry seq 1 is missing"),
    "middle removed": (lambda e: [e[0], *e[2:]], "entry seq 2 is missing"),
    "entries reordered": (lambda e: [e[1], e[0], *e[2:]], "entry seq 1 is missing"),
}


@pytest.mark.parametrize("cut", list(_CUTS))
def test_a_cut_bundle_fails_with_the_reason(
    plane: ControlPlane, keys: tuple[str, str], cut: str
) -> None:
    signer, verifier = keys
    _, run = _runs(plane)
    bundle = plane.ledger.export_bundle(run, signer)
    change, reason = _CUTS[cut]
    with pytest.raises(InvalidProof, match=reason):
        verify_bundle(_cut(bundle, change), verifier)


def test_a_suffix_cut_names_the_missing_seqs(plane: ControlPlane, keys: tuple[str, str]) -> None:
    signer, verifier = keys
    _, run = _runs(plane)
    bundle = plane.ledger.export_bundle(run, signer)
    with pytest.raises(InvalidProof, match="seq 4 missing"):
        verify_bundle(_cut(bundle, lambda e: e[:3]), verifier)
    with pytest.raises(InvalidProof, match="seq 2 to 4 missing"):
        verify_bundle(_cut(bundle, lambda e: e[:1]), verifier)


def test_another_runs_entries_mixed_in_fail(plane: ControlPlane, keys: tuple[str, str]) -> None:
    signer, verifier = keys
    other, run = _runs(plane)
    mine = _load(plane.ledger.export_bundle(run, signer))["entries"]
    theirs = _load(plane.ledger.export_bundle(other, signer))["entries"]
    bundle = plane.ledger.export_bundle(run, signer)
    # another run's entry in place of one of this run's, its seq and link made to fit
    swapped = {**theirs[1], "seq": 2, "prev_hash": mine[0]["entry_hash"]}
    with pytest.raises(InvalidProof, match=r"seq 2: entry hash mismatch.*another run"):
        verify_bundle(_cut(bundle, lambda e: [e[0], swapped, *e[2:]]), verifier)
    # or added after this run's head
    extra = {**theirs[0], "seq": 5, "prev_hash": mine[-1]["entry_hash"]}
    with pytest.raises(InvalidProof, match=r"seq 5: entry hash mismatch.*another run"):
        verify_bundle(_cut(bundle, lambda e: [*e, extra]), verifier)


def test_another_runs_record_and_entries_do_not_match_the_signed_head(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    signer, verifier = keys
    other, run = _runs(plane)
    bundle = _load(plane.ledger.export_bundle(run, signer))
    theirs = _load(plane.ledger.export_bundle(other, signer))
    # the other run's whole body under this run's signed head and checkpoint
    forged = {**bundle, "run": theirs["run"], "entries": theirs["entries"]}
    with pytest.raises(InvalidProof, match="not the run its signed run head names"):
        verify_bundle(_dump(forged), verifier)


def test_the_signed_head_cannot_be_dropped_edited_or_swapped(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    signer, verifier = keys
    other, run = _runs(plane)
    bundle = _load(plane.ledger.export_bundle(run, signer))
    cut = {**bundle, "entries": bundle["entries"][:2]}
    with pytest.raises(InvalidProof, match="no signed run head"):
        verify_bundle(_dump({k: v for k, v in cut.items() if k != "run_head"}), verifier)
    # the bundle's own claim of its count, rewritten to fit the cut: the signature fails
    edited = bundle["run_head"].replace("\nentries 4\n", "\nentries 2\n")
    assert edited != bundle["run_head"]
    with pytest.raises(InvalidProof, match=r"signed run head: signature .* does not verify"):
        verify_bundle(_dump({**cut, "run_head": edited}), verifier)
    # a genuine head, signed by the log's key, for another run
    theirs = _load(plane.ledger.export_bundle(other, signer))["run_head"]
    with pytest.raises(InvalidProof, match="not the run its signed run head names"):
        verify_bundle(_dump({**cut, "run_head": theirs}), verifier)
    # a head signed by another key
    stranger, _ = generate_key(NAME)
    head = verify_run_head(bundle["run_head"], _verifier(signer))
    resigned = sign_run_head(
        RunHead.of(_checkpoint_of(bundle, verifier), run_hash=head.run_hash, entries=2,
                   head_hash=bundle["entries"][1]["entry_hash"]),
        Signer.from_text(stranger),
    )  # fmt: skip
    with pytest.raises(InvalidProof, match="no signature by key"):
        verify_bundle(_dump({**cut, "run_head": resigned}), verifier)


def test_an_earlier_export_is_complete_up_to_its_own_checkpoint(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    """A run still in progress: each bundle is complete up to its checkpoint, and an
    earlier run head cannot vouch for a later, cut bundle."""
    signer, verifier = keys
    _, run = _runs(plane)
    early = plane.ledger.export_bundle(run, signer)
    plane.ledger.append(run, kind="error", source="tool_bus", content="refused: no grant")
    late = plane.ledger.export_bundle(run, signer)
    first, second = verify_bundle(early, verifier), verify_bundle(late, verifier)
    assert first.completeness.endswith("4 of 4 entries of run " + run + " up to the checkpoint "
                                       "at tree size 6")  # fmt: skip
    assert second.completeness.endswith("5 of 5 entries of run " + run + " up to the "
                                        "checkpoint at tree size 7")  # fmt: skip
    # the later bundle cut back to the earlier four, under the earlier run head
    mixed = {**_load(late), "run_head": _load(early)["run_head"]}
    mixed["entries"] = mixed["entries"][:4]
    with pytest.raises(InvalidProof, match=r"run head is for the log .* at tree size 6, not"):
        verify_bundle(_dump(mixed), verifier)


def test_an_entry_appended_during_an_export_is_left_to_the_next(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    """An append that commits between the export's read of the log's head and its read
    of the run's entries (PostgreSQL reads each statement afresh) is not in the bundle:
    the bundle is the run as of its checkpoint, and says so."""
    signer, verifier = keys
    _, run = _runs(plane)
    appended: list[str] = []

    def append_once(conn: Connection, cursor: Any, statement: str, *_: Any) -> None:
        if "ledger_tree" in statement and not appended:
            appended.append(run)
            plane.ledger.append(run, kind="error", source="tool_bus", content="late")

    event.listen(plane.engine, "after_cursor_execute", append_once)
    try:
        bundle = plane.ledger.export_bundle(run, signer)
    finally:
        event.remove(plane.engine, "after_cursor_execute", append_once)
    assert appended and plane.ledger.run(run).head_seq == 5
    verified = verify_bundle(bundle, verifier)
    assert verified.complete and verified.completeness.startswith("complete: 4 of 4 entries")
    assert verified.checkpoint.size == 6


def test_a_run_whose_tail_was_deleted_is_not_signed_as_whole(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    signer, _ = keys
    other, run = _runs(plane)
    # two more leaves, so that the log's root no longer reads the deleted entry's row
    plane.ledger.append_many(
        other, [{"kind": "retrieval", "source": f"p{i}", "content": f"more {i}"} for i in range(2)]
    )
    tamper(plane.url, f"DELETE FROM ledger_entries WHERE run_id = '{run}' AND seq = 4")
    with pytest.raises(LedgerCorrupted, match="head counts 4 entries, the log holds 3"):
        plane.ledger.export_bundle(run, signer)


def _unproven(text: str) -> str:
    """A bundle in the first format: no run head."""
    bundle = {k: v for k, v in _load(text).items() if k != "run_head"}
    bundle["bundle"] = UNPROVEN_BUNDLE_FORMAT
    return _dump(bundle)


def test_a_bundle_of_the_first_format_is_refused_unless_accepted_knowingly(
    plane: ControlPlane, keys: tuple[str, str]
) -> None:
    signer, verifier = keys
    _, run = _runs(plane)
    old = _unproven(plane.ledger.export_bundle(run, signer))
    with pytest.raises(InvalidProof, match="does not prove that it holds every entry"):
        verify_bundle(old, verifier)
    accepted = verify_bundle(old, verifier, allow_unproven_completeness=True)
    assert not accepted.complete and len(accepted.entries) == 4
    assert accepted.completeness.startswith("completeness not proven: 4 entries of run")
    assert accepted.warnings == (accepted.completeness,)
    # which is exactly what it cannot tell from a cut one
    cut = verify_bundle(_cut(old, lambda e: e[:1]), verifier, allow_unproven_completeness=True)
    assert not cut.complete and len(cut.entries) == 1
    # downgrading a bundle of the current format is the same refusal
    assert _load(plane.ledger.export_bundle(run, signer))["bundle"] == BUNDLE_FORMAT


def test_the_cli_says_a_bundle_is_complete_and_refuses_one_that_cannot_show_it(
    plane: ControlPlane, keys: tuple[str, str], tmp_path: Path
) -> None:
    signer, verifier = keys
    _, run = _runs(plane)
    bundle = plane.ledger.export_bundle(run, signer)
    path = tmp_path / "run.bundle"
    path.write_text(bundle, encoding="utf-8")
    checked = runner.invoke(
        app, ["ledger", "verify-bundle", str(path), "--key", verifier], env={"COLUMNS": "250"}
    )
    assert checked.exit_code == 0, checked.output
    assert "complete: 4 of 4 entries up to the checkpoint" in checked.output
    for text, reason in [
        (_cut(bundle, lambda e: e[:2]), "incomplete: it holds 2 of the 4 entries"),
        (_unproven(bundle), "does not prove that it holds every entry"),
    ]:
        path.write_text(text, encoding="utf-8")
        failed = runner.invoke(
            app, ["ledger", "verify-bundle", str(path), "--key", verifier], env={"COLUMNS": "250"}
        )
        assert failed.exit_code == 1, failed.output
        assert "bundle fails" in failed.output and reason in failed.output


# --- the run head as a signed statement ----------------------------------------------


def _verifier(signer_text: str) -> Any:
    return Signer.from_text(signer_text).verifier


def _checkpoint_of(bundle: Bundle, verifier: str) -> Checkpoint:
    return verify_checkpoint(bundle["checkpoint"], verifier)


def _head() -> RunHead:
    return RunHead(
        origin=NAME, size=6, root=bytes(range(32)), run_hash="a" * 64, entries=4,
        head_hash="b" * 64,
    )  # fmt: skip


def test_a_run_head_reads_back_exactly() -> None:
    head = _head()
    assert head.body() == (
        f"{RUN_HEAD_FORMAT}\nlog {NAME}\nsize 6\n"
        "root AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"
        f"run {'a' * 64}\nentries 4\nhead {'b' * 64}\n"
    )
    assert RunHead.parse(head.body()) == head


@pytest.mark.parametrize(
    "body",
    [
        "",
        f"{RUN_HEAD_FORMAT}\n",
        _head().body().replace("size 6", "size 06"),
        _head().body().replace("entries 4", "entries +4"),
        _head().body().replace("entries 4", "entries 7"),  # more than the tree
        _head().body().replace("log ", "origin "),
        _head().body().replace("run " + "a" * 64, "run " + "A" * 64),
        _head().body().replace("=\n", "\n"),
        _head().body() + "extra\n",
        _head().body()[:-1],
    ],
)
def test_a_run_head_in_any_other_form_is_refused(body: str) -> None:
    with pytest.raises(InvalidProof):
        RunHead.parse(body)


def test_a_checkpoint_and_a_run_head_cannot_stand_for_each_other(keys: tuple[str, str]) -> None:
    signer = Signer.from_text(keys[0])
    checkpoint = Checkpoint(NAME, 6, bytes(32))
    as_checkpoint = sign_checkpoint(checkpoint, signer)
    with pytest.raises(InvalidProof, match="not an assay-run-head/1 statement"):
        verify_run_head(as_checkpoint, signer.verifier)
    as_head = sign_run_head(_head(), signer)
    with pytest.raises(InvalidProof):
        Checkpoint.parse(open_note(as_head, signer.verifier))
