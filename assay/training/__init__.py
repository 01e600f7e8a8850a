"""Training, data loading and calibration of the NLI verifier.

Not on the runtime import path: nothing under ``assay`` imports this package except
the ``assay verifier train`` and ``calibrate`` commands, on demand. It needs nothing
beyond the runtime dependencies (torch, transformers and the base MiniLM package are
already required by the verifier), so there is no separate extra to install.
"""

from assay.training._calibrate import calibrate
from assay.training._train import Progress, TrainConfig, base_model_dir, train

__all__ = ["Progress", "TrainConfig", "base_model_dir", "calibrate", "train"]
