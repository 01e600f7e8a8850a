"""The verifier's exceptions.

::

    AssayError
    ├── UsageError
    │   └── (VerifierError) ─┬─ ModelConfigError    a model whose labels assay cannot map
    │                        └─ InvalidPair         an empty claim, a non-str document
    └── RunError
        └── (VerifierError) ─── ModelLoadError      weights or tokenizer failed to load

Loader exceptions from transformers or torch are translated with ``raise ... from exc``.
"""

from __future__ import annotations

from assay.errors import AssayError, RunError, UsageError

__all__ = ["InvalidPair", "ModelConfigError", "ModelLoadError", "VerifierError"]


class VerifierError(AssayError):
    """Root of the verifier's exceptions (usage and run-time alike)."""


class ModelConfigError(VerifierError, UsageError):
    """An NLI model whose ``id2label`` does not name entailment (and neutral/contradiction)."""


class InvalidPair(VerifierError, UsageError):
    """A (document, claim) pair that cannot be checked: not strings, or an empty claim."""


class ModelLoadError(VerifierError, RunError):
    """The model's weights, config or tokenizer could not be loaded."""
