"""Find the store once: `--store PATH` > `PCP_STORE` > the nearest `pcp.yaml` above the cwd."""

from __future__ import annotations

import os
from pathlib import Path

from pcp_cli.errors import StoreNotFound

MANIFEST_NAME = "pcp.yaml"


def resolve_store_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        root = Path(explicit).expanduser()
        if not (root / MANIFEST_NAME).is_file():
            raise StoreNotFound(
                f"{root} is not a pcp store (no {MANIFEST_NAME})",
                hint="run `pcp init` there, or point --store at a store folder",
            )
        return root.resolve()
    env = os.environ.get("PCP_STORE")
    if env:
        return resolve_store_root(env)
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / MANIFEST_NAME).is_file():
            return folder
    raise StoreNotFound(
        "no pcp store here or in any parent folder",
        hint="run `pcp init`, pass --store PATH, or set PCP_STORE",
    )
