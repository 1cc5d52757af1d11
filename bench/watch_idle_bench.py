"""`pcp watch` idle CPU: the CPU seconds a watch uses while nothing changes (issue #21).

Starts `pcp watch` on a vault of N notes (events, then `--poll`), waits for its first import,
then reads its utime + stime from /proc/<pid>/stat over IDLE seconds. Linux only.

    python bench/watch_idle_bench.py [--notes 200] [--idle 60]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(root: Path, vault: Path, idle: float, poll: bool) -> float:
    args = [sys.executable, "-m", "pcp_cli", "watch", str(vault), "--store", str(root)]
    proc = subprocess.Popen(args + (["--poll"] if poll else []), stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    while "watching" not in proc.stderr.readline():
        pass
    time.sleep(10)  # the catch-up import of the vault
    start = cpu_seconds(proc.pid)
    time.sleep(idle)
    used = cpu_seconds(proc.pid) - start
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    return used


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--idle", type=float, default=60.0)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, vault = Path(tmp) / "store", Path(tmp) / "vault"
        subprocess.run([sys.executable, "-m", "pcp_cli", "init", str(root)], check=True,
                       capture_output=True)
        vault.mkdir()
        for i in range(opts.notes):
            (vault / f"note-{i:04d}.md").write_text(f"# Note {i}\n\nSome text {i}.\n")
        for poll in (False, True):
            used = measure(root, vault, opts.idle, poll)
            print(f"{'poll' if poll else 'events'}: {used:.2f} CPU s over {opts.idle:.0f} s "
                  f"idle ({opts.notes} notes)")


if __name__ == "__main__":
    main()
