"""The NLI verifier: does a document entail a claim, and which part of it says so.

``Verifier.default()`` loads the shipped cross-encoder (or the model named by
``ASSAY_NLI_MODEL``); any Hugging Face NLI sequence classifier can replace it through
``Verifier.from_pretrained``. Results are :class:`Entailment` records with a
calibrated score and the character span of the evidence that decided.
"""

from assay.verifier._cache import CacheKey, EntailmentCache, InMemoryEntailmentCache, cache_key
from assay.verifier._calibration import Calibration, Support
from assay.verifier._errors import InvalidPair, ModelConfigError, ModelLoadError, VerifierError
from assay.verifier._ledger_verifier import (
    LedgerVerifier,
    NLIModel,
    Verdict,
    VerifiedHandover,
    proper_names,
)
from assay.verifier._records import LABELS, Entailment, Label
from assay.verifier._reworded import RewordedUnsupportedCheck
from assay.verifier._sql_cache import SqlEntailmentCache
from assay.verifier._standin import LexicalNLI
from assay.verifier._text import (
    coverage,
    focused_premises,
    missing_numbers,
    premise_windows,
    split_claim,
)
from assay.verifier._unsupported import Unsupported
from assay.verifier._verifier import (
    DEFAULT_MODEL_DIR,
    MODEL_ENV,
    QUANTIZE_ENV,
    Verifier,
    label_order,
)

__all__ = [
    "DEFAULT_MODEL_DIR",
    "LABELS",
    "MODEL_ENV",
    "QUANTIZE_ENV",
    "CacheKey",
    "Calibration",
    "Entailment",
    "EntailmentCache",
    "InMemoryEntailmentCache",
    "InvalidPair",
    "Label",
    "LedgerVerifier",
    "LexicalNLI",
    "ModelConfigError",
    "ModelLoadError",
    "NLIModel",
    "RewordedUnsupportedCheck",
    "SqlEntailmentCache",
    "Support",
    "Unsupported",
    "Verdict",
    "VerifiedHandover",
    "Verifier",
    "VerifierError",
    "cache_key",
    "coverage",
    "focused_premises",
    "label_order",
    "missing_numbers",
    "premise_windows",
    "proper_names",
    "split_claim",
]
