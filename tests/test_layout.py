"""The rules of the house: the ground floor imports no family, families never import each
other, and `trees/` takes arrays only."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "arborparse"
GROUND = ("io", "trees", "transforms", "eval", "errors", "options", "training")
FAMILIES = ("linear", "isbn", "neural")


def imports_of(path: Path) -> set[str]:
    """The arborparse top-level parts a module imports, e.g. {"io", "trees"}."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "arborparse" and len(parts) > 1:
                found.add(parts[1])
    return found


def part_of(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_layering(path):
    part, used = part_of(path), imports_of(path)
    if part in GROUND:
        assert not used & (set(FAMILIES) | {"text"}), f"{path} (ground floor) imports above it"
    if part == "text":
        assert not used & set(FAMILIES), f"{path} (the front end) imports a family"
    if part in FAMILIES:
        assert not used & (set(FAMILIES) - {part}), f"{path} imports another family"
    if part == "trees":
        assert used <= {"trees"}, f"{path}: trees/ imports {used - {'trees'}}"
