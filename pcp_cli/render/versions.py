"""Which Portable Context Protocol version a reader gets: v1.2 (the default) or v1.1.

v1.2 is wire-compatible with v1.1 (`schema_version` stays "1.0"): it adds optional fields only,
the keystone's `generated_by`, `last_confirmed_by` and `stale_after` (§3.2.1, §3.2.2) and the
search result's `stale` (§3.4). But the v1.1 schemas forbid any field they do not name
(`additionalProperties: false`), so a strict v1.1 reader refuses a v1.2 object. A reader that
asks for v1.1 (a grant's `pcp_version: "1.1"` in pcp.yaml, `pcp export --pcp-version 1.1`)
gets objects valid against the v1.1 schemas: each v1.2 field moved, as it was, under the
namespaced extension key `org.pcp-cli.v1.2`, which every conformant reader keeps (§6), so
nothing is lost on a round trip; pcp's own import puts the fields back (`restore`).

Why v1.2 by default: it is what the store holds, every v1.2 field is optional and §7.2 obliges
a consumer to tolerate what it does not know; the fields a v1.1 reader cannot name are the
very ones that keep it from serving a stale claim as current. v1.1 is there for a reader that
validates strictly.
"""

from __future__ import annotations

from typing import Any

VERSIONS = ("1.2", "1.1")
DEFAULT = "1.2"
PAGED_VERSION = "0.4"
# Where a v1.1 object keeps the v1.2 fields (a namespaced extension key, §6).
V12_KEY = "org.pcp-cli.v1.2"
# The fields v1.2 added, by object kind (the schema's file name).
ADDED = {
    "keystone": ("generated_by", "last_confirmed_by", "stale_after"),
    "search-result": ("stale",),
    "profile": (),
    "timeline-event": (),
}


def check(version: str | None) -> str:
    """A version pcp serves (None: the default), or ValueError naming the ones it does."""
    if version is None:
        return DEFAULT
    if version not in VERSIONS:
        raise ValueError(f"pcp serves Portable Context Protocol {' and '.join(VERSIONS)}, "
                         f"not {version!r}")
    return version


def as_version(obj: dict[str, Any], kind: str, version: str) -> dict[str, Any]:
    """`obj` (a v1.2 object of `kind`) as `version` wants it: itself for v1.2; for v1.1 a copy
    with the v1.2 fields under `extensions[V12_KEY]` (an `extensions` object is added only
    when there is something to keep)."""
    if version == "1.2":
        return obj
    moved = {key: obj[key] for key in ADDED[kind] if key in obj}
    if not moved:
        return obj
    out = {key: value for key, value in obj.items() if key not in moved}
    extensions = dict(out.get("extensions") or {})
    held = extensions.get(V12_KEY)
    extensions[V12_KEY] = {**(held if isinstance(held, dict) else {}), **moved}
    out["extensions"] = extensions
    return out


def restore(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    """The v1.2 object a v1.1 one stands for: fields pcp moved under `extensions[V12_KEY]` put
    back (a field the object also carries itself wins); other values there are kept."""
    extensions = obj.get("extensions")
    held = extensions.get(V12_KEY) if isinstance(extensions, dict) else None
    if not isinstance(held, dict):
        return obj
    out = dict(obj)
    rest = dict(held)
    for key in ADDED[kind]:
        if key in rest:
            value = rest.pop(key)
            out.setdefault(key, value)
    others = {k: v for k, v in extensions.items() if k != V12_KEY}
    if rest:
        others[V12_KEY] = rest
    out["extensions"] = others
    return out


def archive_as(archive: dict[str, Any], version: str) -> dict[str, Any]:
    """A full archive with each keystone as `version` wants it."""
    if version == "1.2":
        return archive
    return {**archive, "keystones": [as_version(k, "keystone", version)
                                     for k in archive.get("keystones") or []]}


def search_as(envelope: dict[str, Any], version: str) -> dict[str, Any]:
    """A search answer with each result as `version` wants it."""
    results = envelope.get("results")
    if version == "1.2" or not isinstance(results, list):
        return envelope
    return {**envelope, "results": [as_version(r, "search-result", version)
                                    if isinstance(r, dict) else r for r in results]}


def protocols(served: str = DEFAULT) -> dict[str, Any]:
    """Which protocol versions pcp speaks, and which one this reader is `served` (what
    `pcp_describe_capabilities`, `pcp capabilities` and `pcp_stats` / `pcp stats` say)."""
    return {
        "portable_context_protocol": {"served": served, "available": list(VERSIONS),
                                      "default": DEFAULT},
        "paged_context_protocol": {"served": PAGED_VERSION, "available": [PAGED_VERSION]},
    }
