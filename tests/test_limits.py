"""The size limits of docs/development.md hold, and its list of exceptions is the one
the tools apply.

ruff holds each function (complexity, branches, statements) and each line; this
holds each module to 500 lines. A module over that is listed on the page with the
most lines it may have and why; a ruff exception in ``pyproject.toml`` is listed
there too. An exception that is no longer needed is an error as well, so the list
only shrinks as modules are split.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "development.md"
#: The folders ``make lint`` checks.
CHECKED = ("assay", "migrations", "tests", "benchmarks", "examples", "docs/hooks", "evals")
MODULE_LINES = 500

# A row of the page's tables: | `path` | a figure or rule codes | why |
_ROW = re.compile(
    r"^\|\s*`(?P<path>[^`]+\.py)`\s*\|\s*(?P<what>[^|]+?)\s*\|\s*(?P<why>[^|]+?)\s*\|$"
)


def _section(title: str) -> list[re.Match[str]]:
    """The table rows under the page's heading ``title`` (up to the next heading)."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n### {title}\n")
    end = text.find("\n#", start + 1)
    rows = [_ROW.match(line) for line in text[start : end if end > 0 else None].splitlines()]
    return [row for row in rows if row is not None]


def _modules() -> dict[str, int]:
    """Lines of every Python module the linters check, by path from the root."""
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for folder in CHECKED
        for path in sorted((ROOT / folder).rglob("*.py"))
    }


def test_every_module_is_within_its_limit() -> None:
    allowed = {row["path"]: int(row["what"].replace(",", "")) for row in _section("Long modules")}
    modules = _modules()
    over = {
        path: lines for path, lines in modules.items() if lines > allowed.get(path, MODULE_LINES)
    }
    assert over == {}, f"split these modules, or list them in {PAGE.name} with why"
    needless = sorted(p for p in allowed if modules.get(p, 0) <= MODULE_LINES)
    assert needless == [], f"these need no exception any more: remove them from {PAGE.name}"


def test_every_ruff_exception_is_listed_with_its_reason() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    ignored: dict[str, list[str]] = config["tool"]["ruff"]["lint"]["per-file-ignores"]
    listed = {row["path"]: row for row in _section("Exceptions to the function limits")}
    assert set(listed) == set(ignored)
    for path, codes in ignored.items():
        assert re.findall(r"[A-Z]+\d+", listed[path]["what"]) == codes, path
        assert len(listed[path]["why"]) > 20, path


def test_the_page_states_the_limits_ruff_applies() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    ruff = config["tool"]["ruff"]
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert f"lines of at most {ruff['line-length']} characters" in text
    assert f"complexity of at most {ruff['lint']['mccabe']['max-complexity']}" in text
    assert f"at most {ruff['lint']['pylint']['max-branches']} branches" in text
    assert f"at most {ruff['lint']['pylint']['max-statements']} statements" in text
    assert f"modules of at most {MODULE_LINES} lines" in text
