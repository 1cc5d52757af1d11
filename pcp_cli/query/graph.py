"""Relations as a graph: a cached read of `relations/`, and bounded walks in both directions.

A walk never crosses into a page the caller may not read: `visible(page_id)` decides, and a
page it refuses is neither returned nor walked through. Walks are bounded in depth and in the
number of pages they reach.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pcp_cli.model import search_request
from pcp_cli.model.page import Relation
from pcp_cli.query.asof import AsOf, stamp_key

MAX_DEPTH = search_request.MAX_DEPTH  # what a search request and `pcp related` accept
MAX_PAGES = 200
CACHE_NAME = "relations-cache.json"


def load_relations(store: Any) -> list[Relation]:
    """Every relation of the store (as of the view's moment, for an as-of view), oldest first.

    Read through a cache under `.pcp/` that holds while the relations folder is unchanged
    (relation files are immutable: adding or removing one changes the folder)."""
    real = store.store if isinstance(store, AsOf) else store
    folder = real.layout.relations
    try:
        st = os.stat(folder)
    except OSError:
        return []
    key = [st.st_mtime_ns, st.st_nlink, len(os.listdir(folder))]
    cache = real.layout.local / CACHE_NAME
    relations: list[Relation] | None = None
    try:
        data = json.loads(cache.read_bytes())
        if data.get("key") == key:
            relations = [Relation.from_dict(r) for r in data["relations"]]
    except (OSError, ValueError, KeyError, TypeError):
        relations = None
    if relations is None:
        relations = real.relations()
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f".{CACHE_NAME}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"key": key, "relations": [r.to_dict() for r in
                                                                 relations]}), "utf-8")
            os.replace(tmp, cache)
        except OSError:
            pass  # a cache, nothing more
    if isinstance(store, AsOf):
        relations = [r for r in relations if stamp_key(r.created_at) <= store.as_of]
    return relations


def pages_with_relations(store: Any, types: Iterable[str]) -> frozenset[str]:
    """Pages at either end of a relation of one of `types`."""
    wanted = set(types)
    return frozenset(p for r in load_relations(store) if r.relation_type in wanted
                     for p in (r.from_page_id, r.to_page_id))


def adjacency(relations: Sequence[Relation],
              types: Iterable[str] | None) -> dict[str, list[tuple[Relation, str, str]]]:
    wanted = set(types) if types else None
    adj: dict[str, list[tuple[Relation, str, str]]] = {}
    for r in relations:
        if wanted is not None and r.relation_type not in wanted:
            continue
        adj.setdefault(r.from_page_id, []).append((r, r.to_page_id, "outgoing"))
        adj.setdefault(r.to_page_id, []).append((r, r.from_page_id, "incoming"))
    return adj


def walk(adj: dict[str, list[tuple[Relation, str, str]]], starts: Sequence[str], *,
         depth: int, visible: Callable[[str], bool],
         max_pages: int = MAX_PAGES) -> tuple[list[dict[str, Any]], bool]:
    """Breadth-first from `starts` (not returned), both directions, up to `depth` steps.

    Returns the pages reached, nearest first, each with how it was reached, and whether the
    walk stopped at `max_pages`."""
    seen = set(starts)
    frontier = list(starts)
    found: list[dict[str, Any]] = []
    for step in range(1, depth + 1):
        nxt: list[str] = []
        for page_id in frontier:
            for relation, other, direction in adj.get(page_id, ()):
                if other in seen or not visible(other):
                    continue
                seen.add(other)
                if len(found) >= max_pages:
                    return found, True
                found.append({"page_id": other, "depth": step, "from_page_id": page_id,
                              "relation_id": relation.relation_id,
                              "relation_type": relation.relation_type,
                              "direction": direction})
                nxt.append(other)
        frontier = nxt
    return found, False
