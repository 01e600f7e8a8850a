"""The NLI verifier: does a document entail a claim, and which part of it says so.

``Verifier.default()`` loads the shipped cross-encoder (or the model named by
``ASSAY_NLI_MODEL``); any Hugging Face NLI sequence classifier can replace it through
``Verifier.from_pretrained``. Results are :class:`Entailment` records with a
calibrated score and the character span of the evidence that decided.
"""

from assay.contract import NLI_LABELS as LABELS
from assay.contract import NLILabel as Label
from assay.verifier._audit import AuditedVerdict, audited_verdicts, verdict_record
from assay.verifier._cache import CacheKey, EntailmentCache, InMemoryEntailmentCache, cache_key
from assay.verifier._calibration import Calibration, Support, coverage_penalty, fit_logistic
from assay.verifier._ledger_verifier import (
    LedgerVerifier,
    NLIModel,
    Verdict,
    VerifiedHandover,
)
from assay.verifier._records import Entailment
from assay.verifier._reworded import RewordedUnsupportedCheck
from assay.verifier._sql_cache import SqlEntailmentCache
from assay.verifier._standin import LexicalNLI
from assay.verifier._text import best_window, coverage, join_sentences
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
    "AuditedVerdict",
    "CacheKey",
    "Calibration",
    "Entailment",
    "EntailmentCache",
    "InMemoryEntailmentCache",
    "Label",
    "LedgerVerifier",
    "LexicalNLI",
    "NLIModel",
    "RewordedUnsupportedCheck",
    "SqlEntailmentCache",
    "Support",
    "Verdict",
    "VerifiedHandover",
    "Verifier",
    "audited_verdicts",
    "best_window",
    "cache_key",
    "coverage",
    "coverage_penalty",
    "fit_logistic",
    "join_sentences",
    "label_order",
    "verdict_record",
]
