"""The errors page, rendered from ``assay/errors.py``.

The module's docstring draws the exception tree; every exception class carries its
own docstring. Both are read at build time, so the page shows the tree and the
classes that the package actually has, and says where each one is importable from.
"""

from __future__ import annotations

import inspect
import re
from types import ModuleType

from cli_reference import rst_to_markdown

__all__ = ["exception_reference", "module_docstring"]

_LITERAL_INTRO = re.compile(r"::\s*$")


def module_docstring(module: ModuleType) -> str:
    """A module docstring as Markdown: paragraphs joined, and a paragraph that ends
    in ``::`` followed by its indented literal block (the drawn tree) as a fence."""
    lines = inspect.cleandoc(module.__doc__ or "").splitlines()
    out: list[str] = []
    paragraph: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip():
            paragraph.append(line.strip())
            i += 1
            continue
        i = _flush(paragraph, out, lines, i)
    _flush(paragraph, out, lines, len(lines))
    return "\n\n".join(out)


def _flush(paragraph: list[str], out: list[str], lines: list[str], i: int) -> int:
    """Emit the paragraph collected so far; if it introduced a literal block, emit
    that block too and return the index after it."""
    if not paragraph:
        return i + 1
    text = " ".join(paragraph)
    paragraph.clear()
    if not _LITERAL_INTRO.search(text):
        out.append(rst_to_markdown(text))
        return i + 1
    out.append(rst_to_markdown(_LITERAL_INTRO.sub(":", text)))
    block: list[str] = []
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or lines[j].startswith(" ")):
        block.append(lines[j])
        j += 1
    while block and not block[-1].strip():
        block.pop()
    out.append("```text\n" + inspect.cleandoc("\n".join(block)) + "\n```")
    return j


def _first_paragraph(cls: type) -> str:
    doc = inspect.cleandoc(cls.__doc__ or "")
    first = doc.split("\n\n", 1)[0]
    return rst_to_markdown(" ".join(part.strip() for part in first.splitlines()))


def exception_reference(errors: ModuleType, package: ModuleType) -> str:
    """The drawn tree, then one row per exception in the order the module defines
    them: its bases, what it means, and whether ``package`` (``assay``) exports it."""
    exported: set[str] = set(getattr(package, "__all__", ()))
    public: set[str] = set(getattr(errors, "__all__", ()))
    # Definition order: the module groups its exceptions by component.
    names = [name for name in vars(errors) if name in public]
    rows = ["| exception | derives from | meaning | import from |", "|---|---|---|---|"]
    for name in names:
        cls = getattr(errors, name)
        bases = ", ".join(f"`{b.__name__}`" for b in cls.__bases__)
        where = f"`{package.__name__}`" if name in exported else f"`{errors.__name__}` only"
        meaning = _first_paragraph(cls).replace("|", "\\|")
        rows.append(f"| `{name}` | {bases} | {meaning} | {where} |")
    return module_docstring(errors) + "\n\n## Every exception\n\n" + "\n".join(rows) + "\n"
