"""`pcp validate` and `pcp doctor`: check a store, and mend what an interruption left."""

from __future__ import annotations

from typing import Annotated

import typer

from pcp_cli import api
from pcp_cli.cli.output import JsonOpt, StoreOpt, emit, examples, note, table, text
from pcp_cli.config import resolve_store_root
from pcp_cli.errors import InvalidInput, StoreDamaged


def register(app: typer.Typer) -> None:
    @app.command(epilog=examples("pcp validate", "pcp validate ~/context --json"))
    def validate(
        path: Annotated[str | None, typer.Argument(help="The store folder (default: the "
                                                   "current store).")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Check every file of a store against its JSON Schemas (exit 5 when invalid)."""
        root = resolve_store_root(path or store_path)
        problems = api.validate_store(root)
        data = {"store": str(root), "valid": not problems,
                "problems": [p.to_dict() for p in problems]}
        if as_json:
            emit(data, True, lambda: None)
        elif not problems:
            text(f"{root}: valid")
        if problems:
            raise InvalidInput(
                f"{len(problems)} problem(s) in {root}",
                details=[str(p) for p in problems],
                hint="`pcp doctor --fix` mends interrupted writes; fix the rest by hand",
            )

    @app.command(epilog=examples("pcp doctor", "pcp doctor --fix"))
    def doctor(
        fix: Annotated[bool, typer.Option("--fix", help="Repair what can be repaired.")] = False,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Find interrupted writes, hand edits, dropped files, conflicts and divergence."""
        from pcp_cli.mcp import commands

        with api.open_store(store_path, refresh=False) as store:
            findings = api.check_store(store, fix=fix) + commands.audit_findings(store)
            driver = api.merge_driver_problem(store)
            if driver is not None:
                repaired = False
                if fix:
                    api.setup_git(store)
                    repaired = api.merge_driver_problem(store) is None
                findings.append(api.doctor_finding(
                    "merge_driver", ".git/config", f"{driver}; `pcp init --git` (or `pcp doctor "
                    "--fix`) registers the one installed now", fixed=repaired))
        data = {"clean": not findings, "fixed": fix,
                "findings": [f.to_dict() for f in findings]}

        def human() -> None:
            if not findings:
                text("The store is clean.")
                return
            table(("kind", "path", "page", "detail", "status"),
                  ((f.kind, f.path, f.page_id or "", f.message,
                    "fixed" if f.fixed else ("fixable" if f.fixable else "manual"))
                   for f in findings), whole=(0, 2))

        emit(data, as_json, human)
        remaining = [f for f in findings if not f.fixed]
        if remaining:
            if not fix and any(f.fixable for f in remaining):
                note("Run `pcp doctor --fix` to repair what can be repaired.")
            raise StoreDamaged(f"{len(remaining)} problem(s) remain",
                               hint="see the list above; `pcp doctor --fix` repairs the fixable "
                               "ones")
