"""The search index and the semantic vectors: building them, saying which engine, and catching
up after an import (`after_import`)."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from pcp_cli.store.store import Store


def search_engine(store: Store) -> dict[str, Any]:
    """Which search engine this device uses for the store: `{engine, chosen_by, index}`, where
    `chosen_by` is "default", "PCP_INDEX_ENGINE", "the index it built" (an index of the other
    engine, built before tantivy was the default) or the choice file's store-relative path, and
    `index` is what the index folder holds (`index.index_state`: which engine built it, and
    whether this one can read it), and `build` the build running now (`{running, pid,
    engine, started_at, phase, documents_done, documents_total, percent}`) or None;
    `tantivy_installed`: whether the fast engine's package (the `fast` extra) is here."""
    from pcp_cli import index as engines
    from pcp_cli.index import chosen_engine, index_state
    from pcp_cli.query.index_build import current_build
    from pcp_cli.query.index_sync import index_dir

    name, where = chosen_engine(index_dir(store))
    if where not in ("default", "PCP_INDEX_ENGINE", "the index it built"):
        where = os.path.relpath(where, store.root).replace(os.sep, "/")
    return {"engine": name, "chosen_by": where, "index": index_state(index_dir(store)),
            "build": current_build(store),
            "tantivy_installed": engines.DEFAULT_ENGINE == "tantivy"}


def index_store(store: Store, *, rebuild: bool = False, progress: Any = None,
                text: bool = True, vectors: bool | None = None,
                rebuild_vectors: bool | None = None,
                vector_progress: Any = None, engine: str | None = None) -> dict[str, Any]:
    """`pcp index [--rebuild] [--engine NAME]`: bring the search index and the semantic vectors
    up to date (or build them from scratch).

    `engine` ("whoosh" or "tantivy") records this device's search engine in the index folder
    and rebuilds the index with it when it is not already the one in use; UsageError for an
    unknown name, EngineUnavailable (exit status 7) when its package is not installed, both
    before anything is written. A build of the other engine in progress (the background one
    the first search on a big store starts) is stopped and replaced, and the report says so
    under `replaced_build`; while this builds, it holds the build lock and keeps the state
    `pcp status` shows (query/index_build.py).

    Returns `{rebuilt, reason, updated, removed, stale, documents, engine, vectors}`: the text
    index's
    report, and under `vectors` the vector index's `{rebuilt, reason, embedded, fields_only,
    removed, stale, documents, chunks, model}` — or `{installed: false, hint}` without the
    semantic extra, `{installed: true, skipped: true}` with it and `vectors=False`.
    `vectors=None` means "if the extra is installed"; `rebuild_vectors=None` follows `rebuild`.
    `progress(n)` / `vector_progress(n)` are called during a rebuild.
    """
    from pcp_cli.errors import IndexUnavailable
    from pcp_cli.semantic import INSTALL_HINT, installed

    replaced = None
    held: Any = contextlib.nullcontext()
    if engine is not None and text:
        from pcp_cli.index import choose_engine
        from pcp_cli.query import index_build
        from pcp_cli.query.index_sync import close_all, index_dir

        engine = choose_engine(index_dir(store), engine)
        close_all()  # an index this process holds open may be the other engine's
        # A build of the other engine in progress (the first search's, in the background) is
        # stopped and replaced; one of this engine is waited for briefly, then exit 7.
        running = index_build.current_build(store)
        if running is not None and running.get("engine") != engine:
            replaced = index_build.stop_build(store)
        held = index_build.building(store, engine, wait=10.0)
    with held as building:
        # Comparing every file's content hash, not only its stat: an edit that kept size,
        # mtime and ctime (only a clock change makes one) is picked up (and recorded) here.
        if building is not None:
            building.phase("catalog")
        store.refresh("verify")
        if building is not None:
            building.phase("index", store.catalog.count())
            progress = _both(progress, building.progress)
        data = _index_text(store, rebuild, progress) if text else {}
    if replaced is not None:
        data["replaced_build"] = {key: replaced[key] for key in
                                  ("pid", "engine", "started_at", "phase", "documents_done",
                                   "documents_total", "percent")}
    if vectors is None:
        vectors = installed()
    if not vectors:
        data["vectors"] = ({"installed": True, "skipped": True} if installed()
                           else {"installed": False, "hint": INSTALL_HINT})
        return data
    from pcp_cli.query.vector_sync import catch_up as vectors_catch_up
    from pcp_cli.query.vector_sync import open_vectors

    with open_vectors(store) as (vix, embedder):
        vreport = vectors_catch_up(store, vix, embedder,
                                   force_rebuild=rebuild if rebuild_vectors is None
                                   else rebuild_vectors, progress=vector_progress,
                                   count=True)
    if vreport.stale:
        raise IndexUnavailable("The vector index is being written by another pcp process.",
                               hint="Wait for it to finish and run `pcp index` again.")
    data["vectors"] = vreport.to_dict()
    return data


def _both(first: Any, second: Any) -> Any:
    """One progress callback calling two (the first may be None)."""
    if first is None:
        return second

    def both(done: int) -> None:
        first(done)
        second(done)
    return both


def _index_text(store: Store, rebuild: bool, progress: Any) -> dict[str, Any]:
    """The text index's part of `index_store`: its report and the engine that holds it."""
    from pcp_cli.errors import IndexUnavailable
    from pcp_cli.index import engine_of
    from pcp_cli.query.index_sync import catch_up, open_index

    with open_index(store) as ix:
        report = catch_up(store, ix, force_rebuild=rebuild, progress=progress)
        engine_used = engine_of(ix)
        if report.stale:
            raise IndexUnavailable(
                "The search index is being written by another pcp process.",
                hint="Wait for it to finish and run `pcp index` again.")
        report.documents = ix.doc_count()
    data = report.to_dict()
    data["engine"] = engine_used
    return data


def vectors_missing(store: Store) -> bool:
    """True when the store has no semantic vectors yet (the next semantic search embeds it)."""
    from pcp_cli.query.vector_sync import vectors_exist

    return not vectors_exist(store)


def index_pages_count(store: Store) -> int:
    """How many pages a rebuild indexes (for a progress bar's total)."""
    return store.catalog.count()


def after_import(store: Store) -> None:
    """Called by `pcp import` after it wrote: bring the search index up to date now, so the
    first search after a large import does not pay for it. Only if the index already exists
    (a store nobody searches never builds one)."""
    from pcp_cli.errors import IndexUnavailable, PcpError
    from pcp_cli.query.index_sync import catch_up, index_dir, open_index

    if (index_dir(store) / "meta.json").exists():
        try:
            with open_index(store) as ix:
                catch_up(store, ix)
        except IndexUnavailable:
            pass  # the import itself succeeded; the next search catches up (or says why not)
    from pcp_cli.query.vector_sync import vectors_exist
    from pcp_cli.semantic import installed

    if vectors_exist(store) and installed():
        from pcp_cli.query.vector_sync import catch_up as vectors_catch_up
        from pcp_cli.query.vector_sync import open_vectors

        try:
            with open_vectors(store) as (vix, embedder):
                vectors_catch_up(store, vix, embedder)
        except PcpError:
            pass  # the same: the next semantic search catches up (or says why not)
