"""What an MCP client may see and do, resolved once at start-up from `pcp.yaml`.

Pure functions over the already-parsed manifest: no I/O, no SDK import, so `pcp audit` and the
CLI can use them without paying for the MCP SDK.

A grant lists *scopes*: exact namespaces (`user:ada-lumen`) or prefix patterns (`project:*`,
matching every namespace below `project:`; a lone `*` matches the whole store). Narrowing
(`pcp serve --scope`, or a per-call `scopes` argument) can only remove scopes, never add them.
A call that names no scopes reads the grant's *default* scopes only (`call_scopes`): reading
across the others is the call's named choice (Paged Context Protocol: cross-scope recall must
happen explicitly).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pcp_cli.errors import InvalidInput, UsageError
from pcp_cli.model.scopes import scope_matches
from pcp_cli.model.vocab import NAMESPACE_PATTERN
from pcp_cli.render import versions

MANIFEST_NAME = "pcp.yaml"
# An MCP client is an AI application: its writes carry this actor type in provenance, always
# (an MCP peer cannot prove it is the user, and a configurable actor would let a grant say so).
DEFAULT_ACTOR = "model"
# What a grant in pcp.yaml may say (the manifest schema's `clients` entry).
GRANT_KEYS = ("scopes", "default_scopes", "allow_sensitive", "allow_write",
              "description", "pcp_version")
# The Portable Context Protocol versions a grant may ask for, and the one a grant that names
# none gets (render/versions.py).
PCP_VERSIONS = versions.VERSIONS
DEFAULT_PCP_VERSION = versions.DEFAULT

_NAMESPACE = re.compile(NAMESPACE_PATTERN)
_CLIENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Grant:
    """The resolved authority of one server session."""

    client_id: str | None
    actor: str
    scopes: tuple[str, ...]
    allow_sensitive: bool
    allow_write: bool
    granted_by: str  # "pcp.yaml" | "default"
    # Requested scopes that were outside the grant and dropped (never widened).
    dropped_scopes: tuple[str, ...] = ()
    # One line each, for `pcp serve` to print on stderr: what was dropped or refused, and why.
    notices: tuple[str, ...] = ()
    # What a call that names no scopes reads (inside `scopes`): the grant's `default_scopes`, or
    # for a grant without them the rule of `implicit_defaults`. Reading the other granted scopes
    # is a named choice of the call (`scopes: [...]` or `["*"]`): cross-scope recall is explicit.
    default_scopes: tuple[str, ...] = ()
    # Where default_scopes came from: "pcp.yaml", or the rule `implicit_defaults` applied.
    default_scopes_source: str = "pcp.yaml"
    # The Portable Context Protocol version this client is served (PCP_VERSIONS).
    pcp_version: str = DEFAULT_PCP_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "actor": self.actor,
            "scopes": list(self.scopes),
            "default_scopes": list(self.default_scopes),
            "default_scopes_source": self.default_scopes_source,
            "allow_sensitive": self.allow_sensitive,
            "allow_write": self.allow_write,
            "granted_by": self.granted_by,
            "pcp_version": self.pcp_version,
        }


def is_scope_pattern(value: object) -> bool:
    """True for `*`, an exact namespace, or `<namespace>:*`."""
    if not isinstance(value, str):
        return False
    if value == "*":
        return True
    if value.endswith(":*"):
        return _NAMESPACE.match(value[:-2]) is not None
    return _NAMESPACE.match(value) is not None


_pattern_matches = scope_matches


def scope_allows(grant: Grant, namespace: str) -> bool:
    """May this grant see pages in `namespace`?"""
    return any(_pattern_matches(pattern, namespace) for pattern in grant.scopes)


def _meet(pattern: str, requested: str) -> str | None:
    """The part of `requested` that `pattern` (one grant scope) allows, as one scope, or None.

    Both are `*`, a namespace, or `<namespace>:*`; the meet of two such scopes is always one of
    them (or nothing), so narrowing never invents a scope the grant did not name."""
    if pattern == "*":
        return requested
    if requested == "*":
        return pattern
    if requested.endswith(":*"):
        if pattern.endswith(":*"):
            if pattern.startswith(requested[:-1]):  # the grant's pattern is the narrower one
                return pattern
            return requested if requested.startswith(pattern[:-1]) else None
        return pattern if _pattern_matches(requested, pattern) else None
    return requested if _pattern_matches(pattern, requested) else None


def intersect_scopes(
    scopes: tuple[str, ...], requested: Iterable[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Intersect `requested` with `scopes`: (kept, dropped). None keeps everything granted.

    A pattern means "what I may see of this": `*` is the whole grant, `project:*` the grant's
    part of `project:`. An exact namespace is kept if the grant covers it. A requested item that
    meets nothing of the grant is dropped; a request that keeps nothing keeps nothing: narrowing
    never falls back to the wider grant, and never widens it.
    """
    if requested is None:
        return scopes, ()
    kept: list[str] = []
    dropped: list[str] = []
    for item in requested:
        met = [m for m in (_meet(p, item) for p in scopes) if m] if is_scope_pattern(item) else []
        if not met and item not in dropped:
            dropped.append(item)
        for scope in met:
            if scope not in kept:
                kept.append(scope)
    # A kept scope inside another kept pattern adds nothing.
    kept = [k for k in kept if not any(o != k and _meet(o, k) == k and o.endswith("*")
                                       for o in kept)]
    return tuple(kept), tuple(dropped)


OWNERS_NAMESPACE = "the owner's namespace (the grant names no default_scopes)"
FIRST_SCOPE = "the grant's first scope (it names no default_scopes, nor the owner's namespace)"


def implicit_defaults(scopes: tuple[str, ...], default_namespace: str | None
                      ) -> tuple[tuple[str, ...], str]:
    """What a call naming no scopes reads under a grant that names no `default_scopes`: the
    store's default namespace (the owner's own) when the grant covers it, else the grant's first
    scope; and which of the two it was. Never every scope: reading across them is a call's
    named choice."""
    if not scopes:
        return (), OWNERS_NAMESPACE
    if default_namespace and intersect_scopes(scopes, [default_namespace])[0] == (
            default_namespace,):
        return (default_namespace,), OWNERS_NAMESPACE
    return (scopes[0],), FIRST_SCOPE


def call_scopes(grant: Grant, requested: Iterable[str] | str | None
                ) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """The scopes one call reads: (kept, dropped, where they came from). A call naming none
    reads the grant's default scopes; `"*"` (or `["*"]`) every scope the grant has; a list the
    part of it inside the grant (never more)."""
    if requested is None:
        source = ("the grant's default_scopes (the call named none)"
                  if grant.default_scopes_source == MANIFEST_NAME and grant.default_scopes
                  else f"{grant.default_scopes_source}; the call named none")
        # a Grant made without resolve_grant may name no defaults: its first scope, as a
        # grant without default_scopes in pcp.yaml that does not name the owner's namespace
        defaults = grant.default_scopes or implicit_defaults(grant.scopes, None)[0]
        if not grant.default_scopes:
            source = f"{FIRST_SCOPE}; the call named none"
        kept, dropped = intersect_scopes(grant.scopes, defaults)
        return kept, dropped, source + '; pass scopes: ["*"] to read every granted scope'
    names = [requested] if isinstance(requested, str) else list(requested)
    kept, dropped = intersect_scopes(grant.scopes, names)
    source = ("every scope of the grant (the call asked for *)" if names == ["*"]
              else "the call's scopes, within the grant")
    return kept, dropped, source


def _check_version(entry: Mapping[str, Any], client_id: str) -> str:
    value = entry.get("pcp_version", DEFAULT_PCP_VERSION)
    if value not in PCP_VERSIONS:
        raise _manifest_error(
            f"clients.{client_id}.pcp_version {value!r} is not a version pcp serves",
            f"use one of: {', '.join(repr(v) for v in PCP_VERSIONS)} (quoted: \"1.1\")")
    return str(value)


def _manifest_error(message: str, hint: str) -> InvalidInput:
    return InvalidInput(message, hint=hint, path=MANIFEST_NAME)


def _default_namespace(manifest: Mapping[str, Any]) -> str | None:
    value = manifest.get("default_namespace")
    if value is None and isinstance(manifest.get("owner_id"), str):
        value = f"user:{manifest['owner_id']}"
    if value is None:
        return None
    if not isinstance(value, str) or _NAMESPACE.match(value) is None:
        raise _manifest_error(
            f"default_namespace {value!r} is not a valid namespace",
            "use lowercase segments separated by ':', e.g. user:ada-lumen",
        )
    return value


def _flag(entry: Mapping[str, Any], key: str, client_id: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise _manifest_error(
            f"clients.{client_id}.{key} must be true or false, not {value!r}",
            "write `true` or `false` without quotes",
        )
    return value


def check_client_id(client_id: str) -> str:
    if _CLIENT_ID.match(client_id) is None:
        raise UsageError(
            f"client id {client_id[:80]!r} is not valid",
            hint="use 1-64 letters, digits, '.', '_' or '-', e.g. --client-id claude-desktop",
        )
    return client_id


def resolve_grant(
    manifest: Mapping[str, Any],
    client_id: str | None,
    narrow_scopes: list[str] | None = None,
    allow_write_flag: bool = False,
) -> Grant:
    """The grant for `client_id` under `manifest`, narrowed by `--scope`, with writes gated.

    A client that `pcp.yaml` does not name gets the safe default: the owner's default namespace
    only, no sensitive material, no writes. Writing needs both `allow_write: true` in the grant
    and the `--allow-write` flag.
    """
    if client_id is not None:
        check_client_id(client_id)
    clients = manifest.get("clients") or {}
    if not isinstance(clients, Mapping):
        raise _manifest_error(
            "clients must be a mapping of client id to grant",
            "see the MCP section of the README for the shape of a grant",
        )
    notices: list[str] = []
    who = client_id or "an unnamed client"
    entry = clients.get(client_id) if client_id is not None else None

    default_ns = _default_namespace(manifest)
    version = DEFAULT_PCP_VERSION
    if entry is None:
        scopes: tuple[str, ...] = (default_ns,) if default_ns else ()
        actor, allow_sensitive, allow_write, granted_by = DEFAULT_ACTOR, False, False, "default"
        defaults: tuple[str, ...] = ()
        notices.append(
            f"{who} has no grant in pcp.yaml: serving the default namespace only, read-only"
        )
        if allow_write_flag:
            notices.append(f"--allow-write ignored: {who} has no grant in pcp.yaml")
    else:
        if not isinstance(entry, Mapping):
            raise _manifest_error(
                f"clients.{client_id} must be a mapping",
                "give it scopes, allow_sensitive and allow_write keys",
            )
        unknown = sorted(str(k) for k in entry if k not in GRANT_KEYS)
        if unknown:
            # A misspelt key must not silently change what a client may see.
            raise _manifest_error(
                f"clients.{client_id} has unknown key {unknown[0]!r}",
                f"a grant may have: {', '.join(GRANT_KEYS)}",
            )
        scopes = _scope_list(entry, client_id or "", "scopes",
                             'e.g. scopes: ["user:ada-lumen", "project:*"]')
        defaults = _default_scopes(entry, client_id or "", scopes)
        actor = DEFAULT_ACTOR
        allow_sensitive = _flag(entry, "allow_sensitive", client_id or "")
        granted_write = _flag(entry, "allow_write", client_id or "")
        allow_write = granted_write and allow_write_flag
        granted_by = MANIFEST_NAME
        version = _check_version(entry, client_id or "")
        if allow_write_flag and not granted_write:
            notices.append(
                f"--allow-write ignored: pcp.yaml does not allow writes for {client_id} "
                f"(set clients.{client_id}.allow_write: true)"
            )

    kept, dropped = intersect_scopes(scopes, narrow_scopes)
    for scope in dropped:
        notices.append(f"--scope {scope} is outside the grant for {who}; dropped")
    if narrow_scopes is not None and not kept:
        notices.append(f"no requested scope is inside the grant for {who}: nothing is visible")
    source = MANIFEST_NAME
    if defaults and narrow_scopes is not None:
        narrowed_defaults, _ = intersect_scopes(kept, defaults)
        if not narrowed_defaults and kept:
            notices.append(f"--scope leaves none of the default scopes of {who}: a call "
                           "naming no scopes reads "
                           + ", ".join(implicit_defaults(kept, default_ns)[0]))
        defaults = narrowed_defaults
    if not defaults:
        defaults, source = implicit_defaults(kept, default_ns)
    return Grant(
        client_id=client_id,
        actor=actor,
        scopes=kept,
        allow_sensitive=allow_sensitive,
        allow_write=allow_write,
        granted_by=granted_by,
        dropped_scopes=dropped,
        notices=tuple(notices),
        default_scopes=tuple(defaults),
        default_scopes_source=source,
        pcp_version=version,
    )


def _scope_list(entry: Mapping[str, Any], client_id: str, key: str,
                example: str) -> tuple[str, ...]:
    """A grant's list of scopes under `key`, checked, without repeats."""
    raw = entry.get(key, [])
    if isinstance(raw, str) or not isinstance(raw, list):
        raise _manifest_error(f"clients.{client_id}.{key} must be a list", example)
    bad = [s for s in raw if not is_scope_pattern(s)]
    if bad:
        raise _manifest_error(
            f"clients.{client_id}.{key} has invalid entries: {bad!r}",
            "a scope is a namespace (user:ada-lumen), a prefix pattern (project:*) or *",
        )
    return tuple(dict.fromkeys(raw))


def _default_scopes(entry: Mapping[str, Any], client_id: str,
                    scopes: tuple[str, ...]) -> tuple[str, ...]:
    """A grant's `default_scopes`: what a call naming no scopes reads. Each must lie inside
    the grant's scopes (a default never widens what the client may see)."""
    defaults = _scope_list(entry, client_id, "default_scopes",
                           'e.g. default_scopes: ["project:tidewatch"]')
    # `*` means every scope of the grant (the person's explicit choice for this client)
    outside = [s for s in defaults if s != "*" and intersect_scopes(scopes, [s])[0] != (s,)]
    if outside:
        raise _manifest_error(
            f"clients.{client_id}.default_scopes {outside[0]!r} is not inside its scopes",
            f"a default scope must be one of, or inside, {', '.join(scopes) or 'its scopes'}",
        )
    return intersect_scopes(scopes, defaults)[0] if "*" in defaults else defaults
