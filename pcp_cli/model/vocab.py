"""The closed vocabularies of the store: every enum a page, revision or relation may hold."""

from __future__ import annotations

PAGE_TYPES = (
    "profile",
    "keystone",
    "timeline_event",
    "note",
    "conversation",
    "document",
    "summary",
)
LIFECYCLE_STATUSES = ("active", "superseded", "archived", "tombstoned")
# Lifecycle states that ordinary reads hide (current-only).
NON_CURRENT = ("superseded", "archived", "tombstoned")
VISIBILITIES = ("private", "shared", "public")

# The trust axes, kept apart (Paged Context Protocol: authority, integrity, epistemic status,
# sensitivity and instruction policy are separate questions).
ORIGINS = ("user_stated", "approved", "recorded", "imported", "generated", "inferred")
# Authority order used when claims compete: earlier wins.
ORIGIN_AUTHORITY = ("user_stated", "approved", "recorded", "imported", "generated", "inferred")
INTEGRITIES = ("verbatim", "edited", "derived", "unknown")
EPISTEMIC_STATUSES = ("affirmed", "asserted", "speculative", "disputed", "unknown")
SENSITIVITIES = ("low", "medium", "high")
# A page whose sensitivity was never set (a file dropped under `pages/` without the key) is
# *unclassified*: its state holds None. AI clients that do not opt in to sensitive material,
# and the micro_prompt, see only these classes: an unclassified page might be high. The person's
# own reads include unclassified pages, labelled "unclassified".
SERVED_SENSITIVITIES = ("low", "medium")
UNCLASSIFIED = "unclassified"
INSTRUCTION_POLICIES = ("data_only", "advisory")

# Approval is not lifecycle: a proposed keystone is active as a record but never served.
REVIEW_STATUSES = ("affirmed", "proposed", "rejected")

OPERATIONS = ("ingest", "write", "revise", "derive", "import")

# IngestEvent: the kinds of raw event a host (or a session-log importer) hands the store, and who
# speaks in a message. Reasoning is a model's hidden working (a Claude `thinking` block, a Codex
# `reasoning` item): kept as an event, never shown as page text.
EVENT_TYPES = ("message", "tool_call", "note", "reasoning")
EVENT_ROLES = ("user", "assistant", "system", "tool")
# The Paged Context Protocol's actors. An importer is a `tool` whose actor_id names it
# (`pcp-import-chatgpt`, `pcp-import-archive`). "importer" is what pcp 0.1 wrote; it is still
# read (old revision files keep it) and never written.
ACTOR_TYPES = ("user", "model", "tool", "system")
LEGACY_ACTOR_TYPES = ("importer",)
# Page types whose content is derived from other revisions: writing one needs its inputs.
DERIVED_TYPES = ("summary",)
# Origins of material that came from outside the store: its observed time is the source's,
# never the time pcp stored it.
OUTSIDE_ORIGINS = ("imported", "recorded")

RELATION_TYPES = (
    "supersedes",
    "derived_from",
    "depends_on",
    "contradicts",
    "related_to",
    "inspired_by",
    "part_of",
    "replies_to",
    "merges",
)

# The relation vocabulary is open (the Paged Context Protocol names examples, not a closed
# list): beyond the built-in types, a namespaced type such as `com.example.reviews` is allowed;
# an unknown bare name is refused as a likely typo.
RELATION_TYPE_PATTERN = r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$"


def is_relation_type(value: str) -> bool:
    """A built-in relation type, or a namespaced one (`com.example.reviews`)."""
    import re

    return value in RELATION_TYPES or (
        len(value) <= 128 and re.match(RELATION_TYPE_PATTERN, value) is not None)


# Portable Context Protocol v1 enums.
KEYSTONE_CATEGORIES = (
    "identity",
    "preference",
    "rule",
    "objective",
    "constraint",
    "relationship",
    "glossary",
    "other",
)
KEYSTONE_SOURCES = ("user_stated", "inferred", "imported", "other")
# A v1 `source` as a page origin ("other" under-claims as generated, never over-claims).
ORIGIN_FOR_SOURCE = {
    "user_stated": "user_stated",
    "inferred": "inferred",
    "imported": "imported",
    "other": "generated",
}
# Keystone categories that state how the person wants to be worked with: advisory, not data.
ADVISORY_CATEGORIES = ("rule", "preference")
TIMELINE_CATEGORIES = ("job", "move", "milestone", "publication", "relationship", "other")

PROFILE_FIELDS = (
    "name",
    "profession",
    "primary_focus",
    "summary",
    "domain_expertise",
    "values",
    "communication_style",
    "working_style",
    "tools_and_workflows",
    "how_interacts_with_ai",
)
PROFILE_LIST_FIELDS = ("domain_expertise", "values")

MEDIA_TYPES = ("text/markdown", "text/plain")

# Namespaced extension keys: reverse-DNS or a clear vendor prefix ("com.example.mood",
# "pcp.origin", "memorandai:x").
EXTENSION_KEY_PATTERN = r"^[A-Za-z0-9_-]+([.:][A-Za-z0-9_-]+)+$"
NAMESPACE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}(:[a-z0-9][a-z0-9._-]{0,63}){0,7}$"
PARTIAL_DATE_PATTERN = r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$"

# Our own extension namespace, used where we add fields to PCP v1 objects.
EXT_NS = "org.pcp-cli"
# Where a page keeps the extension keys an imported PCP object gave without a namespace (`mood`):
# a reader never drops an extension it does not understand (v1.2 §6, §7.2), and the store holds
# namespaced keys only; the export gives them back as they came.
BARE_EXT = "org.pcp-cli.unnamespaced"


def stored_extensions(extensions: dict[str, object]) -> dict[str, object]:
    """An object's extensions as a page keeps them: keys without a namespace moved under
    BARE_EXT (what was there already is kept beside them)."""
    import re

    stored: dict[str, object] = {}
    bare: dict[str, object] = {}
    for key, value in extensions.items():
        if re.match(EXTENSION_KEY_PATTERN, key):
            stored[key] = value
        else:
            bare[key] = value
    if bare:
        held = stored.get(BARE_EXT)
        stored[BARE_EXT] = {**(held if isinstance(held, dict) else {}), **bare}
    return stored


def given_extensions(extensions: dict[str, object]) -> dict[str, object]:
    """A page's extensions as its PCP object gives them: BARE_EXT's keys back at the top
    (a namespaced key of the same name, which cannot be, would win)."""
    bare = extensions.get(BARE_EXT)
    if not isinstance(bare, dict):
        return dict(extensions)
    out = {k: v for k, v in extensions.items() if k != BARE_EXT}
    for key, value in bare.items():
        out.setdefault(key, value)
    return out
