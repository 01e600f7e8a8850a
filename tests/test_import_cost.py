"""``import assay`` loads the runtime only: no application, no command line, no
training code, no lexical index and no chat-model integration."""

from __future__ import annotations

import json
import subprocess
import sys

NOT_AT_IMPORT = (
    "assay.apps",
    "assay.cli",
    "assay.training",
    "bm25s",
    "langchain_openai",
    "langchain_anthropic",
    "langchain_ollama",
    "langchain.chat_models",
)


def _loaded_after(statement: str) -> list[str]:
    script = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout)


def _offenders(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_AT_IMPORT)]


def test_import_assay_loads_nothing_it_does_not_need() -> None:
    assert _offenders(_loaded_after("import assay")) == []


def test_the_check_sees_what_an_application_loads() -> None:
    """The same check finds the invoice audit once it is imported, so an empty list
    above means the modules were not loaded, not that they went unseen."""
    loaded = _offenders(_loaded_after("import assay.apps.reference, assay.cli"))
    assert "assay.apps.reference" in loaded and "assay.cli" in loaded
