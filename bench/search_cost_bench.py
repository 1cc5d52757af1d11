"""What a search costs a client at scale, question by question, beside another checkout.

    python bench/search_cost_bench.py STORE --versus /path/to/main-checkout [--calls 200]
                                      [--rounds 2] [--commands 5] [--json FILE]

STORE is a copy of a big synthetic store (bench/store_search_bench.py's gen_store, index
built; /work/benchdata's README says where the round's are): never a store you care about (the
server writes its audit log there, and every search may bring the index up to date).

Two measures, each for this checkout and the one named by --versus (BASE), taking turns:

- **pcp_search calls**: `ToolSession.call("pcp_search", …)` over `StoreBackend` in a process
  of that checkout, the store's files watched as `pcp serve` watches them (the grant, the
  audit log, the library: what a client waits for, without the transport; the index and the
  semantic vectors brought up to date by one untimed call first), CALLS calls with MCP's
  defaults (mode auto) over a mix of what assistants
  send: the held-out keyword queries (bench/holdout_queries.json), questions made of their
  words ("What did Ada say about year and people?"), quoted phrases (`"way area"`, `"context
  window"`, `"year people"` — two words on most pages —: auto runs exact mode for them),
  identifiers (`token01234`, `pcp_cli.query`) and bare
  page ids of the store. Median, p95, p99 and max of each call's wall time and of its CPU time
  (the thread's), per kind of query.
- **whole commands**: `pcp search QUERY --json` as a new process, COMMANDS times per query for
  a keyword query, a question and a quoted phrase: the median of CPU time (user + system of the
  child) and of wall time.

The load average is printed beside every figure: on a shared machine, wall times vary with it,
CPU times much less. Nothing here asserts a time; the results go in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

CALLS_SCRIPT = r"""
import json, sys, time
from pathlib import Path
if sys.argv[3] == "text-only":  # the semantic extra hidden: auto never embeds the store
    sys.modules["wordllama"] = None
from pcp_cli import api
from pcp_cli.mcp.audit import AuditLog
from pcp_cli.mcp.grants import Grant
from pcp_cli.mcp.session import ToolSession
from pcp_cli.mcp.store_backend import StoreBackend
store, queries = sys.argv[1], json.loads(Path(sys.argv[2]).read_text())
with api.open_store(store, readonly=True, refresh=False) as opened:
    api.watch_files(opened, background_scan=True)  # as `pcp serve` does
grant = Grant("bench", "model", ("*",), False, False, "bench")
session = ToolSession(StoreBackend(store), grant, AuditLog(Path(store)))
# the index and the vectors brought up to date before the first timed call
session.call("pcp_search", {"query": "warm up",
                             "mode": "text" if sys.argv[3] == "text-only" else "hybrid"})
out = []
for kind, query in queries:
    wall, cpu = time.perf_counter(), time.thread_time()
    reply = session.call("pcp_search", {"query": query})
    out.append({"kind": kind, "query": query, "wall": time.perf_counter() - wall,
                "cpu": time.thread_time() - cpu, "error": reply.is_error,
                "mode": (reply.data.get("filters_applied") or {}).get("mode"),
                "count": reply.data.get("count")})
print(json.dumps(out))
"""


def mix(store: Path, calls: int, seed: int = 35) -> list[tuple[str, str]]:
    """CALLS queries of the kinds above, shuffled (the same for every checkout)."""
    rng = random.Random(seed)
    keywords = json.loads((HERE / "holdout_queries.json").read_text("utf-8"))
    words = sorted({w for q in keywords for w in q.split() if w.isalpha() and w.islower()})
    ids = sorted(p.stem for p in (store / "pages").rglob("*.md"))[:2000]
    kinds = {
        "keywords": lambda: rng.choice(keywords),
        "question": lambda: f"What did Ada say about {rng.choice(words)} and "
                            f"{rng.choice(words)}?",
        "phrase": lambda: rng.choice(['"context window"', f'"{rng.choice(words)} '
                                      f'{rng.choice(words)}"', '"way area"',
                                      '"year people"']),
        "identifier": lambda: rng.choice(["token01234", "pcp_cli.query", "rev_0123-a"]),
        "page id": lambda: rng.choice(ids),
    }
    shares = {"keywords": 0.4, "question": 0.3, "phrase": 0.1, "identifier": 0.1,
              "page id": 0.1}
    out = [(kind, make()) for kind, share in shares.items() for make in [kinds[kind]]
           for _ in range(round(calls * share))]
    rng.shuffle(out)
    return out[:calls]


def _env(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}


def calls(checkout: Path, store: Path, queries: list[tuple[str, str]],
          work: Path, text_only: bool = False) -> list[dict[str, Any]]:
    path = work / "queries.json"
    path.write_text(json.dumps(queries))
    # cwd: `python -c` and `-m` put the current folder first on sys.path
    out = subprocess.run([sys.executable, "-c", CALLS_SCRIPT, str(store), str(path),
                          "text-only" if text_only else "semantic"],
                         env=_env(checkout), cwd=checkout, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def command(checkout: Path, store: Path, query: str) -> tuple[float, float]:
    """(cpu, wall) of one `pcp search QUERY --json` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pcp_cli", "search", query, "--store", str(store),
                    "--json"], env=_env(checkout), cwd=checkout, capture_output=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")


def summary(samples: list[dict[str, Any]], key: str) -> str:
    ms = [s[key] * 1000 for s in samples]
    return (f"{statistics.median(ms):.0f} / {pct(ms, 0.95):.0f} / {pct(ms, 0.99):.0f} / "
            f"{max(ms):.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--versus", type=Path, required=True, help="the baseline checkout")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--commands", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--text-only", action="store_true",
                        help="hide the semantic extra from both checkouts (auto never picks "
                        "hybrid, so no call embeds the store: at 100k the first would embed "
                        "every page)")
    args = parser.parse_args()
    store = args.store.resolve()
    checkouts = {"base": args.versus.resolve(), "this": REPO}
    queries = mix(store, args.calls)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"search-cost-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    pooled: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    loads = []
    for _ in range(args.rounds):
        for name, checkout in checkouts.items():
            loads.append(os.getloadavg()[0])
            pooled[name] += calls(checkout, store, queries, work, args.text_only)
    print(f"## pcp_search calls, {len(queries)} per round x {args.rounds} rounds "
          f"(load {min(loads):.1f}-{max(loads):.1f})"
          f"{', the semantic extra hidden' if args.text_only else ''}\n")
    print("| checkout | kind | calls | wall ms median / p95 / p99 / max | CPU ms median / p95 / "
          "p99 / max | modes |")
    print("|---|---|---|---|---|---|")
    for name, samples in pooled.items():
        kinds = sorted({s["kind"] for s in samples})
        for kind in [*kinds, "all"]:
            chosen = [s for s in samples if kind in ("all", s["kind"])]
            modes = sorted({str(s["mode"]) for s in chosen})
            errors = sum(s["error"] for s in chosen)
            print(f"| {name} | {kind} | {len(chosen)}{f' ({errors} errors)' if errors else ''} "
                  f"| {summary(chosen, 'wall')} | {summary(chosen, 'cpu')} | "
                  f"{', '.join(modes)} |")
    print(f"\n## whole commands, median of {args.commands} (load "
          f"{os.getloadavg()[0]:.1f})\n")
    print("| query | base CPU s | this CPU s | base wall s | this wall s |")
    print("|---|---|---|---|---|")
    commands: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for query in ("year day", "What did people say about the year?", '"way area"'):
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
        for _ in range(args.commands):
            for name, checkout in checkouts.items():
                runs[name].append(command(checkout, store, query))
        commands[query] = runs
        cells = [statistics.median(c for c, _ in runs[n]) for n in checkouts] + \
            [statistics.median(w for _, w in runs[n]) for n in checkouts]
        print(f"| `{query}` | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    if args.json:
        args.json.write_text(json.dumps({"calls": pooled, "commands": commands}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
