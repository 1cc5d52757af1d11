"""`pcp import` of one path: recognise what it is and hand it to the importer that takes it.

A chat export or a Markdown vault goes through its parser (`pcp_cli.adapters.iter_items`) and
the writer; a PCP v1 archive to the archive importer; a coding agent's session logs to the
session importer (raw events first, conversation pages from them). Each returns the same
summary shape. This module sits above all of them, so none of them imports another's
dispatcher.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from pcp_cli.adapters import detect_format, iter_items
from pcp_cli.adapters.base import Format, Progress
from pcp_cli.adapters.writer import READ_ERRORS, write_items
from pcp_cli.errors import InvalidInput, UsageError
from pcp_cli.store.layout import check_namespace
from pcp_cli.store.store import Store

FORMATS = ("archive", "chatgpt", "claude", "markdown", "claude_code", "codex")


def import_source(
    store: Store,
    path: str | os.PathLike[str],
    *,
    format: str | None = None,  # noqa: A002 - mirrors the CLI's --format
    namespace: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    vault: str | None = None,
    local: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Import the export at `path` into `store` and return the summary dict.

    `format` None or "auto" recognises the export from its content. A PCP v1 archive goes to
    the archive importer, which returns the same summary shape. Raises InvalidInput when the
    path cannot be recognised or nothing in it can be read at all.

    A Markdown folder is imported as a vault (adapters/vaults.py): `vault` is its name when
    the person chose one (`--as`), `local` the folders this device imported from. The summary
    then says which (`vault: {name, key_prefix}`); UsageError, before anything is written,
    when the folder's name is ambiguous. `vault` with any other format is a UsageError.
    """
    source = Path(path)
    if not source.exists():
        raise InvalidInput("no such file or folder", path=str(source))
    if format not in (None, "auto", *FORMATS):
        raise UsageError(f"unknown format {format!r}",
                         hint=f"one of: auto, {', '.join(FORMATS)}")
    if namespace is not None:
        try:
            check_namespace(namespace)
        except InvalidInput as exc:
            raise UsageError(exc.message, hint=exc.hint) from None
    try:
        fmt = detect_format(source) if format in (None, "auto") else cast(Format, format)
    except READ_ERRORS as exc:
        raise InvalidInput(f"cannot be read ({type(exc).__name__}: {exc})",
                           path=str(source)) from None
    if format in ("chatgpt", "claude"):
        _check_forced_format(source, fmt)
    if vault is not None and fmt != "markdown":
        raise UsageError(f"--as names a Markdown vault; this is a {fmt} export",
                         hint="leave --as out")
    if fmt == "markdown":
        return _import_vault(store, source, namespace=namespace, dry_run=dry_run,
                             progress=progress, as_name=vault, local=local or {})
    if fmt == "archive":
        try:
            from pcp_cli.adapters.archive import import_archive
        except ModuleNotFoundError as exc:
            if exc.name != "pcp_cli.adapters.archive":
                raise
            raise UsageError("this build of pcp cannot import PCP v1 archives") from None
        return import_archive(store, source, dry_run=dry_run, namespace=namespace)
    if fmt in ("claude_code", "codex"):  # raw events first, conversation pages from them
        from pcp_cli.adapters.sessions import import_sessions

        return import_sessions(store, source, fmt=fmt, namespace=namespace, dry_run=dry_run,
                               progress=progress)
    results = iter_items(source, format=fmt, progress=progress)
    summary = write_items(store, results, format=fmt, namespace=namespace, dry_run=dry_run,
                          source=str(source))
    return summary.to_dict()


def _import_vault(store: Store, source: Path, *, namespace: str | None, dry_run: bool,
                  progress: Progress | None, as_name: str | None,
                  local: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A Markdown folder or note, under its vault's keys; the vault is recorded (in the store,
    under the writer lock, before its first page) unless this is a dry run, and the record is
    taken back if the import then fails."""
    from pcp_cli.adapters.vaults import resolve
    from pcp_cli.store import vaults

    recorded = False
    if dry_run:
        vault = resolve(store, source, as_name=as_name, local=local)
    else:
        with store.locked():
            vault = resolve(store, source, as_name=as_name, local=local)
            recorded = vaults.record(store.root, vault)
    results = iter_items(source, format="markdown", progress=progress,
                         key_prefix=vault.key_prefix)
    try:
        summary = write_items(store, results, format="markdown", namespace=namespace,
                              dry_run=dry_run, source=str(source)).to_dict()
    except BaseException:
        if recorded:
            vaults.forget(store.root, vault)
        raise
    summary["vault"] = vault.to_dict()
    return summary


_FORMAT_NAMES = {"chatgpt": "ChatGPT", "claude": "Claude", "markdown": "Markdown",
                 "archive": "PCP v1 archive"}


def _check_forced_format(source: Path, fmt: str) -> None:
    """`--format claude` on what is recognisably another export: say so instead of skipping
    every item as unreadable (and reporting success)."""
    try:
        seen = detect_format(source)
    except (InvalidInput, *READ_ERRORS):
        return  # not recognisable: let the chosen parser say what it finds
    if seen != fmt:
        raise InvalidInput(
            f"does not look like a {_FORMAT_NAMES[fmt]} export (it looks like a "
            f"{_FORMAT_NAMES.get(seen, seen)} export)", path=str(source),
            hint=f"drop --format (it is recognised from the content) or use --format {seen}")
