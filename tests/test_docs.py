"""The README and the manual under ``docs/`` cannot drift from the code.

- ``README.md`` stays a landing page: at most 12,000 characters.
- Every relative link in the README and the manual points at a file that exists.
- ``mkdocs build --strict`` succeeds (broken links and anchors, pages left out of
  the navigation and unknown placeholders all fail it), and every placeholder is
  replaced by what it stands for.
- The generated parts (benchmark tables, the command-line reference, the exception
  reference) show what their sources hold, and a results file that lost its
  figures fails the build instead of rendering an empty table. Every error code of
  the tool bus and the gate is explained on its page.
- The Python examples of the README and of every page run against the current code,
  on SQLite and PostgreSQL, in a scratch directory, with the deterministic
  stand-in NLI model (the examples exercise the API; tests/verifier exercises the
  model). Blocks that cannot run here are listed in ``NOT_RUN`` with the reason.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, get_args

import pytest
import typer.main

import assay
import assay.errors
from assay import ControlPlane
from assay.cli import app
from assay.gate import GATE_ERROR_CODES
from assay.tool_bus import ErrorCode
from assay.verifier import LexicalNLI, Verifier

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
RESULTS = ROOT / "benchmarks" / "results"
MAX_README_CHARS = 12_000

#: Python blocks that are not run, by a line they contain, and why.
NOT_RUN = {
    'resolve_chat_model("openai:gpt-4o-mini")': (
        "needs the langchain-openai package and an API key, and the tests never reach "
        "a provider; tests/fence/test_llm_agents.py drives LLMAgent with a scripted model"
    ),
    'react_agent(model, cp, tools=["order_status"])': (
        "needs a chat model; examples/fence_a_react_agent.py runs the same adapter with a "
        "scripted one, and tests/fence/test_react.py runs that example"
    ),
}

_FENCE = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_PYTHON = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_PLACEHOLDER = re.compile(r"\{\{\s*(benchmark_table|cli_reference|exception_reference|include)\(")


def _page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


# --- the README --------------------------------------------------------------------------


def test_the_readme_is_a_landing_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text) <= MAX_README_CHARS, f"README.md is {len(text)} characters"
    for command in ("make demo", "make test"):
        assert command in text


# --- links -------------------------------------------------------------------------------


def _relative_links(page: Path) -> list[str]:
    """Link targets outside code blocks and code spans, without URLs or bare anchors."""
    prose = _CODE_SPAN.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    targets = [m.group(1) for m in _LINK.finditer(prose)]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:|^#", t)]


def test_the_link_reader_finds_the_readmes_links_into_the_manual() -> None:
    assert "docs/index.md" in _relative_links(README)


@pytest.mark.parametrize("page", [README, *PAGES], ids=_page_id)
def test_relative_links_point_at_files_that_exist(page: Path) -> None:
    broken = [
        target
        for target in _relative_links(page)
        if not (page.parent / target.split("#", 1)[0]).resolve().exists()
    ]
    assert broken == [], f"{_page_id(page)} links to missing files"


# --- the build ---------------------------------------------------------------------------


@pytest.mark.slow
def test_the_manual_builds_strictly_with_every_placeholder_replaced(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    pages = {p.parent.name: p.read_text(encoding="utf-8") for p in site.glob("*/index.html")}
    left = [name for name, html in pages.items() if _PLACEHOLDER.search(html)]
    assert left == []
    assert "assay ledger verify" in pages["cli"]
    assert "LedgerWriteRefused" in pages["errors"]
    assert "Who is trusted" in pages["security"]
    ledger = json.loads((RESULTS / "ledger.json").read_text(encoding="utf-8"))
    assert f"{ledger['sqlite']['verified_entries_per_s']:,.0f}" in pages["benchmarks"]


# --- the generated parts -----------------------------------------------------------------


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    """The modules under docs/hooks, imported the way MkDocs imports the hook."""
    monkeypatch.syspath_prepend(str(DOCS / "hooks"))
    names = ("benchmark_tables", "cli_reference", "exception_tree", "generated")
    modules: dict[str, ModuleType] = {n: importlib.import_module(n) for n in names}
    yield SimpleNamespace(**modules)
    for name in names:
        sys.modules.pop(name, None)


def test_every_results_file_has_its_table_on_the_benchmarks_page(hooks: Any) -> None:
    stems = {p.stem for p in RESULTS.glob("*.json")}
    assert stems == set(hooks.benchmark_tables.BENCHMARKS)
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    assert {s for s in stems if f'{{{{ benchmark_table("{s}") }}}}' not in page} == set()


def test_a_benchmark_table_shows_its_json_and_names_what_the_json_lacks(
    hooks: Any, tmp_path: Path
) -> None:
    data = json.loads((RESULTS / "ledger.json").read_text(encoding="utf-8"))
    del data["postgres"]
    (tmp_path / "ledger.json").write_text(json.dumps(data), encoding="utf-8")
    table = hooks.benchmark_tables.benchmark_table(tmp_path, "ledger")
    assert f"| {data['sqlite']['appends_per_s_single_writer']:,.0f} | — |" in table
    assert "`postgres.appends_per_s_single_writer`" in table
    assert data["machine"]["when"] in table


def test_a_results_file_without_its_figures_fails_instead_of_rendering_dashes(
    hooks: Any, tmp_path: Path
) -> None:
    (tmp_path / "gate.json").write_text(json.dumps({"engines": {}}), encoding="utf-8")
    with pytest.raises(hooks.benchmark_tables.MissingFigures):
        hooks.benchmark_tables.benchmark_table(tmp_path, "gate")


def _command_paths(command: Any, ctx: Any) -> Iterator[tuple[str, Any, Any]]:
    yield ctx.command_path, command, ctx
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            yield from _command_paths(sub, sub.context_class(sub, info_name=name, parent=ctx))


def test_the_cli_reference_shows_every_command_and_option(hooks: Any) -> None:
    page = hooks.cli_reference.cli_reference(app)
    root = typer.main.get_command(app)
    found = list(_command_paths(root, root.context_class(root, info_name="assay")))
    assert len(found) > 10
    for path, command, ctx in found:
        assert f"`{path}`" in page
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and record[0] != "--help":
                assert f"`{record[0]}`" in page, f"{path}: {record[0]}"


def test_the_exception_reference_shows_the_drawn_tree_and_every_exception(hooks: Any) -> None:
    page = hooks.exception_tree.exception_reference(assay.errors, assay)
    assert "AssayError\n├── UsageError" in page
    for name in assay.errors.__all__:
        assert f"| `{name}` |" in page


@pytest.mark.parametrize(
    ("page", "codes"),
    [
        ("tool-bus.md", sorted(get_args(ErrorCode))),
        ("gate.md", sorted(GATE_ERROR_CODES)),
    ],
)
def test_every_error_code_is_explained_on_its_page(page: str, codes: list[str]) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    assert [code for code in codes if f"`{code}`" not in text] == []


def test_an_unknown_placeholder_fails_the_build(hooks: Any) -> None:
    from mkdocs.exceptions import PluginError

    page: Any = SimpleNamespace(file=SimpleNamespace(src_path="x.md"))
    config: Any = SimpleNamespace(config_file_path=str(ROOT / "mkdocs.yml"))
    with pytest.raises(PluginError, match="unknown placeholder"):
        hooks.generated.on_page_markdown("{{ nothing() }}\n", page=page, config=config, files=None)
    text = 'a line that mentions {{ include("SECURITY.md") }} is left alone\n'
    assert hooks.generated.on_page_markdown(text, page=page, config=config, files=None) == text


# --- the Python examples -----------------------------------------------------------------


def _examples(page: Path) -> str:
    """The page's runnable Python blocks as one script, each block on the lines it
    occupies in the page, so that a traceback names the page's own line."""
    text = page.read_text(encoding="utf-8")
    lines = [""] * (text.count("\n") + 1)
    for match in _PYTHON.finditer(text):
        block = match.group(1)
        if any(marker in block for marker in NOT_RUN):
            continue
        first = text.count("\n", 0, match.start(1))
        for offset, line in enumerate(block.splitlines()):
            lines[first + offset] = line
    return "\n".join(lines)


RUNNABLE = [p for p in (README, *PAGES) if _examples(p).strip()]


def test_every_block_left_out_is_named_once() -> None:
    blocks = [b for p in (README, *PAGES) for b in _PYTHON.findall(p.read_text(encoding="utf-8"))]
    for marker in NOT_RUN:
        assert sum(marker in b for b in blocks) == 1, marker


@pytest.mark.parametrize("page", RUNNABLE, ids=_page_id)
def test_the_python_examples_run(
    page: Path, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_DATABASE_URL", db_url)
    monkeypatch.setenv("ASSAY_OUTBOX", str(tmp_path / "outbox.jsonl"))
    monkeypatch.setattr(Verifier, "default", lambda *_, **__: LexicalNLI())
    namespace: dict[str, Any] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    try:
        exec(compile(_examples(page), str(page), "exec"), namespace)
    finally:
        for value in namespace.values():
            if isinstance(value, ControlPlane):
                value.close()
