"""What one MCP tool call costs beyond the library call it makes (issue #16).

    python bench/mcp_call_bench.py STORE [--calls 30] [--client agent]

STORE is a copy of a synthetic store (bench/store_search_bench.py's gen_store, index built)
whose pcp.yaml grants CLIENT (`clients: {agent: {scopes: ["*"]}}`: no sensitive material, so
the sensitivity filter is in play). Never point it at a store you care about: the server writes
its audit log there.

For each tool (`pcp_search` over rotating queries, `pcp_get_profile` as micro_prompt,
`pcp_read_pages` of one result), median and p95 of CALLS calls, interleaved:

- api: the same library call in process on a store opened once (the work itself);
- backend: `ToolSession.call` over `StoreBackend` in process (grant, audit, backend);
- stdio: a real `pcp serve --client-id CLIENT` driven over stdio by the MCP SDK's client.

overhead = stdio - api, in wall time and in CPU time (the server process's, read from /proc:
Linux only; on a loaded machine the steadier of the two). Nothing here asserts a time;
results go in bench/RESULTS.md.
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
sys.path.insert(0, str(ROOT))

QUERIES: list[str] = []  # two words of the titles of ten low-sensitivity pages of STORE


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
    args = parser.parse_args()
    store = args.store.resolve()

    from pcp_cli import api
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.grants import resolve_grant
    from pcp_cli.mcp.session import ToolSession
    from pcp_cli.mcp.store_backend import StoreBackend

    opened = api.open_store(store, readonly=True)
    grant = resolve_grant({"clients": api.client_grants(opened)}, args.client)
    session = ToolSession(StoreBackend(store), grant, AuditLog(store))
    rows = opened.catalog._db.execute(  # the bench's own look-up: any ten titled pages
        "SELECT title FROM pages WHERE sensitivity = 'low' AND type = 'note' AND title LIKE "
        "'% %' ORDER BY path LIMIT 10").fetchall()
    QUERIES.extend(" ".join(row[0].split()[:2]) for row in rows)
    first = api.search(opened, QUERIES[0], limit=10)["results"]
    page_id = first[0]["id"] if first else "profile"

    def api_call(tool: str, n: int) -> Any:
        if tool == "pcp_search":
            return api.search(opened, QUERIES[n % len(QUERIES)], limit=10, scopes=["*"],
                              include_sensitive=False, include_unclassified=False,
                              mode="auto")
        if tool == "pcp_get_profile":
            return api.profile_text(opened, "micro_prompt", scopes=["*"])
        return api.read_page(opened, page_id, view="payload")

    def arguments(tool: str, n: int) -> dict[str, Any]:
        if tool == "pcp_search":
            return {"query": QUERIES[n % len(QUERIES)], "limit": 10}
        if tool == "pcp_get_profile":
            return {"format": "micro_prompt"}
        return {"ids": [page_id], "views": ["payload"]}

    tools = ("pcp_search", "pcp_get_profile", "pcp_read_pages")
    times: dict[tuple[str, str], list[float]] = {(t, w): [] for t in tools
                                                 for w in ("api", "backend", "stdio")}
    cpus: dict[tuple[str, str], list[float]] = {(t, w): [] for t in tools
                                                for w in ("api", "backend", "stdio")}

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
                        times[(tool, "api")].append(time.perf_counter() - started)
                        cpus[(tool, "api")].append(time.thread_time() - cpu)
                        started, cpu = time.perf_counter(), time.thread_time()
                        reply = session.call(tool, arguments(tool, n))
                        times[(tool, "backend")].append(time.perf_counter() - started)
                        cpus[(tool, "backend")].append(time.thread_time() - cpu)
                        assert not reply.is_error, reply
                        started, cpu = time.perf_counter(), children_cpu()
                        result = await client.call_tool(tool, arguments(tool, n))
                        times[(tool, "stdio")].append(time.perf_counter() - started)
                        cpus[(tool, "stdio")].append(children_cpu() - cpu)
                        assert not result.is_error, result.content

    load_before = os.getloadavg()
    asyncio.run(run())
    print(f"store {store.name}: {opened.catalog.count()} catalog rows; {args.calls} calls per "
          f"tool; load average before {load_before}, after {os.getloadavg()}")
    print(f"{'tool':18} {'api p50':>8} {'p95':>7} {'backend p50':>11} {'p95':>7} "
          f"{'stdio p50':>9} {'p95':>7} {'overhead p50':>12}  (ms)")
    for tool in tools:
        row = [1000 * statistics.median(times[(tool, w)]) for w in ("api", "backend", "stdio")]
        p95 = [1000 * pct(times[(tool, w)], 0.95) for w in ("api", "backend", "stdio")]
        print(f"{tool:18} {row[0]:8.1f} {p95[0]:7.1f} {row[1]:11.1f} {p95[1]:7.1f} "
              f"{row[2]:9.1f} {p95[2]:7.1f} {row[2] - row[0]:12.1f}")
    print("CPU time per call, median (ms; the server's process for stdio, 10 ms ticks):")
    print(f"{'tool':18} {'api':>8} {'backend':>8} {'stdio':>8} {'overhead':>9}")
    for tool in tools:
        row = [1000 * statistics.median(cpus[(tool, w)]) for w in ("api", "backend", "stdio")]
        print(f"{tool:18} {row[0]:8.1f} {row[1]:8.1f} {row[2]:8.1f} {row[2] - row[0]:9.1f}")


if __name__ == "__main__":
    main()
