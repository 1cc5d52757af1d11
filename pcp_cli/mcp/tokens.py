"""Bearer tokens for MCP over HTTP: one token names exactly one client id, and so one grant.

A token is `pcp_<id>_<secret>`: `<id>` finds its record, `<secret>` (256 random bits) is what
proves it. Only a salted SHA-256 of the secret is kept, in `<store>/.pcp/tokens.json` (mode 0600):
`.pcp/` is the store's local, never-committed state, so a store cloned or synced to another
machine carries no tokens (they are per device). A plain salted hash is enough here because the
secret is random, not a password: there is nothing to guess from the hash.

`TokenRegistry.verify` re-reads the file whenever it changed (one `stat` per request), so a
revoked or rotated token fails on its next request, without restarting the server. Secrets are
compared in constant time; an unknown or malformed token costs the same comparison.

SDK-free: `pcp grant token` and the HTTP server share it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcp_cli import api
from pcp_cli.errors import InvalidInput
from pcp_cli.mcp.audit import now_iso

TOKENS_RELPATH = Path(".pcp") / "tokens.json"
PREFIX = "pcp_"
FORMAT_VERSION = 1
_DUMMY_SALT = b"\0" * 16
_DUMMY_HASH = hashlib.sha256(_DUMMY_SALT + b"").hexdigest()


def tokens_path(store_root: Path | str) -> Path:
    return Path(store_root) / TOKENS_RELPATH


def _digest(salt: bytes, secret: str) -> str:
    return hashlib.sha256(salt + secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenRecord:
    token_id: str
    client_id: str
    salt: str  # hex
    hash: str  # hex sha256(salt + secret)
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"token_id": self.token_id, "client_id": self.client_id, "salt": self.salt,
                "hash": self.hash, "created_at": self.created_at}

    def public(self) -> dict[str, Any]:
        """What `pcp grant show` may print: never the salt or hash."""
        return {"token_id": self.token_id, "created_at": self.created_at}


def _parse(raw: bytes, path: Path) -> list[TokenRecord]:
    try:
        data = json.loads(raw.decode("utf-8"))
        records = [
            TokenRecord(r["token_id"], r["client_id"], r["salt"], r["hash"], r["created_at"])
            for r in data["tokens"]
        ]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(
            f"the token file {path} is damaged ({exc.__class__.__name__})",
            hint=f"delete {path} and issue new tokens with `pcp grant token CLIENT`",
        ) from None
    return records


def read_tokens(store_root: Path | str) -> list[TokenRecord]:
    path = tokens_path(store_root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    return _parse(raw, path)


def _write(store_root: Path | str, records: list[TokenRecord]) -> None:
    path = tokens_path(store_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"version": FORMAT_VERSION, "tokens": [r.to_dict() for r in records]},
                      indent=2) + "\n"
    api.write_file(path, body)
    os.chmod(path, 0o600)


def issue_token(store_root: Path | str, client_id: str, *,
                rotate: bool = False) -> tuple[str, TokenRecord]:
    """A new token for `client_id` (returned once, never stored); with `rotate`, every older
    token of that client stops working at the same moment."""
    records = read_tokens(store_root)
    if rotate:
        records = [r for r in records if r.client_id != client_id]
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_bytes(16)
    record = TokenRecord(token_id, client_id, salt.hex(), _digest(salt, secret), now_iso())
    _write(store_root, [*records, record])
    return f"{PREFIX}{token_id}_{secret}", record


def revoke_tokens(store_root: Path | str, client_id: str) -> list[TokenRecord]:
    """Remove every token of `client_id`; returns what was removed."""
    records = read_tokens(store_root)
    gone = [r for r in records if r.client_id == client_id]
    if gone:
        _write(store_root, [r for r in records if r.client_id != client_id])
    return gone


def client_tokens(store_root: Path | str, client_id: str) -> list[TokenRecord]:
    return [r for r in read_tokens(store_root) if r.client_id == client_id]


class TokenRegistry:
    """Token checks for a running server, always against the file's current contents."""

    def __init__(self, store_root: Path | str) -> None:
        self.path = tokens_path(store_root)
        self._stamp: tuple[int, int, int] | None = None
        self._by_id: dict[str, TokenRecord] = {}
        self._lock = threading.Lock()

    def _current(self) -> dict[str, TokenRecord]:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            if stamp != self._stamp:
                try:
                    records = _parse(self.path.read_bytes(), self.path)
                except (OSError, InvalidInput):
                    records = []  # fail closed: a damaged file lets nobody in
                self._by_id = {r.token_id: r for r in records}
                self._stamp = stamp
            return self._by_id

    def verify(self, token: str) -> str | None:
        """The client id `token` belongs to, or None."""
        by_id = self._current()
        token_id, secret = "", token
        if token.startswith(PREFIX) and token.count("_") >= 2:
            token_id, _, secret = token[len(PREFIX):].partition("_")
        record = by_id.get(token_id)
        salt = bytes.fromhex(record.salt) if record else _DUMMY_SALT
        expected = record.hash if record else _DUMMY_HASH
        ok = hmac.compare_digest(_digest(salt, secret), expected)
        return record.client_id if ok and record is not None else None
