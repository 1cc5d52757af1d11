"""Whole-process start-up of the light commands, and whether the typer-free fast paths still pay.

    python bench/cli_startup_bench.py [--runs 21] [--pages 2000] [--baseline ../main]

Times, as separate processes (median, min, max of RUNS; interleaved so load spikes hit every
case alike), against `python -c pass` measured in the same run:

- `pcp --help`, `pcp --version`, `pcp ls --help` (the budget: under 0.15 s whole-process);
- a completion request (`_PCP_COMPLETE=complete_bash`, completing `pcp sh`);
- `pcp export --format micro_prompt` and `pcp search QUERY --json` on a store of PAGES notes,
  through the fast path (as shipped) and through typer (the same run with `_fast_command`
  switched off), to answer issue #16: are the fast paths still needed once imports are lazy?

Nothing here asserts a time; results go in bench/RESULTS.md with the machine load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# `pcp_cli.cli.main` the attribute is the function main(); the module is in sys.modules.
NO_FAST = ("import importlib, sys; m = importlib.import_module('pcp_cli.cli.main'); "
           "m._fast_command = lambda args: None; sys.exit(m.run(sys.argv[1:]))")


def make_store(root: Path, pages: int) -> None:
    from pcp_cli import api

    store = api.init_store(root, owner_id="bench")
    with store.locked():
        for n in range(pages):
            api.add_page(store, f"Note {n}\n\nTidewatch sensor reading {n} about tides and "
                         f"queues, deep work mornings {n % 17}.")
        for n in range(20):
            api.add_keystone(store, f"Keystone {n}: prefers small dependency footprints.",
                             category="preference")
    store.close()


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+system) of one run. On a loaded machine the CPU time
    is the steadier of the two: waiting for a core does not count."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # cwd: not a checkout, or `python -m` would import pcp_cli from it whatever PYTHONPATH says
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                   check=False, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. main) whose "
                        "`pcp --help` to time in the same run")
    args = parser.parse_args()
    py = sys.executable
    work = Path(tempfile.mkdtemp(prefix="pcp-startup-"))
    store = work / "store"
    make_store(store, args.pages)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PCP_STORE", None)
    completion_env = {**env, "_PCP_COMPLETE": "complete_bash", "COMP_WORDS": "pcp sh",
                      "COMP_CWORD": "1"}
    micro = ["export", "--format", "micro_prompt", "--store", str(store)]
    search = ["search", "tidewatch queues", "--json", "--store", str(store)]
    subprocess.run([py, "-m", "pcp_cli", *search], capture_output=True, env=env)  # index it
    cases: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([py, "-c", "pass"], env),
        "pcp --help": ([py, "-m", "pcp_cli", "--help"], env),
        "pcp --version": ([py, "-m", "pcp_cli", "--version"], env),
        "pcp ls --help": ([py, "-m", "pcp_cli", "ls", "--help"], env),
        **({"pcp --help, baseline checkout": (
            [py, "-m", "pcp_cli", "--help"], {**env, "PYTHONPATH": str(args.baseline)})}
           if args.baseline else {}),
        "completion (pcp sh<TAB>)": ([py, "-m", "pcp_cli"], completion_env),
        "micro_prompt, fast path": ([py, "-m", "pcp_cli", *micro], env),
        "micro_prompt, through typer": ([py, "-c", NO_FAST, *micro], env),
        "search --json, fast path": ([py, "-m", "pcp_cli", *search], env),
        "search --json, through typer": ([py, "-c", NO_FAST, *search], env),
    }
    # the two routes must print the same thing
    for fast, slow in (("micro_prompt, fast path", "micro_prompt, through typer"),
                       ("search --json, fast path", "search --json, through typer")):
        outs = [subprocess.run(cases[name][0], capture_output=True, env=cases[name][1],
                               cwd=tempfile.gettempdir()).stdout for name in (fast, slow)]
        assert outs[0] == outs[1] and outs[0], f"{fast} and {slow} differ"
    times: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    load_before = os.getloadavg()
    for _ in range(args.runs):
        for name, (argv, case_env) in cases.items():
            wall, cpu = timed(argv, case_env)
            times[name].append(wall)
            cpus[name].append(cpu)
    base = statistics.median(times["python -c pass"])
    print(f"load average before {load_before}, after {os.getloadavg()}; {args.pages} notes; "
          f"{args.runs} runs each")
    print(f"{'case':34} {'wall med':>8} {'min':>7} {'max':>7} {'- python':>9} {'cpu med':>8}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:34} {med:8.3f} {min(values):7.3f} {max(values):7.3f} {med - base:9.3f} "
              f"{statistics.median(cpus[name]):8.3f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
