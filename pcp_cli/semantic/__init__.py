"""Search by meaning: the embedder, the chunker and the vector index (`pip install
'pcp-cli[semantic]'`).

The only part of pcp that imports numpy or an embedding model, and only when a semantic or
hybrid search (or a vector rebuild) runs: importing this package loads neither. Without the
extra, asking for them raises `SemanticUnavailable`, which says how to install it; nothing
silently falls back to keyword search.
"""

from __future__ import annotations

import importlib.util

INSTALL_HINT = "install the extra: pip install 'pcp-cli[semantic]' (about 40 MB, no network " \
    "needed after that); or search with --mode text"
# The modules the extra brings; all must import for the semantic channel to work.
EXTRA_MODULES = ("numpy", "wordllama")


def installed() -> bool:
    """True when the extra's modules can be imported (checked without importing them)."""
    for name in EXTRA_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):  # a module set to None in sys.modules, a bad spec
            return False
    return True
