"""What an MCP client waits for while the store is being written (issue #35): a real `pcp serve`
over stdio, CALLS `pcp_search` calls with `pcp_stats` and `pcp_list_scopes` between them, and a
writer beside it; per-call latency (p50, p95, p99, max) and the server's memory after each call.

    python bench/mcp_load_bench.py STORE [--calls 200] [--queries FILE] [--client agent]
        [--write-every 1.0] [--no-writes] [--json FILE] [--also QUERY]...

STORE: a copy (the server writes its audit log there, the writer adds pages and edits head
files). The bench grants CLIENT every scope without sensitive material when pcp.yaml has no
grant for it. QUERIES: a JSON list (default `bench/holdout_queries.json`), taken in turn;
every tenth call is instead one of the ALSO queries, in turn (default: the quoted phrase
`"context window"` and the identifier-like `token01234`, the two shapes `auto` sends to exact
mode, issue #35).

The writer, in a thread of the bench, every WRITE_EVERY seconds alternates between `pcp add`
(a whole process: the writer lock, a revision, a head file, the catalog row) and a hand edit of
an existing head file saved the way most editors save (a new file renamed over the old one),
which the server's watch or its scan must notice. Each call is timed from the client's send
to its answer (wall), with the server's CPU over the same span (/proc, in clock ticks: what
the call cost on a machine busy with other work, plus whatever the server's watch did
meanwhile); the server's VmRSS is read from /proc after each call. Reported: per tool
p50/p95/p99/max, the slowest calls with their query, the server's RSS after the handshake,
after call 1, after call 100 and at the end, and how much it grew after call 100 (the issue's
"flat after its first hundred calls"), the server's CPU, and the writes made. Prints one JSON
object. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from serve_rss_bench import server_pid  # the pcp serve child of this process

ROOT = Path(__file__).resolve().parents[1]


def rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def cpu_s(pid: int | None) -> float | None:
    if pid is None:
        return None
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def grant(store: Path, client: str) -> None:
    import yaml

    manifest = store / "pcp.yaml"
    data = yaml.safe_load(manifest.read_text("utf-8"))
    clients = data.setdefault("clients", {}) or {}
    if client not in clients:
        clients[client] = {"scopes": ["*"]}
        data["clients"] = clients
        manifest.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")


class Writer(threading.Thread):
    """Adds a page, then edits a head file by hand, in turn, every `every` seconds."""

    def __init__(self, store: Path, every: float) -> None:
        super().__init__(daemon=True)
        self.store, self.every = store, every
        self.stop = threading.Event()
        self.adds = self.edits = self.failed = 0
        heads = sorted((store / "pages").rglob("*.md"))
        self.heads = random.Random(35).sample(heads, min(200, len(heads)))

    def run(self) -> None:
        n = 0
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        while not self.stop.wait(self.every):
            n += 1
            if n % 2:
                done = subprocess.run(
                    [sys.executable, "-m", "pcp_cli", "add", f"written during the bench {n}: "
                     "kelp harvest notes", "--title", f"Bench write {n}", "--store",
                     str(self.store)], capture_output=True, env=env, cwd=self.store)
                self.adds += done.returncode == 0
                self.failed += done.returncode != 0
            else:
                head = self.heads[n % len(self.heads)]
                try:
                    text = head.read_text("utf-8")
                    fresh = head.with_name(f".{head.name}.bench")
                    fresh.write_text(text.rstrip("\n") + f"\n\nEdited by hand {n}.\n", "utf-8")
                    os.replace(fresh, head)
                    self.edits += 1
                except OSError:
                    self.failed += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--queries", type=Path, default=ROOT / "bench" / "holdout_queries.json")
    ap.add_argument("--client", default="agent")
    ap.add_argument("--write-every", type=float, default=1.0)
    ap.add_argument("--no-writes", action="store_true")
    ap.add_argument("--json", type=Path, help="write every sample here")
    ap.add_argument("--also", action="append",
                    help="a query put in every tenth call, in turn (repeatable)")
    args = ap.parse_args()
    store = args.store.resolve()
    grant(store, args.client)
    queries = json.loads(args.queries.read_text("utf-8"))
    also = args.also or ['"context window"', "token01234"]

    def query(n: int) -> str:
        return also[(n // 10) % len(also)] if n % 10 == 9 else queries[n % len(queries)]
    result: dict[str, Any] = {"store": str(store), "calls": args.calls,
                              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              "load_before": os.getloadavg()}
    samples: list[dict[str, Any]] = []

    async def run() -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=sys.executable, args=["-m", "pcp_cli", "serve", "--client-id", args.client],
            env={**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(ROOT)},
            cwd=str(store))
        writer = Writer(store, args.write_every)
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy",
                              read_timeout_seconds=600) as client:
                pid = server_pid()
                result["rss_after_handshake_mb"] = rss_mb(pid)
                cpu_before = cpu_s(pid)
                if not args.no_writes:
                    writer.start()
                for n in range(args.calls):
                    for tool, arguments in (
                            ("pcp_search", {"query": query(n), "limit": 10}),
                            *((("pcp_stats", {}), ("pcp_list_scopes", {})) if n % 5 == 4
                              else ())):
                        started, cpu_then = time.perf_counter(), cpu_s(pid)
                        reply = await client.call_tool(tool, arguments)
                        wall = time.perf_counter() - started
                        cpu = (cpu_s(pid) or 0) - (cpu_then or 0)
                        samples.append({"n": n, "tool": tool, "wall_ms": round(wall * 1000, 2),
                                        "cpu_ms": round(cpu * 1000, 1),
                                        "query": arguments.get("query"),
                                        "error": bool(reply.is_error), "rss_mb": rss_mb(pid)})
                writer.stop.set()
                result["server_cpu_s"] = round((cpu_s(pid) or 0) - (cpu_before or 0), 2)
        writer.join(timeout=30)
        result["writes"] = {"adds": writer.adds, "hand_edits": writer.edits,
                            "failed": writer.failed, "every_s": args.write_every,
                            "on": not args.no_writes}

    asyncio.run(run())
    per_tool: dict[str, Any] = {}
    for tool in ("pcp_search", "pcp_stats", "pcp_list_scopes"):
        walls = [s["wall_ms"] for s in samples if s["tool"] == tool]
        if walls:
            per_tool[tool] = {"n": len(walls), "p50": round(statistics.median(walls), 1),
                              "p95": round(pct(walls, 0.95), 1),
                              "p99": round(pct(walls, 0.99), 1), "max": round(max(walls), 1),
                              "errors": sum(s["error"] for s in samples if s["tool"] == tool)}
            cpus = [s["cpu_ms"] for s in samples if s["tool"] == tool]
            per_tool[tool]["server_cpu_ms"] = {
                "p50": round(statistics.median(cpus), 1), "p95": round(pct(cpus, 0.95), 1),
                "p99": round(pct(cpus, 0.99), 1), "max": round(max(cpus), 1)}
    result["per_call_ms"] = per_tool
    for label, picked in (("quoted_phrase", [q for q in also if q.startswith('"')]),
                          ("identifier_like", [q for q in also if not q.startswith('"')])):
        walls = [s["wall_ms"] for s in samples if s["tool"] == "pcp_search"
                 and s["query"] in picked]
        if walls:
            per_tool[f"pcp_search {label}"] = {"n": len(walls),
                                               "p50": round(statistics.median(walls), 1),
                                               "max": round(max(walls), 1)}
    result["slowest"] = [{k: s[k] for k in ("n", "tool", "wall_ms", "query")}
                         for s in sorted(samples, key=lambda s: -s["wall_ms"])[:8]]
    searches = [s for s in samples if s["tool"] == "pcp_search"]
    rss = [s["rss_mb"] for s in searches if s["rss_mb"] is not None]
    if rss:
        at100 = rss[min(99, len(rss) - 1)]
        result["rss_mb"] = {"after_call_1": rss[0], "after_call_100": at100,
                            "end": rss[-1], "max": max(rss),
                            "growth_after_call_100": round(max(rss[99:] or [at100]) - at100, 1)}
    result["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(samples, indent=0), "utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
