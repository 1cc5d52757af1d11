"""The SDK costs about half a second to import: only the server module may load it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import pcp_cli.mcp.audit, pcp_cli.mcp.backend, pcp_cli.mcp.grants, pcp_cli.mcp.session
import pcp_cli.mcp.tools
heavy = sorted(m for m in sys.modules
               if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'anyio', 'starlette'))
print(heavy)
"""


def test_sdk_free_modules_do_not_import_the_sdk():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"
