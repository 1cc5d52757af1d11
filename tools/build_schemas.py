"""Write the store's JSON Schemas (pcp_cli/model/schemas/*.json) from the vocabularies.

Run `python tools/build_schemas.py` after changing pcp_cli/model/vocab.py; a test fails when the
committed schemas and the vocabularies disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pcp_cli.model import vocab  # noqa: E402

BASE = "https://pcp-cli.invalid/schema/store/v1/"


def enum(values: tuple[str, ...]) -> dict:
    return {"enum": list(values)}


STRING_LIST = {"type": "array", "items": {"type": "string"}}
EXTENSIONS = {
    "type": "object",
    "propertyNames": {"pattern": vocab.EXTENSION_KEY_PATTERN},
    "description": "Namespaced custom fields; preserved on every write, read, export, import.",
}
UNIT = {"type": "number", "minimum": 0, "maximum": 1}
ACTOR = {
    "type": "object",
    "required": ["actor_type", "actor_id"],
    "additionalProperties": False,
    "properties": {"actor_type": enum(vocab.ACTOR_TYPES + vocab.LEGACY_ACTOR_TYPES),
                   "actor_id": {"type": "string"}},
}
SAFE_ID = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"}

KEYSTONE_RECORD = {
    "type": "object",
    "properties": {
        "category": enum(vocab.KEYSTONE_CATEGORIES),
        "confidence": UNIT,
        "importance": UNIT,
        "source": enum(vocab.KEYSTONE_SOURCES),
        "created_at": {"type": "string"},
        "last_confirmed_at": {"type": "string"},
        # Portable Context Protocol v1.2: who wrote the claim, who last stood behind it (actor
        # strings, model/actors.py), and the day it goes stale (model/staleness.py).
        "generated_by": {"type": "string", "minLength": 1},
        "last_confirmed_by": {"type": "string", "minLength": 1},
        "stale_after": {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        "supersedes": {"type": "string"},
        "superseded_by": {"type": "string"},
    },
}
TIMELINE_RECORD = {
    "type": "object",
    "required": ["date"],
    "properties": {
        "date": {"type": "string", "pattern": vocab.PARTIAL_DATE_PATTERN},
        "category": enum(vocab.TIMELINE_CATEGORIES),
        "confidence": UNIT,
        "source": enum(vocab.KEYSTONE_SOURCES),
    },
}
PROFILE_RECORD = {
    "type": "object",
    "properties": {
        **{f: {"type": "string"} for f in vocab.PROFILE_FIELDS if f not in
           vocab.PROFILE_LIST_FIELDS and f != "summary"},
        **{f: STRING_LIST for f in vocab.PROFILE_LIST_FIELDS},
        "pinned": {"type": "array", "items": enum(vocab.PROFILE_FIELDS)},
    },
}
RECORD_BY_TYPE = [
    {"if": {"properties": {"type": {"const": "keystone"}}, "required": ["type"]},
     "then": {"properties": {"record": KEYSTONE_RECORD}}},
    {"if": {"properties": {"type": {"const": "timeline_event"}}, "required": ["type"]},
     "then": {"required": ["record"], "properties": {"record": TIMELINE_RECORD}}},
    {"if": {"properties": {"type": {"const": "profile"}}, "required": ["type"]},
     "then": {"properties": {"record": PROFILE_RECORD}}},
]

STATE_PROPERTIES = {
    "page_id": SAFE_ID,
    "type": enum(vocab.PAGE_TYPES),
    "title": {"type": "string"},
    "namespace": {"type": "string", "pattern": vocab.NAMESPACE_PATTERN},
    "owner_id": {"type": "string"},
    "visibility": enum(vocab.VISIBILITIES),
    "lifecycle_status": enum(vocab.LIFECYCLE_STATUSES),
    "review_status": enum(vocab.REVIEW_STATUSES),
    "origin": enum(vocab.ORIGINS),
    "sensitivity": enum(vocab.SENSITIVITIES),
    "integrity": enum(vocab.INTEGRITIES),
    "epistemic_status": enum(vocab.EPISTEMIC_STATUSES),
    "instruction_policy": enum(vocab.INSTRUCTION_POLICIES),
    "tags": STRING_LIST,
    "source_refs": STRING_LIST,
    "record": {"type": "object"},
    "facets": {"type": "object"},
    "extensions": EXTENSIONS,
}

# What `pcp ingest` reads (one JSON Lines line) and `pcp_ingest_event` takes: one raw event. A
# field it does not name is kept under `extensions`, namespaced (`model` -> `ingest:model`).
_SHORT = {"type": "string", "minLength": 1, "maxLength": 200}
INGEST_EVENT = {
    "title": "pcp ingest event",
    "description": "One raw event for IngestEvent: a JSON Lines line of `pcp ingest`, or the "
    "`event` argument of the pcp_ingest_event tool.",
    "type": "object",
    "required": ["type"],
    "propertyNames": {"pattern": r"^[A-Za-z0-9_-]+([.:][A-Za-z0-9_-]+)*$", "maxLength": 200},
    "properties": {
        "type": enum(vocab.EVENT_TYPES),
        "conversation_id": {**_SHORT, "description": "Groups events into one conversation "
                            "page (unique within the event's source)"},
        "role": enum(vocab.EVENT_ROLES),
        "content": {"type": "string"},
        "timestamp": {"type": "string", "minLength": 1, "maxLength": 64,
                      "description": "ISO 8601; when the event happened (default: when it "
                      "was stored)"},
        "idempotency_key": {**_SHORT, "description": "The same key again stores nothing; "
                            "derived from the content when absent"},
        "namespace": {"type": "string", "pattern": vocab.NAMESPACE_PATTERN,
                      "description": "Scope of the conversation page (default: the store's)"},
        "name": {**_SHORT, "description": "tool_call: the tool's name"},
        "input": {"description": "tool_call: what the tool was given (any JSON)"},
        "output": {"description": "tool_call: what it returned (any JSON)"},
        "call_id": {**_SHORT, "description": "Pairs a tool_call with its result (a message "
                    "with role tool)"},
        "hidden": {"type": "boolean", "description": "Kept as an event, not shown as page "
                   "text (injected instructions, environment context)"},
        "extensions": EXTENSIONS,
    },
    "allOf": [
        {"if": {"properties": {"type": {"const": "message"}}, "required": ["type"]},
         "then": {"required": ["conversation_id", "role", "content"]}},
        {"if": {"properties": {"type": {"const": "tool_call"}}, "required": ["type"]},
         "then": {"required": ["conversation_id", "name"]}},
        {"if": {"properties": {"type": {"const": "note"}}, "required": ["type"]},
         "then": {"required": ["content"]}},
        {"if": {"properties": {"type": {"const": "reasoning"}}, "required": ["type"]},
         "then": {"required": ["conversation_id", "content"]}},
    ],
}

SCHEMAS = {
    "frontmatter": {
        "title": "pcp head file frontmatter",
        "description": "The YAML frontmatter of pages/<namespace>/<page_id>.md.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            **STATE_PROPERTIES,
            "revision_id": SAFE_ID,
            "media_type": enum(vocab.MEDIA_TYPES),
            "created_at": {"type": "string"},
            "updated_at": {"type": "string"},
            "content_hash": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
        },
        "allOf": RECORD_BY_TYPE,
    },
    "revision": {
        "title": "pcp page revision",
        "description": "An immutable revision file: revisions/<page_id>/<revision_id>.json.",
        "type": "object",
        "additionalProperties": False,
        "required": [
            "page_id", "revision_id", "parent_revision_id", "owner_id", "namespace",
            "visibility", "lifecycle_status", "review_status", "created_at", "created_by",
            "page_created_at", "payload", "source_refs", "provenance", "content_hash",
            "idempotency_key", "type", "title", "origin", "integrity", "epistemic_status",
            "sensitivity", "instruction_policy", "tags", "record", "facets", "extensions",
            "merged_revision_ids",
        ],
        "properties": {
            **STATE_PROPERTIES,
            # null: never classified (a file adopted without a sensitivity key).
            "sensitivity": {"enum": [*vocab.SENSITIVITIES, None]},
            "revision_id": SAFE_ID,
            "parent_revision_id": {"anyOf": [SAFE_ID, {"type": "null"}]},
            "merged_revision_ids": {"type": "array", "items": SAFE_ID},
            "created_at": {"type": "string", "format": "date-time"},
            "page_created_at": {"type": "string", "format": "date-time"},
            "created_by": ACTOR,
            "payload": {
                "type": "object",
                "required": ["media_type", "content"],
                "additionalProperties": False,
                "properties": {"media_type": enum(vocab.MEDIA_TYPES),
                               "content": {"type": "string"}},
            },
            "provenance": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["operation", "actor_type", "actor_id", "timestamp",
                                 "input_revision_ids"],
                    "additionalProperties": False,
                    "properties": {
                        "operation": enum(vocab.OPERATIONS),
                        "actor_type": enum(vocab.ACTOR_TYPES + vocab.LEGACY_ACTOR_TYPES),
                        "actor_id": {"type": "string"},
                        "timestamp": {"type": "string", "format": "date-time"},
                        "input_revision_ids": {"type": "array", "items": SAFE_ID},
                        "input_event_ids": {"type": "array", "items": SAFE_ID},
                        "note": {"type": "string"},
                    },
                },
            },
            "content_hash": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
            "idempotency_key": {"type": ["string", "null"]},
        },
        "allOf": RECORD_BY_TYPE,
    },
    "relation": {
        "title": "pcp relation",
        "description": "A typed edge between two revisions: relations/<relation_id>.json.",
        "type": "object",
        "additionalProperties": False,
        "required": ["relation_id", "relation_type", "from_page_id", "from_revision_id",
                     "to_page_id", "to_revision_id", "created_at", "created_by", "extensions"],
        "properties": {
            "relation_id": SAFE_ID,
            "relation_type": {"anyOf": [enum(vocab.RELATION_TYPES),
                                        {"type": "string", "maxLength": 128,
                                         "pattern": vocab.RELATION_TYPE_PATTERN}]},
            "from_page_id": SAFE_ID,
            "from_revision_id": SAFE_ID,
            "to_page_id": SAFE_ID,
            "to_revision_id": SAFE_ID,
            "created_at": {"type": "string", "format": "date-time"},
            "created_by": ACTOR,
            "note": {"type": "string"},
            # the ends named by a revision id (`pcp link rev_… depends_on rev_…`): the relation
            # is to that revision, whichever revision is the page's head later
            "pinned": {"type": "array", "items": {"enum": ["from", "to"]}, "uniqueItems": True},
            "extensions": EXTENSIONS,
        },
    },
    "event": {
        "title": "pcp event",
        "description": "A raw ingested event or store operation: events/<yyyy>/<mm>/<id>.json.",
        "type": "object",
        "additionalProperties": False,
        "required": ["event_id", "kind", "occurred_at", "recorded_at", "actor", "data",
                     "source_refs", "idempotency_key"],
        "properties": {
            "event_id": SAFE_ID,
            "kind": {"type": "string", "pattern": "^[a-z][a-z0-9_.-]*$"},
            "occurred_at": {"type": "string"},
            "recorded_at": {"type": "string", "format": "date-time"},
            "actor": ACTOR,
            "data": {"type": "object"},
            "source_refs": STRING_LIST,
            "idempotency_key": {"type": ["string", "null"]},
            "source": {"type": "string", "description": "Whose idempotency key this is: "
                       "ingest, mcp:<client>, claude_code, codex (ingested events only)"},
            "content_hash": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$",
                             "description": "Hash of `data`: the same key with another hash "
                             "is a conflict"},
        },
    },
    "ingest_event": INGEST_EVENT,
    "manifest": {
        "title": "pcp store manifest (pcp.yaml)",
        "type": "object",
        "additionalProperties": False,
        "required": ["format", "store_id", "owner_id", "default_namespace"],
        "properties": {
            "format": {"const": "pcp-store/1"},
            "store_id": SAFE_ID,
            "owner_id": SAFE_ID,
            "default_namespace": {"type": "string", "pattern": vocab.NAMESPACE_PATTERN},
            "clients": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "scopes": STRING_LIST,
                        "default_scopes": STRING_LIST,
                        "allow_sensitive": {"type": "boolean"},
                        "allow_write": {"type": "boolean"},
                        "description": {"type": "string"},
                        # the Portable Context Protocol version the client is served
                        "pcp_version": {"enum": ["1.2", "1.1"]},
                    },
                },
            },
            "settings": {"type": "object"},
            # how long tombstoned pages and replaced revisions are kept (store/retention.py)
            "retention": {
                "type": "object",
                "additionalProperties": False,
                "properties": {rule: {"type": "string",
                                      "pattern": r"^(forever|[1-9][0-9]{0,4}[dwy])$"}
                               for rule in ("tombstoned_pages", "superseded_revisions")},
            },
        },
    },
}


def _proposal_variant(kind: str, categories: tuple[str, ...], date: dict) -> dict:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["kind", "category", "content", "date", "confidence", "evidence"],
        "properties": {
            "kind": {"const": kind},
            "category": enum(categories),
            "content": {"type": "string", "minLength": 1, "maxLength": 300},
            "date": date,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "evidence": {"type": "string", "minLength": 1, "maxLength": 600},
        },
    }


# What a model behind `pcp propose --llm` must answer (pcp_cli/extract/llm.py).
SCHEMAS["proposals"] = {
    "title": "pcp propose --llm: a model's answer",
    "description": "What a model behind `pcp propose --llm` must answer for one chunk of the "
    "person's own text: the facts the person states about themselves, each with the exact "
    "sentence it came from. Sent as the response_format json_schema and checked again on "
    "every answer; anything else is dropped.",
    "type": "object",
    "additionalProperties": False,
    "required": ["proposals"],
    "properties": {"proposals": {"type": "array", "maxItems": 50, "items": {"anyOf": [
        _proposal_variant("keystone", vocab.KEYSTONE_CATEGORIES, {"type": "null"}),
        _proposal_variant("timeline_event", vocab.TIMELINE_CATEGORIES,
                          {"type": "string", "pattern": vocab.PARTIAL_DATE_PATTERN}),
    ]}}},
}


def main() -> None:
    """`build_schemas.py [FOLDER]`: write into FOLDER (default: the package's schemas)."""
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "pcp_cli" / "model" / "schemas"
    out.mkdir(parents=True, exist_ok=True)
    for name, body in SCHEMAS.items():
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                  "$id": f"{BASE}{name}.schema.json", **body}
        (out / f"{name}.schema.json").write_text(json.dumps(schema, indent=2) + "\n")


if __name__ == "__main__":
    main()
