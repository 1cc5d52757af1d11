"""Source parsers: each turns one kind of export into a stream of neutral import items.

The parsers read only; writing the items through the store is the caller's job. Every parser
has the same signature, `iter_items(path, *, progress=None)`, and `iter_items` here picks the
right one from what the path contains.
"""

from __future__ import annotations

import os
from pathlib import Path

from pcp_cli.adapters.base import (
    Format,
    ImportItem,
    ItemProblem,
    ParseResult,
    Progress,
    detect_export,
)
from pcp_cli.errors import InvalidInput

__all__ = [
    "Format",
    "ImportItem",
    "ItemProblem",
    "ParseResult",
    "Progress",
    "detect_format",
    "iter_items",
]


def detect_format(path: str | os.PathLike[str]) -> Format:
    """Recognise an export from what is inside it, not from its name: a coding agent's session
    logs (JSON Lines, a file or a folder of them), else what `base.detect_export` recognises.

    Raises InvalidInput with a hint when the path is none of the known formats.
    """
    p = Path(path)
    if p.exists() and (p.is_dir() or p.suffix.lower() == ".jsonl"):
        from pcp_cli.adapters.sessions import detect_sessions

        sessions = detect_sessions(p)
        if sessions is not None:
            return sessions
    return detect_export(p)


def iter_items(
    path: str | os.PathLike[str],
    *,
    format: Format | None = None,  # noqa: A002 - mirrors the CLI's --format
    progress: Progress | None = None,
    key_prefix: str | None = None,
) -> ParseResult:
    """Parse `path` as `format` (detected from its content when None). `key_prefix`: a
    Markdown vault's keys (default the plain `markdown:`)."""
    fmt = format or detect_format(path)
    if fmt == "chatgpt":
        from pcp_cli.adapters import chatgpt

        return chatgpt.iter_items(path, progress=progress)
    if fmt == "claude":
        from pcp_cli.adapters import claude

        return claude.iter_items(path, progress=progress)
    if fmt == "markdown":
        from pcp_cli.adapters import markdown

        if key_prefix is not None:
            return markdown.iter_items(path, progress=progress, key_prefix=key_prefix)
        return markdown.iter_items(path, progress=progress)
    raise InvalidInput(
        f"{fmt!r} is not a source this parser reads",
        path=str(path),
        hint="a PCP v1 archive is imported as a whole by the archive importer",
    )
