"""The search index: the only part of pcp that knows whoosh, and always rebuildable.

Callers hand in plain `IndexDoc`s and get back `IndexHit`s. Importing this package does not
import whoosh; `SearchIndex` loads it on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pcp_cli.index.text import make_snippet, query_words
from pcp_cli.index.types import (
    FORMAT_VERSION,
    IndexDoc,
    IndexFilter,
    IndexHit,
    IndexNeedsRebuild,
    IndexStamp,
)

if TYPE_CHECKING:
    from pcp_cli.index._whoosh import SearchIndex

__all__ = [
    "FORMAT_VERSION",
    "IndexDoc",
    "IndexFilter",
    "IndexHit",
    "IndexNeedsRebuild",
    "IndexStamp",
    "SearchIndex",
    "make_snippet",
    "query_words",
]


def __getattr__(name: str) -> Any:
    if name == "SearchIndex":
        from pcp_cli.index._whoosh import SearchIndex

        return SearchIndex
    raise AttributeError(name)
