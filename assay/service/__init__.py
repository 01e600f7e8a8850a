"""The Python service API behind ``cp.run`` / ``cp.resume`` (and their async twins)."""

from assay.service._service import resume, run

__all__ = ["resume", "run"]
