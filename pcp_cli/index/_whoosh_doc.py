"""The whoosh document of one page: the value of each field of `_whoosh.make_schema()`.

Its own module because both the engine's incremental writes (`_whoosh.py`) and a rebuild's
writers (`_whoosh_build.py`) make these documents, and the engine imports the build module.
"""

from __future__ import annotations

from typing import Any

from pcp_cli.index.query import ns_tree
from pcp_cli.index.types import IndexDoc


def fields(doc: IndexDoc) -> dict[str, Any]:
    return {
        "path": doc.path,
        "page_id": doc.page_id,
        "revision_id": doc.revision_id,
        "title": doc.title,
        "body": f"{doc.title}\n{doc.body}",
        "tag": ",".join(t.replace(",", " ") for t in doc.tags),
        "type": doc.type,
        "namespace": doc.namespace,
        "ns_tree": ns_tree(doc.namespace),
        "origin": doc.origin or "generated",
        "sensitivity": doc.sensitivity,
        "lifecycle": doc.lifecycle_status,
        "review": doc.review_status,
        "timestamp": doc.timestamp,
        "hit": (
            doc.page_id,
            doc.path,
            doc.revision_id,
            doc.type,
            doc.namespace,
            doc.origin or "generated",
            doc.sensitivity,
            doc.lifecycle_status,
            doc.review_status,
            doc.timestamp,
            doc.mtime_ns,
            doc.title,
        ),
    }
