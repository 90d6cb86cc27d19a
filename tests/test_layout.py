"""The rules of the house: the ground floor imports no family, families never import each
other, `trees/` takes arrays only, the command line, the service, the cluster code and the
renderer talk to the two doors (`train`, `load`) and never import a family, and no part of
the package imports, even at call time, a part that imports it back."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "arborparse"
GROUND = ("io", "trees", "transforms", "eval", "errors", "options", "training", "memory")
FAMILIES = ("linear", "isbn", "neural", "ensemble")
# above the families: they reach a family through `arborparse.registry` only
DOORS_ONLY = ("cli", "service", "distributed", "render", "spacy")


def imports_of(path: Path) -> set[str]:
    """The arborparse top-level parts a module imports, e.g. {"io", "trees"}."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [f"arborparse.{a.name}" for a in node.names] \
            if isinstance(node, ast.ImportFrom) and node.module == "arborparse" else \
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
    if part in DOORS_ONLY:
        assert not used & set(FAMILIES), f"{path} imports a family (use train/load/registry)"


def test_no_part_imports_a_part_that_imports_it_back():
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        graph.setdefault(part_of(path), set()).update(imports_of(path))
    for part in graph:
        graph[part].discard(part)

    def reaches(start, goal, seen=()):
        return any(nxt == goal or (nxt not in seen and reaches(nxt, goal, (*seen, nxt)))
                   for nxt in graph.get(start, ()))

    circles = sorted(part for part in graph if reaches(part, part))
    assert not circles, f"parts in an import circle: {circles}"
