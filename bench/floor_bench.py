"""The whole-process floor of the read commands, this checkout against a baseline checkout, taking
turns (issue #25): what start-up (interpreter, imports, CLI framework) costs before a command
does its work, and `pcp search` beside `rg -l -i` over pages/.

    python bench/floor_bench.py --store SMALL [--store BIG] --baseline ../main
        [--baseline-path DIR] [--rounds 11] [--word garden]

Every case runs `rounds` times; within a round the cases take turns, each command once from the
baseline and once from this checkout, so a load spike hits both alike. Measured per run: wall
time and the child's CPU time (user + system, `os.wait4`); on a shared machine compare the CPU
medians. `--baseline-path` goes first on the baseline's PYTHONPATH: e.g. a folder holding the
typer version the baseline resolves to, when both checkouts share one virtualenv. Both
checkouts are byte-compiled first (as an installed pcp is), and the store monitor is started
on each store (as `scale_bench.py --monitor on`). Give the two checkouts separate copies of
a big store when their catalogs differ (an index one builds speeds up the other's queries).
Each command's output is checked to be the same from both checkouts. Prints one JSON object
and a Markdown table.
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

from scale_bench import run  # one whole process: wall, CPU, output

ROOT = Path(__file__).resolve().parents[1]


def commands(store: Path, page_id: str, word: str) -> dict[str, list[str]]:
    s = ["--store", str(store)]
    return {
        "python -c pass": ["-c", "pass"],
        "--help": ["-m", "pcp_cli", "--help"],
        "ls --limit 10": ["-m", "pcp_cli", "ls", "--limit", "10", *s],
        "show ID": ["-m", "pcp_cli", "show", page_id, *s],
        "status": ["-m", "pcp_cli", "status", *s],
        "stats": ["-m", "pcp_cli", "stats", *s],
        "timeline list --limit 10": ["-m", "pcp_cli", "timeline", "list", "--limit", "10", *s],
        "export --format micro_prompt": ["-m", "pcp_cli", "export", "--format", "micro_prompt",
                                         *s],
        f"search {word}": ["-m", "pcp_cli", "search", word, *s],
    }


def start_monitor(store: Path, cwd: Path, env: dict[str, str]) -> None:
    pcp = [sys.executable, "-m", "pcp_cli", "monitor"]
    subprocess.run([*pcp, "start", "--store", str(store)], cwd=cwd, env=env,
                   capture_output=True, check=False)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = subprocess.run([*pcp, "status", "--store", str(store), "--json"], cwd=cwd,
                             env=env, capture_output=True, text=True)
        if out.returncode == 0 and json.loads(out.stdout).get("running"):
            return
        time.sleep(0.2)
    raise SystemExit(f"the monitor did not start on {store}")


def some_page(store: Path, cwd: Path, env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-m", "pcp_cli", "ls", "--limit", "1", "--store",
                          str(store), "--json"], cwd=cwd, env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)["pages"][0]["page_id"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, action="append", required=True,
                    help="a store for this checkout (repeatable)")
    ap.add_argument("--baseline-store", type=Path, action="append",
                    help="the baseline's copy of each --store, in the same order (default: "
                    "the same store)")
    ap.add_argument("--baseline", type=Path, required=True, help="the baseline checkout")
    ap.add_argument("--baseline-path", type=Path, help="first on the baseline's PYTHONPATH")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--word", default="garden")
    args = ap.parse_args()
    base_stores = args.baseline_store or args.store
    if len(base_stores) != len(args.store):
        raise SystemExit("give one --baseline-store per --store")
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "PCP_STORE")}
    clean["NO_COLOR"] = "1"
    base_env = dict(clean)
    if args.baseline_path:
        base_env["PYTHONPATH"] = str(args.baseline_path.resolve())
    sides = {"baseline": (args.baseline.resolve(), base_env), "this": (ROOT, clean)}
    for checkout, _ in sides.values():
        compileall.compile_dir(checkout / "pcp_cli", quiet=1)
    result: dict[str, object] = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                 "load_before": os.getloadavg(), "rounds": args.rounds,
                                 "baseline": str(args.baseline), "stores": {}}
    for store, base_store in zip(args.store, base_stores, strict=True):
        per_side = {"this": store, "baseline": base_store}
        for side, (cwd, env) in sides.items():
            start_monitor(per_side[side], cwd, env)
        page_id = some_page(store, ROOT, clean)
        cases: list[tuple[str, str, list[str]]] = []
        for name in commands(store, page_id, args.word):
            for side in sides:
                argv = commands(per_side[side], page_id, args.word)[name]
                cases.append((name, side, [sys.executable, *argv]))
        cases.append((f"rg -l -i {args.word} pages/", "this",
                      ["rg", "-l", "-i", args.word, str(store / "pages")]))
        outputs: dict[tuple[str, str], bytes] = {}
        for name, side, argv in cases:  # warm the page cache and the catalogs
            out = run(argv, sides[side][0], sides[side][1])[2]
            outputs[(name, side)] = out.replace(str(per_side[side]).encode(), b"STORE")
        for name in commands(store, page_id, args.word):
            if name != "status" and outputs[(name, "this")] != outputs[(name, "baseline")]:
                print(f"warning: {name} printed something else from the baseline",
                      file=sys.stderr)
        runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for name, side, argv in cases:
                wall, cpu, _ = run(argv, sides[side][0], sides[side][1])
                runs.setdefault((name, side), []).append((wall, cpu))
        table: dict[str, dict[str, dict[str, float]]] = {}
        for (name, side), rs in runs.items():
            table.setdefault(name, {})[side] = {
                "cpu_s": round(statistics.median(r[1] for r in rs), 3),
                "wall_s": round(statistics.median(r[0] for r in rs), 3)}
        result["stores"][str(store)] = {  # type: ignore[index]
            "pages": sum(1 for _ in (store / "pages").rglob("*.md")), "commands": table}
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    print(markdown(result, args.word))


def markdown(result: dict, word: str) -> str:
    stores = list(result["stores"].values())
    head = ["command"] + [f"{s['pages']:,} pages: baseline → this, CPU (wall)" for s in stores]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in stores[0]["commands"]:
        cells = [f"`{name}`"]
        for s in stores:
            row = s["commands"][name]
            this = row["this"]
            if "baseline" in row:
                base = row["baseline"]
                cells.append(f"{base['cpu_s']:.3f} ({base['wall_s']:.2f}) → "
                             f"**{this['cpu_s']:.3f}** ({this['wall_s']:.2f}) s")
            else:
                cells.append(f"{this['cpu_s']:.3f} ({this['wall_s']:.2f}) s")
        lines.append("| " + " | ".join(cells) + " |")
    ratios = ["`search` / `rg`, CPU (wall)"]
    for s in stores:
        search, rg = s["commands"][f"search {word}"], s["commands"][f"rg -l -i {word} pages/"]
        parts = []
        for side in ("baseline", "this"):
            cpu = search[side]["cpu_s"] / max(rg["this"]["cpu_s"], 1e-9)
            wall = search[side]["wall_s"] / max(rg["this"]["wall_s"], 1e-9)
            parts.append(f"{cpu:.2f}x ({wall:.2f}x)")
        ratios.append(" → ".join(parts))
    lines.append("| " + " | ".join(ratios) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
