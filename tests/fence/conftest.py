"""Fixtures for the fenced graph: a control plane with the deterministic stand-in
NLI model (the model is not the subject of these tests; tests/verifier uses the real
one, and test_real_model.py runs the reference graph with it once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import ControlPlane
from assay.graph.reference import cases
from assay.verifier import LexicalNLI


@pytest.fixture
def outbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "outbox.jsonl"
    monkeypatch.setenv("ASSAY_OUTBOX", str(path))
    return path


@pytest.fixture
def audit(db_url: str, outbox: Path) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        yield cp


def case(name: str) -> tuple[str, Path]:
    folder = cases()[name]
    return (folder / "task.txt").read_text().strip(), folder
