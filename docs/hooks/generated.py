"""MkDocs hook: the parts of the manual that are generated, never typed.

A line that holds nothing but a placeholder is replaced when the page is built:

- ``{{ benchmark_table("ledger") }}``: the tables of ``benchmarks/results/ledger.json``;
- ``{{ cli_reference() }}``: every ``assay`` command, from the command tree itself;
- ``{{ exception_reference() }}``: the exception tree from ``assay/errors.py``;
- ``{{ include("SECURITY.md") }}``: a file of the repository, as it is;
- ``{{ verifier_checks() }}``: the verifier's deterministic checks, in order, from
  :data:`assay.verifier.checks.DEFAULT_CHECKS`.

An unknown placeholder, a missing file or a results file without its figures fails
the build (``mkdocs build --strict`` runs in the test suite), so nothing here can
silently go stale.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from benchmark_tables import MissingFigures, benchmark_table
from cli_reference import cli_reference
from exception_tree import exception_reference
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from verifier_checks import verifier_checks_table

_PLACEHOLDER = re.compile(r"^\{\{\s*(\w+)\((.*)\)\s*\}\}[ \t]*$", re.MULTILINE)


def _root(config: MkDocsConfig) -> Path:
    """The repository root: where ``mkdocs.yml`` is."""
    return Path(config.config_file_path).resolve().parent


def _arguments(raw: str) -> list[str]:
    """Placeholder arguments: string literals only, nothing evaluated."""
    if not raw.strip():
        return []
    try:
        value = ast.literal_eval(f"({raw},)")
    except (SyntaxError, ValueError) as exc:
        raise PluginError(f"placeholder arguments must be string literals: ({raw})") from exc
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise PluginError(f"placeholder arguments must be strings: ({raw})")
    return list(value)


def _expand(name: str, args: list[str], root: Path) -> str:
    if name == "benchmark_table" and len(args) == 1:
        try:
            return benchmark_table(root / "benchmarks" / "results", args[0])
        except (OSError, KeyError, ValueError, MissingFigures) as exc:
            raise PluginError(f"benchmark_table({args[0]!r}): {exc}") from exc
    if name == "cli_reference" and not args:
        from assay.cli import app

        return cli_reference(app)
    if name == "exception_reference" and not args:
        import assay
        import assay.errors

        return exception_reference(assay.errors, assay)
    if name == "verifier_checks" and not args:
        return verifier_checks_table()
    if name == "include" and len(args) == 1:
        path = (root / args[0]).resolve()
        if root not in path.parents or not path.is_file():
            raise PluginError(f"include({args[0]!r}): no such file in the repository")
        return path.read_text(encoding="utf-8")
    raise PluginError(f"unknown placeholder {name}({', '.join(map(repr, args))})")


def on_page_markdown(
    markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files, **_: Any
) -> str:
    """Replace every placeholder line of the page with what it stands for."""
    del files
    root = _root(config)

    def replace(match: re.Match[str]) -> str:
        try:
            return _expand(match.group(1), _arguments(match.group(2)), root)
        except PluginError as exc:
            raise PluginError(f"{page.file.src_path}: {exc}") from exc

    return _PLACEHOLDER.sub(replace, markdown)
