"""The NLI verifier: does a document entail a claim, and which part of it says so.

``Verifier.default()`` loads the shipped cross-encoder (or the model named by
``ASSAY_NLI_MODEL``); any Hugging Face NLI sequence classifier can replace it through
``Verifier.from_pretrained``. Results are :class:`Entailment` records with a
calibrated score and the character span of the evidence that decided.
"""

import typing

from assay._lazy import exports as _exports

if typing.TYPE_CHECKING:
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


# Each name is imported from its home when first used (PEP 562): importing the
# package loads none of them.
__getattr__, __dir__ = _exports(
    __name__,
    {
        "LABELS": "assay.contract:NLI_LABELS",
        "Label": "assay.contract:NLILabel",
        "AuditedVerdict": "assay.verifier._audit",
        "audited_verdicts": "assay.verifier._audit",
        "verdict_record": "assay.verifier._audit",
        "CacheKey": "assay.verifier._cache",
        "EntailmentCache": "assay.verifier._cache",
        "InMemoryEntailmentCache": "assay.verifier._cache",
        "cache_key": "assay.verifier._cache",
        "Calibration": "assay.verifier._calibration",
        "Support": "assay.verifier._calibration",
        "coverage_penalty": "assay.verifier._calibration",
        "fit_logistic": "assay.verifier._calibration",
        "LedgerVerifier": "assay.verifier._ledger_verifier",
        "NLIModel": "assay.verifier._ledger_verifier",
        "Verdict": "assay.verifier._ledger_verifier",
        "VerifiedHandover": "assay.verifier._ledger_verifier",
        "Entailment": "assay.verifier._records",
        "RewordedUnsupportedCheck": "assay.verifier._reworded",
        "SqlEntailmentCache": "assay.verifier._sql_cache",
        "LexicalNLI": "assay.verifier._standin",
        "best_window": "assay.verifier._text",
        "coverage": "assay.verifier._text",
        "join_sentences": "assay.verifier._text",
        "DEFAULT_MODEL_DIR": "assay.verifier._verifier",
        "MODEL_ENV": "assay.verifier._verifier",
        "QUANTIZE_ENV": "assay.verifier._verifier",
        "Verifier": "assay.verifier._verifier",
        "label_order": "assay.verifier._verifier",
    },
)
