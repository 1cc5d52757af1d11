"""The OAuth doors' bounded cases (issue #31), in process (the ASGI app `pcp serve --http` runs):

    python bench/doors_bench.py oauth-state [--clients 196] [--refreshes 20]
    python bench/doors_bench.py metadata [--cap 60]
    python bench/doors_bench.py guessing [--seconds 20] [--threads 8]

- `oauth-state`: `--clients` registrations, each near the 64 KiB body cap (a long name, eight
  long redirect URIs, long logo/terms URIs and contacts), from as many addresses; then one
  client's consent, token and `--refreshes` refreshes. Prints the state files' sizes, the median
  time of a registration and of a refresh, and the process's peak RSS.
- `metadata`: /authorize with a client ID metadata document trickled a byte every 2 s (an https
  server on 127.0.0.1): how long until /authorize answers (`--cap` seconds at most).
- `guessing`: `--threads` threads post wrong approval codes for one request, from one address,
  for `--seconds`: how many were compared, and whether the right code then gets a code.

Run it once on the branch and once on main (`PYTHONPATH=<a main checkout>`, with this file's
helpers from tests/mcp/oauth_inprocess.py copied there) for the baseline. Prints one JSON line
per case. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio

ROOT = Path(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or
            Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT))

from tests.mcp import oauth_inprocess as door  # noqa: E402


def big_registration(n: int) -> dict[str, Any]:
    pad = "p" * 8000
    return {"client_name": f"client {n} " + "n" * 5000,
            "redirect_uris": [f"https://app{n}.example/cb{k}/{'r' * 460}" for k in range(8)],
            "logo_uri": f"https://x.example/{pad}", "client_uri": f"https://x.example/{pad}",
            "tos_uri": f"https://x.example/{pad}", "policy_uri": f"https://x.example/{pad}",
            "contacts": [pad, pad]}


def sizes(store: Path) -> dict[str, int]:
    return {name: (store / ".pcp" / name).stat().st_size for name in
            ("oauth.json", "oauth-clients.json") if (store / ".pcp" / name).exists()}


async def oauth_state(clients: int, refreshes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        async with door.door(Path(folder)) as d:
            took = []
            for n in range(clients):
                http = d.http(f"10.{n // 250}.{n % 250}.1")
                started = time.perf_counter()
                answer = await http.post("/register", json=big_registration(n))
                took.append(time.perf_counter() - started)
                assert answer.status_code == 201, answer.text
            after_registering = sizes(d.store)
            http = d.http("192.0.2.1")
            client = await door.registered(http)
            verifier, challenge = door.pkce()
            request_id, csrf = await door.open_consent(http, client, challenge)
            back = await door.consent(http, request_id, csrf, d.approval_code(request_id))
            code = parse_qs(urlparse(back.headers["location"]).query)["code"][0]
            tokens = (await http.post("/token", data={
                "grant_type": "authorization_code", "code": code, "client_id": client,
                "redirect_uri": door.REDIRECT, "code_verifier": verifier,
                "resource": door.BASE + "/mcp"})).json()
            steps = []
            for _ in range(refreshes):
                started = time.perf_counter()
                answer = await http.post("/token", data={
                    "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                    "client_id": client, "resource": door.BASE + "/mcp"})
                steps.append(time.perf_counter() - started)
                tokens = answer.json()
            return {"case": "oauth-state", "clients": clients,
                    "files_after_registering": after_registering,
                    "files_after_refreshes": sizes(d.store),
                    "registration_median_ms": round(statistics.median(took) * 1000, 1),
                    "refresh_median_ms": round(statistics.median(steps) * 1000, 1),
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                         / 1024, 1)}


async def metadata(cap: float) -> dict[str, Any]:
    def trickle(path: str, send: Any) -> None:
        send(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
        for _ in range(10_000):
            send(b" ")
            time.sleep(2)

    with tempfile.TemporaryDirectory() as folder, door.tls_server(Path(folder), trickle) as tls:
        os.environ["SSL_CERT_FILE"] = str(tls.cert)
        os.environ["PCP_OAUTH_METADATA_LOOPBACK"] = "1"
        async with door.door(Path(folder)) as d:
            started = time.perf_counter()
            status: Any = f"no answer within {cap:g} s"
            with anyio.move_on_after(cap):
                answer = await d.http().get(door.authorize_url(tls.base + "/c.json",
                                                               door.pkce()[1]))
                status = answer.status_code
            return {"case": "metadata", "authorize_answered_in_s":
                    round(time.perf_counter() - started, 2), "status": status}


async def guessing(seconds: float, threads: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        async with door.door(Path(folder)) as d:
            client = await door.registered(d.http())
            request_id, csrf = await door.open_consent(d.http(), client)
            code = d.approval_code(request_id)
            guesser = d.http("203.0.113.7")
            texts: list[str] = []
            lock = threading.Lock()
            stop = time.monotonic() + seconds

            async def guess(n: int) -> None:
                answer = await door.consent(guesser, request_id, csrf, f"{n:04d}-{n:04d}")
                with lock:
                    texts.append(answer.text)

            def run(first: int) -> None:
                n = first
                while time.monotonic() < stop:
                    anyio.from_thread.run(guess, n % 10_000)
                    n += threads

            async with anyio.create_task_group() as tg:
                for t in range(threads):
                    tg.start_soon(anyio.to_thread.run_sync, run, t)
            right = await door.consent(d.http("198.51.100.1"), request_id, csrf, code)
            return {"case": "guessing", "seconds": seconds, "threads": threads,
                    "guesses": len(texts),
                    "compared": sum("approval code is missing or wrong" in t for t in texts),
                    "right_code_then_issues_a_code": "code=" in right.headers.get("location",
                                                                                  "")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=("oauth-state", "metadata", "guessing"))
    parser.add_argument("--clients", type=int, default=196)
    parser.add_argument("--refreshes", type=int, default=20)
    parser.add_argument("--cap", type=float, default=60.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    if args.case == "oauth-state":
        result = anyio.run(oauth_state, args.clients, args.refreshes)
    elif args.case == "metadata":
        result = anyio.run(metadata, args.cap)
    else:
        result = anyio.run(guessing, args.seconds, args.threads)
    result["load"] = os.getloadavg()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
