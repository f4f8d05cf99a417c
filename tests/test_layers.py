"""The viewer's imports run one way: no cycle, and no module imports a module of a higher layer.

The import graph among viewer modules is read from the source with `ast` (nothing is imported):
absolute and relative imports, `from . import x` meaning the module x, imports inside functions
and under `if TYPE_CHECKING:` included (a type-only import is still a dependency; it is the usual
way to hide a cycle).
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

from conftest import REPO

# The layering, lowest first: each layer is a package of viewer/ (a name covers the package and every module in
# it); a module may import modules of its own layer or of lower ones. The front ends are the modules at the top.
LAYERS: list[tuple[str, list[str]]] = [
    ("core", ["core"]),  # values, JSON, masking, the seed's rules, sorted lists: imports nothing of ours
    ("files", ["files"]),  # opening files safely, following them, reading events back at offsets
    ("formats", ["formats"]),  # each input format: recognized by content, normalized to seed-000 events
    ("search", ["search"]),  # the full-text index of a session, its worker processes and the query language
    ("index", ["index"]),  # one session's events indexed: agents, links, facets, usage
    ("store", ["store"]),  # sessions kept between runs
    ("library", ["library"]),  # every session below a folder, kept in step with the files
    ("reads", ["reads"]),  # what a page reads: trees, perspectives, dialogs, provenance, pictures, as-of
    ("export", ["export"]),  # sessions written out: text formats, OTLP, push
    ("front ends", ["web", "share", "mcp", "cli", "__main__", "__init__"]),
]
# Groups that stand beside the layers: (the highest layer they may import, the lowest layer that may
# import them). The writer of seed 000 builds on the seed's rules only, and only front ends use it.
APART: dict[str, tuple[str, str]] = {
    "writer": ("core", "front ends"),
}

PACKAGE = "viewer"


# --- the import graph ----------------------------------------------------------------------------

def modules_of(root: Path, package: str) -> dict[str, Path]:
    """{dotted module name: file} for every module of the package under root, subpackages included."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _within(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is one of the modules (None: not ours)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in modules:
            return prefix
    return None


def _packages_run_first(importer: str, target: str, package: str) -> list[str]:
    """The packages whose __init__ an import of target runs first, as seen from the importer.

    Importing viewer.formats.native runs viewer/formats/__init__.py: a dependency on it, unless
    the importer is inside that package (then its __init__ is already running). The top package
    always runs before anything in it.
    """
    parts = target.split(".")
    outer = [".".join(parts[:end]) for end in range(2, len(parts))]
    return [p for p in outer if p != package and not (importer == p or importer.startswith(p + "."))]


def imports_of(name: str, path: Path, modules: dict[str, Path], package: str) -> set[str]:
    """The modules of the package that this module imports, anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from p import x` names the module p.x when there is one, else a name defined in p.
            named = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                     for alias in node.names]
        else:
            continue
        for dotted in named:
            target = _within(dotted, modules)
            if target is not None and (target == package or target.startswith(package + ".")):
                targets.add(target)
                targets.update(_packages_run_first(name, target, package))
    targets.discard(name)
    return targets


def import_graph(root: Path = REPO, package: str = PACKAGE) -> dict[str, set[str]]:
    modules = modules_of(root, package)
    return {name: imports_of(name, path, modules, package) for name, path in modules.items()}


def tangles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of two or more modules that all reach each other through imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(start: str) -> None:  # Tarjan's algorithm, iterative (no recursion limit)
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)

    for name in sorted(graph):
        if name not in index:
            connect(name)
    return sorted(groups, key=min)


def shortest_cycle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest import cycle through the first module of a tangle (that module repeated last)."""
    start = min(group)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for succ in sorted(graph[node] & group):
            if succ == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start]
            if succ not in came_from:
                came_from[succ] = node
                queue.append(succ)
    raise AssertionError(f"no cycle through {start} in {sorted(group)}")


# --- the layers ----------------------------------------------------------------------------------

RANK = {layer: rank for rank, (layer, _) in enumerate(LAYERS)}


def layer_of(module: str, package: str = PACKAGE) -> str | None:
    """The layer (or apart group) of a dotted module name; None when the table does not place it."""
    name = "__init__" if module == package else module.removeprefix(package + ".")
    placed = {entry: layer for layer, entries in LAYERS for entry in entries}
    placed.update({group: group for group in APART})
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        layer = placed.get(".".join(parts[:end]))
        if layer is not None:
            return layer
    return None


def may_import(importer_layer: str, imported_layer: str) -> bool:
    if importer_layer == imported_layer:
        return True
    if importer_layer in APART:
        highest, _ = APART[importer_layer]
        return imported_layer in RANK and RANK[imported_layer] <= RANK[highest]
    if imported_layer in APART:
        _, lowest_user = APART[imported_layer]
        return RANK[importer_layer] >= RANK[lowest_user]
    return RANK[imported_layer] <= RANK[importer_layer]


def test_viewer_holds_only_the_layers_packages_and_its_front_ends():
    placed = {entry for _, entries in LAYERS for entry in entries} | set(APART)
    found = {path.stem if path.suffix == ".py" else path.name for path in (REPO / PACKAGE).iterdir()
             if path.suffix == ".py" or (path / "__init__.py").exists()}
    assert found == placed, f"viewer/ holds {sorted(found - placed)} beyond the table; the table names {sorted(placed - found)} it lacks"


def test_every_module_has_a_place_in_the_layer_table():
    unplaced = sorted(m for m in import_graph() if layer_of(m) is None)
    assert not unplaced, f"modules missing from LAYERS (or APART) in tests/test_layers.py: {', '.join(unplaced)}"


def test_no_import_cycle_among_viewer_modules():
    graph = import_graph()
    found = [f"{' -> '.join(shortest_cycle(graph, group))}  (the loop holds {', '.join(sorted(group))})"
             for group in tangles(graph)]
    assert not found, "import cycles:\n" + "\n".join(found)


def test_no_module_imports_a_module_of_a_higher_layer():
    wrong = []
    for importer, targets in sorted(import_graph().items()):
        for target in sorted(targets):
            lower, higher = layer_of(importer), layer_of(target)
            if lower is not None and higher is not None and not may_import(lower, higher):
                wrong.append(f"{importer} ({lower}) imports {target} ({higher})")
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


# --- the walk itself, on a package made for it ---------------------------------------------------------

def test_the_walk_sees_every_kind_of_import_and_names_the_cycle(tmp_path):
    files = {
        "pkg/__init__.py": "from .front import main\n",
        "pkg/front.py": "import pkg.sub.leaf as leaf\nfrom pkg import util\n",
        "pkg/util.py": "import os\nfrom json import dumps\n",
        "pkg/sub/__init__.py": "from . import leaf\nfrom .leaf import NAME\n",
        "pkg/sub/leaf.py": "NAME = 1\ndef late():\n    from ..front import main\n    return main\n",
        "pkg/sub/other.py": "from . import NAME\nfrom .. import util\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path, "pkg")
    assert graph == {
        "pkg": {"pkg.front"},
        "pkg.front": {"pkg.sub.leaf", "pkg.sub", "pkg.util"},  # importing sub.leaf runs sub/__init__.py
        "pkg.util": set(),
        "pkg.sub": {"pkg.sub.leaf"},
        "pkg.sub.leaf": {"pkg.front"},  # inside a function, still an import
        "pkg.sub.other": {"pkg.sub", "pkg.util"},  # `from . import NAME`: a name of sub/__init__.py
    }
    assert tangles(graph) == [{"pkg.front", "pkg.sub", "pkg.sub.leaf"}]
    assert shortest_cycle(graph, tangles(graph)[0]) == ["pkg.front", "pkg.sub.leaf", "pkg.front"]
    assert tangles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
