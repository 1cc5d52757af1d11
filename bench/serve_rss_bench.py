"""`pcp serve` on a big store as a client sees it: the first call, the calls after it, and the
server's resident memory (issue #25's 1M-page goals: RSS < 1 GB, per-call overhead < 30 ms).

    python bench/serve_rss_bench.py STORE [--calls 100] [--client agent]

STORE's pcp.yaml must grant CLIENT (`clients: {agent: {scopes: ["*"]}}`); the server writes its
audit log there, so point it at a copy. A real `pcp serve --client-id CLIENT` is driven over
stdio by the MCP SDK's client:

- `spawn -> first call`: from starting the process to the answer of its first `pcp_stats` (what
  an agent waits for at the start of a session), and that call alone;
- then CALLS calls taking turns over the read tools (`pcp_search` over ten queries made of two
  title words, `pcp_get_profile` micro_prompt, `pcp_read_pages`, `pcp_get_timeline`,
  `pcp_stats`, `pcp_list_scopes`): wall p50/p95 per tool, and all together;
- the server's VmRSS (and VmHWM, its peak) after the handshake, after the first call and after
  the CALLS calls, read from /proc (Linux only).

Prints one JSON object. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("pcp_search", "pcp_get_profile", "pcp_read_pages", "pcp_get_timeline", "pcp_stats",
         "pcp_list_scopes")


def server_pid() -> int | None:
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"serve" in cmd:
                return int(pid)
    return None


def memory(pid: int | None) -> dict[str, float]:
    out: dict[str, float] = {}
    if pid is None:
        return out
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key.lower() + "_mb"] = round(int(value.split()[0]) / 1024, 1)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--client", default="agent")
    args = ap.parse_args()
    store = args.store.resolve()
    db = sqlite3.connect(store / ".pcp" / "catalog.sqlite")
    rows = db.execute(
        "SELECT title FROM pages WHERE sensitivity = 'low' AND type = 'note' AND title LIKE "
        "'% %' ORDER BY path LIMIT 10").fetchall()
    queries = [" ".join(row[0].split()[:2]) for row in rows]
    (page_id,) = db.execute("SELECT page_id FROM pages WHERE sensitivity = 'low' "
                            "AND type = 'note' ORDER BY path LIMIT 1").fetchone()
    db.close()

    def arguments(tool: str, n: int) -> dict[str, Any]:
        return {"pcp_search": {"query": queries[n % len(queries)], "limit": 10},
                "pcp_get_profile": {"format": "micro_prompt"},
                "pcp_read_pages": {"ids": [page_id], "views": ["payload"]},
                "pcp_get_timeline": {"limit": 20}}.get(tool, {})

    result: dict[str, Any] = {"store": str(store), "calls": args.calls,
                              "load_before": os.getloadavg()}

    async def run() -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=sys.executable, args=["-m", "pcp_cli", "serve", "--client-id", args.client],
            env={**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(ROOT)},
            cwd=str(store))
        spawned = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy",
                              read_timeout_seconds=600) as client:
                handshake = time.perf_counter()
                pid = server_pid()
                result["spawn_to_handshake_s"] = round(handshake - spawned, 3)
                result["after_handshake"] = memory(pid)
                reply = await client.call_tool("pcp_stats", {})
                done = time.perf_counter()
                assert not reply.is_error, reply.content
                result["spawn_to_first_call_s"] = round(done - spawned, 3)
                result["first_call_s"] = round(done - handshake, 3)
                result["after_first_call"] = memory(pid)
                times: dict[str, list[float]] = {tool: [] for tool in TOOLS}
                for n in range(args.calls):
                    tool = TOOLS[n % len(TOOLS)]
                    started = time.perf_counter()
                    reply = await client.call_tool(tool, arguments(tool, n // len(TOOLS)))
                    times[tool].append(time.perf_counter() - started)
                    assert not reply.is_error, reply.content
                result[f"after_{args.calls}_calls"] = memory(pid)
                every = [t for ts in times.values() for t in ts]
                result["per_call_ms"] = {
                    tool: {"p50": round(1000 * statistics.median(ts), 1),
                           "p95": round(1000 * pct(ts, 0.95), 1), "n": len(ts)}
                    for tool, ts in [*times.items(), ("all", every)] if ts}

    asyncio.run(run())
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
