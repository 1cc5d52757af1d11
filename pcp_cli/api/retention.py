"""Retention: how long tombstoned pages and replaced revisions are kept, leases that keep
named ones, the plan of what is due and the collection of exactly that plan
(`pcp retention …`; the rules are in `pcp_cli.store.retention`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcp_cli.model import retention as rules
from pcp_cli.model.page import Actor
from pcp_cli.store import retention
from pcp_cli.store.store import Store


def retention_policy(store: Store) -> dict[str, Any]:
    """The policy in force (`pcp.yaml`'s `retention:`; forever where it says nothing) and the
    leases: `{policy, leases}`."""
    from pcp_cli.model.staleness import today as now

    today = now()
    return {"policy": rules.policy_from(store.manifest.retention).to_dict(),
            "leases": [{**lease.to_dict(), "active": lease.active(today)}
                       for lease in retention.leases(store)]}


def set_retention_policy(store: Store, *, tombstoned_pages: str | None = None,
                         superseded_revisions: str | None = None) -> dict[str, Any]:
    """Write `pcp.yaml`'s `retention:` section (only that section; the rest of the file and
    its comments are kept), atomically and under the store lock."""
    from pcp_cli.store.manifest import read_manifest, replace_section

    with store.locked():
        current = rules.policy_from(store.manifest.retention)
        section = rules.policy_section(tombstoned_pages, superseded_revisions, current)
        replace_section(store.layout.manifest, rules.SECTION, section)
        store.manifest = read_manifest(store.layout.manifest)
    return retention_policy(store)


def retention_plan(store: Store) -> dict[str, Any]:
    """What `pcp retention collect` would remove now and why; what is kept and why."""
    return retention.plan(store).to_dict()


def retention_collect(store: Store, plan_id: str, *,
                      actor: Actor | None = None) -> dict[str, Any]:
    """Remove exactly what the plan `plan_id` lists (RevisionConflict if the plan differs now)."""
    return retention.collect(store, plan_id, actor=actor)


def add_lease(store: Store, targets: Sequence[str], *, reason: str | None = None,
              until: str | None = None, actor: Actor | None = None) -> dict[str, Any]:
    return retention.add_lease(store, targets, reason=reason, until=until,
                               actor=actor).to_dict()


def release_lease(store: Store, lease_id: str) -> dict[str, Any]:
    return retention.release_lease(store, lease_id).to_dict()


def delete_overrides(store: Store, page_id: str) -> list[str]:
    """The retention rules deleting `page_id` now would override, in words (empty: none)."""
    return retention.delete_overrides(store, page_id)
