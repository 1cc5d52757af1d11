"""Page commands: init, add, revise, show, history, ls, link, archive, tombstone, delete."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pcp_cli import api
from pcp_cli.cli.output import AsOfOpt, JsonOpt, StoreOpt, emit, note, print_json, table, text
from pcp_cli.errors import InvalidInput, UsageError

FileOpt = Annotated[
    str | None, typer.Option("--file", "-f", help="Read the text from this file ('-' = stdin).")
]


def read_text_input(text_arg: str | None, file: str | None) -> str | None:
    """TEXT, or --file F, or '-' for stdin: exactly one of them."""
    if text_arg is not None and file is not None:
        raise UsageError("give the text or --file, not both")
    if text_arg == "-" or file == "-":
        raw = sys.stdin.buffer.read(api.MAX_FILE_BYTES + 1)
        return api.decode_input(raw, "<stdin>")
    if file is not None:
        path = Path(file)
        try:
            if path.stat().st_size > api.MAX_FILE_BYTES:
                raise InvalidInput(f"file is over the {api.MAX_FILE_BYTES:,}-byte limit",
                                   path=file)
            with path.open("rb") as handle:  # bounded: a device or FIFO reports size 0
                raw = handle.read(api.MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            raise InvalidInput("no such file", path=file) from None
        except IsADirectoryError:
            raise InvalidInput("is a folder, not a file", path=file) from None
        except OSError as exc:
            raise InvalidInput(f"cannot read: {exc.strerror}", path=file) from None
        return api.decode_input(raw, file)
    return text_arg


def write_result(result: api.WriteResult, as_json: bool, verb: str | None = None) -> None:
    def human() -> None:
        status = verb or result.status
        text(f"{status} {result.page_id} ({result.revision_id})")

    emit(result.to_dict(), as_json, human)


def register(app: typer.Typer) -> None:
    @app.command()
    def init(
        directory: Annotated[str, typer.Argument(help="Folder for the new store.")] = ".",
        owner: Annotated[str | None, typer.Option("--owner", help="Owner id (default: the "
                                                   "folder name).")] = None,
        namespace: Annotated[str | None, typer.Option("--namespace", help="Default namespace "
                                                       "(default: user:<owner>).")] = None,
        git: Annotated[bool, typer.Option("--git", help="Make it a git repository (or, for an "
                                          "existing store, set up git sync on this device)."
                                          )] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Create a new, empty context store."""
        root = Path(directory)
        owner_id = owner or _slug(root.resolve().name) or "me"
        if git and (root / "pcp.yaml").is_file():
            # a cloned store: only register git sync on this device
            store = api.open_store(root, refresh=False)
        else:
            store = api.init_store(root, owner_id=owner_id, namespace=namespace)
        git_setup = api.setup_git(store, create=git)
        data = {
            "root": str(store.root),
            "store_id": store.manifest.store_id,
            "owner_id": store.owner_id,
            "default_namespace": store.default_namespace,
        }
        if git_setup is not None:
            data["git"] = git_setup
        emit(data, as_json, lambda: text(f"Initialised a pcp store in {store.root} "
                                         f"(owner {store.owner_id}, namespace "
                                         f"{store.default_namespace})"))

    @app.command()
    def add(
        text_arg: Annotated[str | None, typer.Argument(metavar="[TEXT]",
                                                       help="The page text ('-' = stdin).")] = None,
        file: FileOpt = None,
        page_type: Annotated[str, typer.Option("--type", help="Page type.")] = "note",
        title: Annotated[str | None, typer.Option("--title")] = None,
        namespace: Annotated[str | None, typer.Option("--namespace")] = None,
        sensitivity: Annotated[str, typer.Option("--sensitivity", help="low|medium|high")] = "low",
        origin: Annotated[str, typer.Option("--origin")] = "user_stated",
        tags: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
        key: Annotated[str | None, typer.Option("--idempotency-key",
                                                help="The same key twice writes once.")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Add a page (a note by default)."""
        content = read_text_input(text_arg, file)
        if content is None:
            raise UsageError("no text given", hint="pcp add TEXT, pcp add --file F, or pipe to "
                             "`pcp add -`")
        with api.open_store(store_path) as store:
            result = api.add_page(store, content, page_type=page_type, title=title,
                                  namespace=namespace, sensitivity=sensitivity, origin=origin,
                                  tags=tags or (), idempotency_key=key)
        write_result(result, as_json)

    @app.command()
    def revise(
        page_id: str,
        text_arg: Annotated[str | None, typer.Argument(metavar="[TEXT]",
                                                       help="New text ('-' = stdin).")] = None,
        file: FileOpt = None,
        expect: Annotated[str | None, typer.Option("--expect", help="Fail unless the head is "
                                                    "this revision.")] = None,
        title: Annotated[str | None, typer.Option("--title")] = None,
        sensitivity: Annotated[str | None, typer.Option("--sensitivity")] = None,
        tags: Annotated[list[str] | None, typer.Option("--tag", help="Replace the tags.")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Publish a new revision of a page."""
        content = read_text_input(text_arg, file)
        with api.open_store(store_path) as store:
            result = api.revise_page(store, page_id, content=content, title=title,
                                     sensitivity=sensitivity, tags=tags,
                                     expected_revision_id=expect)
        write_result(result, as_json)

    @app.command()
    def show(
        page_id: str,
        rev: Annotated[str | None, typer.Option("--rev", help="A revision id.")] = None,
        view: Annotated[str | None, typer.Option(
            "--view", help="manifest|payload|relations|history|facets|source_spans")] = None,
        as_of: AsOfOpt = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Show a page (its head revision, or --rev), or one view of it."""
        with api.open_store(store_path) as store:
            data = api.read_page(store, page_id, revision_id=rev, view=view, as_of=as_of)
        if as_json:
            print_json(data)
        elif view is None:
            _print_page(data)
        elif view == "payload":
            text(data["payload"]["content"])
        else:
            print_json(data[view])

    @app.command()
    def history(page_id: str, store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
        """List every revision of a page, oldest first."""
        with api.open_store(store_path) as store:
            store.current(page_id)
            revisions = [api.revision_summary(r) for r in store.revisions(page_id)]
            heads = [r.revision_id for r in store.graph_heads(page_id)]
        data = {"page_id": page_id, "heads": heads, "revisions": revisions}
        emit(data, as_json, lambda: table(
            ("revision", "created", "by", "operation", "status", "note"),
            ((r["revision_id"] + (" *" if r["revision_id"] in heads else ""), r["created_at"],
              f"{r['created_by']['actor_type']}:{r['created_by']['actor_id']}", r["operation"],
              r["lifecycle_status"], r["note"] or "") for r in revisions)))

    @app.command("ls")
    def list_pages(
        page_type: Annotated[list[str] | None, typer.Option("--type", help="Only this type "
                                                             "(repeatable).")] = None,
        namespace: Annotated[list[str] | None, typer.Option("--namespace")] = None,
        status: Annotated[list[str] | None, typer.Option(
            "--status", help="Lifecycle status (repeatable; default active).")] = None,
        include_proposed: Annotated[bool, typer.Option("--include-proposed",
                                                       help="Also list proposals.")] = False,
        limit: Annotated[int | None, typer.Option(
            "--limit", "-n", help="At most N pages; the JSON is then {pages, next_cursor}.")
        ] = None,
        cursor: Annotated[str | None, typer.Option(
            "--cursor", help="Continue a previous listing (its next_cursor).")] = None,
        as_of: AsOfOpt = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """List pages (active ones by default), newest first."""
        with api.open_store(store_path) as opened:
            store = api.as_of_view(opened, as_of)
            entries, next_cursor = api.list_page_window(
                store, types=page_type or (), namespaces=namespace or (),
                statuses=status or ("active",), include_proposed=include_proposed,
                limit=limit, cursor=cursor)
            skipped = api.unreadable_pages(opened)
        for problem in skipped:
            note(f"Warning: not listed: {problem} (see `pcp doctor`)")
        rows = [api.entry_summary(e) for e in entries]
        paged = limit is not None or cursor is not None
        data: object = {"pages": rows, "next_cursor": next_cursor} if paged else rows

        def human() -> None:
            table(("page_id", "type", "title", "namespace", "status", "updated"),
                  ((d["page_id"], d["type"], d["title"], d["namespace"], d["lifecycle_status"],
                    (d["updated_at"] or "")[:10]) for d in rows))
            if next_cursor:
                note(f"More: --cursor {next_cursor}")

        emit(data, as_json, human)

    @app.command()
    def related(
        page_id: str,
        relation_type: Annotated[list[str] | None, typer.Option(
            "--type", help="Only relations of this type (repeatable; default all).")] = None,
        depth: Annotated[int, typer.Option("--depth", help="How many steps (1-5).")] = 1,
        include_superseded: Annotated[bool, typer.Option(
            "--include-superseded", help="Also reach superseded and archived pages.")] = False,
        include_sensitive: Annotated[bool, typer.Option(
            "--include-sensitive", help="Also reach high-sensitivity pages.")] = False,
        scope: Annotated[list[str] | None, typer.Option(
            "--scope", help="Never leave these namespaces: NS, prefix:* or * (repeatable).")
        ] = None,
        as_of: AsOfOpt = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Pages related to PAGE, following relations both ways up to --depth steps."""
        with api.open_store(store_path) as store:
            data = api.related(store, page_id, types=relation_type or (), depth=depth,
                               scopes=scope or None, include_superseded=include_superseded,
                               include_sensitive=include_sensitive, as_of=as_of)

        def human() -> None:
            if not data["pages"]:
                note("No related pages.")
                return
            arrows = {"outgoing": "->", "incoming": "<-"}
            table(("depth", "relation", "page_id", "type", "title"),
                  ((p["depth"], f"{arrows[p['via']['direction']]} {p['via']['relation_type']}",
                    p["page_id"], p["type"], p["title"]) for p in data["pages"]))

        emit(data, as_json, human)

    @app.command()
    def diff(
        page_id: str,
        rev_a: Annotated[str | None, typer.Argument(metavar="[REV_A]", help="The older "
                                                    "revision (default: the head's parent).")
                         ] = None,
        rev_b: Annotated[str | None, typer.Argument(metavar="[REV_B]", help="The newer "
                                                    "revision (default: the head).")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """What changed between two revisions: the Markdown diff, then changed fields."""
        with api.open_store(store_path) as store:
            data = api.diff_revisions(store, page_id, rev_a, rev_b)

        def human() -> None:
            if data["diff"]:
                text(data["diff"])
            for change in data["fields"]:
                text(f"{change['field']}: {change['from']!r} -> {change['to']!r}\n")
            if not data["diff"] and not data["fields"]:
                note("No changes.")

        emit(data, as_json, human)

    @app.command()
    def link(
        from_id: Annotated[str, typer.Argument(metavar="FROM")],
        relation: Annotated[str, typer.Argument(metavar="RELATION")],
        to_id: Annotated[str, typer.Argument(metavar="TO")],
        note_text: Annotated[str | None, typer.Option("--note")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Link two pages (their current revisions) with a typed relation."""
        with api.open_store(store_path) as store:
            relation_obj = store.link(from_id, relation, to_id, note=note_text)
        data = relation_obj.to_dict()
        emit(data, as_json, lambda: text(
            f"linked {data['from_page_id']} -{data['relation_type']}-> {data['to_page_id']} "
            f"({data['relation_id']})"))

    @app.command()
    def archive(page_id: str, store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
        """Archive a page: kept, hidden from current-only reads."""
        with api.open_store(store_path) as store:
            result = api.set_lifecycle(store, page_id, "archived")
        write_result(result, as_json, "archived")

    @app.command()
    def tombstone(
        page_id: str,
        reason: Annotated[str | None, typer.Option("--reason")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Tombstone a page: kept for audit, hidden from ordinary reads."""
        with api.open_store(store_path) as store:
            result = api.set_lifecycle(store, page_id, "tombstoned", reason=reason)
        write_result(result, as_json, "tombstoned")

    @app.command()
    def delete(
        page_id: str,
        yes: Annotated[bool, typer.Option("--yes", help="Really delete, irreversibly.")] = False,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Delete a page with all its revisions and relations (needs --yes)."""
        if not yes:
            raise UsageError(
                f"deleting {page_id} removes it and its whole history",
                hint="add --yes to confirm, or use `pcp tombstone` to keep it for audit",
            )
        with api.open_store(store_path) as store:
            data = store.delete(page_id)
        emit(data, as_json, lambda: text(
            f"deleted {page_id} ({data['revisions_removed']} revisions, "
            f"{data['relations_removed']} relations)"))


def _print_page(data: dict) -> None:
    page = data["page"]
    lines = [
        f"# {page['title'] or page['page_id']}",
        f"page_id:   {page['page_id']}",
        f"revision:  {page['revision_id']}" + ("" if data["is_head"] else "  (not the head)"),
        f"type:      {page['type']}    namespace: {page['namespace']}",
        f"status:    {page['lifecycle_status']} / {page['review_status']}",
        f"origin:    {page['origin']}    sensitivity: {page['sensitivity']}",
        f"updated:   {page['created_at']}",
    ]
    if page["tags"]:
        lines.append(f"tags:      {', '.join(page['tags'])}")
    if page["record"]:
        lines.append("record:    " + ", ".join(f"{k}={v}" for k, v in
                                               sorted(page["record"].items())))
    if len(data["heads"]) > 1:
        lines.append(f"diverged:  {len(data['heads'])} heads: {', '.join(data['heads'])}")
    text("\n".join(lines) + "\n")
    text(page["payload"]["content"])


def _slug(name: str) -> str:
    import re

    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:64]
