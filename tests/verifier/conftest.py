"""The shipped model, loaded once for the whole test session (offline)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assay.verifier import DEFAULT_MODEL_DIR, Verifier


@pytest.fixture(scope="session")
def verifier() -> Verifier:
    return Verifier.from_pretrained(DEFAULT_MODEL_DIR)
