"""`pcp search`, `pcp index`, `pcp stats`, `pcp scopes`, `pcp capabilities`.

Only `search` and `index` load the index (and so whoosh), inside the command functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from pcp_cli import api
from pcp_cli.cli import search_text
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
# What a remote PCP source is sent of a search (PCP v1 §4.2's arguments).
REMOTE_ARGS = ("query", "limit", "types", "exclude_types", "include_superseded",
               "include_sensitive", "min_score")


def _flags(name: str, filter: bool = False) -> tuple[str, ...]:  # noqa: A002
    from pcp_cli.model.search_request import option

    return option(name, filter=filter).cli


def _help(name: str, filter: bool = False) -> str:  # noqa: A002
    from pcp_cli.model.search_request import option

    return option(name, filter=filter).help


def register(app: typer.Typer) -> None:
    @app.command(epilog=examples('pcp search "where did Ada move?"',
                                 "pcp search 'type:keystone AND tag:food' --json",
                                 "pcp search lisbon --scope 'project:*' -n 5"))
    def search(
        query: Annotated[str, typer.Argument(
            help='Words or a question as written; "quoted phrases", AND, OR, NOT, parentheses, '
            "field:value (type:keystone, tag:food, ns:work) and prefix* where meant.")],
        limit: Annotated[int | None, typer.Option(*_flags("limit"), help=_help("limit"))] = None,
        page_type: Annotated[list[str] | None, typer.Option(
            *_flags("types"), help=_help("types"))] = None,
        exclude_type: Annotated[list[str] | None, typer.Option(
            *_flags("exclude_types"), help=_help("exclude_types"))] = None,
        include_superseded: Annotated[bool, typer.Option(
            *_flags("include_superseded"), help=_help("include_superseded"))] = False,
        include_sensitive: Annotated[bool, typer.Option(
            *_flags("include_sensitive"), help=_help("include_sensitive"))] = False,
        min_score: Annotated[float | None, typer.Option(
            *_flags("min_score"), help=_help("min_score"))] = None,
        exclude_stale: Annotated[bool, typer.Option(
            *_flags("exclude_stale"), help=_help("exclude_stale"))] = False,
        scope: Annotated[list[str] | None, typer.Option(
            *_flags("scopes"), help=_help("scopes"))] = None,
        mode: Annotated[str, typer.Option(*_flags("mode"), help=_help("mode"))] = "text",
        relation_type: Annotated[list[str] | None, typer.Option(
            *_flags("relation_types", True), help=_help("relation_types", True))] = None,
        status: Annotated[list[str] | None, typer.Option(
            *_flags("lifecycle_status", True), help=_help("lifecycle_status", True))] = None,
        origin: Annotated[list[str] | None, typer.Option(
            *_flags("origins", True), help=_help("origins", True))] = None,
        namespace: Annotated[list[str] | None, typer.Option(
            *_flags("namespaces", True), help=_help("namespaces", True))] = None,
        tag: Annotated[list[str] | None, typer.Option(
            *_flags("tags", True), help=_help("tags", True))] = None,
        observed_from: Annotated[str | None, typer.Option(
            *_flags("observed_from", True), help=_help("observed_from", True))] = None,
        observed_to: Annotated[str | None, typer.Option(
            *_flags("observed_to", True), help=_help("observed_to", True))] = None,
        depth: Annotated[int | None, typer.Option(*_flags("depth"), help=_help("depth"))
                         ] = None,
        cursor: Annotated[str | None, typer.Option(*_flags("cursor"), help=_help("cursor"))
                          ] = None,
        as_of: AsOfOpt = None,
        sources: SourcesOpt = None,
        source_timeout: SourceTimeoutOpt = DEFAULT_SOURCE_TIMEOUT,
        store_path: StoreOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Search the store's pages (current, non-sensitive ones by default); with --sources,
        the other registered PCP sources too."""
        request = api.SearchRequest.from_options({
            "query": query, "limit": limit, "types": page_type, "exclude_types": exclude_type,
            "include_superseded": include_superseded, "include_sensitive": include_sensitive,
            "min_score": min_score, "exclude_stale": exclude_stale, "scopes": scope,
            "mode": mode,
            "filter:relation_types": relation_type, "filter:lifecycle_status": status,
            "filter:origins": origin, "filter:namespaces": namespace, "filter:tags": tag,
            "filter:observed_from": observed_from, "filter:observed_to": observed_to,
            "depth": depth, "cursor": cursor, "as_of": as_of})
        with api.open_store(store_path, refresh=False) as store:
            data = api.search_before_index(store, request)
            if data is not None:
                if not as_json:
                    note(SCAN_NOTE.rstrip("\n"))
            else:
                store.refresh()
                if not as_json and api.index_missing(store):  # stderr stays JSON under --json
                    total = api.index_pages_count(store)
                    note(BUILDING_NOTE.format(total).rstrip("\n"))
                    with progress_bar(total) as progress:  # the first build, with its progress
                        if progress is not None:
                            api.index_store(store, progress=progress, vectors=False)
                if not as_json and mode in ("semantic", "hybrid") and \
                        api.vectors_missing(store):
                    note(f"Embedding {api.index_pages_count(store)} pages for semantic search "
                         "(once; later searches embed only what changed)…")
                data = api.search(store, request)
            shorten = _Names(store, data["results"]) if is_terminal() else str
            if sources:
                # the other sources get the PCP v1 §4.2 arguments this search was given (pcp's
                # own filters, modes and scopes apply to this store only)
                remote = {k: v for k, v in request.as_arguments().items() if k in REMOTE_ARGS}
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
        for line in search_text.notes_before(data):
            note(line)
        if data["results"]:
            _print_results(data["results"], shorten)
        for line in search_text.notes_after(data):  # after the hits (stderr when piped)
            (text if is_terminal() else note)(line)

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
    """The results as lines (piped) or blocks (on a terminal): see search_text.rows."""
    results = [r for r in results if isinstance(r, dict)]  # another source's, as far as it goes
    if not is_terminal():
        search_text.write_lines(results, shorten)
        return
    rows = [(*cells, spans) for cells, spans in search_text.rows(results, shorten)]
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
            part for part in (page_id, kind, origin, day, score, _passage(own)) if part)),
            style="dim"), no_wrap=True, overflow="ellipsis")
        flat = " ".join(snippet.split("\n"))
        body, at = Text(), 0
        for start, end in [*sorted(spans), (len(flat), len(flat))]:  # codes shown, not obeyed
            start, end = max(start, at), max(end, start, at)
            body.append(visible(flat[at:start]))
            body.append(visible(flat[start:end]), style="bold reverse")
            at = max(at, end)
        out.print(Padding(body, (0, 0, 0, 4)))


def _passage(own: dict[str, Any]) -> str:
    """Where a hit's snippet is in its page: `turn 42 (user)`, `paragraph 3`, or nothing."""
    spans = own.get("source_spans") or []
    span = spans[0] if spans and isinstance(spans[0], dict) else {}
    if "message_index" in span:
        role = f" ({span['role']})" if span.get("role") else ""
        return f"turn {span['message_index'] + 1}{role}"
    if "paragraph_index" in span:
        return f"paragraph {span['paragraph_index'] + 1}"
    return ""


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
