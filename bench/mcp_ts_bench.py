"""Back-to-back MCP calls from the official TypeScript SDK client over `pcp serve --http`
(issue #25: each call on a kept-alive connection used to wait ~40 ms for a delayed ACK).

    python bench/mcp_ts_bench.py STORE [--calls 30] [--client agent] [--versus BASE]
                                       [--rounds 2]

STORE: a copy of a store whose pcp.yaml grants CLIENT (bench/mcp_call_bench.py adds the grant;
this issues CLIENT a new token). Starts a real `pcp serve --http 127.0.0.1:0` of this checkout
(and of BASE, taking turns, with --versus), and runs bench/mcp_ts_calls.mjs against it: CALLS
back-to-back calls each of `tools/list`, `pcp_stats` and `pcp_search` on one client. Needs
node; installs the SDK pinned in tests/mcp/ts_client/ when missing. Prints wall p50 / p95 per
call kind and checkout. Nothing here asserts a time; results go in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.mcp.http_helpers import npm_ci  # noqa: E402

TS_CLIENT = ROOT / "tests" / "mcp" / "ts_client"
SDK = TS_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk"
URL_LINE = re.compile(r"serving MCP over HTTP at (http://127\.0\.0\.1:\d+/mcp)")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_once(store: Path, code: Path, token: str, calls: int, work: Path) -> dict[str, list]:
    log = work / "server.log"
    env = {**os.environ, "PCP_STORE": str(store), "PYTHONPATH": str(code)}
    with log.open("wb") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "pcp_cli", "serve", "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env,
            cwd=str(store))
    try:
        deadline = time.monotonic() + 900
        while not (found := URL_LINE.search(log.read_text(errors="replace"))):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"pcp serve --http did not start:\n{log.read_text()}")
            time.sleep(0.05)
        out = subprocess.run(
            ["node", str(ROOT / "bench" / "mcp_ts_calls.mjs"), found.group(1), token,
             str(calls), str(SDK)], capture_output=True, text=True, timeout=3600)
        if out.returncode:
            raise SystemExit(out.stderr[-3000:])
        return json.loads(out.stdout)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--client", default="agent")
    parser.add_argument("--versus", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    store = args.store.resolve()
    npm_ci(TS_CLIENT, SDK / "package.json")
    from pcp_cli.mcp import commands

    token = commands.grant_token(store, args.client, rotate=True)["token"]
    codes = [args.versus.resolve(), ROOT] if args.versus else [ROOT]
    pooled: dict[Path, dict[str, list[float]]] = {code: {} for code in codes}
    loads = []
    with tempfile.TemporaryDirectory(prefix="pcp-ts-bench-") as work:
        for _ in range(args.rounds):
            for code in codes:
                loads.append(os.getloadavg()[0])
                for kind, times in run_once(store, code, token, args.calls,
                                            Path(work)).items():
                    pooled[code].setdefault(kind, []).extend(times)
    print(f"store {store.name}; {args.calls} back-to-back calls per kind, {args.rounds} "
          f"round(s); load averages {[round(x, 1) for x in loads]}")
    print(f"{'call':12} " + " ".join(f"{str(code)[-24:]:>24}" for code in codes)
          + "   (wall ms p50 / p95)")
    for kind in pooled[ROOT]:
        print(f"{kind:12} " + " ".join(
            f"{statistics.median(pooled[c][kind]):13.1f} / {pct(pooled[c][kind], 0.95):7.1f}"
            for c in codes))


if __name__ == "__main__":
    main()
