"""What each `pcp console` page costs, as a browser gets it, on a big store.

    python bench/console_bench.py STORE [--code DIR]... [--repeat 5] [--page /review ...]
        (a page `A|B` is GET at A, or at B by code that answers 404 at A)
    python bench/console_bench.py --audit-log STORE --records 225000   # make a big audit log

Starts the real `pcp console --no-browser` on STORE (a copy: pages write to its `.pcp/`) for
each code tree named by `--code` (a checkout or `git archive` of a commit; the baseline first,
default: this checkout), signs in, and GETs each page `--repeat` times, round-robin over the
code trees so both see the same load. For each page and tree it reports the first load, the
median wall time and the median CPU time the console process spent on it (read from
/proc/PID/stat around the request: load on a shared machine moves wall time, much less CPU),
and the answer's size.

`--audit-log STORE --records N` appends N plausible MCP call records (four clients, the tools
and page ids of the store's own log) in files of the log's rotation size, as a year of heavy
use leaves them (the log is never pruned).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
PAGES = ["/review", "/pages", "/pages?q=time", "/timeline", "/profile", "/assistants",
         "/health"]
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


class Console:
    def __init__(self, store: Path, code: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(code), "PCP_STORE": str(store)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pcp_cli", "console", "--no-browser"], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        link = self.process.stdout.readline().strip()  # type: ignore[union-attr]
        parts = urlsplit(link)
        self.port, self.host = int(parts.port or 0), parts.netloc
        status, headers, _ = self.get(f"{parts.path}?{parts.query}", cookie=False)
        found = re.match(r"([^=]+)=([^;]+)", headers.get("set-cookie", ""))
        assert status == 303 and found, (status, headers)
        self.cookie = f"{found.group(1)}={found.group(2)}"

    def get(self, path: str, cookie: bool = True) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        headers = {"Host": self.host, **({"Cookie": self.cookie} if cookie else {})}
        conn.request("GET", path, headers=headers)
        answer = conn.getresponse()
        body = answer.read()
        conn.close()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, body

    def timed(self, page: str) -> tuple[float, float, int]:
        """GET the page (`A|B`: the first of its addresses this code answers 200 at)."""
        for path in page.split("|"):
            cpu, wall = cpu_seconds(self.process.pid), time.perf_counter()
            status, _headers, body = self.get(path)
            if status != 404:
                break
        assert status == 200, (path, status, body[:300])
        return time.perf_counter() - wall, cpu_seconds(self.process.pid) - cpu, len(body)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


def audit_log(store: Path, records: int) -> None:
    """Append `records` records to the store's audit log, in rotation-sized files."""
    local = store / ".pcp"
    local.mkdir(exist_ok=True)
    current = local / "audit.jsonl"
    seen = [json.loads(line) for line in current.read_text().splitlines()] \
        if current.exists() else []
    page_ids = [i for r in seen for i in r.get("page_ids") or []] or ["pg_none"]
    tools = ["pcp_search", "pcp_read_pages", "pcp_get_profile", "pcp_get_timeline"]
    clients = ["claude-desktop", "cursor", "codex", "oauth-claude-ab12cd"]
    rng = random.Random(35)
    per_file = 40_000  # about the 16 MiB the log rotates at
    files = (records + per_file - 1) // per_file
    for index in range(files):
        name = f"audit-2026{index + 1:02d}01T000000000000.jsonl"
        path = local / name if index < files - 1 else current
        with path.open("a", encoding="utf-8") as out:
            for number in range(min(per_file, records - index * per_file)):
                out.write(json.dumps({
                    "time": f"2026-{index + 1:02d}-{1 + number * 27 // per_file:02d}"
                            f"T10:{number % 60:02d}:00.000Z",
                    "session_id": f"ses_{number % 97:06x}", "client_id": rng.choice(clients),
                    "actor": "client", "tool": rng.choice(tools),
                    "params": {"query": rng.choice(["yoga", "dog", "music festival"]),
                               "limit": 5},
                    "result_count": 3, "outcome": "allowed", "error_code": None,
                    "page_ids": rng.sample(page_ids, min(3, len(page_ids))),
                    "prev": None, "hash": f"{rng.getrandbits(256):064x}"},
                    ensure_ascii=False, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--code", type=Path, action="append")
    parser.add_argument("--page", action="append")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--audit-log", action="store_true")
    parser.add_argument("--records", type=int, default=225_000)
    args = parser.parse_args()
    if args.audit_log:
        audit_log(args.store, args.records)
        return
    codes = args.code or [HERE.parent]
    pages = args.page or PAGES
    print(f"load {os.getloadavg()[0]:.1f} at start", flush=True)
    consoles = [Console(args.store, code) for code in codes]
    try:
        results: dict[tuple[str, int], list[tuple[float, float, int]]] = {}
        for _round in range(args.repeat):
            for page in pages:
                for index, console in enumerate(consoles):
                    results.setdefault((page, index), []).append(console.timed(page))
    finally:
        for console in consoles:
            console.stop()
    print(f"load {os.getloadavg()[0]:.1f} at end")
    print("| page | code | first load | median wall | median CPU | size |")
    print("|---|---|---|---|---|---|")
    for page in pages:
        for index, code in enumerate(codes):
            runs = results[(page, index)]
            print(f"| `{page}` | {code.name} | {runs[0][0]:.2f} s "
                  f"| {statistics.median(r[0] for r in runs):.2f} s "
                  f"| {statistics.median(r[1] for r in runs):.2f} s "
                  f"| {runs[-1][2] / 1024:.0f} KiB |")


if __name__ == "__main__":
    main()
