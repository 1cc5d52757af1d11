"""Identifiers: prefixed ULIDs for new objects, and the rule that makes any id a safe file name."""

from __future__ import annotations

import base64
import hashlib
import re

from pcp_cli.errors import InvalidInput

PREFIXES = {"page": "pg", "revision": "rev", "relation": "rel", "event": "ev", "lease": "ls"}

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)


def new_id(kind: str) -> str:
    """A new id for a page, revision, relation or event: `pg_01J…`, unique across devices."""
    from ulid import ULID  # imported here: it costs ~50 ms, and read-only commands never need it

    return f"{PREFIXES[kind]}_{ULID()}"


def page_id_for_key(key: str) -> str:
    """The page id a keyed write gets when no id is given: the same key, the same page."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    # The first 26 base32 characters come from the first 17 bytes (base64's encoder is pure
    # Python, so it is given only the 20 bytes of its first four 5-byte groups).
    return "pg_" + base64.b32encode(digest[:20]).decode("ascii")[:26]


def is_safe_id(value: object) -> bool:
    """True when `value` can name a file in any folder of the store on any common OS."""
    return (
        isinstance(value, str)
        and _SAFE_ID.match(value) is not None
        and ".." not in value
        and not value.endswith(".")
        and _RESERVED.match(value) is None
    )


def check_id(value: object, what: str = "id") -> str:
    """Return `value` if it is a safe id, else raise InvalidInput naming it."""
    if not is_safe_id(value):
        shown = repr(value)[:80]
        raise InvalidInput(
            f"{what} {shown} is not a safe identifier",
            hint="ids are 1-128 characters of letters, digits, '.', '_' and '-', starting with a "
            "letter or digit, without '..', path separators or reserved device names",
        )
    assert isinstance(value, str)
    return value
