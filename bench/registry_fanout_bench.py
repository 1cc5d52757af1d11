"""What `pcp search --sources` costs: a whole `pcp search` process on a small store, alone and
asking one other pcp store registered over stdio (whose `pcp serve` starts for the call).

    python bench/registry_fanout_bench.py [RUNS]

Prints the median wall time of each over RUNS runs (default 7) after one warm-up run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def pcp(*args: str, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "pcp_cli", *args], env=env, check=True,
                   capture_output=True)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    with tempfile.TemporaryDirectory() as tmp:
        home, ada, bob = Path(tmp, "home"), Path(tmp, "ada"), Path(tmp, "bob")
        home.mkdir()
        env = {**os.environ, "HOME": str(home)}
        env.pop("PCP_STORE", None)
        for root, owner in ((ada, "ada"), (bob, "bob")):
            pcp("init", str(root), "--owner", owner, env=env)
            for n in range(50):
                pcp("add", f"Tidewatch note {n} about queues and sensors", "--store",
                    str(root), env=env)
        pcp("grant", "add", "registry", "--scope", "user:bob", "--store", str(bob), env=env)
        pcp("register", "--store", str(bob), env=env)
        cases = {"local only": ["search", "tidewatch", "--store", str(ada), "--json"],
                 "+ one stdio pcp store": ["search", "tidewatch", "--store", str(ada),
                                           "--sources", "all", "--json"]}
        for name, args in cases.items():
            pcp(*args, env=env)  # warm-up: the index, the page cache
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                pcp(*args, env=env)
                times.append(time.perf_counter() - started)
            print(f"{name}: median {statistics.median(times) * 1000:.0f} ms over {runs} runs")


if __name__ == "__main__":
    main()
