"""The Markdown folders imported into a store, by name: `vaults/<file>.json`, committed.

A note's page is keyed by its vault and its path in it. The record says which keys a vault's
notes have, so every device that imports a folder of that name (wherever it sits on that
device) finds the same pages:

- `markdown:<path>` (*plain* keys): the keys every Markdown import wrote before vaults were
  recorded. They belong to one vault, the first one a store imports (or, in an older store,
  the folder its plain pages were imported from: `pcp_cli/adapters/vaults.py`).
- `markdown@<name>:<path>`: every other vault. A name holds no `:` and no `/`, so these keys
  can never be a plain key, nor another vault's.

One file per vault, named from a digest of the name, holding only the name and the prefix:
two devices that record the same vault write the same bytes to the same file (git merges
them without a conflict), and two vaults never write the same file.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path

from pcp_cli.errors import InvalidInput, StorageFailed
from pcp_cli.model.ids import page_id_for_key
from pcp_cli.store.atomic import remove_file, write_atomic

VAULTS = "vaults"
PLAIN = "markdown:"


@dataclass(frozen=True)
class Vault:
    name: str
    key_prefix: str

    @property
    def plain(self) -> bool:
        return self.key_prefix == PLAIN

    def key(self, rel: str) -> str:
        """The import key of the note at `rel` (its path in the folder) in this vault."""
        return self.key_prefix + rel

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "key_prefix": self.key_prefix}


def named_prefix(name: str) -> str:
    return f"markdown@{name}:"


def file_for(root: Path, name: str) -> Path:
    """`vaults/vt_<26 lowercase base32 characters of the name's SHA-256>.json`."""
    digest = page_id_for_key(name).removeprefix("pg_").lower()  # the same digest, as a page's
    return root / VAULTS / f"vt_{digest}.json"


def recorded(root: Path) -> dict[str, Vault]:
    """Name -> vault, for every vault the store records. InvalidInput names a record that
    cannot be read: which keys its vault has is unknown, so no Markdown import guesses."""
    folder = root / VAULTS
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix == ".json"
                       and not p.name.startswith("."))
    except FileNotFoundError:
        return {}
    except NotADirectoryError:
        raise InvalidInput("is not a folder", path=str(folder),
                           hint="it holds the store's vault records; move the file away") \
            from None
    found: dict[str, Vault] = {}
    for path in names:
        try:
            data = json.loads(path.read_text("utf-8"))
            vault = Vault(str(data["name"]), str(data["key_prefix"]))
            if not vault.name or vault.key_prefix not in (PLAIN, named_prefix(vault.name)):
                raise ValueError(vault)
        except (OSError, ValueError, KeyError, TypeError):
            raise InvalidInput("not a readable vault record", path=str(path),
                               hint='it should be {"key_prefix": …, "name": …}; mend it from '
                               "git (`git checkout -- vaults/`)") from None
        found[vault.name] = vault
    return found


def record(root: Path, vault: Vault) -> bool:
    """Record `vault`; False (nothing written) when it is recorded already."""
    path = file_for(root, vault.name)
    data = json.dumps(vault.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        if path.read_text("utf-8") == data:
            return False
    except OSError:
        pass
    write_atomic(path, data)
    return True


def forget(root: Path, vault: Vault) -> None:
    """Take back the record `record` just wrote, when the import it came with failed: a
    refused write leaves the store as it was. (Best effort: a record left behind says only
    what the next import of that folder works out again.)"""
    path = file_for(root, vault.name)
    with contextlib.suppress(OSError, StorageFailed):
        remove_file(path)
        path.parent.rmdir()  # only when no other vault is recorded
