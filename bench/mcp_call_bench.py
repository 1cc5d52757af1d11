"""What one MCP tool call costs beyond the library call it makes (issue #16).

    python bench/mcp_call_bench.py STORE [--calls 30] [--client agent] [--code CHECKOUT]
                                         [--edits]

STORE is a copy of a synthetic store (bench/store_search_bench.py's gen_store, index built)
whose pcp.yaml grants CLIENT (`clients: {agent: {scopes: ["*"]}}`: no sensitive material, so
the sensitivity filter is in play). Never point it at a store you care about: the server writes
its audit log there (and, with --edits, the bench rewrites head files). CHECKOUT (default: this
one) is the code measured, both in process and as the server: two checkouts take turns on one
store.

Every read tool the server lists (`pcp_search` over rotating queries, `pcp_get_profile` as
micro_prompt, `pcp_read_pages` of one result, `pcp_get_timeline`, `pcp_stats`,
`pcp_list_scopes`, `pcp_related_pages`, `pcp_describe_capabilities`, `pcp_suppress_pages`):
median and p95 of CALLS calls, interleaved:

- api: the same library call in process on a store opened once (the work itself);
- backend: `ToolSession.call` over `StoreBackend` in process (grant, audit, backend);
- stdio: a real `pcp serve --client-id CLIENT` driven over stdio by the MCP SDK's client.

overhead = stdio - api, in wall time and in CPU time (the server process's, read from /proc:
Linux only; on a loaded machine the steadier of the two). With --edits, also `pcp_search` and
`pcp_get_profile` right after a note's head file was rewritten by rename (the way many editors
save): what the next call pays to see the edit. Nothing here asserts a time; results go in
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if "--code" in sys.argv:  # the code measured: before anything of pcp_cli is imported
    ROOT = Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
sys.path.insert(0, str(ROOT))

QUERIES: list[str] = []  # two words of the titles of ten low-sensitivity pages of STORE
READ_TOOLS = ("pcp_search", "pcp_get_profile", "pcp_read_pages", "pcp_get_timeline",
              "pcp_stats", "pcp_list_scopes", "pcp_related_pages", "pcp_describe_capabilities",
              "pcp_suppress_pages")


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's child processes (the server) so far."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--client", default="agent")
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--edits", action="store_true")
    args = parser.parse_args()
    store = args.store.resolve()

    import inspect

    from pcp_cli import api
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.grants import resolve_grant
    from pcp_cli.mcp.session import ToolSession
    from pcp_cli.mcp.store_backend import StoreBackend

    opened = api.open_store(store, readonly=True)
    grant = resolve_grant({"clients": api.client_grants(opened)}, args.client)
    session = ToolSession(StoreBackend(store), grant, AuditLog(store))
    db = opened.catalog._db  # the bench's own look-ups: any ten titled pages, one note
    rows = db.execute(
        "SELECT title FROM pages WHERE sensitivity = 'low' AND type = 'note' AND title LIKE "
        "'% %' ORDER BY path LIMIT 10").fetchall()
    QUERIES.extend(" ".join(row[0].split()[:2]) for row in rows)
    first = api.search(opened, QUERIES[0], limit=10)["results"]
    page_id = first[0]["id"] if first else "profile"
    note, note_id = db.execute(
        "SELECT path, page_id FROM pages WHERE sensitivity = 'low' AND type = 'note' "
        "ORDER BY path DESC LIMIT 1").fetchone()  # edited (--edits) and suppressed
    # The api functions as this checkout has them: the sensitivity switch where there is one.
    served = {"sensitivities": api.SERVED_SENSITIVITIES}

    def takes(function: Any, name: str) -> dict[str, Any]:
        return served if name in inspect.signature(function).parameters else {}

    def api_call(tool: str, n: int) -> Any:
        if tool == "pcp_search":
            return api.search(opened, QUERIES[n % len(QUERIES)], limit=10, scopes=["*"],
                              include_sensitive=False, include_unclassified=False,
                              mode="auto")
        if tool == "pcp_get_profile":
            return api.profile_text(opened, "micro_prompt", scopes=["*"])
        if tool == "pcp_get_timeline":
            return api.timeline(opened, limit=20, scopes=["*"],
                                **takes(api.timeline, "sensitivities"))
        if tool == "pcp_stats":
            return api.stats(opened, scopes=["*"], statuses=("active", "superseded", "archived"),
                             **takes(api.stats, "sensitivities"))
        if tool == "pcp_list_scopes":
            return api.list_scopes(opened, scopes=["*"])
        if tool == "pcp_related_pages":
            return api.related(opened, page_id, scopes=["*"], include_superseded=True)
        if tool == "pcp_describe_capabilities":
            return api.capabilities(opened)
        if tool == "pcp_suppress_pages":
            return api.page_entry(opened, note_id)
        return api.read_page(opened, page_id, view="payload")

    def arguments(tool: str, n: int) -> dict[str, Any]:
        if tool == "pcp_search":
            return {"query": QUERIES[n % len(QUERIES)], "limit": 10}
        if tool == "pcp_get_profile":
            return {"format": "micro_prompt"}
        if tool == "pcp_get_timeline":
            return {"limit": 20}
        if tool in ("pcp_stats", "pcp_list_scopes", "pcp_describe_capabilities"):
            return {}
        if tool == "pcp_related_pages":
            return {"page_id": page_id}
        if tool == "pcp_suppress_pages":
            return {"ids": [note_id]}
        return {"ids": [page_id], "views": ["payload"]}

    tools: tuple[str, ...] = READ_TOOLS
    times: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}

    def note_time(key: tuple[str, str], wall: float, cpu: float) -> None:
        times.setdefault(key, []).append(wall)
        cpus.setdefault(key, []).append(cpu)

    def edit_note(n: int) -> None:
        """Rewrite a note's head file by rename, as many editors save: a new body each time."""
        path = store / note
        text = path.read_text()
        body_at = text.index("\n---\n", 3) + 5
        new = text[:body_at] + f"bench edit {n}\n" + text[body_at:].split("\n", 1)[-1]
        tmp = path.with_name(f".{path.name}.bench")
        tmp.write_text(new)
        os.replace(tmp, path)

    async def run() -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=sys.executable, args=["-m", "pcp_cli", "serve", "--client-id", args.client],
            env={**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(ROOT)},
            cwd=str(store))
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy",
                              read_timeout_seconds=600) as client:
                for tool in tools:  # warm every path once
                    await client.call_tool(tool, arguments(tool, 0))
                    session.call(tool, arguments(tool, 0))
                    api_call(tool, 0)
                for n in range(args.calls):
                    for tool in tools:
                        started, cpu = time.perf_counter(), time.thread_time()
                        api_call(tool, n)
                        note_time((tool, "api"), time.perf_counter() - started,
                                  time.thread_time() - cpu)
                        started, cpu = time.perf_counter(), time.thread_time()
                        reply = session.call(tool, arguments(tool, n))
                        note_time((tool, "backend"), time.perf_counter() - started,
                                  time.thread_time() - cpu)
                        assert not reply.is_error, reply
                        started, cpu = time.perf_counter(), children_cpu()
                        result = await client.call_tool(tool, arguments(tool, n))
                        note_time((tool, "stdio"), time.perf_counter() - started,
                                  children_cpu() - cpu)
                        assert not result.is_error, result.content
                if not args.edits:
                    return
                for n in range(args.calls):  # the call right after an edit, against one not
                    for tool in ("pcp_search", "pcp_get_profile"):
                        for label in ("stdio", "after edit"):
                            if label == "after edit":
                                edit_note(n)
                            started, cpu = time.perf_counter(), children_cpu()
                            result = await client.call_tool(tool, arguments(tool, n))
                            note_time((tool, label), time.perf_counter() - started,
                                      children_cpu() - cpu)
                            assert not result.is_error, result.content

    load_before = os.getloadavg()
    asyncio.run(run())
    print(f"code {ROOT}; store {store.name}: {opened.catalog.count()} catalog rows; "
          f"{args.calls} calls per tool; load average before {load_before}, after "
          f"{os.getloadavg()}")
    print(f"{'tool':26} {'api p50':>8} {'p95':>7} {'backend p50':>11} {'p95':>7} "
          f"{'stdio p50':>9} {'p95':>7} {'overhead p50':>12}  (wall ms)")
    for tool in tools:
        row = [1000 * statistics.median(times[(tool, w)]) for w in ("api", "backend", "stdio")]
        p95 = [1000 * pct(times[(tool, w)], 0.95) for w in ("api", "backend", "stdio")]
        print(f"{tool:26} {row[0]:8.1f} {p95[0]:7.1f} {row[1]:11.1f} {p95[1]:7.1f} "
              f"{row[2]:9.1f} {p95[2]:7.1f} {row[2] - row[0]:12.1f}")
    print("CPU time per call (ms; the server's process for stdio, 10 ms ticks): p50 and p95")
    print(f"{'tool':26} {'api':>8} {'p95':>7} {'backend':>8} {'p95':>7} {'stdio':>8} {'p95':>7} "
          f"{'overhead':>9}")
    for tool in tools:
        row = [1000 * statistics.median(cpus[(tool, w)]) for w in ("api", "backend", "stdio")]
        p95 = [1000 * pct(cpus[(tool, w)], 0.95) for w in ("api", "backend", "stdio")]
        print(f"{tool:26} {row[0]:8.1f} {p95[0]:7.1f} {row[1]:8.1f} {p95[1]:7.1f} {row[2]:8.1f} "
              f"{p95[2]:7.1f} {row[2] - row[0]:9.1f}")
    if args.edits:
        print("Right after a head file was rewritten by rename, against the call without "
              "(stdio; wall p50 / p95, CPU p50 / p95, ms):")
        for tool in ("pcp_search", "pcp_get_profile"):
            for label in ("stdio", "after edit"):
                wall, cpu = times[(tool, label)][-args.calls:], cpus[(tool, label)][-args.calls:]
                print(f"{tool:18} {label:11} {1000 * statistics.median(wall):8.1f} "
                      f"{1000 * pct(wall, 0.95):8.1f} {1000 * statistics.median(cpu):8.1f} "
                      f"{1000 * pct(cpu, 0.95):8.1f}")


if __name__ == "__main__":
    main()
