"""The MCP authorization flow on `pcp serve --http`: its time, and an OAuth token's per-call cost.

    python bench/oauth_bench.py [--flows 10] [--calls 400]

On a copy of the example store, starts a real `pcp serve --http` on 127.0.0.1 (a port it picks)
and measures:

- the flow by hand, `--flows` times: register -> /authorize -> consent page -> consent POST
  (approval code read from the server's stderr) -> /token; and the same flow driven by the MCP
  Python SDK's OAuth client from the first 401 to the first tools/list answered;
- per call, same run, interleaved: `tools/list` over HTTP with an OAuth access token and with a
  `pcp grant token` token (`--calls` each, one connection each), and the token checks alone in
  process (`Provider.verify` against `TokenRegistry.verify`).

Prints one JSON object (medians; the goal: an OAuth token within 1 ms of a grant token).
Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from pcp_cli.mcp.audit import AuditLog  # noqa: E402
from pcp_cli.mcp.oauth_http import make_provider  # noqa: E402
from pcp_cli.mcp.tokens import TokenRegistry  # noqa: E402
from tests.mcp import test_mcp_oauth as flow  # noqa: E402
from tests.mcp.http_helpers import make_store, running_server, token  # noqa: E402

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}


def by_hand(running: flow.Running) -> tuple[float, dict]:
    started = time.perf_counter()
    client, tokens = flow.tokens_for(running)
    return time.perf_counter() - started, tokens


async def with_sdk(running: flow.Running) -> float:
    started = time.perf_counter()
    await flow.list_tools(running, flow.sdk_auth(running, flow.MemoryStorage()))
    return time.perf_counter() - started


def per_call(url: str, bearers: dict[str, str], calls: int) -> dict[str, list[float]]:
    """Sequential calls, one keep-alive connection per token. Each round starts with a call on
    a third connection (not counted): the first connection of a round, whichever token it
    carries, waits ~40 ms (back-to-back calls on one connection do too; see RESULTS.md), and the
    order of the two measured ones alternates."""
    parsed = urlparse(url)
    body = json.dumps(LIST).encode()
    times: dict[str, list[float]] = {name: [] for name in bearers}
    names = list(bearers)
    bearers = {**bearers, "pad": next(iter(bearers.values()))}
    conns = {}
    for name in bearers:
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns[name] = conn

    def call(name: str) -> None:
        conns[name].request("POST", parsed.path, body=body, headers={
            **HEADERS, "content-type": "application/json",
            "authorization": f"Bearer {bearers[name]}"})
        answer = conns[name].getresponse()
        answer.read()
        assert answer.status == 200, answer.status

    try:
        for _ in range(20):
            for name in ["pad", *names]:
                call(name)
        for index in range(calls):
            call("pad")
            for name in names if index % 2 else names[::-1]:
                started = time.perf_counter()
                call(name)
                times[name].append(time.perf_counter() - started)
    finally:
        for conn in conns.values():
            conn.close()
    return times


def in_process(store: Path, oauth_token: str, grant_token: str, resource: str,
               n: int = 20000) -> dict[str, float]:
    provider = make_provider(store, AuditLog(store), announce=sys.stderr)
    registry = TokenRegistry(store)
    assert provider.verify(oauth_token, resource)[0] and registry.verify(grant_token)
    out = {}
    for name, check in (("oauth_verify_us", lambda: provider.verify(oauth_token, resource)),
                        ("grant_verify_us", lambda: registry.verify(grant_token))):
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(n):
                check()
            samples.append((time.perf_counter() - started) / n * 1e6)
        out[name] = round(statistics.median(samples), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flows", type=int, default=10)
    parser.add_argument("--calls", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        store = make_store(Path(work) / "store")
        with running_server(store) as running:
            hand, sdk = [], []
            tokens: dict = {}
            for _ in range(args.flows):
                took, tokens = by_hand(running)
                hand.append(took)
            for _ in range(max(1, args.flows // 2)):
                sdk.append(asyncio.run(with_sdk(running)))
            grant = token(store, "claude-desktop")  # the same two namespaces as the consent
            calls = per_call(running.url, {"oauth": tokens["access_token"], "grant": grant},
                             args.calls)
            checks = in_process(store, tokens["access_token"], grant, running.url)
    med = {name: statistics.median(v) * 1000 for name, v in calls.items()}
    print(json.dumps({
        "flow_by_hand_ms": round(statistics.median(hand) * 1000, 1),
        "flow_sdk_first_call_ms": round(statistics.median(sdk) * 1000, 1),
        "tools_list_oauth_p50_ms": round(med["oauth"], 3),
        "tools_list_grant_p50_ms": round(med["grant"], 3),
        "oauth_minus_grant_ms": round(med["oauth"] - med["grant"], 3),
        **checks, "flows": args.flows, "calls": args.calls,
    }, indent=1))


if __name__ == "__main__":
    main()
