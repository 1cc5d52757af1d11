"""Which vault a Markdown folder is, so that two folders never address the same page.

A folder is imported as a vault with a name: `--as NAME`, else the name it was imported under
on this device before, else the folder's own name (a single note: its folder's). The name is
the vault's identity on every device (the store records it under `vaults/`, store/vaults.py),
so the same vault cloned to another path, or another machine, finds its pages, and a folder of
another name gets pages of its own. Nothing is ever written into the person's folder.

A name the store does not record yet:

1. a vault already has the plain keys (`markdown:<path>`): the folder gets `markdown@NAME:`;
2. else, in a store imported into before vaults were recorded, the plain keys go to the folder
   they came from: one this device imported from before (`.pcp/imported-sources.json`), or
   one whose notes' pages were imported from a folder of this name (their revisions'
   provenance says `imported from NAME`); notes at the same paths imported from a folder of
   another name make this one a vault of its own; pages there whose folder nobody can name
   stop the import until `--as NAME` names it (a vault of its own);
3. else the plain keys are free: a store's first vault takes them (as every store made before
   vaults did), so a store with one vault keys its notes as it always has.

And two folders on this device under one name (`~/work/notes`, `~/home/notes`) are refused
unless `--as` says which name each is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pcp_cli.errors import PcpError, UsageError
from pcp_cli.model.filenames import shown
from pcp_cli.model.ids import page_id_for_key
from pcp_cli.store.store import Store
from pcp_cli.store.vaults import PLAIN, Vault, named_prefix, recorded

IMPORT_ACTOR = "pcp-import-markdown"
IMPORT_NOTE = "imported from "
# How many colliding pages' histories are read for the folder they came from (once per vault
# name, when the store has no record yet: after that the record answers).
TRACED_PAGES = 200


def check_name(name: str, what: str) -> str:
    """`name` if it can name a vault; UsageError (saying `--as`) if not."""
    bad = (not name or name in (".", "..") or len(name) > 100 or any(c in name for c in "/:")
           or not name.isprintable())
    if bad:
        raise UsageError(f"{what} {shown(name)!r} cannot name a vault (1-100 printable "
                         "characters without '/' or ':')", hint="name it with --as NAME")
    return name


def folder_of(source: Path) -> Path:
    """The vault folder of an import path (a single note's is its folder)."""
    path = source.expanduser().resolve()
    return path if path.is_dir() else path.parent


def resolve(store: Store, source: Path, *, as_name: str | None,
            local: dict[str, dict[str, Any]]) -> Vault:
    """The vault the Markdown at `source` is imported as (nothing is written). `local`: the
    folders this device imported from. UsageError (exit 2) when the name is ambiguous: naming
    the folder or note, and `--as`."""
    folder = folder_of(source)
    mine = local.get(str(folder)) or {}
    if as_name is not None:
        name = check_name(as_name, "--as")
    else:
        # a name that is not UTF-8 as the provenance note says it (`caf\xe9`)
        name = check_name(str(mine.get("vault") or shown(folder.name)), "the folder name")
        _refuse_namesake(folder, name, local)
    vaults = recorded(store.root)
    if name in vaults:
        return vaults[name]
    own = Vault(name, named_prefix(name))
    if any(vault.plain for vault in vaults.values()):
        return own
    plain = Vault(name, PLAIN)
    if mine.get("format") == "markdown" and "vault" not in mine and as_name is None:
        return plain  # imported from here before vaults were recorded: its pages are plain
    # the notes whose plain keys are pages already (the folder is listed only here, once)
    hits = [rel for rel in _rels(source) if store.page_exists(page_id_for_key(PLAIN + rel))]
    if not hits:
        return own if _any_plain_page(store) else plain
    names = _import_folders(store, [page_id_for_key(PLAIN + rel) for rel in hits[:TRACED_PAGES]])
    if name in names:
        return plain
    if names or as_name is not None:  # another folder's pages, or the person named this one
        return own
    first = hits[0]
    raise UsageError(
        f"{shown(folder / first)}: the store already has a page for {PLAIN}{shown(first)} "
        "from a Markdown folder pcp cannot name; say which vault this folder is with --as NAME",
        hint=f"a new name (--as {shown(name)}) imports it as a vault of its own; "
        "`pcp import --help` says more")


def _refuse_namesake(folder: Path, name: str, local: dict[str, dict[str, Any]]) -> None:
    """Another folder on this device, still there, imported under the same name."""
    for path, seen in sorted(local.items()):
        if seen.get("format") != "markdown" or path == str(folder):
            continue
        other = Path(path)
        if str(seen.get("vault") or shown(other.name)) == name and other.is_dir():
            raise UsageError(
                f"{shown(folder)}: {shown(other)} is already imported as vault {shown(name)!r}; "
                "import this folder with --as NAME",
                hint=f"a name of its own keeps its notes apart (--as {shown(name)} only if "
                "both folders are the same vault)")


def _rels(source: Path) -> list[str]:
    from pcp_cli.adapters.markdown import markdown_rels

    return markdown_rels(source)


def _import_folders(store: Store, page_ids: list[str]) -> set[str]:
    """The folder names the Markdown importer wrote these pages from (its provenance note)."""
    names: set[str] = set()
    for page_id in page_ids:
        for revision in store.revisions(page_id):
            for step in revision.provenance:
                if step.operation == "import" and step.actor_id == IMPORT_ACTOR \
                        and step.note and step.note.startswith(IMPORT_NOTE):
                    names.add(step.note.removeprefix(IMPORT_NOTE))
    names.discard("")
    return names


def _any_plain_page(store: Store) -> bool:
    """Whether any page holds plain Markdown keys (a store imported into before vaults)."""
    for entry in store.catalog.each_entry(
            "page_id IS NOT NULL AND type IN ('note', 'document') AND origin = 'imported'"):
        assert entry.page_id is not None
        try:
            refs = store.current(entry.page_id).state.source_refs
        except (PcpError, OSError, ValueError):  # a damaged page is doctor's; it names none
            continue
        if refs and refs[0].startswith(PLAIN):
            return True
    return False
