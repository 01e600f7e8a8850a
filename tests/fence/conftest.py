"""Fixtures for the fenced graph: a control plane with the deterministic stand-in
NLI model (the model is not the subject of these tests; tests/verifier uses the real
one, and test_real_model.py runs the invoice audit with it once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import ControlPlane
from assay.apps import reference
from assay.fence import FencedGraph
from assay.verifier import LexicalNLI
from tests.fence import _refunds


@pytest.fixture
def audit(db_url: str, outbox: Path) -> Iterator[ControlPlane]:
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        yield cp


@pytest.fixture
def desk_cp(db_url: str) -> Iterator[ControlPlane]:
    """A control plane with the refund desk's tools of ``_refunds.py``, its refunds in
    this process cleared."""
    _refunds.REFUNDS.clear()
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        _refunds.install(cp)
        yield cp


@pytest.fixture
def invoice(audit: ControlPlane) -> FencedGraph:
    """The invoice audit's fenced graph (rule-based agents) on ``audit``."""
    return reference.graph(audit)


def case(name: str, **options: Any) -> dict[str, Any]:
    """The run input of a bundled case of the invoice audit."""
    return reference.case_input(name, **options)
