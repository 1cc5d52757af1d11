"""The SDK costs about half a second to import: only the server modules (server.py, http.py)
may load it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import pcp_cli.mcp.audit, pcp_cli.mcp.backend, pcp_cli.mcp.grants, pcp_cli.mcp.session
import pcp_cli.mcp.tools, pcp_cli.mcp.store_backend, pcp_cli.mcp.tokens, pcp_cli.mcp.commands
heavy = sorted(m for m in sys.modules
               if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'anyio', 'starlette'))
print(heavy)
"""


def test_sdk_free_modules_do_not_import_the_sdk():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


# model.jsonlimit (the depth bound on arguments), audit_anchor (the audit chain's newest
# hash, which `pcp sync` also reads) and listen (the listening socket `pcp console` opens too)
# are leaf modules that import nothing of the package but errors; model.search_request (the
# SearchRequest pcp_search's schema is generated from, which the session builds) imports only
# errors and model.vocab.
ALLOWED = ("pcp_cli.api", "pcp_cli.render", "pcp_cli.errors", "pcp_cli.config",
           "pcp_cli.model.vocab", "pcp_cli.model.scopes", "pcp_cli.model.validate",
           "pcp_cli.model.jsonlimit", "pcp_cli.model.search_request", "pcp_cli.audit_anchor",
           "pcp_cli.listen", "pcp_cli.mcp")
ALLOWED_FROM_PACKAGE = {"api", "render", "errors", "config", "__version__"}


def test_mcp_reaches_the_store_only_through_the_api():
    """`mcp` -> api / render / errors / config / model.vocab, never the store's internals."""
    import ast

    crossings = []
    for path in sorted((REPO / "pcp_cli" / "mcp").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "pcp_cli":
                    bad = {a.name for a in node.names} - ALLOWED_FROM_PACKAGE
                    crossings += [f"{path.name}: from pcp_cli import {b}" for b in bad]
                    continue
                names = [node.module]
            else:
                continue
            for name in names:
                if name.startswith("pcp_cli") and not any(
                    name == ok or name.startswith(ok + ".") for ok in ALLOWED
                ):
                    crossings.append(f"{path.name}: {name}")
    assert crossings == []
