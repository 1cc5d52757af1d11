"""MCP over streamable HTTP under concurrent clients, on a synthetic 10k-page store.

    python bench/http_bench.py [-n 10000] [--clients 8] [--calls 200] [--work DIR] [--keep]

Generates the store of `store_search_bench.py`, builds its index, grants `--clients` clients
(`bench-0`...) the whole store and issues each a token, starts a real `pcp serve --http` on
127.0.0.1 (loopback only, a port it picks), then:

- baseline, same run: the same call mix served in process by one ToolSession over the real
  StoreBackend, sequentially (what a tool call costs without HTTP, JSON-RPC or concurrency);
- `--clients` concurrent clients, each making `--calls` sequential JSON-RPC `tools/call` POSTs
  (httpx2, one connection per client): a mix of pcp_search (fixed queries), pcp_get_profile
  (micro_prompt), pcp_get_timeline and pcp_read_pages (ids from earlier searches).

Reports throughput, p50/p95/p99 latency, errors (HTTP status other than 200, or a tool error),
audit records written for the bench clients against calls made, and the server's RSS after the
run. Prints one JSON object. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from search_bench import QUERIES  # noqa: E402
from store_search_bench import gen_store, pct  # noqa: E402

from pcp_cli import api  # noqa: E402
from pcp_cli.mcp import commands  # noqa: E402
from pcp_cli.mcp.audit import AuditLog, read_audit  # noqa: E402
from pcp_cli.mcp.grants import resolve_grant  # noqa: E402
from pcp_cli.mcp.session import ToolSession  # noqa: E402
from pcp_cli.mcp.store_backend import StoreBackend  # noqa: E402

URL_LINE = re.compile(r"serving MCP over HTTP at (http://127\.0\.0\.1:\d+/mcp)")
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-protocol-version": "2025-06-18"}


def plan(rng: random.Random, calls: int) -> list[tuple[str, dict]]:
    """The call mix: 50% search, 15% profile, 15% timeline, 20% read (ids filled in later)."""
    out = []
    for _ in range(calls):
        r = rng.random()
        if r < 0.5:
            out.append(("pcp_search", {"query": rng.choice(QUERIES), "limit": 10}))
        elif r < 0.65:
            out.append(("pcp_get_profile", {"format": "micro_prompt"}))
        elif r < 0.8:
            out.append(("pcp_get_timeline", {"limit": 20}))
        else:
            out.append(("pcp_read_pages", {"ids": None, "views": ["manifest", "payload"]}))
    return out


def fill(args: dict, seen: list[str], rng: random.Random) -> dict:
    if "ids" in args and args["ids"] is None:
        pool = seen or [f"pg_{i:07d}" for i in range(100)]
        return {**args, "ids": rng.sample(pool, min(3, len(pool)))}
    return args


def found_ids(data: dict) -> list[str]:
    return [r["id"] for r in data.get("results", []) if isinstance(r, dict) and "id" in r]


def baseline(root: Path, calls: int, seed: int) -> dict:
    manifest = api.open_store(root, readonly=True, refresh=False).manifest.to_dict()
    session = ToolSession(StoreBackend(root), resolve_grant(manifest, "bench-0"),
                          AuditLog(root, session_id="ses_baseline"))
    rng = random.Random(seed)
    seen: list[str] = []
    times, errors = [], 0
    for name, args in plan(rng, calls):
        t = time.perf_counter()
        reply = session.call(name, fill(args, seen, rng))
        times.append(time.perf_counter() - t)
        errors += reply.is_error
        seen += found_ids(reply.data)[:5]
    return {"calls": calls, "p50_ms": round(statistics.median(times) * 1000, 1),
            "p95_ms": round(pct(times, 95) * 1000, 1), "errors": errors,
            "calls_per_s": round(calls / sum(times), 1)}


async def one_client(url: str, token: str, calls: int, seed: int) -> tuple[list[float], int,
                                                                             list[str]]:
    import httpx2

    rng = random.Random(seed)
    seen: list[str] = []
    times: list[float] = []
    errors = 0
    problems: list[str] = []
    headers = {**HEADERS, "authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        for i, (name, args) in enumerate(plan(rng, calls)):
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": name, "arguments": fill(args, seen, rng)}}
            t = time.perf_counter()
            response = await http.post(url, json=body)
            times.append(time.perf_counter() - t)
            if response.status_code != 200:
                errors += 1
                problems.append(f"{name}: HTTP {response.status_code}")
                continue
            result = response.json().get("result") or {}
            if result.get("isError"):
                errors += 1
                problems.append(f"{name}: {result['content'][0]['text'][:120]}")
            seen += found_ids(result.get("structuredContent") or {})[:5]
    return times, errors, problems


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="pcp-http-bench-"))
    work = work.resolve()
    root = work / "store"
    out: dict = {"pages": args.n, "clients": args.clients, "calls_per_client": args.calls,
                 "load_before": os.getloadavg()}
    try:
        if not (root / "pcp.yaml").exists():
            t = time.perf_counter()
            gen_store(root, args.n)
            out["generate_s"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        with api.open_store(root) as store:
            api.index_store(store)
        out["index_s"] = round(time.perf_counter() - t, 1)
        tokens = {}
        for i in range(args.clients):
            client = f"bench-{i}"
            commands.grant_add(root, client, scopes=["*"], sensitive=False, write=False,
                               description="http bench")
            tokens[client] = commands.grant_token(root, client, rotate=True)["token"]
        out["baseline_in_process"] = baseline(root, args.calls, seed=1)

        before = {r.get("session_id") for r in read_audit(root)}
        err = (work / "server.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "pcp_cli", "serve", "--http", "127.0.0.1:0", "--store",
             str(root), "--max-concurrent", "4"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, cwd=work)
        try:
            deadline = time.monotonic() + 60
            while not (found := URL_LINE.search((work / "server.log").read_text())):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit((work / "server.log").read_text())
                time.sleep(0.05)
            url = found.group(1)
            time.sleep(1.0)
            out["server_rss_before_mb"] = round(rss_kb(server.pid) / 1024, 1)

            async def run_all() -> list:
                return await asyncio.gather(*(
                    one_client(url, tokens[f"bench-{i}"], args.calls, seed=100 + i)
                    for i in range(args.clients)))

            t = time.perf_counter()
            results = asyncio.run(run_all())
            wall = time.perf_counter() - t
            out["server_rss_after_mb"] = round(rss_kb(server.pid) / 1024, 1)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
            err.close()
        times = [x for r in results for x in r[0]]
        calls = len(times)
        # The server's records: bench clients' calls in audit sessions that began with it.
        by_session: dict[str, int] = {}
        for record in read_audit(root):
            if str(record.get("client_id", "")).startswith("bench-") and record.get(
                    "session_id") not in before:
                by_session[record["session_id"]] = by_session.get(record["session_id"], 0) + 1
        bench_records = sum(by_session.values())
        out["http"] = {
            "calls": calls,
            "wall_s": round(wall, 2),
            "calls_per_s": round(calls / wall, 1),
            "p50_ms": round(statistics.median(times) * 1000, 1),
            "p95_ms": round(pct(times, 95) * 1000, 1),
            "p99_ms": round(pct(times, 99) * 1000, 1),
            "errors": sum(r[1] for r in results),
            "error_samples": [p for r in results for p in r[2]][:5],
            "audit_records": bench_records,
            "audit_sessions": len(by_session),
        }
        out["http"]["audit_records_equal_calls"] = bench_records == calls
        out["p50_ratio_http_concurrent_vs_in_process"] = round(
            out["http"]["p50_ms"] / out["baseline_in_process"]["p50_ms"], 2)
        out["load_after"] = os.getloadavg()
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
