"""The library both front ends (the CLI and the MCP server) call, as `api.<name>(...)`.

One module per noun: `pages`, `keystones`, `timeline_events`, `profile`, `review` (accepting or
rejecting a proposal), `proposals` (`pcp propose`), `queries` (search, related, stats, scopes),
`index`, `imports` (import and ingest), `sync`, `devices` (the device registry), `monitor`
(what changed, for long-lived processes) and `store` (open, init, doctor, grants). Each function
takes an open Store, does one thing, and returns model objects or the JSON-able dicts that
`--json` and the MCP tools print; nothing here prints or exits, and nothing imports a front end.

This module is a table, not a facade: `api.<name>` imports the module that defines `<name>` on
first use (PEP 562), so `import pcp_cli.api` costs nothing and `pcp --help` loads no store. A
name whose api function would only forward a call points at the function that does the work.
New library functions go in the module of their noun, with a line here.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> "module" (the same name there) or "module:name there"
_TABLE: dict[str, str] = {
    # -- the store: open, create, check (api/store.py) --
    "init_store": "pcp_cli.api.store",
    "open_store": "pcp_cli.api.store",
    "write_file": "pcp_cli.api.store",
    "client_grants": "pcp_cli.api.store",
    "set_client_grants": "pcp_cli.api.store",
    "decode_input": "pcp_cli.store.frontmatter:decode",
    "doctor_finding": "pcp_cli.upkeep.doctor:Finding",
    "check_store": "pcp_cli.upkeep.doctor:check",
    "validate_store": "pcp_cli.upkeep.validate",
    "refuse_damaged": "pcp_cli.upkeep.damage",
    "MAX_FILE_BYTES": "pcp_cli.store.frontmatter",
    "Store": "pcp_cli.store.store",
    "WriteResult": "pcp_cli.store.store",
    "Entry": "pcp_cli.store.catalog",
    # the model's objects and the errors, as api.py's imports offered them
    "Actor": "pcp_cli.model.page",
    "PageState": "pcp_cli.model.page",
    "Relation": "pcp_cli.model.page",
    "Revision": "pcp_cli.model.page",
    "PROFILE_PAGE_ID": "pcp_cli.model.page",
    "now_iso": "pcp_cli.model.page",
    "observed_time": "pcp_cli.model.page",
    "title_from": "pcp_cli.model.page",
    "page_id_for_key": "pcp_cli.model.ids",
    "supersedes_now": "pcp_cli.model.lifecycle",
    "InvalidInput": "pcp_cli.errors",
    "NotFound": "pcp_cli.errors",
    "UsageError": "pcp_cli.errors",
    # -- pages: list, find, read, write, link, edit by hand (api/pages.py) --
    "SERVED_SENSITIVITIES": "pcp_cli.api.pages",
    "READ_VIEWS": "pcp_cli.api.pages",
    "entry_summary": "pcp_cli.api.pages",
    "revision_summary": "pcp_cli.api.pages",
    "list_page_window": "pcp_cli.api.pages",
    "list_pages": "pcp_cli.api.pages",
    "unreadable_pages": "pcp_cli.api.pages",
    "pages_served_from_revisions": "pcp_cli.api.pages",
    "page_entry": "pcp_cli.api.pages",
    "entry_folder_namespace": "pcp_cli.api.pages",
    "page_id_completions": "pcp_cli.api.pages",
    "read_page": "pcp_cli.api.pages",
    "read_passage": "pcp_cli.api.pages",
    "passage_around": "pcp_cli.api.pages",
    "add_page": "pcp_cli.api.pages",
    "revise_page": "pcp_cli.api.pages",
    "link_pages": "pcp_cli.api.pages",
    "link_end": "pcp_cli.api.pages",
    "link_ref": "pcp_cli.api.pages",
    "link": "pcp_cli.api.pages",
    "set_lifecycle": "pcp_cli.api.pages",
    "require_page": "pcp_cli.api.pages",
    "delete_page": "pcp_cli.store.lifecycle:delete",
    # -- retention: the policy, leases, the plan and its collection (api/retention.py) --
    "retention_policy": "pcp_cli.api.retention",
    "set_retention_policy": "pcp_cli.api.retention",
    "retention_plan": "pcp_cli.api.retention",
    "retention_collect": "pcp_cli.api.retention",
    "add_lease": "pcp_cli.api.retention",
    "release_lease": "pcp_cli.api.retention",
    "delete_overrides": "pcp_cli.api.retention",
    "record_edit": "pcp_cli.api.pages",
    "find_page": "pcp_cli.store.refs:resolve",
    "short_page_ids": "pcp_cli.store.refs:short_ids",
    "begin_edit": "pcp_cli.store.editing:begin",
    "check_edit": "pcp_cli.store.editing:check",
    "discard_edit": "pcp_cli.store.editing:finish",
    "new_page_draft": "pcp_cli.store.editing:new_draft",
    # -- keystones (api/keystones.py); accepting a proposed one: api/review.py --
    "add_keystone": "pcp_cli.api.keystones",
    "confirm_keystone": "pcp_cli.api.keystones",
    "edit_keystone": "pcp_cli.api.keystones",
    "is_stale": "pcp_cli.api.keystones",
    "keystone_entries": "pcp_cli.api.keystones",
    "propose_keystone": "pcp_cli.api.keystones",
    # -- timeline events and the timeline (api/timeline_events.py) --
    "add_timeline_event": "pcp_cli.api.timeline_events",
    "timeline": "pcp_cli.api.timeline_events",
    # -- the profile, its exports, distillation (api/profile.py) --
    "EXPORT_FORMATS": "pcp_cli.api.profile",
    "PROFILE_FORMATS": "pcp_cli.api.profile",
    "profile_revision": "pcp_cli.api.profile",
    "set_profile_field": "pcp_cli.api.profile",
    "profile_text": "pcp_cli.api.profile",
    "profile_object": "pcp_cli.api.profile",
    "profile_markdown_text": "pcp_cli.api.profile",
    "profile_without_catalog": "pcp_cli.api.profile",
    "micro_prompt_text": "pcp_cli.api.profile",
    "micro_prompt_report": "pcp_cli.api.profile",
    "micro_prompt_export": "pcp_cli.api.profile",
    "agents_md_export": "pcp_cli.api.profile",
    "write_agents_md": "pcp_cli.api.profile",
    "export_archive": "pcp_cli.api.profile",
    "export_text": "pcp_cli.api.profile",
    "distill_profile": "pcp_cli.api.profile",
    # -- the review queue: accept, reject, take back (api/review.py) --
    "review_queue": "pcp_cli.api.review",
    "rejected_proposals": "pcp_cli.api.review",
    "accept_proposal": "pcp_cli.api.review",
    "reject_proposal": "pcp_cli.api.review",
    "review_decisions": "pcp_cli.api.review",
    "withdraw_decision": "pcp_cli.api.review",
    "undo_decision": "pcp_cli.api.review",
    "queue_groups": "pcp_cli.api.review",
    "evidence_sources": "pcp_cli.api.review",
    # -- a model's change to the person's material, proposed (api/changes.py) --
    "persons_page": "pcp_cli.api.changes",
    "propose_change": "pcp_cli.api.changes",
    "RETIRING_RELATIONS": "pcp_cli.api.changes",
    # -- proposals from the person's own words (api/proposals.py) --
    "propose": "pcp_cli.api.proposals",
    "llm_extractor": "pcp_cli.api.proposals",
    # -- search and the other reads of query/ (api/queries.py) --
    "search": "pcp_cli.api.queries",
    "search_request": "pcp_cli.api.queries",
    "SearchRequest": "pcp_cli.model.search_request",
    "search_before_index": "pcp_cli.api.queries",
    "related": "pcp_cli.api.queries",
    "stats": "pcp_cli.api.queries",
    "offered_operations": "pcp_cli.api.queries",
    "as_of_view": "pcp_cli.query.asof:view",
    "diff_revisions": "pcp_cli.query.related",
    "list_scopes": "pcp_cli.query.stats",
    "capabilities": "pcp_cli.query.stats",
    # -- the search index and vectors (api/index.py) --
    "index_store": "pcp_cli.api.index",
    "search_engine": "pcp_cli.api.index",
    "vectors_missing": "pcp_cli.api.index",
    "index_pages_count": "pcp_cli.api.index",
    "after_import": "pcp_cli.api.index",
    "describe_build": "pcp_cli.query.index_build:describe",
    "FAST_INSTALL": "pcp_cli.index:FAST_INSTALL",
    "index_missing": "pcp_cli.query.index_sync",
    # -- import and ingest (api/imports.py) --
    "IMPORT_FORMATS": "pcp_cli.api.imports",
    "INGEST_SOURCE": "pcp_cli.api.imports",
    "import_path": "pcp_cli.api.imports",
    "import_sources": "pcp_cli.api.imports",
    "markdown_vault": "pcp_cli.api.imports",
    "ingest_text": "pcp_cli.api.imports",
    "ingest_event": "pcp_cli.api.imports",
    "imported_page_id": "pcp_cli.model.ids:page_id_for_key",
    "ingest_event_schema": "pcp_cli.model.ingest:ingest_schema",
    # -- git multi-device sync (api/sync.py) --
    "sync_status": "pcp_cli.api.sync",
    "merge_proposal": "pcp_cli.api.sync",
    "resolve_page": "pcp_cli.api.sync",
    "setup_git": "pcp_cli.api.sync",
    "merge_driver_problem": "pcp_cli.api.sync",
    "merge_head_file": "pcp_cli.api.sync",
    "sync_store": "pcp_cli.sync.sync:sync",
    "strip_merge_proposal": "pcp_cli.sync.heads:strip_proposal",
    # -- the device registry, ~/.pcp/sources.json (api/devices.py) --
    "register_source": "pcp_cli.api.devices",
    "unregister_source": "pcp_cli.api.devices",
    "registered_sources": "pcp_cli.api.devices",
    "approve_source": "pcp_cli.api.devices",
    "source_store_id": "pcp_cli.api.devices:store_of",
    "REGISTRY_PLACEHOLDER": "pcp_cli.api.devices:PLACEHOLDER",
    # -- what changed: the file watch and the store monitor (api/monitor.py) --
    "watch_files": "pcp_cli.api.monitor",
    "monitor_status": "pcp_cli.api.monitor",
    "monitor_start": "pcp_cli.api.monitor",
    "monitor_stop": "pcp_cli.api.monitor",
    "monitor_run": "pcp_cli.api.monitor",
}

__all__ = sorted(_TABLE)


def where(name: str) -> tuple[str, str]:
    """(module, name there) of `api.<name>`; KeyError when the api has no such name."""
    module, _, there = _TABLE[name].partition(":")
    return module, there or name


def __getattr__(name: str) -> Any:
    try:
        module, there = where(name)
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), there)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_TABLE})
