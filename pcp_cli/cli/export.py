"""`pcp export`: the profile as json, markdown, micro_prompt, a full archive, or AGENTS.md."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pcp_cli import api
from pcp_cli.cli.output import AsOfOpt, StoreOpt, examples, note
from pcp_cli.errors import UsageError

FORMAT_HELP = "json | markdown | micro_prompt | archive | agents-md"
ALIASES = {"micro-prompt": "micro_prompt", "agents_md": "agents-md", "md": "markdown"}
ScopeOpt = Annotated[
    list[str] | None,
    typer.Option("--scope", help="Only this namespace, or prefix:* for every namespace "
                 "below prefix, or *; repeatable."),
]


def write_output(data: str, out: str | None) -> None:
    """`data` to stdout, or atomically to the file --out names."""
    if out is None or out == "-":
        sys.stdout.write(data)
        sys.stdout.flush()
        return
    target = Path(out)
    if target.is_dir():
        raise UsageError(f"{out} is a folder", hint="give a file name to --out")
    api.write_file(target, data)
    note(f"wrote {out}")


def register(app: typer.Typer) -> None:
    @app.command(epilog=examples("pcp export --format micro_prompt",
                                 "pcp export --format agents-md --out AGENTS.md",
                                 "pcp export --format archive --out backup.json"))
    def export(
        fmt: Annotated[str, typer.Option("--format", "-F", help=FORMAT_HELP)] = "archive",
        out: Annotated[str | None, typer.Option(
            "--out", "-o", help="Write to this file instead of stdout (agents-md: the "
            "AGENTS.md or CLAUDE.md file whose marked block is replaced).")] = None,
        scopes: ScopeOpt = None,
        include_sensitive: Annotated[bool, typer.Option(
            "--include-sensitive", help="json/archive: include high-sensitivity pages.")] = False,
        as_of: AsOfOpt = None,
        pcp_version: Annotated[str | None, typer.Option(
            "--pcp-version", metavar="VERSION", help="json/archive: the Portable Context "
            "Protocol version to write, 1.2 (the default) or 1.1 (v1.2 fields kept under "
            "extensions).")] = None,
        store_path: StoreOpt = None,
    ) -> None:
        """Export your profile: micro_prompt (compact, for every cold start), markdown, json
        (the strict PCP v1 profile), archive (profile + keystones + timeline, PCP v1), or
        agents-md (the micro_prompt in a marked block of --out).

        Only affirmed material is exported: proposals awaiting review never are.
        """
        fmt = ALIASES.get(fmt, fmt)
        if fmt not in api.EXPORT_FORMATS:
            raise UsageError(f"unknown format {fmt!r}", hint=f"one of: {FORMAT_HELP}")
        if include_sensitive and fmt not in ("json", "archive"):
            raise UsageError(f"--include-sensitive does not apply to {fmt}",
                             hint="high-sensitivity material never enters the micro_prompt "
                             "or the markdown profile")
        if pcp_version is not None and fmt not in ("json", "archive"):
            raise UsageError(f"--pcp-version does not apply to {fmt}",
                             hint="it chooses the version of the json and archive objects")
        if fmt == "micro_prompt" and as_of is None:
            write_output(api.micro_prompt_export(store_path, scopes=scopes or ()), out)
            return
        if fmt == "agents-md" and (not out or out == "-"):
            raise UsageError("agents-md needs --out FILE",
                             hint="e.g. --out AGENTS.md or --out CLAUDE.md")
        if fmt == "agents-md" and as_of is None:  # a fresh clone reads the profile material only
            assert out is not None
            result = api.agents_md_export(store_path, out, scopes=scopes or ())
            note(f"{result['status']} {result['path']}")
            return
        with api.open_store(store_path) as opened:
            store = api.as_of_view(opened, as_of)
            if fmt == "agents-md":
                assert out is not None
                result = api.write_agents_md(store, out, scopes=scopes or ())
                note(f"{result['status']} {result['path']}")
                return
            data = api.export_text(store, fmt, scopes=scopes or (),
                                   include_sensitive=include_sensitive, pcp_version=pcp_version)
        write_output(data, out)
