"""Actors (Portable Context Protocol v1.2 §3.2.1): who wrote a claim, who last stood behind it.

A keystone's `record.generated_by` names the actor that authored it and
`record.last_confirmed_by` the one that last affirmed it, as v1.2 actor strings:

- the person: `human:<owner id>`;
- pcp's own extractor (`pcp propose`): `pcp/<version>`;
- an importer or another automated process: `process:<id>` (`process:pcp-import-chatgpt`);
- an AI client over MCP: `<client id>/mcp` (pcp knows the client it granted, not its model).

Readers derive a tier from `last_confirmed_by` (absent: unattributed; `human:`: human-affirmed;
anything else: machine-reaffirmed); pcp stores and serves the actors, never a tier. Reaching the
read surface still needs the person: a machine re-affirmation refreshes a published keystone and
never publishes one (api.confirm_keystone).
"""

from __future__ import annotations

from pcp_cli import __version__
from pcp_cli.model.page import Actor

GENERATED_BY = "generated_by"
LAST_CONFIRMED_BY = "last_confirmed_by"
# The tool actor of `pcp propose` (api/proposals.py, PROPOSE_ACTOR): pcp's own extractor.
EXTRACTOR_ACTOR_ID = "pcp-propose"


def actor_string(actor: Actor) -> str:
    """`actor` as a v1.2 actor string."""
    kind, who = actor.actor_type, actor.actor_id
    if kind == "user":
        return f"human:{who}"
    if kind == "model":
        return who if "/" in who else f"{who}/mcp"
    if kind == "tool" and who == EXTRACTOR_ACTOR_ID:
        return f"pcp/{__version__}"
    return f"process:{who}"  # an importer (`tool`), pcp itself (`system`), a legacy `importer`


def is_human(actor: str | None) -> bool:
    """Does this actor string name a person?"""
    return isinstance(actor, str) and actor.startswith("human:")
