"""A stand-in for `pcp serve` over an in-memory backend, for the end-to-end MCP tests.

Run as a script: `python fake_backend_server.py [--client-id ID] [--scope S]... [--allow-write]`
with `PCP_STORE` pointing at a folder holding `pcp.yaml`. It resolves the grant, opens the audit
log and serves over stdio exactly as `pcp serve` will; only the backend is fake. The backend
misbehaves on purpose (prints to stdout) to prove the protocol stream stays clean.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from pcp_cli.errors import RevisionConflict
from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.grants import Grant, resolve_grant, scope_allows

PAGES: dict[str, dict[str, Any]] = {
    "pg_role": {
        "namespace": "user:ada-lumen", "type": "keystone", "title": "Role",
        "payload": "Ada is a hydrologist who builds tide models.", "sensitivity": "low",
        "origin": "approved", "revision_id": "rev_role1",
    },
    "pg_health": {
        "namespace": "user:ada-lumen", "type": "note", "title": "Health",
        "payload": "Ada has a tide-pool allergy.", "sensitivity": "high",
        "origin": "user_stated", "revision_id": "rev_health1",
    },
    "pg_tide": {
        "namespace": "project:tidewatch", "type": "document", "title": "Tidewatch design",
        "payload": "Tidewatch predicts tides. " + "0123456789" * 300, "sensitivity": "low",
        "origin": "imported", "revision_id": "rev_tide1",
    },
    "pg_secret": {
        "namespace": "project:secret", "type": "note", "title": "Secret tide plan",
        "payload": "The secret tide plan.", "sensitivity": "low",
        "origin": "user_stated", "revision_id": "rev_secret1",
    },
}


class FakeBackend:
    def __init__(self) -> None:
        self.pages = {k: dict(v) for k, v in PAGES.items()}
        self.counter = 0

    def _visible(self, grant: Grant, suppressed: frozenset[str], sensitive: bool = True):
        for page_id, page in self.pages.items():
            if page_id in suppressed or not scope_allows(grant, page["namespace"]):
                continue
            if page.get("lifecycle") == "tombstoned":
                continue
            if page["sensitivity"] == "high" and not (sensitive and grant.allow_sensitive):
                continue
            yield page_id, page

    def visible_page_ids(self, grant, ids, *, suppressed):
        visible = dict(self._visible(grant, suppressed))
        return frozenset(i for i in ids if i in visible)

    def get_profile(self, grant, *, format, suppressed, **_as_of):
        if format == "json":
            return {"schema_version": "1.0", "name": "Ada Lumen", "profession": "hydrologist"}
        return {"format": format, "text": "Ada Lumen, hydrologist.\n(profile as of 2026-11-30)"}

    def search(self, grant, request):
        scopes, include_sensitive = request.scopes, request.include_sensitive
        narrowed = Grant(grant.client_id, grant.actor, scopes, grant.allow_sensitive, False,
                         grant.granted_by)
        results = []
        for page_id, page in self._visible(narrowed, request.suppressed, include_sensitive):
            if request.query.lower() not in (page["title"] + " " + page["payload"]).lower():
                continue
            if request.types and page["type"] not in request.types:
                continue
            results.append({
                "id": page_id, "type": page["type"], "origin": page["origin"],
                "snippet": page["payload"][:80], "score": 0.5, "source_system": "pcp",
                "source_id": page_id,
            })
        return {
            "results": results[:request.served],
            "filters_applied": {"limit": request.served, "scopes": list(scopes),
                                "include_sensitive": include_sensitive},
        }

    def get_timeline(self, grant, *, from_, to, query, limit, suppressed, **_paging):
        return {"events": [{"id": "ev1", "date": "2020-05", "summary": "Moved to the coast"}]}

    def stats(self, grant, *, suppressed, **_as_of):
        # Misbehave: a library that prints must not corrupt the protocol stream.
        print("stray print from the backend")
        os.write(1, b"stray raw write to fd 1\n")
        return {"pages": sum(1 for _ in self._visible(grant, suppressed, False))}

    def describe_capabilities(self, grant, **_operations):
        return {"format": "pcp-store/1", "index": "fake"}

    def list_scopes(self, grant, *, suppressed, **_paging):
        counts: dict[str, int] = {}
        for _, page in self._visible(grant, suppressed, False):
            counts[page["namespace"]] = counts.get(page["namespace"], 0) + 1
        return {"scopes": [{"namespace": n, "pages": c} for n, c in sorted(counts.items())]}

    def related_pages(self, grant, *, page_id, relation_types, depth, suppressed, **_as_of):
        return {"page_id": page_id, "pages": [], "count": 0}

    def read_pages(self, grant, *, ids, views, suppressed, **_as_of):
        visible = dict(self._visible(grant, suppressed))
        pages = []
        for page_id in ids:
            if page_id not in visible:
                continue
            page = visible[page_id]
            entry: dict[str, Any] = {"page_id": page_id, "revision_id": page["revision_id"]}
            if "manifest" in views:
                entry["manifest"] = {"title": page["title"], "type": page["type"],
                                     "namespace": page["namespace"]}
            if "payload" in views:
                entry["payload"] = page["payload"]
            pages.append(entry)
        return {"pages": pages, "not_found": [i for i in ids if i not in visible]}

    def write_page(self, grant, *, content, title, type, namespace, tags, idempotency_key):
        self.counter += 1
        page_id = f"pg_new{self.counter}"
        self.pages[page_id] = {
            "namespace": namespace or "user:ada-lumen", "type": type, "title": title or "",
            "payload": content, "sensitivity": "low", "origin": "generated",
            "revision_id": f"rev_new{self.counter}",
        }
        return {"page_id": page_id, "revision_id": f"rev_new{self.counter}"}

    def revise_page(self, grant, *, page_id, expected_revision_id, content, title):
        page = self.pages[page_id]
        if page["revision_id"] != expected_revision_id:
            raise RevisionConflict(
                f"page {page_id} has moved on from {expected_revision_id}",
                expected=expected_revision_id, current=page["revision_id"],
                hint="read the page again and revise its current revision",
            )
        page["revision_id"] = expected_revision_id + "x"
        return {"page_id": page_id, "revision_id": page["revision_id"]}

    def link_pages(self, grant, *, from_id, relation_type, to_id):
        return {"relation_id": "rel_1", "from_id": from_id, "to_id": to_id}

    def tombstone_page(self, grant, *, page_id, reason):
        if page_id == "pg_role" and reason == "boom":
            raise RuntimeError("secret internal detail /etc/shadow")
        self.pages[page_id]["lifecycle"] = "tombstoned"
        return {"page_id": page_id, "lifecycle_status": "tombstoned"}

    def propose_keystone(self, grant, *, content, category, confidence):
        return {"page_id": "pg_proposed", "review_status": "proposed"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--client-id")
    parser.add_argument("--scope", action="append")
    parser.add_argument("--allow-write", action="store_true")
    parser.add_argument("--max-payload-chars", type=int, default=1000)
    args = parser.parse_args()
    store = Path(os.environ["PCP_STORE"])
    manifest = yaml.safe_load((store / "pcp.yaml").read_text())
    grant = resolve_grant(manifest, args.client_id, args.scope, args.allow_write)
    for notice in grant.notices:
        print(f"pcp serve: {notice}", file=sys.stderr)

    from pcp_cli.mcp.server import build_server, run_stdio

    server = build_server(FakeBackend(), grant, AuditLog(store),
                          max_payload_chars=args.max_payload_chars)
    run_stdio(server)


if __name__ == "__main__":
    main()
