"""whoosh stays inside pcp_cli/index, and importing the package does not load it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pcp_cli"


def test_importing_the_index_package_does_not_import_whoosh() -> None:
    code = (
        "import sys, pcp_cli.index as i; "
        "i.IndexDoc, i.IndexFilter, i.make_snippet; "
        "assert 'whoosh' not in sys.modules, sorted(m for m in sys.modules if 'whoosh' in m)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)


def test_only_the_index_package_imports_whoosh() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if (PACKAGE / "index") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "whoosh" or n.startswith("whoosh.") for n in names):
                offenders.append(str(path))
    assert offenders == []


def test_public_modules_other_than_the_engine_do_not_import_whoosh_at_top() -> None:
    for name in ("__init__.py", "types.py", "text.py"):
        tree = ast.parse((PACKAGE / "index" / name).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ImportFrom | ast.Import):
                mods = (
                    [node.module]
                    if isinstance(node, ast.ImportFrom)
                    else [a.name for a in node.names]
                )
                assert not any(m and m.startswith("whoosh") for m in mods), name
