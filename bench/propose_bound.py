"""What one huge message costs `pcp propose` (issue #31): time and peak memory, bounded.

    python bench/propose_bound.py                              # this checkout
    python bench/propose_bound.py --baseline "env PYTHONPATH=/tmp/main python -m pcp_cli"

Two stores: 200 ordinary conversations (a few sentences of the person's each), and the same
plus one conversation whose single user turn is `--mb` megabytes of sentence-like text (the
worst case for the extractor: every line a sentence it must read, as a pasted transcript or a
dump of prose would be). `pcp propose --dry-run --json` runs on each as a whole process,
`--rounds` times; the median wall time and the peak RSS of the process (`os.wait4`) are
printed, and the ratio of the two stores, for each pcp named, in the same run.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("the quick brown fox jumps over a lazy dog I love my work as a nurse in Porto and we "
         "moved there last year because my partner found a job at the harbour").split()


def _pcp(command: str) -> list[str]:
    return shlex.split(command) if command else [sys.executable, "-m", "pcp_cli"]


def _run(base: list[str], *args: str) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in MiB, exit status) of one pcp process."""
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("PCP_STORE", None)
    start = time.perf_counter()
    proc = subprocess.Popen([*base, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir())
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    return took, usage.ru_maxrss // 1024, os.waitstatus_to_exitcode(status)


def _text(size: int, rng: random.Random) -> str:
    out, total = [], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + ".\n"
        out.append(line)
        total += len(line)
    return "".join(out)


def build(base: list[str], root: Path, *, big_mb: float) -> Path:
    """A store of 200 ChatGPT conversations (and, with `big_mb`, one more whose user turn is
    that many megabytes), imported from a real export zip."""
    import json
    import zipfile
    from datetime import datetime, timedelta

    sys.path.insert(0, str(Path(__file__).resolve().parent / "propose"))
    import build_corpus

    rng = random.Random(7)
    start = datetime(2024, 3, 1, 10, 0)
    conversations = []
    for i in range(200):
        turns = [build_corpus.Turn("user", f"I live in Porto. I'm a nurse. {_text(400, rng)}"),
                 build_corpus.Turn("assistant", "Noted.")]
        conversations.append(build_corpus.Conversation(
            "bench", f"c{i}", "chatgpt", "bench", f"chat {i}", start + timedelta(days=i),
            turns, [], []))
    if big_mb:
        conversations.append(build_corpus.Conversation(
            "bench", "huge", "chatgpt", "bench", "huge paste", start + timedelta(days=300),
            [build_corpus.Turn("user", _text(int(big_mb * 1_000_000), rng)),
             build_corpus.Turn("assistant", "That is a lot.")], [], []))
    export = root / f"{'big' if big_mb else 'small'}-chatgpt.zip"
    with zipfile.ZipFile(export, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", json.dumps(
            [build_corpus.chatgpt_conversation(c) for c in conversations]))
    store = root / ("big" if big_mb else "small")
    subprocess.run([*base, "init", str(store), "--owner", "bench"], check=True,
                   capture_output=True, cwd=tempfile.gettempdir())
    subprocess.run([*base, "import", str(export), "--store", str(store)], check=True,
                   capture_output=True, cwd=tempfile.gettempdir())
    return store


def measure(command: str, label: str, args: argparse.Namespace) -> None:
    base = _pcp(command)
    with tempfile.TemporaryDirectory(prefix="pcp-bound-") as tmp:
        root = Path(tmp)
        rows = []
        for big in (0.0, args.mb):
            store = build(base, root, big_mb=big)
            runs = [_run(base, "propose", "--dry-run", "--json", "--store", str(store))
                    for _ in range(args.rounds)]
            if any(code != 0 for _, _, code in runs):
                raise SystemExit(f"{label}: pcp propose failed on the {store.name} store")
            rows.append((store.name, statistics.median(r[0] for r in runs),
                         max(r[1] for r in runs), [r[0] for r in runs]))
        (_, small_s, small_mb, _), (_, big_s, big_mb, runs) = rows
        print(f"| {label} | {small_s:.2f} s / {small_mb} MiB | {big_s:.2f} s / {big_mb} MiB "
              f"({', '.join(f'{r:.1f}' for r in runs)} s) | {big_s / small_s:.1f}x |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pcp", default="", help="the pcp to measure (default: this checkout)")
    parser.add_argument("--baseline", help="a second pcp, measured in the same run")
    parser.add_argument("--mb", type=float, default=10.0, help="size of the huge message")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, {os.cpu_count()} cores\n")
    print(f"| pcp | 200 conversations | + one {args.mb:g} MB message | ratio |")
    print("|---|---|---|---|")
    measure(args.pcp, "this pcp", args)
    if args.baseline:
        measure(args.baseline, "baseline", args)
    load = os.getloadavg()
    print(f"\nload at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
