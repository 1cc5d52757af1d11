"""The read commands of issue #25 that cost what the store holds (`status`, `stats`, `timeline
list`), this checkout against a baseline checkout, in one run, whole processes, monitor on.

    python bench/reads_bench.py --baseline MAIN_CHECKOUT \\
        --store SMALL --baseline-store SMALL_COPY --store BIG --baseline-store BIG_COPY \\
        [--rounds 5] [--markdown]

Each checkout runs on its own copy of each store (`cp -a`: a newer catalog schema would make an
older pcp rebuild its catalog), with its own monitor (`pcp monitor start`, waited for until it
watches everything). Within a round every command runs once per checkout, taking turns; the CPU
time (user + system of the child, `os.wait4`) and wall time are kept, medians printed. The first
output of each command is compared between the two checkouts (store paths replaced): a
difference is printed as a warning. `ls --limit 10` is there as the control (no change).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {"status": ["status"], "stats": ["stats"], "timeline list": ["timeline", "list"],
            "ls --limit 10": ["ls", "--limit", "10"]}


def run(code: Path, store: Path, args: list[str]) -> tuple[float, float, bytes]:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pcp_cli", *args, "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=code,
                            env={**os.environ, "NO_COLOR": "1"})
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pcp {' '.join(args)} failed in {code} on {store}")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, out


def monitor(code: Path, store: Path, on: bool) -> None:
    argv = [sys.executable, "-m", "pcp_cli", "monitor", "start" if on else "stop",
            "--store", str(store)]
    subprocess.run(argv, cwd=code, check=False, capture_output=True)
    deadline = time.monotonic() + 120
    while on and time.monotonic() < deadline:
        out = subprocess.run([*argv[:4], "status", "--store", str(store), "--json"], cwd=code,
                             capture_output=True, text=True)
        status = json.loads(out.stdout) if out.returncode == 0 else {}
        revisions = status.get("revisions") or {"watched": False}  # an older monitor: absent
        if status.get("running") and (not revisions["watched"] or revisions.get("folders")):
            time.sleep(2)  # the last chunk of folder watches
            return
        time.sleep(0.2)
    if on:
        raise SystemExit(f"the monitor did not start on {store}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--store", type=Path, action="append", required=True)
    ap.add_argument("--baseline-store", type=Path, action="append", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if len(args.store) != len(args.baseline_store):
        raise SystemExit("give one --baseline-store per --store")
    sides = {"baseline": args.baseline.resolve(), "branch": ROOT}
    for code in sides.values():
        compileall.compile_dir(code / "pcp_cli", quiet=1)
    result: dict = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "load_before": os.getloadavg(), "rounds": args.rounds, "stores": {}}
    for mine, theirs in zip(args.store, args.baseline_store, strict=True):
        stores = {"baseline": theirs, "branch": mine}
        for side, code in sides.items():
            monitor(code, stores[side], True)
            for argv in COMMANDS.values():  # warm the page cache, the catalog, the summaries
                run(code, stores[side], argv)
        times: dict[str, dict[str, list[tuple[float, float]]]] = {
            side: {name: [] for name in COMMANDS} for side in sides}
        first: dict[str, dict[str, bytes]] = {side: {} for side in sides}
        for _ in range(args.rounds):
            for name, argv in COMMANDS.items():
                for side, code in sides.items():
                    wall, cpu, out = run(code, stores[side], argv)
                    times[side][name].append((wall, cpu))
                    first[side].setdefault(name, out.replace(os.fsencode(stores[side]), b"S"))
        for name in COMMANDS:
            if first["baseline"][name] != first["branch"][name]:
                print(f"warning: {name} printed something else on {mine}", file=sys.stderr)
        for side in sides:
            monitor(sides[side], stores[side], False)
        result["stores"][str(mine)] = {
            "pages": sum(1 for _ in (mine / "pages").rglob("*.md")),
            **{side: {name: {"cpu_s": round(statistics.median(c for _w, c in runs), 3),
                             "wall_s": round(statistics.median(w for w, _c in runs), 3)}
                      for name, runs in times[side].items()} for side in sides}}
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    if args.markdown:
        print(table(result))


def table(result: dict) -> str:
    stores = list(result["stores"].values())
    head = ["command"] + [f"{s['pages']:,} pages, {side}: CPU / wall" for s in stores
                          for side in ("baseline", "branch")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in COMMANDS:
        cells = [f"`{name}`"] + [f"{s[side][name]['cpu_s']:.2f} s / {s[side][name]['wall_s']:.2f} s"
                                 for s in stores for side in ("baseline", "branch")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
