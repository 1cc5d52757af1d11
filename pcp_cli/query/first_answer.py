"""The first `pcp search` on a store without an index: an answer from the files while it builds.

A fresh clone (no `.pcp/`) has neither catalog nor index, and building them reads and parses
every head file: ~30 s for 10,000 pages on a quiet machine, minutes under load. When the store
holds at least `SCAN_FIRST_MIN_PAGES` head files and the search is a plain one (words only, no
cursor, no filters beyond types, scopes, sensitivity and superseded pages), `pcp search`
instead

1. starts the build in a background process (one at a time: it holds the flock on
   `.pcp/index-build.lock`; what it does goes to `.pcp/index-build.log`; see
   query/index_build.py), and
2. answers from a bounded scan of the head files: the pages whose title or body holds the
   words as case-insensitive substrings (not the index's word analysis), those holding every
   word first, then those holding some, each group in path order; at most `limit`, reading
   files for at most `SCAN_BUDGET_S` seconds (`filters_applied.scan` says how far it got).

The scan obeys the same safeguards as the index, before anything is answered: every candidate
file is parsed exactly as the catalog parses it, and only pages that are current (or, with
include_superseded, superseded or archived; never tombstoned), affirmed (never a proposal), in
the caller's scopes, of the asked types and of a served sensitivity are kept; a file that is
not yet a page (no frontmatter, a problem) is skipped. It computes no ranking and says so: no
result has a score, `relevance_scores` is "absent", `index` is "building", and each result's
`match_channel` is "scan". The next search after the build is the usual ranked one.
"""

from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING, Any

from pcp_cli.index import IndexHit
from pcp_cli.index.text import plain_words
from pcp_cli.model import scopes as scope_rule
from pcp_cli.model import staleness, vocab
from pcp_cli.model.page import observed_time
from pcp_cli.model.search_request import SearchFilters, SearchRequest
from pcp_cli.query import search as text_search
from pcp_cli.query import staleness as stale_rule
from pcp_cli.query.index_build import BUILD_LOG, start_build
from pcp_cli.query.index_sync import index_missing
from pcp_cli.store.folder import scan

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

# Below this many head files the build itself takes a few seconds: search waits for it.
SCAN_FIRST_MIN_PAGES = 1000
MIN_PAGES_ENV = "PCP_SCAN_FIRST_MIN_PAGES"  # a different threshold (tests use 1)
SCAN_BUDGET_S = 3.0
_TITLE = re.compile(rb"^title:(.*)$", re.MULTILINE)


def min_pages() -> int:
    try:
        return int(os.environ.get(MIN_PAGES_ENV, SCAN_FIRST_MIN_PAGES))
    except ValueError:
        return SCAN_FIRST_MIN_PAGES


def answer(store: Store, request: SearchRequest) -> dict[str, Any] | None:
    """The scan's search envelope while a background build runs, or None when the normal
    search should run (an index exists, a small store, a query or option the scan cannot
    honour exactly: a mode other than text or auto, a SearchPages filter, a cursor, a past
    moment, a relevance floor). The store need not be refreshed: the scan reads no catalog."""
    query = request.query
    if request.mode not in ("text", "auto") or request.filters != SearchFilters() \
            or request.cursor is not None or request.as_of is not None \
            or request.depth is not None or request.suppressed:
        return None
    plain = plain_words(query)  # a question is its words; syntax needs the index
    if not index_missing(store) or request.min_score is not None or not plain:
        return None
    capped, requested = request.served, request.limit_requested
    types, exclude_types, scopes = request.types, request.exclude_types, request.scopes
    include_sensitive = request.include_sensitive
    include_unclassified = request.include_unclassified
    from pcp_cli.store.files import walk_pages

    files = [(path, stat) for path, stat, _ in walk_pages(store.layout.pages)
             if stat is not None]
    if len(files) < max(1, min_pages()):
        return None
    try:
        build = start_build(store)
    except OSError:  # .pcp/ not writable, no process to spare: build in the foreground
        return None
    words = [w.casefold() for w in plain]
    statuses = text_search.lifecycle_statuses(request.include_superseded)
    exclude_stale = request.exclude_stale
    today = staleness.today()

    def stale(fields: dict[str, Any]) -> bool:
        return fields.get("type") == "keystone" and staleness.is_stale(fields.get("record"),
                                                                       today)

    served = text_search.served_sensitivities(include_sensitive, include_unclassified)

    def admitted(fields: dict[str, Any]) -> bool:
        page_type = fields.get("type") or "note"
        namespace = fields.get("namespace") or store.default_namespace
        return (fields.get("problem") is None and bool(fields.get("page_id"))
                and (fields.get("lifecycle_status") or "active") in statuses
                and (fields.get("review_status") or "affirmed") == "affirmed"
                and (served is None or (fields.get("sensitivity") or vocab.UNCLASSIFIED)
                     in served)
                and (not types or page_type in types) and page_type not in exclude_types
                and (scopes is None or scope_rule.in_scopes(namespace, scopes))
                and not (exclude_stale and stale(fields)))

    every: list[tuple[str, dict[str, Any], str]] = []
    some: list[tuple[str, dict[str, Any], str]] = []
    deadline = time.monotonic() + SCAN_BUDGET_S
    scanned = 0
    stopped = "every file read"
    for path, _stat in files:
        if len(every) >= capped:
            stopped = f"{capped} pages hold every word"
            break
        if time.monotonic() > deadline:
            stopped = f"time budget of {SCAN_BUDGET_S:g} s spent"
            break
        scanned += 1
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        body, haystack = _searchable(raw)
        held = [w in haystack for w in words]
        if not any(held) or (not all(held) and len(some) >= capped):
            continue
        rel = store.layout.rel(path)
        fields = scan(store, rel, raw)
        if admitted(fields):
            (every if all(held) else some).append((rel, fields, body))
    chosen = (every + some)[:capped]
    results = [_result(store, rel, fields, body, query, "every" if n < len(every) else "some")
               for n, (rel, fields, body) in enumerate(chosen)]
    labelled = stale_rule.label(results, {
        fields["page_id"]: date for _rel, fields, _body in chosen
        if fields.get("type") == "keystone"
        and (date := staleness.stale_after(fields.get("record"))) is not None}, today)
    # the namespaces the files' folders stand for (the scan reads no catalog)
    folders = {store.layout.namespace_of(path) or store.default_namespace for path, _ in files}
    filters = text_search.filters_report(
        capped=capped, requested=requested, types=types, exclude_types=exclude_types,
        lifecycle_statuses=statuses,
        include_sensitive=include_sensitive, include_unclassified=include_unclassified,
        min_score=None, unscored=len(results), total=len(results),
        unscored_why="was found by a scan of the files while the index is still being built, "
        "not ranked",
        scopes=scopes, scope_filtering="before_answering",
        namespaces=[ns for ns in folders if scope_rule.in_scopes(ns, scopes)])
    stale_rule.report(filters, exclude_stale=exclude_stale, on=today, labelled=labelled)
    filters.update(
        mode="scan",
        index=f"building: {build}; the next search after it finishes is ranked "
        f"(log: .pcp/{BUILD_LOG})",
        scan={"matching": "case-insensitive substring of the title or body, not the index's "
              "word analysis", "order": "pages holding every word, then some, in path order",
              "files": len(files), "files_read": scanned, "stopped": stopped,
              "complete": stopped != f"time budget of {SCAN_BUDGET_S:g} s spent"},
    )
    return {"schema_version": text_search.SCHEMA_VERSION, "query": query,
            "count": len(results), "filters_applied": filters, "results": results,
            "next_cursor": None}


def _searchable(raw: bytes) -> tuple[str, str]:
    """(the body as text, the casefolded title and body) of a head file's bytes."""
    title = b""
    body = raw
    if raw.startswith(b"---\n"):
        end = raw.find(b"\n---\n", 3)
        if end != -1:
            match = _TITLE.search(raw, 4, end)
            title = match.group(1) if match else b""
            body = raw[end + 5:]
    text = body.decode("utf-8", "replace")
    return text, (title.decode("utf-8", "replace") + "\n" + text).casefold()


def _result(store: Store, rel: str, fields: dict[str, Any], body: str, query: str,
            held: str) -> dict[str, Any]:
    record = fields.get("record") or {}
    hit = IndexHit(
        page_id=fields["page_id"], path=rel, revision_id=fields.get("revision_id") or "",
        type=fields.get("type") or "note",
        namespace=fields.get("namespace") or store.default_namespace,
        origin=fields.get("origin") or "generated",
        sensitivity=fields.get("sensitivity") or vocab.UNCLASSIFIED,
        lifecycle_status=fields.get("lifecycle_status") or "active",
        review_status=fields.get("review_status") or "affirmed",
        timestamp=observed_time(fields.get("type"), record, fields.get("origin"),
                                fields.get("created_at")) or "",
        mtime_ns=0, score_raw=0.0, score=0.0)
    # No catalog entry: the provenance comes from the file's own record, below.
    result = text_search._result(store, hit, body, text_search.query_words(query), False,
                                 None)
    ext = result["extensions"][vocab.EXT_NS]
    ext["score"] = "absent: found by a scan of the files while the index is built, not ranked"
    ext["match_channel"] = "scan"
    ext["words_held"] = held
    if isinstance(record.get("source"), str):
        ext["source"] = record["source"]
    confidence = record.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        ext["confidence"] = confidence
    return result
