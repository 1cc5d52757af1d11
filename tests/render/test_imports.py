"""render/ stays standard-library only, so `pcp export --format micro_prompt` stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pcp_cli.render

HEAVY = ("whoosh", "jsonschema", "mcp", "rich", "typer", "yaml", "numpy", "wordllama")
RENDER = Path(pcp_cli.render.__file__).parent
ALLOWED_PACKAGE_MODULES = (
    "pcp_cli.render",
    "pcp_cli.model.page",
    "pcp_cli.model.vocab",
    "pcp_cli.model.staleness",  # standard library only: a date comparison
    "pcp_cli.errors",
)


def test_importing_render_loads_no_heavy_module():
    code = (
        "import sys, pcp_cli.render as r; r.micro_prompt(None, []); "
        f"print([m for m in sys.modules if m.split('.')[0] in {HEAVY!r}])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=RENDER.parent.parent,
    )
    assert out.stdout.strip() == "[]"


def test_render_imports_only_stdlib_and_the_model():
    for path in RENDER.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.startswith("pcp_cli"):
                    assert name.startswith(ALLOWED_PACKAGE_MODULES), (path.name, name)
                else:
                    assert name.split(".")[0] in sys.stdlib_module_names, (path.name, name)
