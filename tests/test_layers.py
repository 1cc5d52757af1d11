"""The layout of pcp_cli, checked on the source with `ast` (docs/development.md draws it).

- Imports point down the layers (LAYERS): the ground floor (`errors`) imports nothing of the
  package, `model/` nothing above it; the engines (store, index, semantic, render, extract);
  what the api orchestrates (query, adapters, sync, upkeep); the api; capture; the front ends.
- No modules import each other in a circle: imports inside functions, under TYPE_CHECKING and
  by name (`importlib`, `sys.modules`) count. The store's engine is layered (STORE_ENGINE).
- `pcp_cli/cli`, `pcp_cli/mcp` and `pcp_cli/console` reach the store only through
  `pcp_cli.api`, and call it by its table (`api.<name>`), never an api module; no command
  module imports cli/main.py.
- The library (`api/`, and everything below it) imports no front end.
- The CLI reaches the MCP front end only through `pcp_cli.mcp.commands`, and the console only
  through `pcp_cli.console.commands`, inside its command functions; the MCP front end never
  imports the CLI nor the console. The console reaches the MCP front end's state (grants,
  tokens, the audit log) through `pcp_cli.mcp.commands` too, inside functions, and never
  imports the CLI.
- Each third-party library lives in one layer; each error lives in errors.py or where it is
  raised, and errors.py says which.

There are no exceptions by name: a rule that needs one is a layout to change.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pcp_cli"

# third-party top-level module -> the only places (paths relative to pcp_cli/) allowed to import it
OWNERS: dict[str, tuple[str, ...]] = {
    "whoosh": ("index/",),
    "yaml": ("store/frontmatter.py",),
    "jsonschema": ("model/validate.py",),
    "mcp": ("mcp/",),
    "mcp_types": ("mcp/",),
    # the HTTP front ends: /mcp, its connections, OAuth; and `pcp console`
    "starlette": ("mcp/http.py", "mcp/connections.py", "mcp/oauth_http.py", "console/app.py"),
    "uvicorn": ("mcp/http.py", "mcp/connections.py", "console/commands.py"),
    "jinja2": ("console/app.py",),
    "markupsafe": ("console/app.py",),
    "typer": ("cli/",),
    "rich": ("cli/",),
    "click": ("cli/",),
    "numpy": ("semantic/",),
    "wordllama": ("semantic/",),
    "tomlkit": ("capture/agents.py",),
    "watchdog": ("capture/watch.py",),
}


def imports_of(path: Path, package: str | None = None) -> list[tuple[str, int]]:
    """Every module imported by `path` (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    if package is None:
        package = ".".join(("pcp_cli", *path.relative_to(PACKAGE).parent.parts))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((module, node.lineno))
            # `from pcp_cli import store` names a submodule too
            found += [(f"{module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_sources_found() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in sources()}
    assert {"api/__init__.py", "cli/main.py", "store/store.py", "store/frontmatter.py"} <= names


# The one door from the CLI into the MCP front end (`pcp serve`, `pcp audit`, `pcp grant`,
# `pcp mcp-config`).
MCP_ENTRY = "pcp_cli.mcp.commands"


def _is(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def eager_import_lines(path: Path) -> set[int]:
    """Lines of the imports that run when the module is imported (not inside a function)."""
    lines: set[int] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            lines.add(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    return lines


CONSOLE_ENTRY = "pcp_cli.console.commands"
# front end -> {front end it may reach: the one module it may import, inside functions}
DOORS = {"cli": {"pcp_cli.mcp": MCP_ENTRY, "pcp_cli.console": CONSOLE_ENTRY},
         "console": {"pcp_cli.mcp": MCP_ENTRY}, "mcp": {}}
FRONT_ENDS = ("pcp_cli.cli", "pcp_cli.mcp", "pcp_cli.console")


def front_end_crossings(front_end: str, paths: list[Path]) -> list[str]:
    bad: list[str] = []
    for path in paths:
        where = path.name if not path.is_relative_to(PACKAGE) else path.relative_to(PACKAGE)
        eager = eager_import_lines(path)
        for module, line in imports_of(path, package=f"pcp_cli.{front_end}"):
            found = None
            other = next((f for f in FRONT_ENDS if _is(module, f) and module != f
                          and f != f"pcp_cli.{front_end}"), None)
            door = DOORS[front_end].get(other or "")
            if _is(module, "pcp_cli.store") or other is not None and door is None:
                found = f"{where}:{line} imports {module}"
            elif other is not None and (not _is(module, door or "") or line in eager):
                found = (f"{where}:{line} imports {module} (only {door}, inside a "
                         "function)")
            if found and not any(b.startswith(f"{where}:{line} ") for b in bad):
                bad.append(found)
    return bad


@pytest.mark.parametrize("front_end", [
    "cli",
    "mcp",
    "console",
])
def test_front_ends_use_only_the_api(front_end: str) -> None:
    bad = front_end_crossings(front_end, sorted((PACKAGE / front_end).rglob("*.py")))
    assert not bad, "go through pcp_cli.api:\n" + "\n".join(bad)


def test_the_library_imports_no_front_end() -> None:
    """Serving is a front end's job: nothing outside cli/, mcp/ and console/ imports any of
    them."""
    bad = []
    for path in sources():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("cli/", "mcp/", "console/")) or rel in ("__main__.py",):
            continue
        for module, line in imports_of(path):
            if any(_is(module, front) for front in FRONT_ENDS):
                bad.append(f"{rel}:{line} imports {module}")
    assert not bad, "the library must not import a front end:\n" + "\n".join(bad)


def test_the_checker_sees_a_front_end_crossing(tmp_path: Path) -> None:
    probe = tmp_path / "_cli_probe.py"
    probe.write_text("from pcp_cli.mcp.server import build_server\n"
                     "from pcp_cli.mcp import commands\n"
                     "def f():\n    from pcp_cli.mcp import commands\n")
    bad = front_end_crossings("cli", [probe])
    assert len(bad) == 2 and "pcp_cli.mcp.server" in bad[0]
    console = tmp_path / "_console_probe.py"
    console.write_text("def f():\n    from pcp_cli.mcp import commands\n"
                       "    from pcp_cli.mcp.audit import AuditLog\n"
                       "    from pcp_cli.cli.output import text\n")
    bad = front_end_crossings("console", [console])
    assert len(bad) == 2 and "pcp_cli.mcp.audit" in bad[0] and "pcp_cli.cli" in bad[1]


@pytest.mark.parametrize("library", sorted(OWNERS))
def test_third_party_library_stays_in_its_layer(library: str) -> None:
    bad = []
    for path in sources():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(OWNERS[library]):
            continue
        for module, line in imports_of(path):
            if module == library or module.startswith(library + "."):
                bad.append(f"{rel}:{line} imports {module}")
    assert not bad, f"{library} belongs in {OWNERS[library]}:\n" + "\n".join(bad)


def test_errors_module_imports_nothing_from_the_package() -> None:
    modules = [m for m, _ in imports_of(PACKAGE / "errors.py")]
    assert not [m for m in modules if m.startswith("pcp_cli")]


def test_the_checker_sees_a_crossing(tmp_path: Path) -> None:
    """The checker itself can fail: a relative import of the store from cli is caught."""
    fake = tmp_path / "_layer_probe.py"
    fake.write_text("from ..store import store\nfrom pcp_cli.upkeep.doctor import check\n")
    modules = [m for m, _ in imports_of(fake, package="pcp_cli.cli")]
    assert "pcp_cli.store" in modules and "pcp_cli.upkeep.doctor" in modules


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = ("pcp_cli", *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _static_targets(node: ast.AST, package: str, names: dict[str, Path]) -> list[str]:
    """The package modules an `import` / `from ... import` statement names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    module = node.module or ""
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        module = ".".join(base + ([module] if module else []))
    subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in names]
    return subs if len(subs) == len(node.names) else [module, *subs]


def _by_name(node: ast.AST) -> ast.expr | None:
    """The name argument when `node` imports or looks up a module by name at run time:
    `importlib.import_module(x)`, `__import__(x)`, `sys.modules[x]`, `sys.modules.get(x)`."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "import_module" or \
                isinstance(func, ast.Name) and func.id in ("import_module", "__import__"):
            return node.args[0]
        if isinstance(func, ast.Attribute) and func.attr == "get" and _is_sys_modules(func.value):
            return node.args[0]
    if isinstance(node, ast.Subscript) and _is_sys_modules(node.value):
        return node.slice
    return None


def _is_sys_modules(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "modules" and \
        isinstance(node.value, ast.Name) and node.value.id == "sys"


def _named_modules(tree: ast.AST, names: dict[str, Path]) -> dict[str, int]:
    """The package modules a file names in a string ("pcp_cli.x", or "pcp_cli.x:attr")."""
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            module = node.value.partition(":")[0]
            if module in names:
                found.setdefault(module, node.lineno)
    return found


def import_graph(paths: list[Path], root: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """module -> {package module it imports: line}, from every import in the file: those
    inside functions and under `if TYPE_CHECKING:` included, and those made by name at run
    time (`importlib.import_module`, `__import__`, `sys.modules`). A name given as a string is
    an edge to that module; a name held in a variable is an edge to every package module the
    file names in a string, or the modules of its own folder that it imports name (a table of
    modules kept beside the code that imports by it, as cli/shared.py's). `from pkg import
    sub` is an edge to `pkg.sub` when that is a module; the implicit import of a submodule's
    parent package is not an edge (every package's __init__ would otherwise form a circle with
    its own modules)."""
    names = {module_name(p, root): p for p in paths}
    trees = {name: ast.parse(path.read_text("utf-8"), filename=str(path))
             for name, path in names.items()}
    graph: dict[str, dict[str, int]] = {}
    for name, tree in trees.items():
        path = names[name]
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        by_variable: int | None = None
        for node in ast.walk(tree):
            for target in _static_targets(node, package, names):
                if target in names and target != name:
                    edges.setdefault(target, node.lineno)
            argument = _by_name(node)
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                if argument.value in names and argument.value != name:
                    edges.setdefault(argument.value, node.lineno)
            elif argument is not None and by_variable is None:
                by_variable = node.lineno
        if by_variable is not None:
            tables = [name, *(m for m in edges if m.rpartition(".")[0] == package)]
            for table in tables:
                for target in _named_modules(trees[table], names):
                    if target != name:
                        edges.setdefault(target, by_variable)
        graph[name] = edges
    return graph


@functools.cache
def package_graph() -> dict[str, dict[str, int]]:
    """The import graph of pcp_cli itself (parsed once per test process)."""
    return import_graph(sources())


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each
    as one circle `a -> b -> ... -> a` through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    result = []
    for component in found:  # one circle through the component, for the message
        start = min(component)
        path, seen = [start], {start}
        while True:
            nxt = next(iter(sorted(w for w in graph[path[-1]] if w in component and
                                   (w == start or w not in seen))), start)
            path.append(nxt)
            if nxt == start or len(path) > len(component) + 1:
                break
            seen.add(nxt)
        result.append(path)
    return result


def test_no_module_imports_itself_through_a_circle() -> None:
    """A circle made through an import inside a function is still a circle: the lower module
    then knows the upper one. Break it by moving the shared piece down."""
    graph = package_graph()
    found = circles(graph)
    assert not found, "modules import each other in a circle:\n" + "\n".join(
        " -> ".join(f"{m} (line {graph[m][n]})" for m, n in zip(c, c[1:], strict=False))
        for c in found)


def test_the_checker_sees_a_circle_through_importlib(tmp_path: Path) -> None:
    """A module loaded by name is imported all the same: by a string (`import_module`,
    `sys.modules`), or by a variable whose value comes from a table of module names."""
    root = tmp_path / "pcp_cli"
    (root / "low").mkdir(parents=True)
    for init in (root / "__init__.py", root / "low" / "__init__.py"):
        init.write_text("")
    (root / "high.py").write_text("from pcp_cli.low.base import f\n")
    base = root / "low" / "base.py"
    base.write_text("import importlib\n"
                    "def f():\n    return importlib.import_module('pcp_cli.high')\n")
    found = circles(import_graph(sorted(root.rglob("*.py")), root))
    assert found == [["pcp_cli.high", "pcp_cli.low.base", "pcp_cli.high"]]
    base.write_text("import sys\ndef f():\n    return sys.modules.get('pcp_cli.high')\n")
    assert circles(import_graph(sorted(root.rglob("*.py")), root)) == found
    (root / "low" / "table.py").write_text("MODULES = ('pcp_cli.high:run',)\n")
    base.write_text("import importlib\nfrom pcp_cli.low.table import MODULES\n"
                    "def f():\n    for name in MODULES:\n"
                    "        importlib.import_module(name.partition(':')[0])\n")
    assert circles(import_graph(sorted(root.rglob("*.py")), root)) == found
    base.write_text("import importlib\ndef f(name):\n    return importlib.import_module(name)\n")
    assert circles(import_graph(sorted(root.rglob("*.py")), root)) == []


def test_the_checker_sees_the_cli_loop_through_main(tmp_path: Path) -> None:
    """The loop this test was written for: cli/main.py loads command modules by name, and a
    command module importing main.py (inside a function) closes the circle."""
    root = tmp_path / "pcp_cli"
    cli = root / "cli"
    cli.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (cli / "__init__.py").write_text("")
    main = (PACKAGE / "cli" / "main.py").read_text("utf-8")
    (cli / "main.py").write_text(main)
    (cli / "shared.py").write_text((PACKAGE / "cli" / "shared.py").read_text("utf-8"))
    (cli / "search.py").write_text("def f():\n    from pcp_cli.cli.main import SCAN_NOTE\n")
    found = circles(import_graph(sorted(root.rglob("*.py")), root))
    assert ["pcp_cli.cli.main", "pcp_cli.cli.search", "pcp_cli.cli.main"] in found
    (cli / "search.py").write_text("from pcp_cli.cli.shared import SCAN_NOTE\n")
    assert circles(import_graph(sorted(root.rglob("*.py")), root)) == []


# The layers, bottom to top (package folders and top-level modules of pcp_cli): a module
# imports modules of its own layer or below only, any import (in a function, for types, by
# name). Within a layer, no circle (test_no_module_imports_itself_through_a_circle).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "__init__"),  # errors and __version__: nothing of the package
    ("model",),  # the objects, vocabularies, ids, JSON Schemas
    ("config", "audit_anchor", "listen"),  # which store; the audit chain's head; a socket
    ("store", "index", "semantic", "render", "extract"),  # the engines and the pure renderers
    ("query", "adapters", "sync", "upkeep"),  # reads, importers, git, doctor: over the store
    ("api",),  # the library the front ends call
    ("capture",),  # hooks and watched folders, through the api
    ("cli", "mcp", "console", "__main__"),  # the front ends
)


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for number, layer in enumerate(LAYERS):
        if top in layer:
            return number
    raise AssertionError(f"{module} is in no layer: add its folder to LAYERS")


def test_every_import_points_down_the_layers() -> None:
    graph = package_graph()
    bad = [f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)}) at line {line}"
           for m, edges in graph.items() for t, line in edges.items()
           if layer_of(t) > layer_of(m)]
    assert not bad, "an import runs back up:\n" + "\n".join(bad)


def test_the_checker_sees_an_import_back_up(tmp_path: Path) -> None:
    root = tmp_path / "pcp_cli"
    (root / "model").mkdir(parents=True)
    (root / "store").mkdir()
    for init in ("__init__.py", "model/__init__.py", "store/__init__.py"):
        (root / init).write_text("")
    (root / "store" / "layout.py").write_text("")
    (root / "model" / "page.py").write_text("from typing import TYPE_CHECKING\n"
                                            "if TYPE_CHECKING:\n"
                                            "    from pcp_cli.store.layout import Layout\n")
    graph = import_graph(sorted(root.rglob("*.py")), root)
    assert [(m, t) for m, edges in graph.items() for t in edges
            if layer_of(t) > layer_of(m)] == [("pcp_cli.model.page", "pcp_cli.store.layout")]


def test_front_ends_call_the_api_by_its_table() -> None:
    """cli/, mcp/, console/ and capture/ call the library as `api.<name>` (the table in
    pcp_cli/api/__init__.py), never an api module: where a name lives can change without them
    knowing."""
    graph = package_graph()
    bad = [f"{m} imports {t} (line {line})" for m, edges in graph.items()
           for t, line in edges.items()
           if m.split(".")[1] in ("cli", "mcp", "console", "capture")
           and t.startswith("pcp_cli.api.")]
    assert not bad, "\n".join(bad)


def test_no_command_module_imports_the_cli_entry() -> None:
    """cli/main.py builds the app from the command modules; they share what they need through
    cli/shared.py, never by importing main.py back."""
    graph = package_graph()
    bad = [m for m, edges in graph.items() if "pcp_cli.cli.main" in edges
           and m not in ("pcp_cli.cli", "pcp_cli.__main__")]
    assert not bad, bad


def test_source_parsers_sit_below_the_facade() -> None:
    """adapters/ imports no api module, and api/profile.py does not import the api's table."""
    graph = package_graph()
    bad = [f"{m} imports {t} (line {line})" for m, edges in graph.items()
           for t, line in edges.items()
           if (_is(m, "pcp_cli.adapters") and _is(t, "pcp_cli.api"))
           or (m == "pcp_cli.api.profile" and t == "pcp_cli.api")]
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_circle_through_a_function(tmp_path: Path) -> None:
    root = tmp_path / "pcp_cli"
    (root / "low").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "low" / "__init__.py").write_text("from pcp_cli.low import base\n")
    (root / "low" / "base.py").write_text("def f():\n    from pcp_cli import high\n")
    (root / "high.py").write_text("from pcp_cli.low.base import f\n")
    found = circles(import_graph(sorted(root.rglob("*.py")), root))
    assert found == [["pcp_cli.high", "pcp_cli.low.base", "pcp_cli.high"]]


# The store's engine, bottom to top: each module imports none above it (not even for types).
STORE_ENGINE = ("pcp_cli.store.writes", "pcp_cli.store.folder", "pcp_cli.store.refresh",
                "pcp_cli.store.store", "pcp_cli.store.lifecycle")


def test_the_store_engine_is_layered() -> None:
    """The write engine (writes) under the folder's reads (folder), under the hand-edit
    recorder (refresh), under the Store's write API (store), under relations and deletion
    (lifecycle): nothing is bound into the Store from a module that names it."""
    graph = package_graph()
    bad = [f"{low} imports {high} (line {graph[low][high]})"
           for i, low in enumerate(STORE_ENGINE) for high in STORE_ENGINE[i + 1:]
           if high in graph[low]]
    assert not bad, "\n".join(bad)


def error_classes() -> dict[str, tuple[str, int]]:
    """Every subclass of PcpError in the package: class name -> (file under pcp_cli/, line)."""
    bases: dict[str, tuple[str, list[str], int]] = {}
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                         for b in node.bases]
                bases[f"{path.relative_to(PACKAGE).as_posix()}:{node.name}"] = (
                    node.name, names, node.lineno)
    found = {"PcpError": ("errors.py", 0)}
    while True:
        more = {name: (where.partition(":")[0], line)
                for where, (name, parents, line) in bases.items()
                if name not in found and any(p in found for p in parents)}
        if not more:
            return found
        found.update(more)


def test_each_error_lives_where_it_is_raised_and_errors_py_says_which() -> None:
    """An error class outside errors.py is raised in its own module and listed in errors.py's
    docstring under that module (and the list names no class that is not there)."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "errors.py").read_text("utf-8"))) or ""
    listed = {(where, name) for where, names in re.findall(r"^- (\S+\.py): (.+)$", doc, re.M)
              for name in re.findall(r"\b([A-Z]\w+)\b(?! \()", re.sub(r"\(.*?\)", "", names))}
    outside = {(where, name) for name, (where, _) in error_classes().items()
               if where != "errors.py"}
    assert outside == listed, (f"not listed in errors.py: {sorted(outside - listed)}; "
                               f"listed but not there: {sorted(listed - outside)}")
    for where, name in sorted(outside):
        source = (PACKAGE / where).read_text("utf-8")
        assert re.search(rf"\b{name}\(", source.replace(f"class {name}(", "")), \
            f"{where} defines {name} but never raises it: move it where it is raised"
