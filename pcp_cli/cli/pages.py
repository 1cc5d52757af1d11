"""Page commands: init, add, edit, revise, show, history, ls, link, archive, tombstone, delete.

Every PAGE argument is resolved by the library (`api.find_page`): a whole id, a unique prefix
of one (with or without `pg_`), or a title only one page has.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pcp_cli import api
from pcp_cli.cli.editor import ask_yes, run_editor
from pcp_cli.cli.output import (
    AsOfOpt,
    JsonOpt,
    StoreOpt,
    complete_namespace,
    complete_page,
    complete_type,
    emit,
    examples,
    note,
    paged,
    paging_wanted,
    plural,
    print_json,
    table,
    text,
)
from pcp_cli.errors import InvalidInput, UsageError

FileOpt = Annotated[
    str | None, typer.Option("--file", "-f", metavar="FILE",
                             help="Read the text from this file ('-' = stdin).")
]
PageArg = Annotated[str, typer.Argument(
    metavar="PAGE", help="A page id, a unique prefix of one (pg_ optional), or its title.",
    autocompletion=complete_page)]
# `pcp show` on a terminal without a pager prints at most this much of the text.
SHOW_MAX_LINES = 400
SHOW_MAX_CHARS = 64_000


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


def _span(value: str) -> tuple[int, int]:
    start, sep, end = value.partition(":")
    if not sep or not start.strip().isdigit() or not end.strip().isdigit():
        raise typer.BadParameter(f"{value!r} is not START:END (two character offsets, as a "
                                 "search result's source_spans give them)",
                                 param_hint="--passage")
    return int(start), int(end)


def register(app: typer.Typer) -> None:
    @app.command(epilog=examples("pcp init ~/context --owner ada",
                                 "pcp init --git        # a cloned store: set up git sync here"))
    def init(
        directory: Annotated[str, typer.Argument(metavar="DIR",
                                                 help="Folder for the new store.")] = ".",
        owner: Annotated[str | None, typer.Option("--owner", metavar="ID", help="Owner id "
                                                   "(default: the folder name).")] = None,
        namespace: Annotated[str | None, typer.Option("--namespace", metavar="NS",
                                                       help="Default namespace "
                                                       "(default: user:<owner>).")] = None,
        git: Annotated[bool, typer.Option("--git", help="Make it a git repository (or, for an "
                                          "existing store, set up git sync on this device)."
                                          )] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Create a new, empty context store."""
        root = Path(directory)
        owner_id = owner or _slug(root.resolve().name) or "me"
        existing = git and (root / "pcp.yaml").is_file()
        if existing:
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
            "created": not existing,
        }
        if git_setup is not None:
            data["git"] = git_setup

        def human() -> None:
            if existing:
                text(f"{store.root} is already a pcp store (owner {store.owner_id}); "
                     "left it as it was.")
            else:
                text(f"Initialised a pcp store in {store.root} (owner {store.owner_id}, "
                     f"namespace {store.default_namespace})")
            if git_setup is not None:
                made = "Created a git repository and set" if git_setup["created"] else "Set"
                text(f"{made} up git sync in {git_setup['repository']}: .gitignore, "
                     ".gitattributes and the pcp merge driver.")
            if git_setup is not None and git_setup["identity_problem"]:
                note(f"git has no identity here ({git_setup['identity_problem']}): `pcp sync` "
                     f"cannot commit until you set one: {git_setup['identity_fix']}.")
            if not existing and owner is None:
                note(f"The owner is {store.owner_id!r}, taken from the folder name; to choose "
                     f"another, start again with `pcp init {directory} --owner ID` (before "
                     "adding pages) or edit owner_id in pcp.yaml.")

        emit(data, as_json, human)

    @app.command(epilog=examples('pcp add "Tidewatch architecture: three services behind a queue"',
                                 "pcp add --file notes.md --type document --tag tidewatch",
                                 "pcp add                # on a terminal: opens your editor"))
    def add(
        text_arg: Annotated[str | None, typer.Argument(
            metavar="[TEXT]", help="The page text ('-' = stdin; none on a terminal: your "
            "editor opens).")] = None,
        file: FileOpt = None,
        page_type: Annotated[str, typer.Option("--type", metavar="TYPE", help="Page type.",
                                               autocompletion=complete_type)] = "note",
        title: Annotated[str | None, typer.Option(
            "--title", metavar="TITLE", help="The title (default: the text's first line).")
        ] = None,
        namespace: Annotated[str | None, typer.Option(
            "--namespace", metavar="NS", help="The namespace (default: the store's).",
            autocompletion=complete_namespace)] = None,
        sensitivity: Annotated[str, typer.Option("--sensitivity", metavar="LEVEL",
                                                 help="low|medium|high")] = "low",
        origin: Annotated[str, typer.Option(
            "--origin", metavar="ORIGIN", help="Where the text comes from: user_stated, "
            "imported, generated, …")] = "user_stated",
        tags: Annotated[list[str] | None, typer.Option("--tag", metavar="TAG",
                                                       help="A tag (repeatable).")] = None,
        key: Annotated[str | None, typer.Option("--idempotency-key", metavar="KEY",
                                                help="The same key twice writes once.")] = None,
        derived_from: Annotated[list[str] | None, typer.Option(
            "--derived-from", help="A page this one was derived from (repeatable; required "
            "for --type summary).")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Add a page (a note by default)."""
        content = read_text_input(text_arg, file)
        with api.open_store(store_path) as store:
            draft = None
            if content is None:
                if not sys.stdin.isatty():
                    raise UsageError("no text given", hint="pcp add TEXT, pcp add --file F, or "
                                     "pipe to `pcp add -`")
                draft = api.new_page_draft(store)
                run_editor(draft)
                content = draft.read_text("utf-8")
                if not content.strip():
                    draft.unlink(missing_ok=True)
                    raise UsageError("the page is empty: nothing was added")
            try:
                result = api.add_page(store, content, page_type=page_type, title=title,
                                      namespace=namespace, sensitivity=sensitivity,
                                      origin=origin, tags=tags or (), idempotency_key=key,
                                      derived_from=tuple(derived_from or ()))
            except Exception:
                if draft is not None:
                    note(f"Your text is kept in {draft}.")
                raise
            if draft is not None:
                draft.unlink(missing_ok=True)
        write_result(result, as_json)

    @app.command(epilog=examples("pcp edit pg_01M8R7A1", 'pcp edit "Tidewatch architecture"'))
    def edit(page_id: PageArg, store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
        """Edit a page's head file in $VISUAL / $EDITOR (else vi); saved changes become a revision.

        The editor opens a copy of the head file (frontmatter and text). On exit the change is
        recorded as a hand edit, or "unchanged" is reported. A broken frontmatter is reported
        with its file and line, and the editor can be reopened; an edit not recorded is kept
        and the next `pcp edit` of the page resumes it.
        """
        with api.open_store(store_path) as store:
            page_id = api.find_page(store, page_id)
            session = api.begin_edit(store, page_id)
            if session.resumed:
                note(f"Resuming your unrecorded edit of {page_id} ({session.draft}).")
            while True:
                run_editor(session.draft)
                edited = session.draft.read_text("utf-8")
                try:
                    api.check_edit(store, session, edited)
                    break
                except InvalidInput as exc:
                    note(f"Error: {exc.message}")
                    if not ask_yes("Reopen the editor to fix it?"):
                        raise InvalidInput(
                            f"{exc.message}; nothing was recorded",
                            hint=f"your text is kept in {session.draft}; `pcp edit "
                            f"{page_id}` reopens it") from None
            result = api.record_edit(store, session, edited)
        if result.status == "unchanged" and not as_json:
            text(f"unchanged {result.page_id} ({result.revision_id})")
            return
        write_result(result, as_json)

    @app.command(epilog=examples('pcp revise pg_01M8R7A1 "Tidewatch: four services now"',
                                 "pcp revise pg_01M8R7A1 --file notes.md --expect rev_01M8…"))
    def revise(
        page_id: PageArg,
        text_arg: Annotated[str | None, typer.Argument(metavar="[TEXT]",
                                                       help="New text ('-' = stdin).")] = None,
        file: FileOpt = None,
        expect: Annotated[str | None, typer.Option("--expect", metavar="REV",
                                                   help="Fail unless the head is this "
                                                   "revision.")] = None,
        title: Annotated[str | None, typer.Option(
            "--title", metavar="TITLE", help="A new title (default: derived again from the "
            "new text's first line, unless the title was set by hand).")] = None,
        sensitivity: Annotated[str | None, typer.Option("--sensitivity", metavar="LEVEL",
                                                        help="low|medium|high")] = None,
        tags: Annotated[list[str] | None, typer.Option("--tag", metavar="TAG",
                                                       help="Replace the tags (repeatable)."
                                                       )] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Publish a new revision of a page."""
        content = read_text_input(text_arg, file)
        with api.open_store(store_path) as store:
            page_id = api.find_page(store, page_id)
            result = api.revise_page(store, page_id, content=content, title=title,
                                     sensitivity=sensitivity, tags=tags,
                                     expected_revision_id=expect)
        write_result(result, as_json)

    @app.command(epilog=examples("pcp show pg_01M8R7A1", 'pcp show "Tidewatch architecture"',
                                 "pcp show 01m8r7a1 --view history --json"))
    def show(
        page_id: PageArg,
        rev: Annotated[str | None, typer.Option("--rev", metavar="REV",
                                                help="A revision id.")] = None,
        view: Annotated[str | None, typer.Option(
            "--view", metavar="VIEW",
            help="manifest|payload|relations|history|facets|source_spans")] = None,
        full: Annotated[bool, typer.Option(
            "--full", help="On a terminal without a pager, print all of a long text (by "
            f"default at most {SHOW_MAX_LINES} lines).")] = False,
        passage: Annotated[str | None, typer.Option(
            "--passage", metavar="START:END",
            help="Only the passage at these character offsets of the text (a search "
            "result's source_spans), with --neighbours turns or paragraphs around it.")] = None,
        neighbours: Annotated[int, typer.Option(
            "--neighbours", help="With --passage: passages on each side (0-5).")] = 1,
        as_of: AsOfOpt = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Show a page (its head revision, or --rev), or one view of it (through a pager)."""
        span = _span(passage) if passage is not None else None
        with api.open_store(store_path) as store:
            page_id = api.find_page(store, page_id)
            if span is not None:
                data = api.read_passage(store, page_id, *span, neighbours=neighbours,
                                        revision_id=rev, as_of=as_of)
            else:
                data = api.read_page(store, page_id, revision_id=rev, view=view, as_of=as_of)
        with paged():
            if as_json:
                print_json(data)
            elif span is not None:
                text(data["passage"]["text"])
            elif view is None:
                _print_page(data, full=full)
            elif view == "payload":
                text(_bounded(data["payload"]["content"], full))
            else:
                print_json(data[view])

    @app.command(epilog=examples("pcp history pg_01M8R7A1", "pcp history pg_01M8R7A1 --json"))
    def history(page_id: PageArg, store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
        """List every revision of a page, oldest first (* marks the head)."""
        with api.open_store(store_path) as store:
            page_id = api.find_page(store, page_id)
            store.current(page_id)
            revisions = [api.revision_summary(r) for r in store.revisions(page_id)]
            heads = [r.revision_id for r in store.graph_heads(page_id)]
        data = {"page_id": page_id, "heads": heads, "revisions": revisions}
        with paged():
            emit(data, as_json, lambda: table(
                ("revision", "created", "by", "operation", "status", "note"),
                ((r["revision_id"] + (" *" if r["revision_id"] in heads else ""),
                  r["created_at"],
                  f"{r['created_by']['actor_type']}:{r['created_by']['actor_id']}",
                  r["operation"], r["lifecycle_status"], r["note"] or "") for r in revisions),
                whole=(0, 1)))

    @app.command("ls", epilog=examples("pcp ls --limit 20", "pcp ls --type keystone --json",
                                       "pcp ls --namespace project:tidewatch --status archived"))
    def list_pages(
        page_type: Annotated[list[str] | None, typer.Option(
            "--type", metavar="TYPE", help="Only this type (repeatable).",
            autocompletion=complete_type)] = None,
        namespace: Annotated[list[str] | None, typer.Option(
            "--namespace", metavar="NS", help="Only this namespace (repeatable).",
            autocompletion=complete_namespace)] = None,
        status: Annotated[list[str] | None, typer.Option(
            "--status", metavar="STATUS",
            help="Lifecycle status (repeatable; default active).")] = None,
        include_proposed: Annotated[bool, typer.Option("--include-proposed",
                                                       help="Also list proposals.")] = False,
        limit: Annotated[int | None, typer.Option(
            "--limit", "-n", metavar="N",
            help="At most N pages (the newest); the JSON is then {pages, next_cursor}.")
        ] = None,
        cursor: Annotated[str | None, typer.Option(
            "--cursor", help="Continue a previous listing (its next_cursor).")] = None,
        as_of: AsOfOpt = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """List pages (active ones by default), newest first (short ids; --json: whole ones)."""
        if limit is not None and limit < 1:
            raise UsageError(f"--limit must be at least 1, not {limit}")
        with api.open_store(store_path) as opened:
            store = api.as_of_view(opened, as_of)
            entries, next_cursor = api.list_page_window(
                store, types=page_type or (), namespaces=namespace or (),
                statuses=status or ("active",), include_proposed=include_proposed,
                limit=limit, cursor=cursor)
            skipped = api.unreadable_pages(opened)
            served = api.pages_served_from_revisions(opened)
            shorten = api.short_page_ids(opened) if _terminal() and not as_json else str
        for problem in skipped:
            note(f"Warning: not listed: {problem} (see `pcp doctor`)")
        for problem in served:
            note(f"Warning: listed from its last revision: {problem} (see `pcp doctor`)")
        rows = [api.entry_summary(e) for e in entries]
        windowed = limit is not None or cursor is not None
        data: object = {"pages": rows, "next_cursor": next_cursor} if windowed else rows

        def human() -> None:
            table(("page_id", "type", "title", "namespace", "status", "updated"),
                  ((shorten(d["page_id"]), d["type"], d["title"], d["namespace"],
                    d["lifecycle_status"], (d["updated_at"] or "")[:10]) for d in rows),
                  whole=(0, 5))
            if next_cursor:  # after the table: on a terminal in the pager with it
                (text if _terminal() else note)(f"More: --cursor {next_cursor}")

        with paged():
            emit(data, as_json, human)

    @app.command(epilog=examples("pcp related pg_01M8R7A1",
                                 'pcp related "Tidewatch architecture" --depth 2 --json'))
    def related(
        page_id: PageArg,
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
            page_id = api.find_page(store, page_id)
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
                    p["page_id"], p["type"], p["title"]) for p in data["pages"]),
                  whole=(0, 2))

        with paged():
            emit(data, as_json, human)

    @app.command(epilog=examples("pcp diff pg_01M8R7A1",
                                 "pcp diff pg_01M8R7A1 rev_01M8R7A1 rev_01M8R9QX --json"))
    def diff(
        page_id: PageArg,
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
            page_id = api.find_page(store, page_id)
            data = api.diff_revisions(store, page_id, rev_a, rev_b)

        def human() -> None:
            if data["diff"]:
                text(data["diff"])
            for change in data["fields"]:
                text(f"{change['field']}: {change['from']!r} -> {change['to']!r}\n")
            if not data["diff"] and not data["fields"]:
                note("No changes.")

        with paged():
            emit(data, as_json, human)

    @app.command(epilog=examples("pcp link pg_01M8R7A1 depends_on pg_01M8R9QX",
                                 'pcp link "Tidewatch architecture" derived_from pg_01M8R9QX',
                                 "pcp link rev_01M8R7A1 depends_on rev_01M8R9QX   # pinned"))
    def link(
        from_id: Annotated[str, typer.Argument(metavar="FROM", help="The page (or revision, "
                                               "rev_…) the relation starts from.",
                                               autocompletion=complete_page)],
        relation: Annotated[str, typer.Argument(metavar="RELATION", help="The relation type "
                                                "(depends_on, derived_from, related_to, …).")],
        to_id: Annotated[str, typer.Argument(metavar="TO", help="The page (or revision, "
                                             "rev_…) it points to.",
                                             autocompletion=complete_page)],
        note_text: Annotated[str | None, typer.Option("--note", metavar="TEXT",
                                                      help="Why (kept with the relation).")
                             ] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Link two pages (their current revisions) with a typed relation; a revision id
        (rev_…) for FROM or TO pins the relation to that revision."""
        with api.open_store(store_path) as store:
            from_id, to_id = api.link_ref(store, from_id), api.link_ref(store, to_id)
            relation_obj, created = api.link(store, from_id, relation, to_id, note=note_text)
        data = relation_obj.to_dict()
        verb = "linked" if created else "already linked"
        pinned = data.get("pinned") or []

        def end(name: str) -> str:
            page = data[f"{name}_page_id"]
            return f"{page}@{data[f'{name}_revision_id']}" if name in pinned else page

        emit(data, as_json, lambda: text(
            f"{verb} {end('from')} -{data['relation_type']}-> {end('to')} "
            f"({data['relation_id']}" + (", pinned to " + " and ".join(
                f"the {name} revision" for name in pinned) if pinned else "") + ")"))

    @app.command(epilog=examples("pcp archive pg_01M8R7A1"))
    def archive(page_id: PageArg, store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
        """Archive a page: kept, hidden from current-only reads."""
        with api.open_store(store_path) as store:
            page_id = api.find_page(store, page_id)
            result = api.set_lifecycle(store, page_id, "archived")
        write_result(result, as_json, "archived")

    @app.command(epilog=examples('pcp tombstone pg_01M8R7A1 --reason "no longer true"'))
    def tombstone(
        page_id: PageArg,
        reason: Annotated[str | None, typer.Option("--reason", metavar="TEXT",
                                                   help="Why (kept for audit).")] = None,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Tombstone a page: kept for audit, hidden from ordinary reads."""
        with api.open_store(store_path) as store:
            page_id = api.find_page(store, page_id)
            result = api.set_lifecycle(store, page_id, "tombstoned", reason=reason)
        write_result(result, as_json, "tombstoned")

    @app.command(epilog=examples("pcp delete pg_01M8R7A1 --yes",
                                 "pcp delete pg_01M8R7A1 --yes --override-retention"))
    def delete(
        page_id: PageArg,
        yes: Annotated[bool, typer.Option("--yes", help="Really delete, irreversibly.")] = False,
        override_retention: Annotated[bool, typer.Option(
            "--override-retention", help="Delete even what a lease or the retention policy "
            "keeps (the rules overridden are named).")] = False,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Delete a page with all its revisions and relations (needs --yes). What a lease or
        the retention policy in pcp.yaml keeps is deleted only when you confirm on a terminal
        or pass --override-retention; the rules overridden are named."""
        if not yes:
            raise UsageError(
                f"deleting {page_id} removes it and its whole history",
                hint="add --yes to confirm, or use `pcp tombstone` to keep it for audit",
            )
        with api.open_store(store_path) as store:
            page_id = api.find_page(store, page_id)
            overrides = api.delete_overrides(store, page_id)
            if overrides and not override_retention:
                if as_json or not (sys.stdin.isatty() and sys.stdout.isatty()):
                    raise UsageError(
                        f"deleting {page_id} overrides the retention rules: "
                        + "; ".join(overrides),
                        hint="add --override-retention to delete it anyway, or tombstone it and "
                        "let `pcp retention collect` remove it when the policy says")
                for rule in overrides:
                    note(f"retention: {rule}")
                sys.stderr.write(f"Delete {page_id} for good anyway? [y/N] ")
                sys.stderr.flush()
                if sys.stdin.readline().strip().lower() not in ("y", "yes"):
                    note("Nothing deleted.")
                    return
            data = {**api.delete_page(store, page_id), "overridden": overrides}
        emit(data, as_json, lambda: text(
            f"deleted {page_id} ({plural(data['revisions_removed'], 'revision')}, "
            f"{plural(data['relations_removed'], 'relation')})"
            + (f", overriding: {'; '.join(overrides)}" if overrides else "")))


def _terminal() -> bool:
    return sys.stdout.isatty()


def _bounded(content: str, full: bool) -> str:
    """All of `content`, unless it is long and would scroll past on a terminal unpaged."""
    if full or not sys.stdout.isatty() or paging_wanted():
        return content
    lines = content.splitlines(keepends=True)
    if len(lines) <= SHOW_MAX_LINES and len(content) <= SHOW_MAX_CHARS:
        return content
    shown = "".join(lines[:SHOW_MAX_LINES])[:SHOW_MAX_CHARS]
    note(f"(showing {len(shown):,} of {len(content):,} characters: pipe it, use a pager, or "
         "add --full for all of it)")
    return shown


def _print_page(data: dict, *, full: bool = False) -> None:
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
    text(_bounded(page["payload"]["content"], full))


def _slug(name: str) -> str:
    import re

    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:64]
