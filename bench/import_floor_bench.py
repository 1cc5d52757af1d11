"""`pcp import` against the file system's floor: `cp -r FOLDER DEST && sync` of the same notes.

    python bench/import_floor_bench.py --from STORE/pages --count 21000 \\
        [--code OTHER_CHECKOUT] [--turns 3] [--scratch DIR]
    python bench/import_floor_bench.py --from STORE/pages --count 100000 --turns 1 --once
    python bench/import_floor_bench.py --count 21000 --code OTHER_CHECKOUT   # generated notes

The first COUNT head files under `--from` (sorted, as `import_bench.py --markdown` picks them)
are copied into a plain folder, once (without `--from`, COUNT small notes are generated: a
title and tags, one to five paragraphs). Each turn then times, whole processes, one after the
other and in an order that alternates between turns: `sh -c 'cp -r FOLDER DEST && sync'`, and
`python -m pcp_cli import FOLDER --store NEW --json` into a store made just before (`pcp init`,
not timed) with this checkout's `pcp_cli` and, with `--code`, another checkout's (the
baseline, e.g. `git archive main`). Between steps `sync` runs, untimed, so no step pays for
another's writes. Reported: wall and CPU (user +
system of the child) per step, medians over the turns, the import ÷ cp+sync ratio per turn
and its median, pages/s, the load average. `--once` times this checkout's import alone (the
pages/s at a large count, and the projection to a million pages it supports).

Which sync path ran (syncfs or per-file fsync) is counted once per checkout, untimed, with
`strace -f -c` when strace is installed (not with `--once`): the timed runs are never traced.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The children's working folder: not a checkout, so `python -m pcp_cli` loads the PYTHONPATH one.
NEUTRAL = tempfile.gettempdir()
sys.path.insert(0, str(ROOT / "bench"))

from import_bench import markdown_folder  # noqa: E402


def timed(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a whole process; its wall time and CPU (user + system, children included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=NEUTRAL)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args[:4]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return {"wall": round(wall, 2),
            "user": round(after.ru_utime - before.ru_utime, 2),
            "system": round(after.ru_stime - before.ru_stime, 2),
            "stdout": done.stdout}


def settle() -> None:
    """Flush out what a step wrote, untimed. (What the steps wrote is removed only at the end:
    on a file system mounted with `discard`, as the bench machine's is, removing a store of
    21,000 pages takes minutes and would load the disk under the next step.)"""
    subprocess.run(["sync"], check=True)


def pcp_env(code: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code)}


def import_step(code: Path, folder: Path, store: Path) -> dict[str, Any]:
    env = pcp_env(code)
    subprocess.run([sys.executable, "-m", "pcp_cli", "init", str(store), "--owner", "bench"],
                   check=True, capture_output=True, env=env, cwd=NEUTRAL)
    subprocess.run(["sync"], check=True)
    run = timed([sys.executable, "-m", "pcp_cli", "import", str(folder), "--store", str(store),
                 "--json"], env=env)
    summary = json.loads(run.pop("stdout"))
    run["pages"] = summary["created"] + summary["revised"] + summary["unchanged"]
    run["failed"] = summary["failed"]
    run["pages_per_second"] = round(run["pages"] / run["wall"], 1)
    return run


def cp_step(folder: Path, dest: Path) -> dict[str, Any]:
    run = timed(["sh", "-c", f"cp -r '{folder}' '{dest}' && sync"])
    run.pop("stdout")
    return run


def syscalls(code: Path, folder: Path, store: Path) -> dict[str, int] | None:
    """How many syncfs, fsync and fdatasync calls one import makes (strace -f -c), untimed."""
    if shutil.which("strace") is None:
        return None
    env = pcp_env(code)
    subprocess.run([sys.executable, "-m", "pcp_cli", "init", str(store), "--owner", "bench"],
                   check=True, capture_output=True, env=env, cwd=NEUTRAL)
    log = store.parent / f"{store.name}.strace"
    subprocess.run(["strace", "-f", "--seccomp-bpf", "-c", "-e", "trace=syncfs,fsync,fdatasync",
                    "-o", str(log), sys.executable, "-m", "pcp_cli", "import", str(folder),
                    "--store", str(store), "--json"],
                   check=True, capture_output=True, env=env, cwd=NEUTRAL)
    counts: dict[str, int] = {}
    for line in log.read_text().splitlines():
        parts = line.split()
        if parts and parts[-1] in ("syncfs", "fsync", "fdatasync"):
            counts[parts[-1]] = int(parts[3] if len(parts) == 6 else parts[-2])
    return counts


def median(runs: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(run[key] for run in runs), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path,
                        help="copy the first COUNT .md files under this folder (default: "
                        "generate small notes, as import_bench.py --markdown does)")
    parser.add_argument("--count", type=int, default=21000)
    parser.add_argument("--code", type=Path, help="another checkout: the baseline")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--once", action="store_true", help="this checkout's import only")
    parser.add_argument("--scratch", type=Path, help="where the notes and stores go")
    args = parser.parse_args()
    if args.scratch is not None:
        args.scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
        scratch = Path(tmp)
        folder = scratch / "notes"
        count = markdown_folder(folder, args.count, args.source)
        megabytes = sum(f.stat().st_size for f in folder.rglob("*.md")) / 1e6
        print(f"{count} notes, {megabytes:.1f} MB", file=sys.stderr)
        codes = {"this": ROOT}
        if args.code and not args.once:
            codes = {"baseline": args.code.resolve(), "this": ROOT}
        steps = [] if args.once else ["cp+sync"]
        steps += list(codes)
        result: dict[str, Any] = {"notes": count, "megabytes": round(megabytes, 1),
                                  "load_before": [round(x, 2) for x in os.getloadavg()],
                                  "syscalls": {} if args.once else {
                                      label: syscalls(code, folder, scratch / f"traced-{label}")
                                      for label, code in codes.items()}}
        runs: dict[str, list[dict[str, Any]]] = {step: [] for step in steps}
        settle()
        for turn in range(args.turns):
            order = steps if turn % 2 == 0 else steps[::-1]
            for step in order:
                target = scratch / f"{step}-{turn}"
                if step == "cp+sync":
                    run = cp_step(folder, target)
                else:
                    run = import_step(codes[step], folder, target)
                run["load"] = round(os.getloadavg()[0], 2)
                runs[step].append(run)
                print(f"turn {turn} {step}: {run}", file=sys.stderr)
                settle()
        for step, done in runs.items():
            result[step] = {"median_wall": median(done, "wall"),
                            "median_cpu": round(statistics.median(
                                r["user"] + r["system"] for r in done), 2),
                            "runs": done}
            if step != "cp+sync":
                result[step]["median_pages_per_second"] = median(done, "pages_per_second")
                if "cp+sync" in runs:
                    ratios = [r["wall"] / c["wall"] for r, c in zip(done, runs["cp+sync"],
                                                                     strict=True)]
                    result[step]["ratio_to_cp_sync_per_turn"] = [round(x, 1) for x in ratios]
                    result[step]["median_ratio_to_cp_sync"] = round(statistics.median(ratios), 1)
        if args.once:  # at this rate throughout (what grows with the store is not in it)
            rate = result["this"]["median_pages_per_second"]
            result["projected_1m_minutes_at_this_rate"] = round(1_000_000 / rate / 60, 1)
        result["load_after"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
