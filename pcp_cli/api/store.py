"""Opening and creating a store, checking it (`pcp doctor`), and the files around it.

Each function takes an open Store (or a path), does one thing, and returns model objects or the
JSON-able dicts that `--json` and the MCP tools print. Nothing here prints or exits.
"""

from __future__ import annotations

import os
from typing import Any

from pcp_cli.store.store import Store


def init_store(root: str | os.PathLike[str], *, owner_id: str,
               namespace: str | None = None) -> Store:
    """Create a new, empty store folder (`pcp init`)."""
    from pathlib import Path

    return Store.init(Path(root), owner_id=owner_id, namespace=namespace)


def open_store(path: str | os.PathLike[str] | None = None, *, readonly: bool = False,
               refresh: bool = True) -> Store:
    """Open the store `path` (or PCP_STORE, or the nearest one) and bring it up to date."""
    store = Store.open(path, readonly=readonly)
    if refresh:
        store.refresh()
    return store


def write_file(path: os.PathLike[str] | str, data: str) -> None:
    """Write a file outside the store crash-safely (temp file, fsync, rename): `--out`."""
    from pathlib import Path

    from pcp_cli.store.atomic import write_atomic

    write_atomic(Path(path), data)


def client_grants(store: Store) -> dict[str, Any]:
    """The `clients` section of `pcp.yaml` as written (client id -> grant mapping)."""
    return dict(store.manifest.clients)


def set_client_grants(store: Store, clients: dict[str, Any]) -> None:
    """Replace the `clients` section of `pcp.yaml` (`pcp grant add|remove`), atomically and
    under the store's writer lock, keeping the rest of the file and its comments."""
    from pcp_cli.store.manifest import read_manifest, replace_clients

    with store.locked():
        replace_clients(store.layout.manifest, clients)
        store.manifest = read_manifest(store.layout.manifest)
