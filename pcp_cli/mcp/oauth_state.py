"""The OAuth state of `pcp serve --http`, SDK-free: `pcp grant` reads and edits it.

Two files under `<store>/.pcp/` (mode 0600; `.pcp/` is never committed):

- `oauth-clients.json`: the registered clients (changes only when one registers or is
  removed; at most MAX_CLIENTS, each registration bounded, so a few hundred KB at most);
- `oauth.json`: the grants consent made, pending authorization requests, and codes and tokens
  as SHA-256 hashes only (changes at every step of the flow, and stays small).

Every change is a read-modify-write under `fcntl.flock` on `.pcp/oauth.lock`, so `pcp grant
remove` in one terminal and the server never lose each other's writes; a file is rewritten only
when its content changed. A state written before the split (clients inside `oauth.json`) is
read as it is and split at its next change. See `pcp_cli.mcp.oauth` for the flow.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pcp_cli import api
from pcp_cli.errors import InvalidInput, NotFound

STATE_RELPATH = Path(".pcp") / "oauth.json"
CLIENTS_RELPATH = Path(".pcp") / "oauth-clients.json"
LOCK_RELPATH = Path(".pcp") / "oauth.lock"
FORMAT_VERSION = 1
REQUEST_TTL = 600  # an authorization request waits this long for the person's consent
CLIENTS_KEY = "clients"


def state_path(root: Path | str) -> Path:
    return Path(root) / STATE_RELPATH


def clients_path(root: Path | str) -> Path:
    return Path(root) / CLIENTS_RELPATH


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def empty_state() -> dict[str, Any]:
    return {"version": FORMAT_VERSION, "clients": {}, "grants": {}, "pending": {}, "codes": {},
            "tokens": {}}


def _parse(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise ValueError("not a version 1 OAuth state file")
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"the OAuth state file {path} is damaged ({exc})",
                           hint=f"delete {path}: OAuth clients then register and ask for "
                           "consent again") from None
    return data


def parse_state(raw: bytes, path: Path, clients_raw: bytes | None = None) -> dict[str, Any]:
    """The whole state from the bytes of `oauth.json` (and of `oauth-clients.json`)."""
    data = _parse(raw, path) if raw else empty_state()
    if clients_raw:
        data["clients"] = {**(data.get("clients") or {}), **(_parse(
            clients_raw, path.with_name(CLIENTS_RELPATH.name)).get("clients") or {})}
    for key, value in empty_state().items():
        data.setdefault(key, value)
    return data


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def read_state(root: Path | str) -> dict[str, Any]:
    return parse_state(_read(state_path(root)), state_path(root), _read(clients_path(root)))


def _prune(data: dict[str, Any], now: float) -> None:
    for key in ("pending", "codes"):
        data[key] = {k: v for k, v in data[key].items() if v["expires_at"] > now}
    data["tokens"] = {k: v for k, v in data["tokens"].items() if v["expires_at"] > now}


def _dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8")


def _split(data: dict[str, Any]) -> tuple[bytes, bytes]:
    """(oauth.json, oauth-clients.json) as written."""
    rest = {k: v for k, v in data.items() if k != CLIENTS_KEY}
    return _dump(rest), _dump({"version": FORMAT_VERSION, CLIENTS_KEY: data[CLIENTS_KEY]})


@contextlib.contextmanager
def transaction(root: Path | str) -> Iterator[dict[str, Any]]:
    """The state, locked against every other writer; on a clean exit, pruned and written back
    (each file only if it changed). An exception leaves both files as they were."""
    root = Path(root)
    lock = root / LOCK_RELPATH
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw, clients_raw = _read(state_path(root)), _read(clients_path(root))
        data = parse_state(raw, state_path(root), clients_raw)
        yield data
        _prune(data, time.time())
        state, clients = _split(data)
        if clients != clients_raw:  # first, so a split never leaves the clients nowhere
            _write(clients_path(root), clients)
        if state != raw:
            _write(state_path(root), state)
    finally:
        os.close(fd)


def _write(path: Path, data: bytes) -> None:
    api.write_file(path, data.decode("utf-8"))
    os.chmod(path, 0o600)


# -- what the CLI asks ------------------------------------------------------------------------
def oauth_grants(root: Path | str) -> dict[str, dict[str, Any]]:
    """grant client id -> {oauth_client, client_name, created_at, last_used}."""
    data = read_state(root)
    out = {}
    for grant_id, entry in data["grants"].items():
        client = data["clients"].get(entry.get("oauth_client"), {})
        out[grant_id] = {**entry, "client_name": client.get("client_name")}
    return out


def list_clients(root: Path | str) -> list[dict[str, Any]]:
    data = read_state(root)
    rows = []
    for client_id, info in sorted(data["clients"].items(), key=lambda kv: kv[1]["registered_at"]):
        grant = next((g for g, e in data["grants"].items() if e["oauth_client"] == client_id),
                     None)
        rows.append({"client_id": client_id, "client_name": info.get("client_name"),
                     "redirect_uris": info["metadata"].get("redirect_uris") or [],
                     "registered_at": info["registered_at"], "grant": grant,
                     "tokens": sum(1 for t in data["tokens"].values()
                                   if t["client_id"] == client_id)})
    return rows


def forget_grant(root: Path | str, grant_id: str) -> int:
    """`pcp grant remove`: drop the OAuth tokens made for this grant; how many went."""
    if not state_path(root).exists():
        return 0
    with transaction(root) as data:
        gone = [k for k, t in data["tokens"].items() if t["grant"] == grant_id]
        for key in gone:
            del data["tokens"][key]
        data["grants"].pop(grant_id, None)
    return len(gone)


def remove_client(root: Path | str, client_id: str) -> dict[str, Any]:
    """`pcp grant remove-client`: forget a registration, its tokens and pending requests;
    returns the grant made for it (the caller removes it from pcp.yaml)."""
    with transaction(root) as data:
        if client_id not in data["clients"]:
            raise NotFound(f"no registered OAuth client {client_id}",
                           hint="list them: pcp grant oauth-clients")
        del data["clients"][client_id]
        tokens = [k for k, t in data["tokens"].items() if t["client_id"] == client_id]
        for key in tokens:
            del data["tokens"][key]
        for table in ("pending", "codes"):
            data[table] = {k: v for k, v in data[table].items() if v["client_id"] != client_id}
        grants = [g for g, e in data["grants"].items() if e["oauth_client"] == client_id]
        for grant in grants:
            del data["grants"][grant]
    return {"client_id": client_id, "removed": True, "tokens_revoked": len(tokens),
            "grants": grants}


def pending_requests(root: Path | str) -> list[dict[str, Any]]:
    data = read_state(root)
    now = time.time()
    return [{"request": rid, "client_id": p["client_id"],
             "client_name": data["clients"].get(p["client_id"], {}).get("client_name"),
             "redirect_host": urlparse(p["redirect_uri"]).hostname, "scopes": p["scopes"],
             "approved": p.get("approved", False), "expires_in": int(p["expires_at"] - now)}
            for rid, p in data["pending"].items() if p["expires_at"] > now]


def approve_request(root: Path | str, request_id: str) -> dict[str, Any]:
    """`pcp grant approve REQUEST`: the owner's proof given from a terminal instead of the
    printed code (the consent page still chooses what the client may see)."""
    with transaction(root) as data:
        found = data["pending"].get(request_id)
        if found is None or found["expires_at"] <= time.time():
            raise NotFound(f"no pending authorization request {request_id}",
                           hint="list them: pcp grant approve")
        found["approved"] = True
        return {"request": request_id, "client_id": found["client_id"], "approved": True}
