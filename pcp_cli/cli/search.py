"""`pcp search`, `pcp index`, `pcp stats`, `pcp scopes`, `pcp capabilities`.

Only `search` and `index` load the index (and so whoosh), inside the command functions.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli.output import (
    AsOfOpt,
    JsonOpt,
    StoreOpt,
    console,
    emit,
    examples,
    is_terminal,
    note,
    print_json,
    progress_bar,
    table,
    text,
)
from pcp_cli.cli.shared import BUILDING_NOTE, COMMAND_MODULE, SCAN_NOTE
from pcp_cli.cli.sources import (
    DEFAULT_SOURCE_TIMEOUT,
    SourcesOpt,
    SourceTimeoutOpt,
    fan_out,
    show_groups,
)

EXT = "org.pcp-cli"


def register(app: typer.Typer) -> None:
    @app.command(epilog=examples('pcp search "tidewatch queue"',
                                 "pcp search 'type:keystone AND tag:food' --json",
                                 "pcp search lisbon --scope 'project:*' -n 5"))
    def search(
        query: Annotated[str, typer.Argument(
            help='Words, "quoted phrases", field:value (type:keystone, tag:food, ns:work), '
            "AND, OR, NOT and parentheses.")],
        limit: Annotated[int | None, typer.Option(
            "--limit", "-n", help="How many results (default 10, at most 25).")] = None,
        page_type: Annotated[list[str] | None, typer.Option(
            "--type", help="Only this page type (repeatable).")] = None,
        exclude_type: Annotated[list[str] | None, typer.Option(
            "--exclude-type", help="Leave out this page type (repeatable).")] = None,
        include_superseded: Annotated[bool, typer.Option(
            "--include-superseded", help="Also superseded and archived pages.")] = False,
        include_sensitive: Annotated[bool, typer.Option(
            "--include-sensitive", help="Also high-sensitivity pages.")] = False,
        min_score: Annotated[float | None, typer.Option(
            "--min-score", help="Drop scored results below this relevance (0-1).")] = None,
        exclude_stale: Annotated[bool, typer.Option(
            "--exclude-stale", help="Leave out keystones past their stale_after date (by "
            "default they are returned, labelled stale).")] = False,
        scope: Annotated[list[str] | None, typer.Option(
            "--scope", help="Only these namespaces: NS, prefix:* or * (repeatable).")] = None,
        mode: Annotated[str, typer.Option(
            "--mode", help="text (ranked), exact (the phrase or identifier literally), "
            "temporal (by observed time; the query * lists every page), graph (matches, then "
            "what their relations reach), semantic (by meaning), hybrid (words and meaning "
            "fused; both need the semantic extra), or auto (picks one and says which; "
            "hybrid for a question when the extra is installed).")] = "text",
        relation_type: Annotated[list[str] | None, typer.Option(
            "--relation-type", help="Only pages with a relation of this type, either "
            "direction; in graph mode, the relations to follow (repeatable).")] = None,
        status: Annotated[list[str] | None, typer.Option(
            "--status", help="Lifecycle status: active, superseded, archived (repeatable; "
            "default active).")] = None,
        origin: Annotated[list[str] | None, typer.Option(
            "--origin", help="Only this origin (repeatable).")] = None,
        namespace: Annotated[list[str] | None, typer.Option(
            "--namespace", help="Only this exact namespace (repeatable).")] = None,
        tag: Annotated[list[str] | None, typer.Option(
            "--tag", help="Only pages with this tag (repeatable: any of them).")] = None,
        observed_from: Annotated[str | None, typer.Option(
            "--from", help="Observed on or after this date or time.")] = None,
        observed_to: Annotated[str | None, typer.Option(
            "--to", help="Observed on or before this date or time (2024 = all of 2024).")
        ] = None,
        depth: Annotated[int | None, typer.Option(
            "--depth", help="graph mode: how many relation steps to follow (1-5, default 1).")
        ] = None,
        cursor: Annotated[str | None, typer.Option(
            "--cursor", help="Continue a previous search (its next_cursor).")] = None,
        as_of: AsOfOpt = None,
        sources: SourcesOpt = None,
        source_timeout: SourceTimeoutOpt = DEFAULT_SOURCE_TIMEOUT,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Search the store's pages (current, non-sensitive ones by default); with --sources,
        the other registered PCP sources too."""
        filters = {k: v for k, v in {
            "relation_types": relation_type, "lifecycle_status": status, "origins": origin,
            "namespaces": namespace, "tags": tag, "observed_from": observed_from,
            "observed_to": observed_to}.items() if v}
        # --sources: the other sources get the PCP v1 §4.2 arguments this search was given
        # (pcp's own filters, modes and scopes apply to this store only)
        remote = {k: v for k, v in {
            "query": query, "limit": limit, "types": page_type, "exclude_types": exclude_type,
            "include_superseded": include_superseded or None,
            "include_sensitive": include_sensitive or None, "min_score": min_score,
            "exclude_stale": exclude_stale or None,
        }.items() if v is not None and v != []}
        with api.open_store(store_path, refresh=False) as store:
            data = None
            if mode in ("text", "auto") and not filters and cursor is None and as_of is None \
                    and depth is None:
                data = api.search_before_index(
                    store, query, limit=limit, types=page_type or (),
                    exclude_types=exclude_type or (), include_superseded=include_superseded,
                    include_sensitive=include_sensitive, min_score=min_score,
                    scopes=scope or None, exclude_stale=exclude_stale)
            if data is not None:
                if not as_json:
                    note(SCAN_NOTE.rstrip("\n"))
                shorten = _Names(store, data["results"]) if is_terminal() else str
                if sources:
                    _grouped(store, data, sources, remote, source_timeout, as_json, shorten)
                else:
                    _show(data, as_json, shorten)
                return
            store.refresh()
            if not as_json and api.index_missing(store):  # stderr stays JSON under --json
                total = api.index_pages_count(store)
                note(BUILDING_NOTE.format(total).rstrip("\n"))
                with progress_bar(total) as progress:  # the first build, with its progress
                    if progress is not None:
                        api.index_store(store, progress=progress, vectors=False)
            if not as_json and mode in ("semantic", "hybrid") and api.vectors_missing(store):
                note(f"Embedding {api.index_pages_count(store)} pages for semantic search "
                     "(once; later searches embed only what changed)…")
            data = api.search(store, query, limit=limit, types=page_type or (),
                              exclude_types=exclude_type or (),
                              include_superseded=include_superseded,
                              include_sensitive=include_sensitive, min_score=min_score,
                              scopes=scope or None, mode=mode, filters=filters,
                              cursor=cursor, as_of=as_of, depth=depth,
                              exclude_stale=exclude_stale)
            shorten = _Names(store, data["results"]) if is_terminal() else str
            if sources:
                _grouped(store, data, sources, remote, source_timeout, as_json, shorten)
                return
        _show(data, as_json, shorten)

    def _grouped(store: Any, data: dict[str, Any], sources: list[str],
                 arguments: dict[str, Any], timeout: float, as_json: bool,
                 shorten: Callable[[str], str]) -> None:
        grouped = fan_out(store, sources, "pcp_search", arguments, data, timeout, as_json)
        show_groups(grouped, as_json, "results",
                    lambda found, local: _print_results(found, shorten if local else str))

    def _show(data: dict[str, Any], as_json: bool, shorten: Callable[[str], str]) -> None:
        if as_json:
            print_json(data)
            return
        if data["filters_applied"].get("mode_requested") == "auto":
            note(f"Mode: {data['filters_applied']['mode']} "
                 f"({data['filters_applied']['mode_reason']}).")
        filters = data["filters_applied"]
        if filters.get("capped"):
            note(f"Showing at most {filters['limit']} results (asked for "
                 f"{filters['limit_requested']}).")
        if not data["results"]:
            note("No results.")
            return
        _print_results(data["results"], shorten)
        if data.get("next_cursor"):  # after the hits (stderr when piped: stdout is data)
            (text if is_terminal() else note)(f"More: --cursor {data['next_cursor']}")

    @app.command("index", epilog=examples("pcp index", "pcp index --rebuild"))
    def index(
        rebuild: Annotated[bool, typer.Option(
            "--rebuild", help="Build the index from scratch instead of updating it.")] = False,
        engine: Annotated[str | None, typer.Option(
            "--engine", metavar="whoosh|tantivy",
            help="Use this search engine on this device from now on (rebuilds the index when "
                 "it changes); tantivy is the default where its package is installed.")] = None,
        vectors: Annotated[bool, typer.Option(
            "--vectors/--no-vectors",
            help="With the semantic extra, also bring the semantic vectors up to date "
                 "(--no-vectors: the text index only; a semantic search embeds what is "
                 "missing when it runs).")] = True,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Bring the search index (.pcp/index/) and, with the semantic extra, the vectors
        (.pcp/vectors/) up to date with the store's files."""
        # With --engine, a build in progress is stopped before this process reads every file.
        with api.open_store(store_path, refresh=engine is None) as store:
            total = api.index_pages_count(store)
            with progress_bar(total) as progress, progress_bar(
                    total, "embedding") as vector_progress:
                report = api.index_store(store, rebuild=rebuild, progress=progress,
                                         vector_progress=vector_progress, engine=engine,
                                         vectors=None if vectors else False)
        emit(report, as_json, lambda: text(_index_line(report) + "\n"
                                           + _vectors_line(report["vectors"])))
        if report.get("replaced_build") and not as_json:
            note(f"Stopped and replaced {api.describe_build(report['replaced_build'])}.")

    @app.command(epilog=examples("pcp stats", "pcp stats --json",
                                 "pcp stats --include-sensitive"))
    def stats(include_sensitive: Annotated[bool, typer.Option(
                  "--include-sensitive", help="Also count high-sensitivity pages.")] = False,
              as_of: AsOfOpt = None, store_path: StoreOpt = None,
              as_json: JsonOpt = False) -> None:
        """Counts of pages by type, origin, namespace and lifecycle, and their time range
        (high-sensitivity pages only with --include-sensitive)."""
        with api.open_store(store_path) as store:
            data = api.stats(store, as_of=as_of, include_sensitive=include_sensitive)

        def human() -> None:
            rows = [("total", "", data["total"])]
            for key in ("by_type", "by_origin", "by_namespace", "by_lifecycle"):
                rows += [(key[3:], name, count) for name, count in data[key].items()]
            span = data["time_range"]
            rows.append(("time", "earliest", span["earliest"] or ""))
            rows.append(("time", "latest", span["latest"] or ""))
            table(("group", "value", "count"), rows)

        emit(data, as_json, human)

    @app.command(epilog=examples("pcp scopes", "pcp scopes --json"))
    def scopes(
        limit: Annotated[int | None, typer.Option("--limit", "-n",
                                                  help="At most N scopes.")] = None,
        cursor: Annotated[str | None, typer.Option(
            "--cursor", help="Continue a previous listing (its next_cursor).")] = None,
        store_path: StoreOpt = None, as_json: JsonOpt = False,
    ) -> None:
        """The namespaces of the store, with page counts, last activity and permissions."""
        with api.open_store(store_path) as store:
            data = api.list_scopes(store, limit=limit, cursor=cursor)

        def human() -> None:
            table(("namespace", "name", "owner", "visibility", "pages", "last activity"),
                  ((s["namespace"], s["display_name"], s["owner_id"], s["visibility"],
                    s["pages"], (s["last_activity"] or "")[:10]) for s in data["scopes"]))
            if data["next_cursor"]:
                note(f"More: --cursor {data['next_cursor']}")

        emit(data, as_json, human)

    @app.command(epilog=examples("pcp capabilities", "pcp capabilities --json"))
    def capabilities(store_path: StoreOpt = None, as_json: JsonOpt = False) -> None:
        """What this store supports (search modes, read views, limits, relation types, …)."""
        with api.open_store(store_path, refresh=False) as store:
            data = api.capabilities(store, operations=_cli_operations())
        emit(data, as_json, lambda: _print_capabilities(data))


def _cli_operations() -> list[str]:
    """The protocol operations this CLI really has a command for (from its command table)."""
    return api.offered_operations(list(COMMAND_MODULE), front_end="cli")


def _index_line(report: dict[str, Any]) -> str:
    index = f"{report['engine']} search index" if report.get("engine") else "search index"
    if report["rebuilt"]:
        return f"Rebuilt the {index} ({report['reason']}): {report['documents']} pages."
    if report["updated"] or report["removed"]:
        return (f"Updated the {index}: {report['updated']} page(s) re-indexed, "
                f"{report['removed']} removed; {report['documents']} pages.")
    return f"The {index} is up to date: {report['documents']} pages."


def _vectors_line(report: dict[str, Any]) -> str:
    if report.get("skipped"):
        return "Semantic vectors: left as they were (--no-vectors)."
    if "installed" in report:
        return ("Semantic vectors: not built (the semantic extra is not installed; "
                f"{report['hint']}).")
    counts = f"{report['documents']} pages, {report['chunks']} passages, {report['model']}"
    if report["rebuilt"]:
        return f"Rebuilt the semantic vectors ({report['reason']}): {counts}."
    if report["embedded"] or report["removed"] or report["fields_only"]:
        return (f"Updated the semantic vectors: {report['embedded']} page(s) embedded, "
                f"{report['fields_only']} with changed fields only, {report['removed']} "
                f"removed; {counts}.")
    return f"The semantic vectors are up to date: {counts}."


def _print_results(results: list[dict[str, Any]], shorten: Callable[[str], str] = str) -> None:
    """A table of search results, ours or another source's: a result missing an optional
    field, with values or extensions of unknown kinds, or stale, is shown as far as it goes
    (PCP v1.2 §7.2: a reader never drops context for those), never refused."""
    rows = []
    for r in results:
        if not isinstance(r, dict):
            continue
        score = r.get("score")
        shown = f"{score:.2f}" if isinstance(score, int | float) and not isinstance(
            score, bool) else "-"
        when = str(r.get("timestamp") or "")[:10] + (" stale" if r.get("stale") is True
                                                      else "")
        extensions = r.get("extensions")
        ours = extensions.get(EXT) if isinstance(extensions, dict) else None
        spans = ours.get("highlights") if isinstance(ours, dict) else None
        rows.append((shorten(str(r.get("id", "?"))), str(r.get("type", "?")),
                     str(r.get("origin", "generated")), shown, when.strip(),
                     str(r.get("snippet", "")), spans if isinstance(spans, list) else []))
    if not is_terminal():
        for *cells, _spans in rows:
            sys.stdout.write("\t".join(c.replace("\t", " ").replace("\n", " ")
                                       for c in cells) + "\n")
        return
    _print_hits(results, rows, shorten.titles if isinstance(shorten, _Names) else {})


class _Names:
    """On a terminal: a hit's short id (`shorten(id)`) and its page's title (`titles`)."""

    def __init__(self, store: Any, results: list[dict[str, Any]]) -> None:
        self.short = api.short_page_ids(store)
        self.titles: dict[str, str] = {}
        for result in results:
            page_id = result.get("extensions", {}).get(EXT, {}).get("page_id") or result["id"]
            entry = api.page_entry(store, page_id)
            if entry is not None:
                self.titles[page_id] = entry.title

    def __call__(self, page_id: str) -> str:
        return str(self.short(page_id))


def _print_hits(results: list[dict[str, Any]], rows: list[tuple[Any, ...]],
                titles: dict[str, str]) -> None:
    """On a terminal, a block per hit rather than a table (where a long id left the snippet
    25 columns and one hit wrapped to 13 lines): its number and title on one line, its id and
    what it is on the next, then the snippet across the whole width, matches highlighted."""
    from rich.padding import Padding
    from rich.text import Text

    from pcp_cli.render.visible import visible

    out = console()
    for number, (result, (page_id, kind, origin, score, day, snippet, spans)) in enumerate(
            zip(results, rows, strict=True), 1):
        own = result.get("extensions", {}).get(EXT, {})
        title = titles.get(own.get("page_id") or result["id"]) or page_id
        head = Text(f"{number:>2}. ")
        head.append(visible(" ".join(title.split())), style="bold")
        out.print(head, no_wrap=True, overflow="ellipsis")
        out.print(Text("    " + visible(" · ".join(
            part for part in (page_id, kind, origin, day, score) if part)), style="dim"),
            no_wrap=True, overflow="ellipsis")
        flat = " ".join(snippet.split("\n"))
        body, at = Text(), 0
        for start, end in [*sorted(spans), (len(flat), len(flat))]:  # codes shown, not obeyed
            start, end = max(start, at), max(end, start, at)
            body.append(visible(flat[at:start]))
            body.append(visible(flat[start:end]), style="bold reverse")
            at = max(at, end)
        out.print(Padding(body, (0, 0, 0, 4)))


def _print_capabilities(data: dict[str, Any]) -> None:
    for key, value in data.items():
        if isinstance(value, dict):
            for sub, inner in value.items():
                text(f"{key}.{sub}: {_flat(inner)}")
        else:
            text(f"{key}: {_flat(value)}")


def _flat(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_flat(v)}" for k, v in value.items())
    if isinstance(value, bool):  # people read yes/no, not Python's True/False
        return "yes" if value else "no"
    if value is None:
        return "none"
    return str(value)
