"""The service's settings: one value object, read from the environment in one place.

``assay serve`` passes its options through the environment, so that every worker
process uvicorn starts builds the same application (:func:`settings_from_env`,
:func:`graphs_from_env`).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from assay.control_plane import GraphFactory
from assay.errors import ConfigurationError

__all__ = [
    "GRAPHS_ENV",
    "ServiceSettings",
    "graphs_from_env",
    "load_factory",
    "parse_graph_specs",
    "settings_from_env",
]


GRAPHS_ENV = "ASSAY_SERVICE_GRAPHS"
_PREFIX = "ASSAY_SERVICE_"
_SWITCH = {"1": True, "true": True, "on": True, "0": False, "false": False, "off": False}
_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
_REFERENCE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


@dataclass(frozen=True, kw_only=True)
class ServiceSettings:
    """How the HTTP service behaves.

    ``max_body_bytes``: the largest request body taken (413 beyond it).
    ``rate_per_second`` and ``rate_burst``: each token's bucket (429 when empty); the
    buckets live in the process, so each uvicorn worker keeps its own.
    ``separation_of_duties``: a principal may not decide a run it started.
    ``checkpoint_key``: the ledger's checkpoint signing key (its text or a file);
    ``None`` reads ``ASSAY_LEDGER_KEY`` / ``ASSAY_LEDGER_KEY_FILE``.
    """

    max_body_bytes: int = 1_048_576
    rate_per_second: float = 10.0
    rate_burst: int = 30
    separation_of_duties: bool = True
    checkpoint_key: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.max_body_bytes, bool) or self.max_body_bytes < 1:
            raise ConfigurationError("max_body_bytes must be a positive integer")
        if not self.rate_per_second > 0 or self.rate_burst < 1:
            raise ConfigurationError("rate_per_second must be positive and rate_burst at least 1")


def settings_from_env(environ: Mapping[str, str] | None = None) -> ServiceSettings:
    """Settings from ``ASSAY_SERVICE_MAX_BODY_BYTES``, ``ASSAY_SERVICE_RATE``,
    ``ASSAY_SERVICE_BURST`` and ``ASSAY_SERVICE_SEPARATION_OF_DUTIES`` (``1``/``0``,
    ``true``/``false``, ``on``/``off``); what is unset keeps its default. The checkpoint
    key is the ledger's own: ``ASSAY_LEDGER_KEY`` / ``ASSAY_LEDGER_KEY_FILE``."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    readers: dict[str, tuple[str, Callable[[str], Any]]] = {
        "MAX_BODY_BYTES": ("max_body_bytes", int),
        "RATE": ("rate_per_second", float),
        "BURST": ("rate_burst", int),
        "SEPARATION_OF_DUTIES": ("separation_of_duties", _switch),
    }
    for suffix, (field, read) in readers.items():
        raw = env.get(_PREFIX + suffix)
        if raw is None:
            continue
        try:
            values[field] = read(raw)
        except ValueError:
            raise ConfigurationError(f"{_PREFIX}{suffix}={raw!r} is not a valid value") from None
    return ServiceSettings(**values)


def _switch(text: str) -> bool:
    value = text.strip().lower()
    if value not in _SWITCH:
        raise ValueError(text)
    return _SWITCH[value]


def parse_graph_specs(specs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``name=module:attr`` items as a mapping of name to reference, checked."""
    found: dict[str, str] = {}
    for spec in specs:
        name, sep, reference = spec.partition("=")
        if not sep or not _NAME.fullmatch(name) or not _REFERENCE.fullmatch(reference):
            raise ConfigurationError(
                f"a served graph is name=module:attr (e.g. invoices=my_app.graphs:audit), "
                f"name in [a-z0-9_.-], not {spec!r}"
            )
        if name in found:
            raise ConfigurationError(f"the graph name {name!r} is given twice")
        found[name] = reference
    if not found:
        raise ConfigurationError("serve at least one graph: --graph name=module:attr")
    return found


def load_factory(reference: str) -> GraphFactory:
    """The graph factory ``module:attr`` names (the working directory on the path)."""
    module_name, attr = reference.split(":", 1)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"graph {reference}: cannot load it ({exc})") from None
    if not callable(found):
        raise ConfigurationError(f"graph {reference} is not a factory graph(control_plane)")
    return cast(GraphFactory, found)


def graphs_from_env(environ: Mapping[str, str] | None = None) -> dict[str, GraphFactory]:
    """The graphs named in ``ASSAY_SERVICE_GRAPHS`` (``name=module:attr`` separated
    by commas), loaded."""
    env = os.environ if environ is None else environ
    specs = [s.strip() for s in env.get(GRAPHS_ENV, "").split(",") if s.strip()]
    return {name: load_factory(ref) for name, ref in parse_graph_specs(specs).items()}
