"""What one MCP tool call costs beyond the library call it makes (issues #16, #25).

    python bench/mcp_call_bench.py STORE [--calls 30] [--client agent] [--code CHECKOUT]
                                         [--edits] [--tools T,T] [--ways W,W] [--burst 1]
                                         [--versus CHECKOUT --rounds 2] [--json FILE]

STORE is a copy of a synthetic store (bench/store_search_bench.py's gen_store, index built)
whose pcp.yaml grants CLIENT (`clients: {agent: {scopes: ["*"]}}`: no sensitive material, so
the sensitivity filter is in play; the bench adds that grant when CLIENT has none). Never point
it at a store you care about: the server writes its audit log there, an `http` way issues
CLIENT a new token (and, with --edits, the bench rewrites head files). CHECKOUT (default: this
one) is the code measured, both in process and as the server: two checkouts take turns on one
store.

TOOLS (default: every read tool the server lists): `pcp_search` over rotating queries,
`pcp_get_profile` as micro_prompt, `pcp_read_pages` of one result, `pcp_get_timeline`,
`pcp_stats`, `pcp_list_scopes`, `pcp_related_pages`, `pcp_describe_capabilities`,
`pcp_suppress_pages`, and `tools/list` (no library call: its whole time is overhead). Median
and p95 of CALLS calls, interleaved (a client's BURST calls back to back in each turn:
`--burst 3` shows what a call right after the last one on the same connection pays), for each
of the WAYS (default api,backend,stdio):

- api: the same library call in process on a store opened once (the work itself);
- backend: `ToolSession.call` over `StoreBackend` in process (grant, audit, backend);
- stdio: a real `pcp serve --client-id CLIENT` driven over stdio by the MCP SDK's client;
- http: a real `pcp serve --http 127.0.0.1:0` driven by the SDK's streamable-HTTP client, one
  kept-alive connection (CLIENT's token, issued by the bench);
- http-new: the same server and client, a new TCP connection for every request.

overhead = the client's call - api, in wall time and in CPU time (the server process's, every
thread's scheduler time from /proc: Linux only; on a loaded machine the steadier of the two);
the SDK client's own CPU is shown beside it. With --edits, also `pcp_search` and
`pcp_get_profile` right after a note's head file was rewritten by rename (the way many editors
save): what the next call pays to see the edit. With --versus BASE, the bench runs itself
ROUNDS times per checkout, BASE and CHECKOUT taking turns, and prints both side by side (the
samples of all rounds pooled). --json FILE writes every sample. Nothing here asserts a
time; results go in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
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
LIST_TOOLS = "tools/list"
WAYS = ("api", "backend", "stdio", "http", "http-new")
CLIENT_WAYS = ("stdio", "http", "http-new")
URL_LINE = re.compile(r"serving MCP over HTTP at (http://127\.0\.0\.1:\d+/mcp)")


def child_pids() -> set[int]:
    return {int(pid) for task in Path("/proc/self/task").iterdir()
            for pid in (task / "children").read_text().split()}


def process_cpu(pids: set[int]) -> float:
    """CPU seconds of these processes (a server) so far: the sum over their threads of the
    scheduler's nanosecond count (/proc/PID/task/TID/schedstat), not /proc's 10 ms ticks."""
    total = 0
    for pid in pids:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, IndexError, ValueError):
                continue
    return total / 1e9


def start_http_server(store: Path, env: dict[str, str], log: Path) -> tuple[Any, str]:
    """A real `pcp serve --http` on a port it picks; (process, URL) once it accepts."""
    with log.open("wb") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "pcp_cli", "serve", "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env,
            cwd=str(store))
    deadline = time.monotonic() + 900  # a million pages: the watch is set up first
    while not (found := URL_LINE.search(log.read_text(errors="replace"))):
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise SystemExit(f"pcp serve --http did not start:\n{log.read_text()}")
        time.sleep(0.05)
    return server, found.group(1)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(times: dict[tuple[str, str], list[float]], tool: str, way: str) -> tuple[float, float]:
    """(p50, p95) in ms."""
    values = times[(tool, way)]
    return 1000 * statistics.median(values), 1000 * pct(values, 0.95)


def report(times: dict[tuple[str, str], list[float]], cpus: dict[tuple[str, str], list[float]],
           tools: tuple[str, ...], ways: tuple[str, ...],
           client_cpus: dict[tuple[str, str], list[float]]) -> None:
    print("ms per call; overhead = the way's figure - api's (p50 - p50, p95 - p95); CPU: the "
          "server's process for stdio/http, this thread's in process; client: the SDK "
          "client's own CPU")
    print(f"{'tool':26} {'way':9} {'wall p50':>8} {'p95':>7} {'over p50':>8} {'p95':>7} "
          f"{'CPU p50':>8} {'p95':>7} {'over p50':>8} {'client':>7}")
    for tool in tools:
        api_wall, api_cpu = summary(times, tool, "api"), summary(cpus, tool, "api")
        for way in ways:
            wall, cpu = summary(times, tool, way), summary(cpus, tool, way)
            over = "" if way == "api" else (f"{wall[0] - api_wall[0]:8.1f} "
                                            f"{wall[1] - api_wall[1]:7.1f}")
            cpu_over = "" if way == "api" else f"{cpu[0] - api_cpu[0]:8.1f}"
            mine = (f"{summary(client_cpus, tool, way)[0]:7.1f}"
                    if (tool, way) in client_cpus else "")
            print(f"{tool:26} {way:9} {wall[0]:8.1f} {wall[1]:7.1f} {over:16} "
                  f"{cpu[0]:8.1f} {cpu[1]:7.1f} {cpu_over:8} {mine}")


def versus(args: argparse.Namespace, store: Path) -> None:
    """Run this bench ROUNDS times for each checkout, base first, taking turns; then print
    both with the samples of every round pooled."""
    Samples = dict[tuple[str, str], list[float]]
    pooled: dict[Path, tuple[Samples, Samples, Samples]] = {}
    work = Path(tempfile.mkdtemp(prefix="pcp-mcp-call-versus-"))
    loads = []
    for turn in range(args.rounds):
        for code in (args.versus.resolve(), args.code.resolve()):
            out = work / f"turn-{turn}-{len(loads)}.json"
            command = [sys.executable, __file__, str(store), "--calls", str(args.calls),
                       "--client", args.client, "--tools", args.tools, "--ways", args.ways,
                       "--burst", str(args.burst),
                       "--code", str(code), "--json", str(out)]
            subprocess.run(command + (["--edits"] if args.edits else []), check=True)
            data = json.loads(out.read_text())
            loads.append(data["load"])
            kinds = pooled.setdefault(code, ({}, {}, {}))
            for sample in data["samples"]:
                for kept, kind in zip(kinds, ("wall", "cpu", "client_cpu"), strict=True):
                    if sample[kind]:
                        kept.setdefault((sample["tool"], sample["way"]), []).extend(sample[kind])
    tools = tuple(t for t in args.tools.split(",") if t)
    ways = ("api", *(w for w in args.ways.split(",") if w and w != "api"))
    base, after = (pooled[c] for c in (args.versus.resolve(), args.code.resolve()))
    print(f"\n{args.rounds} rounds each, base {args.versus} and {args.code} taking turns; "
          f"load averages {loads}")
    for kind, label in ((0, "wall ms per call"), (1, "server CPU ms per call (api: in process)")):
        print(f"{label}, all rounds pooled, base then after: p50, p95, and overhead = the way's "
              "figure - api's")
        print(f"{'tool':26} {'way':9} {'base p50':>8} {'p95':>7} {'over p50':>8} {'p95':>7}  "
              f"{'after p50':>9} {'p95':>7} {'over p50':>8} {'p95':>7}")
        for tool in tools:
            for way in ways:
                row = f"{tool:26} {way:9}"
                for kinds in (base, after):
                    got, api_got = summary(kinds[kind], tool, way), summary(kinds[kind], tool,
                                                                            "api")
                    over = (f"{'':8} {'':7}" if way == "api" else
                            f"{got[0] - api_got[0]:8.1f} {got[1] - api_got[1]:7.1f}")
                    row += f" {got[0]:8.1f} {got[1]:7.1f} {over} "
                print(row)
    print("the SDK client's own CPU ms per call, p50: base / after")
    for tool in tools:
        for way in ways:
            if (tool, way) in base[2] and (tool, way) in after[2]:
                print(f"{tool:26} {way:9} {summary(base[2], tool, way)[0]:8.1f} "
                      f"{summary(after[2], tool, way)[0]:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--client", default="agent")
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--edits", action="store_true")
    parser.add_argument("--tools", default=",".join(READ_TOOLS),
                        help=f"comma-separated: of {', '.join(READ_TOOLS)}, {LIST_TOOLS}")
    parser.add_argument("--ways", default="api,backend,stdio",
                        help=f"comma-separated: of {', '.join(WAYS)}")
    parser.add_argument("--versus", type=Path, default=None,
                        help="a base checkout taking turns with --code, --rounds times each")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--burst", type=int, default=1,
                        help="calls a client makes back to back in each turn (all counted)")
    parser.add_argument("--json", type=Path, default=None, help="write every sample here")
    args = parser.parse_args()
    store = args.store.resolve()
    tools: tuple[str, ...] = tuple(t for t in args.tools.split(",") if t)
    ways = ("api", *(w for w in args.ways.split(",") if w and w != "api"))
    bad = [t for t in tools if t not in (*READ_TOOLS, LIST_TOOLS)] + [
        w for w in ways if w not in WAYS]
    if bad:
        parser.error(f"unknown tool or way: {', '.join(bad)}")
    if args.versus is not None:
        return versus(args, store)

    import inspect

    from pcp_cli import api
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.grants import resolve_grant
    from pcp_cli.mcp.session import ToolSession
    from pcp_cli.mcp.store_backend import StoreBackend

    if args.client not in api.client_grants(api.open_store(store, readonly=True)):
        from pcp_cli.mcp import commands

        commands.grant_add(store, args.client, scopes=["*"], sensitive=False, write=False,
                           description="bench/mcp_call_bench.py")
        print(f"granted {args.client} the scopes * (no sensitive material) in {store}/pcp.yaml")
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
        if tool == LIST_TOOLS:
            return None
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

    times: dict[tuple[str, str], list[float]] = {}
    client_cpus: dict[tuple[str, str], list[float]] = {}  # the SDK client's own, this thread
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

    env = {**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(ROOT)}
    work = Path(tempfile.mkdtemp(prefix="pcp-mcp-call-bench-"))
    servers: dict[str, set[int]] = {}  # way -> the server's pid, for its CPU

    async def client_call(client: Any, tool: str, n: int) -> None:
        if tool == LIST_TOOLS:
            listed = await client.list_tools()
            assert listed.tools
            return
        result = await client.call_tool(tool, arguments(tool, n))
        assert not result.is_error, result.content

    async def run() -> None:
        from contextlib import AsyncExitStack

        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        clients: dict[str, Any] = {}
        async with AsyncExitStack() as stack:
            if "stdio" in ways:
                params = StdioServerParameters(
                    command=sys.executable,
                    args=["-m", "pcp_cli", "serve", "--client-id", args.client],
                    env=env, cwd=str(store))
                before = child_pids()
                errlog = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115
                clients["stdio"] = await stack.enter_async_context(Client(
                    stdio_client(params, errlog=errlog), mode="legacy",
                    read_timeout_seconds=600))
                servers["stdio"] = child_pids() - before
            if {"http", "http-new"} & set(ways):
                import httpx2
                from mcp.client.streamable_http import streamable_http_client

                from pcp_cli.mcp import commands

                token = commands.grant_token(store, args.client, rotate=True)["token"]
                server, url = start_http_server(store, env, work / "http-server.log")
                stack.callback(lambda: (server.send_signal(signal.SIGTERM),
                                        server.wait(timeout=30)))
                for way, keep in (("http", 20), ("http-new", 0)):
                    if way not in ways:
                        continue
                    http = await stack.enter_async_context(httpx2.AsyncClient(
                        headers={"Authorization": f"Bearer {token}"},
                        timeout=httpx2.Timeout(600),
                        limits=httpx2.Limits(max_keepalive_connections=keep)))
                    clients[way] = await stack.enter_async_context(Client(
                        streamable_http_client(url, http_client=http), mode="legacy",
                        read_timeout_seconds=600))
                    servers[way] = {server.pid}
            for tool in tools:  # warm every path once
                api_call(tool, 0)
                if "backend" in ways and tool != LIST_TOOLS:
                    session.call(tool, arguments(tool, 0))
                for client in clients.values():
                    await client_call(client, tool, 0)
            for n in range(args.calls):
                for tool in tools:
                    started, cpu = time.perf_counter(), time.thread_time()
                    api_call(tool, n)
                    note_time((tool, "api"), time.perf_counter() - started,
                              time.thread_time() - cpu)
                    if "backend" in ways:
                        started, cpu = time.perf_counter(), time.thread_time()
                        if tool != LIST_TOOLS:
                            reply = session.call(tool, arguments(tool, n))
                            assert not reply.is_error, reply
                        note_time((tool, "backend"), time.perf_counter() - started,
                                  time.thread_time() - cpu)
                    for way, client in clients.items():
                        for _ in range(args.burst):
                            started, cpu = time.perf_counter(), process_cpu(servers[way])
                            mine = time.thread_time()
                            await client_call(client, tool, n)
                            note_time((tool, way), time.perf_counter() - started,
                                      process_cpu(servers[way]) - cpu)
                            client_cpus.setdefault((tool, way), []).append(
                                time.thread_time() - mine)
            if not args.edits or "stdio" not in clients:
                return
            for n in range(args.calls):  # the call right after an edit, against one not
                for tool in ("pcp_search", "pcp_get_profile"):
                    for label in ("no edit", "after edit"):
                        if label == "after edit":
                            edit_note(n)
                        started, cpu = time.perf_counter(), process_cpu(servers["stdio"])
                        await client_call(clients["stdio"], tool, n)
                        note_time((tool, label), time.perf_counter() - started,
                                  process_cpu(servers["stdio"]) - cpu)

    load_before = os.getloadavg()
    try:
        asyncio.run(run())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    print(f"code {ROOT}; store {store.name}: {opened.catalog.count()} catalog rows; "
          f"{args.calls} calls per tool; load average before {load_before}, after "
          f"{load_after}")
    report({(tool, way): values for (tool, way), values in times.items() if way in ways},
           {(tool, way): values for (tool, way), values in cpus.items() if way in ways},
           tools, ways, client_cpus)
    if args.json is not None:
        args.json.write_text(json.dumps({
            "code": str(ROOT), "store": str(store), "rows": opened.catalog.count(),
            "load": [load_before, load_after],
            "samples": [{"tool": t, "way": w, "wall": times[(t, w)], "cpu": cpus[(t, w)],
                         "client_cpu": client_cpus.get((t, w), [])} for (t, w) in times]}))
    if args.edits:
        print("Right after a head file was rewritten by rename, against the call without "
              "(stdio; wall p50 / p95, CPU p50 / p95, ms):")
        for tool in ("pcp_search", "pcp_get_profile"):
            for label in ("no edit", "after edit"):
                wall, cpu = times[(tool, label)], cpus[(tool, label)]
                print(f"{tool:18} {label:11} {1000 * statistics.median(wall):8.1f} "
                      f"{1000 * pct(wall, 0.95):8.1f} {1000 * statistics.median(cpu):8.1f} "
                      f"{1000 * pct(cpu, 0.95):8.1f}")


if __name__ == "__main__":
    main()
