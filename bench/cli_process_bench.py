"""Whole-process `pcp status` and `pcp search` against `rg -l -i`, base and branch in turn.

    python bench/cli_process_bench.py --search-store S10K [--status-store S100K]
        [--base CHECKOUT] [--rounds 7] [--queries 9] [--no-bytecode-too]

Each store is used by one code base only: with `--base`, the base runs on `STORE-base` (a
`cp -a` copy, made if missing), since the two may keep different derived files in `.pcp/`.
Every pcp run is a fresh `python -m pcp_cli …` process started in its checkout (so that
checkout's package is the one imported), with the bytecode of both checkouts compiled first:
an installed pcp has it (pip compiles on install), and compiling pcp's own modules at every
start costs ~80 ms of CPU that no user pays. `--no-bytecode-too` adds the branch run the way
the earlier benches did (PYTHONDONTWRITEBYTECODE=1 on a checkout without bytecode), for
comparison with their numbers.

Measured per run: wall time, and CPU time (user + system) of the child from `os.wait4`.
Per case: medians over the runs, the code bases and rg taking turns on every query and
round. The first output of each command is checked to be the same for base and branch.
Prints one JSON object; the numbers go in RESULTS.md with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["time", "people", "memory", "garden recipe", "travel budget", "piano coffee",
           "marathon doctor", "library notebook", "nonexistentword"]


# `--edits N`: in one process per code base, N times in turn: the next search after an edit
# saved by rename (write a temporary file, rename it over the page) and a search of an
# unchanged store; CPU and wall of open + refresh + api.search, medians, and the difference.
EDIT_WORKER = r"""
import json, os, statistics, sys, time
from pathlib import Path
from pcp_cli import api

root, rounds = Path(sys.argv[1]), int(sys.argv[2])

def search(q):
    c0, t0 = time.process_time(), time.perf_counter()
    with api.open_store(root, readonly=True) as s:
        data = api.search(s, q)
    return time.perf_counter() - t0, time.process_time() - c0, data

search("warm"); search("warm")
with api.open_store(root, readonly=True) as s:
    notes = [e for e in s.entries(types=("note",), statuses=("active",))
             if e.sensitivity != "high"]
victim = root / notes[len(notes) // 2].path
same, edited, found = [], [], []
for i in range(rounds):
    w, c, _ = search("garden")
    same.append((w, c))
    text = victim.read_text("utf-8").rstrip("\n") + f"\n\nEdited zqxrename{i}.\n"
    tmp = victim.with_name(f".{victim.name}.tmp")
    tmp.write_text(text, "utf-8")
    os.replace(tmp, victim)
    time.sleep(0.2)  # past the racy tick, as a person's edit would be
    w, c, data = search(f"zqxrename{i}")
    edited.append((w, c))
    found.append(data["count"] >= 1)
med = lambda xs, k: round(statistics.median(x[k] for x in xs) * 1000, 1)
print(json.dumps({"unchanged_wall_ms": med(same, 0), "unchanged_cpu_ms": med(same, 1),
                  "after_rename_wall_ms": med(edited, 0), "after_rename_cpu_ms": med(edited, 1),
                  "extra_wall_ms": round(med(edited, 0) - med(same, 0), 1),
                  "extra_cpu_ms": round(med(edited, 1) - med(same, 1), 1),
                  "found_every_time": all(found), "rounds": rounds}))
"""


def run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
        ) -> tuple[float, float, bytes]:
    """(wall s, CPU s, stdout) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, out


def pcp(checkout: Path, env: dict[str, str], *args: str) -> tuple[float, float, bytes]:
    return run([sys.executable, "-m", "pcp_cli", *args], cwd=checkout, env=env)


def rg(store: Path, query: str) -> tuple[float, float, bytes]:
    pattern = [a for w in query.split() for a in ("-e", w)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(["rg", "-l", "-i", *pattern, str(store / "pages")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, out


def summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {"wall_ms": round(statistics.median(s[0] for s in samples) * 1000, 1),
            "cpu_ms": round(statistics.median(s[1] for s in samples) * 1000, 1),
            "runs": len(samples)}


def side_store(store: Path, side: str) -> Path:
    if side == "branch":
        return store
    copy = store.with_name(f"{store.name}-{side}")
    if not copy.exists():
        subprocess.run(["cp", "-a", str(store), str(copy)], check=True)
    return copy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--search-store", type=Path)
    ap.add_argument("--status-store", type=Path)
    ap.add_argument("--base", type=Path)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--queries", type=int, default=len(QUERIES))
    ap.add_argument("--no-bytecode-too", action="store_true")
    ap.add_argument("--edits", type=int, default=0, metavar="N",
                    help="also N rename edits, each followed by a search, on --status-store")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PCP_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    sides: dict[str, tuple[Path, dict[str, str]]] = {"branch": (ROOT, env)}
    if args.base:
        sides["base"] = (args.base.resolve(), env)
    scratch = None
    if args.no_bytecode_too:
        scratch = Path(tempfile.mkdtemp(prefix="pcp-nobytecode-"))
        shutil.copytree(ROOT / "pcp_cli", scratch / "pcp_cli",
                        ignore=shutil.ignore_patterns("__pycache__"))
        sides["branch_no_bytecode"] = (scratch, {**env, "PYTHONDONTWRITEBYTECODE": "1"})
    for checkout, _ in sides.values():
        if checkout != scratch:
            subprocess.run([sys.executable, "-m", "compileall", "-q", "pcp_cli"],
                           cwd=checkout, check=True)
    res: dict[str, object] = {"load_before": os.getloadavg(), "cpus": os.cpu_count(),
                              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    py = [run([sys.executable, "-c", "pass"]) for _ in range(5)]
    res["python_pass"] = summary([(w, c) for w, c, _ in py])

    if args.search_store:
        res["search"] = _search(args, sides)
    if args.status_store and args.rounds:
        res["status"] = _status_runs(args, sides)
    if args.edits and args.status_store:
        res["rename_edit"] = _edits(args, sides)
    res["load_after"] = os.getloadavg()
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(res, indent=1))


Sides = dict[str, tuple[Path, dict[str, str]]]


def _search(args: argparse.Namespace, sides: Sides) -> dict[str, object]:
    stores = {side: side_store(args.search_store, "base" if side == "base" else "branch")
              for side in sides}
    queries = QUERIES[: args.queries]
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in (*sides, "rg")}
    outputs: dict[str, dict[str, bytes]] = {name: {} for name in sides}
    for side, (checkout, side_env) in sides.items():  # warm up (and settle the copies)
        pcp(checkout, side_env, "search", "warm", "--store", str(stores[side]), "--json")
    for _ in range(args.rounds):
        for q in queries:
            for side, (checkout, side_env) in sides.items():
                wall, cpu, out = pcp(checkout, side_env, "search", q, "--store",
                                     str(stores[side]), "--json")
                samples[side].append((wall, cpu))
                outputs[side].setdefault(q, out)
            wall, cpu, _ = rg(args.search_store, q)
            samples["rg"].append((wall, cpu))
    search = {name: summary(s) for name, s in samples.items()}
    for side in sides:
        search[side]["over_rg_wall"] = round(search[side]["wall_ms"] / search["rg"]["wall_ms"], 2)
        search[side]["over_rg_cpu"] = round(search[side]["cpu_ms"] / search["rg"]["cpu_ms"], 2)
    if "base" in sides:
        search["same_results"] = all(
            _results(outputs["base"][q]) == _results(outputs["branch"][q]) for q in queries)
    return search


def _status_runs(args: argparse.Namespace, sides: Sides) -> dict[str, object]:
    stores = {side: side_store(args.status_store, "base" if side == "base" else "branch")
              for side in sides}
    samples = {name: [] for name in sides}
    outs: dict[str, bytes] = {}
    for side, (checkout, side_env) in sides.items():  # warm up: derived files settle
        pcp(checkout, side_env, "status", "--store", str(stores[side]), "--json")
    for _ in range(args.rounds):
        for side, (checkout, side_env) in sides.items():
            wall, cpu, out = pcp(checkout, side_env, "status", "--store",
                                 str(stores[side]), "--json")
            samples[side].append((wall, cpu))
            outs.setdefault(side, out)
    status: dict[str, object] = {name: summary(s) for name, s in samples.items()}
    if "base" in sides:
        status["same_output"] = _status(outs["base"]) == _status(outs["branch"])
    return status


def _edits(args: argparse.Namespace, sides: Sides) -> dict[str, object]:
    edits = {}
    for side, (checkout, side_env) in sides.items():
        if side == "branch_no_bytecode":
            continue
        store = side_store(args.status_store, "base" if side == "base" else "branch")
        _, _, out = run([sys.executable, "-c", EDIT_WORKER, str(store), str(args.edits)],
                        cwd=checkout, env=side_env)
        edits[side] = json.loads(out.decode().strip().splitlines()[-1])
    return edits


def _results(raw: bytes) -> list[tuple[str, object]]:
    data = json.loads(raw)
    return [(r["id"], r.get("score")) for r in data["results"]]


def _status(raw: bytes) -> dict[str, object]:
    data = json.loads(raw)
    data.pop("store", None)  # the two copies' paths
    return data


if __name__ == "__main__":
    main()
