"""Opaque, bounded cursors for every paged answer: search, `pcp ls`, the timeline, list scopes.

A cursor names the request it continues (a hash of its parameters), how far into the answer it
is, and the state of the store when it was issued (the catalog's identity and change sequence,
and the relations folder). It continues only the same request on an unchanged store: anything
else is refused with a clear error instead of silently skipping or repeating results. It is at
most a few hundred characters, and it reaches at most `MAX_POSITION` results into an answer.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from pcp_cli.errors import UsageError

if TYPE_CHECKING:
    from pcp_cli.store.store import Store

VERSION = 1
MAX_POSITION = 1000
MAX_CURSOR_CHARS = 400


class StaleCursor(UsageError):
    """The store changed since the cursor was issued."""

    code = "stale_cursor"


class BadCursor(UsageError):
    code = "invalid_cursor"


def store_state(store: Any) -> str:
    """What a cursor must find unchanged: the catalog's identity and change sequence, and the
    relations folder (graph walks and relation filters read it)."""
    real: Store = getattr(store, "store", store)
    catalog = real.catalog
    try:
        st = os.stat(real.layout.relations)
        relations = f"{st.st_mtime_ns}:{st.st_nlink}"
    except OSError:
        relations = "-"
    raw = f"{catalog.identity()}:{catalog.seq()}:{relations}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def request_key(kind: str, request: dict[str, Any]) -> str:
    raw = json.dumps([kind, request], sort_keys=True, default=list, ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def encode(kind: str, request: dict[str, Any], position: int, store: Any) -> str | None:
    """The cursor for the answer continuing at `position`, or None past the bound."""
    if position >= MAX_POSITION:
        return None
    data = {"v": VERSION, "k": request_key(kind, request), "p": position,
            "s": store_state(store)}
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(cursor: str | None, kind: str, request: dict[str, Any], store: Any) -> int:
    """The position a cursor continues at (0 without one); raises when it does not fit."""
    if cursor is None:
        return 0
    invalid = BadCursor("the cursor is not valid",
                        hint="pass next_cursor exactly as it was returned, or leave it out")
    if len(cursor) > MAX_CURSOR_CHARS:
        raise invalid
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError):
        raise invalid from None
    if not isinstance(data, dict) or data.get("v") != VERSION:
        raise invalid
    position = data.get("p")
    if not isinstance(position, int) or isinstance(position, bool) or \
            not 0 < position < MAX_POSITION:
        raise invalid
    if data.get("k") != request_key(kind, request):
        raise BadCursor("the cursor belongs to a different request",
                        hint="repeat the request that returned it with the same parameters, "
                        "adding only the cursor")
    if data.get("s") != store_state(store):
        raise StaleCursor("the cursor is stale: the store changed since it was issued",
                          hint="repeat the request without the cursor to start again")
    return position


def page(items: list[Any], position: int, limit: int, kind: str, request: dict[str, Any],
         store: Any) -> tuple[list[Any], str | None]:
    """One page of an already ordered answer, and the cursor for the next one."""
    chunk = items[position: position + limit]
    more = len(items) > position + limit
    return chunk, encode(kind, request, position + limit, store) if more else None
