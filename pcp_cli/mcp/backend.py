"""What the MCP server needs from the library: one method per tool.

The server validates arguments, enforces the grant where it can (scopes narrowed, sensitive
material and writes gated, out-of-grant and suppressed ids answered "not found"), audits the call
and renders the result. The backend does the work, over the store, *within the grant it is
given*: it must never return, count or mention a page outside `grant.scopes`, a suppressed page,
or high-sensitivity material when `include_sensitive` is false. Every method returns a JSON-able
dict and raises `pcp_cli.errors.PcpError` subclasses for expected failures.

The real implementation lives in `pcp_cli/api/`; tests use a small in-memory one.
"""

from __future__ import annotations

from typing import Any, Protocol

from pcp_cli.mcp.grants import Grant
from pcp_cli.model.search_request import SearchRequest

JSON = dict[str, Any]


class Backend(Protocol):
    # -- identity ------------------------------------------------------------------------------
    def visible_page_ids(
        self, grant: Grant, ids: tuple[str, ...], *, suppressed: frozenset[str]
    ) -> frozenset[str]:
        """The subset of `ids` that exist, are inside the grant and are not suppressed."""
        ...

    # -- read-only query profile (Portable Context Protocol §4) ---------------------------------
    def get_profile(self, grant: Grant, *, format: str, suppressed: frozenset[str],
                    as_of: str | None = None) -> JSON:
        """`format` "json": the strict profile object. "markdown" / "micro_prompt":
        `{"format": ..., "text": ...}` (the micro_prompt never holds high-sensitivity material
        and is the fixed "no profile" string when empty)."""
        ...

    def search(self, grant: Grant, request: SearchRequest) -> JSON:
        """`{"results": [search_result...], "filters_applied": {...}, "next_cursor"}` for a
        SearchRequest (pcp_cli/model/search_request.py) whose `scopes` are already the
        intersection of the grant and the call's, whose `include_sensitive` is already false
        unless the grant allows sensitive material, and whose `suppressed` pages are the
        session's."""
        ...

    def get_timeline(
        self,
        grant: Grant,
        *,
        from_: str | None,
        to: str | None,
        query: str | None,
        limit: int,
        suppressed: frozenset[str],
        cursor: str | None = None,
        as_of: str | None = None,
        include_sensitive: bool = False,
    ) -> JSON:
        """`{"events": [timeline_event...], "filters_applied", "next_cursor"}`; dates are
        partial ISO dates. High-sensitivity and unclassified events only when the grant allows
        it and `include_sensitive` asks."""
        ...

    def stats(self, grant: Grant, *, suppressed: frozenset[str],
              as_of: str | None = None, include_sensitive: bool = False) -> JSON:
        """High-level counts and time range, counting only what the grant can see (sensitive
        pages only when it allows them and `include_sensitive` asks)."""
        ...

    # -- Paged Context Protocol reads -----------------------------------------------------------
    def describe_capabilities(self, grant: Grant, *,
                              operations: Any = None) -> JSON:
        """What the store supports (format, index availability, ...); the server adds the tools,
        limits and the grant."""
        ...

    def list_scopes(self, grant: Grant, *, suppressed: frozenset[str], limit: int | None = None,
                    cursor: str | None = None) -> JSON:
        """`{"scopes": [{"namespace": ..., "pages": n}, ...]}` for namespaces inside the grant."""
        ...

    def read_pages(
        self,
        grant: Grant,
        *,
        ids: tuple[str, ...],
        views: tuple[str, ...],
        suppressed: frozenset[str],
        as_of: str | None = None,
    ) -> JSON:
        """`{"pages": [{"page_id": ..., "revision_id": ..., <view>: ...}], "not_found": [...]}`,
        pages in the order of `ids`. `payload` is the whole body as a string: the server pages
        it. Invisible ids go to `not_found`, exactly like ids that do not exist."""
        ...

    def related_pages(self, grant: Grant, *, page_id: str, relation_types: tuple[str, ...],
                      depth: int, suppressed: frozenset[str], as_of: str | None = None) -> JSON:
        """`{"page_id", "pages": [{"page_id", "depth", "via": {...}, ...}], ...}`: the pages
        the start page's relations reach, never outside the grant. NotFound for a start page
        the grant cannot read, alike a page that does not exist."""
        ...

    # -- writes (registered only when grant.allow_write) ----------------------------------------
    def write_page(
        self,
        grant: Grant,
        *,
        content: str,
        title: str | None,
        type: str,
        namespace: str | None,
        tags: tuple[str, ...],
        idempotency_key: str | None,
        derived_from: tuple[str, ...] = (),
    ) -> JSON:
        """A new page, provenance actor `grant.actor`/`grant.client_id`. `namespace` None means
        the store's default namespace if the grant includes it. A `summary` names the pages
        (visible to the grant) it was derived from. Returns its manifest."""
        ...

    def revise_page(
        self,
        grant: Grant,
        *,
        page_id: str,
        expected_revision_id: str,
        content: str | None,
        title: str | None,
    ) -> JSON:
        """A new revision; raises RevisionConflict when the head is not `expected_revision_id`."""
        ...

    def link_pages(self, grant: Grant, *, from_id: str, relation_type: str, to_id: str) -> JSON:
        """A typed relation between the current revisions of two visible pages."""
        ...

    def tombstone_page(self, grant: Grant, *, page_id: str, reason: str | None) -> JSON:
        """Lifecycle -> tombstoned (history kept; this is not delete)."""
        ...

    def propose_keystone(
        self, grant: Grant, *, content: str, category: str | None, confidence: float | None,
        stale_after: str | None = None,
    ) -> JSON:
        """A keystone with review_status "proposed": never served until the person affirms it.
        `stale_after` (YYYY-MM-DD): the day the claim would go stale."""
        ...

    def ingest_event(self, grant: Grant, *, event: JSON) -> JSON:
        """IngestEvent: one raw event, stored once per (client, idempotency key) and rolled up
        into its conversation page. Raises InvalidInput for an event the schema refuses and
        IdempotencyConflict for a key re-used with other content."""
        ...
