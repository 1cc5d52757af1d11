"""What "superseded" means, once, for every way of saying it.

A page is superseded when its lifecycle status says so. `keystone add --supersedes`, `pcp link
B supersedes A`, the MCP `pcp_link_pages` tool, accepting a proposal that supersedes, and
`pcp doctor --fix` (for a relation whose supersession was cut short) all end in that status,
written as a new revision of A (`record.superseded_by` names B) and a `supersedes` relation.
So the catalog, the search index, the micro_prompt, `pcp keystone list`, the timeline and the
stats, which all read the lifecycle status, agree without reading relations.
"""

from __future__ import annotations

from pcp_cli.model.page import Revision


def supersedes_now(source: Revision, target: Revision) -> bool:
    """Whether "SOURCE supersedes TARGET" takes effect now: SOURCE is an affirmed, active page
    and TARGET another page that is active (or already superseded by SOURCE: done before).
    From a proposal it waits until the proposal is accepted; a target retired some other way
    (archived, tombstoned, superseded by another page) is left as it is."""
    new, old = source.state, target.state
    return (
        source.page_id != target.page_id
        and new.review_status == "affirmed" and new.lifecycle_status == "active"
        and (old.lifecycle_status == "active"
             or (old.lifecycle_status == "superseded"
                 and old.record.get("superseded_by") == source.page_id))
    )
