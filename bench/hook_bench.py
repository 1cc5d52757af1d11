"""The time a coding agent waits for pcp's hook (issue #21: under 300 ms).

Runs `pcp-cli hooks run claude-code` (the command `pcp hooks install` writes) N times with a
real SessionEnd payload, and reports the median and worst wall time until it exits; the
import itself runs after, in the background worker.

    python bench/hook_bench.py [-n 30]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOG = (Path(__file__).resolve().parent.parent / "tests" / "data" / "sessions" / "claude" /
       "projects" / "-home-ada-code-tidewatch" / "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=30)
    opts = parser.parse_args()
    script = Path(sys.executable).parent / "pcp-cli"
    head = [str(script)] if script.is_file() else [sys.executable, "-m", "pcp_cli"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        subprocess.run([*head, "init", str(root)], check=True, capture_output=True)
        payload = json.dumps({"session_id": "4f35e220", "transcript_path": str(LOG),
                              "cwd": "/home/ada", "hook_event_name": "SessionEnd",
                              "reason": "exit"})
        times, cpu = [], []
        for _ in range(opts.n):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([*head, "hooks", "run", "claude-code", "--store", str(root)],
                           input=payload, text=True, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the hook, not its worker
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            time.sleep(0.2)
        time.sleep(5)  # let the last worker finish before the folder goes
    print(f"hooks run: wall median {statistics.median(times) * 1000:.0f} ms, worst "
          f"{max(times) * 1000:.0f} ms; CPU median {statistics.median(cpu) * 1000:.0f} ms, "
          f"worst {max(cpu) * 1000:.0f} ms over {opts.n} runs")


if __name__ == "__main__":
    main()
