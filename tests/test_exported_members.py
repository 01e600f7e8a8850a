"""The public names of assay are exactly its ``__all__``, and each is documented."""

from __future__ import annotations
import __future__

import importlib
import inspect

import pytest

import assay

PUBLIC_MODULES = [
    "assay",
    "assay.errors",
    "assay.contract",
    "assay.gate",
    "assay.fence",
    "assay.apps.reference",
    "assay.cli",
    "assay.evals",
    "assay.ledger",
    "assay.service",
    "assay.tool_bus",
    "assay.verifier",
]


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_matches_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = set(module.__all__)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not inspect.ismodule(value)
        and not isinstance(value, type(__future__.annotations))
    }
    assert exported - {"__version__"} == public
    assert list(module.__all__) == sorted(module.__all__, key=lambda n: (n.upper() != n, n))


def test_every_exported_class_and_function_has_a_docstring() -> None:
    missing = [
        name
        for name in assay.__all__
        if (inspect.isclass(getattr(assay, name)) or inspect.isfunction(getattr(assay, name)))
        and not (getattr(assay, name).__doc__ or "").strip()
    ]
    assert missing == []


def test_error_tree() -> None:
    assert issubclass(assay.UsageError, assay.AssayError)
    assert issubclass(assay.RunError, assay.AssayError)
    assert issubclass(assay.UnknownRun, assay.LedgerError)
    assert issubclass(assay.UnknownRun, assay.UsageError)
    assert issubclass(assay.LedgerWriteRefused, assay.RunError)
    assert not issubclass(assay.LedgerWriteRefused, assay.UsageError)
