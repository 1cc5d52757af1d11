"""Scope patterns: which namespaces a list of scopes lets through. One rule for every caller.

A scope is `*` (every namespace), `prefix:*` (every namespace below `prefix`, e.g.
`project:*`), or one exact namespace (`user:ada` does not cover `user:ada:journal`: a grant never
widens by accident; write `user:ada:*` as well to include what is below).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def scope_matches(pattern: str, namespace: str) -> bool:
    if pattern == "*":
        return True
    if pattern.endswith(":*"):
        return namespace.startswith(pattern[:-1])
    return namespace == pattern


def in_scopes(namespace: str | None, scopes: Sequence[str] | None) -> bool:
    """`scopes` None lets everything through; an empty list lets nothing through."""
    if scopes is None:
        return True
    return namespace is not None and any(scope_matches(p, namespace) for p in scopes)


def resolve(scopes: Sequence[str] | None, namespaces: Iterable[str]) -> list[str] | None:
    """The known namespaces `scopes` lets through (None when unrestricted), sorted."""
    if scopes is None:
        return None
    return sorted({ns for ns in namespaces if in_scopes(ns, scopes)})
