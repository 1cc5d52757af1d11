"""The layering rules of STYLE.md, checked on the source with `ast`.

- `pcp_cli/cli` and `pcp_cli/mcp` reach the store only through `pcp_cli.api`.
- Each third-party library lives in one layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pcp_cli"

# third-party top-level module -> the only places (paths relative to pcp_cli/) allowed to import it
OWNERS: dict[str, tuple[str, ...]] = {
    "whoosh": ("index/",),
    "yaml": ("store/frontmatter.py",),
    "jsonschema": ("model/validate.py",),
    "mcp": ("mcp/",),
    "typer": ("cli/",),
    "rich": ("cli/",),
    "click": ("cli/",),
    "numpy": ("semantic/",),
    "wordllama": ("semantic/",),
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
    assert {"api.py", "cli/main.py", "store/store.py", "store/frontmatter.py"} <= names


@pytest.mark.parametrize("front_end", [
    "cli",
    "mcp",
])
def test_front_ends_use_only_the_api(front_end: str) -> None:
    bad = []
    for path in sorted((PACKAGE / front_end).rglob("*.py")):
        for module, line in imports_of(path):
            if module == "pcp_cli.store" or module.startswith("pcp_cli.store."):
                bad.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
            other = "mcp" if front_end == "cli" else "cli"
            if module.startswith(f"pcp_cli.{other}"):
                bad.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
    assert not bad, "go through pcp_cli.api:\n" + "\n".join(bad)


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
    fake.write_text("from ..store import store\nfrom pcp_cli.store.doctor import check\n")
    modules = [m for m, _ in imports_of(fake, package="pcp_cli.cli")]
    assert "pcp_cli.store" in modules and "pcp_cli.store.doctor" in modules
