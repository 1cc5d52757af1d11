"""Every read command as a whole process, on a small store and a big one, with and without the
store monitor; and `rg -l -i` over pages/ beside `pcp search` (issue #25).

    python bench/scale_bench.py --store SMALL --store BIG [--rounds 5] [--word garden]
        [--monitor both|on|off] [--markdown] [--only WORDS]...

Make the stores first (not in the repo), e.g. with bench/store_search_bench.py's `gen_store`
(`long_share=0.05` for ~5% long transcripts), then index each once (`pcp index --engine
tantivy`). Each case runs `rounds` times, the commands taking turns within a round; measured
per run: wall time and the child's CPU time (user + system, `os.wait4`). On a shared machine
compare the CPU medians: wall time there mostly says how busy the machine was.

`--monitor default` measures what a person gets with no opt-in, in a fresh shell (issue #35):
any monitor is stopped and every mark removed (`.pcp/monitor/off`, `auto`), then the commands
run as they come: the first one on a big store scans and starts the monitor, and the time
until the monitor answers is measured apart (`first_command`, `monitor_ready_s`); `on` runs
`pcp monitor start` on the store first (and waits until it answers); `off` runs `pcp monitor
stop`, which keeps commands from starting one (every command scans: the fallback where no
monitor can run). `both` is default and off. The first output of every command is checked to
be the same in every mode. Prints one JSON object (and, with --markdown, a table for
bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commands(store: Path, page_id: str, word: str) -> dict[str, list[str]]:
    pcp = [sys.executable, "-m", "pcp_cli"]
    s = ["--store", str(store)]
    return {
        "ls --limit 10": [*pcp, "ls", "--limit", "10", *s],
        "show ID": [*pcp, "show", page_id, *s],
        "status": [*pcp, "status", *s],
        "stats": [*pcp, "stats", *s],
        "timeline list": [*pcp, "timeline", "list", *s],  # every event: 2 at 20, 6,108 at 100k
        "timeline list --limit 10": [*pcp, "timeline", "list", "--limit", "10", *s],
        "export --format micro_prompt": [*pcp, "export", "--format", "micro_prompt", *s],
        f"search {word}": [*pcp, "search", word, *s],
        f"rg -l -i {word} pages/": ["rg", "-l", "-i", word, str(store / "pages")],
    }


def run(argv: list[str], cwd: Path = ROOT,
        env: dict[str, str] | None = None) -> tuple[float, float, bytes]:
    """One whole process: (wall seconds, CPU seconds of the child, its output)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=cwd, env=env or {**os.environ, "NO_COLOR": "1"})
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # rg: 1 is "no match"
        raise SystemExit(f"{argv} failed: {status}")
    return wall, usage.ru_utime + usage.ru_stime, out


def monitor(store: Path, mode: str) -> dict[str, float] | None:
    """Put the store's monitor in `mode` (on, off, default); for default, run the first
    command and time it and the monitor's start."""
    pcp = [sys.executable, "-m", "pcp_cli", "monitor"]
    subprocess.run([*pcp, "start" if mode == "on" else "stop", "--store", str(store)],
                   cwd=ROOT, check=False, capture_output=True)
    if mode == "on":
        if not wait_running(store):
            raise SystemExit(f"the monitor did not start on {store}")
        return None
    if mode == "default":
        for mark in ("off", "auto"):
            (store / ".pcp" / "monitor" / mark).unlink(missing_ok=True)
        began = time.perf_counter()
        wall, cpu, _ = run([sys.executable, "-m", "pcp_cli", "ls", "--limit", "10", "--store",
                            str(store)])
        running = wait_running(store, 120)
        return {"first_command_wall_s": round(wall, 3), "first_command_cpu_s": round(cpu, 3),
                "monitor_ready_s": round(time.perf_counter() - began, 3) if running else None}
    return None


def wait_running(store: Path, seconds: float = 60) -> bool:
    argv = [sys.executable, "-m", "pcp_cli", "monitor", "status", "--store", str(store), "--json"]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
        if out.returncode == 0 and json.loads(out.stdout).get("running"):
            return True
        time.sleep(0.2)
    return False


def pages(store: Path) -> int:
    return sum(1 for _ in (store / "pages").rglob("*.md"))


def some_page(store: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "pcp_cli", "ls", "--limit", "1", "--store",
                          str(store), "--json"], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)["pages"][0]["page_id"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, action="append", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--word", default="garden")
    ap.add_argument("--monitor", choices=("both", "default", "on", "off", "all"),
                    default="both")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--only", action="append", metavar="WORDS",
                    help="measure only the commands whose name holds WORDS (repeatable), e.g. "
                         "--only search --only rg while an index is still being built")
    args = ap.parse_args()
    if shutil.which("rg") is None:
        raise SystemExit("needs ripgrep (rg) on PATH")
    compileall.compile_dir(ROOT / "pcp_cli", quiet=1)  # as an installed pcp has it
    modes = {"both": ("default", "off"), "all": ("default", "on", "off"), "default": ("default",),
             "on": ("on",), "off": ("off",)}[args.monitor]
    result: dict[str, object] = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                 "load_before": os.getloadavg(), "rounds": args.rounds,
                                 "cpus": os.cpu_count(), "stores": {}}
    for store in args.store:
        page_id = some_page(store)
        per_store: dict[str, object] = {"pages": pages(store), "page_id": page_id}
        outputs: dict[str, bytes] = {}
        for on in modes:
            first = monitor(store, on)
            if first:
                per_store["default_start"] = first
            cmds = {name: argv for name, argv in commands(store, page_id, args.word).items()
                    if not args.only or any(words in name for words in args.only)}
            for argv in cmds.values():  # warm the page cache and the catalog
                run(argv)
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
            for _ in range(args.rounds):
                for name, argv in cmds.items():
                    wall, cpu, out = run(argv)
                    if argv[0] == "rg":  # it prints in the order its threads finish
                        out = b"\n".join(sorted(out.splitlines()))
                    runs[name].append((wall, cpu))
                    if name in outputs and outputs[name] != out and name != "status":
                        print(f"warning: {name} printed something else with the monitor "
                              f"{on}", file=sys.stderr)
                    outputs.setdefault(name, out)
            per_store[f"monitor_{on}"] = {
                name: {"wall_s": round(statistics.median(r[0] for r in rs), 3),
                       "cpu_s": round(statistics.median(r[1] for r in rs), 3)}
                for name, rs in runs.items()}
        monitor(store, "off")
        for mark in ("off", "auto"):  # as it was: no mark
            (store / ".pcp" / "monitor" / mark).unlink(missing_ok=True)
        result["stores"][str(store)] = per_store  # type: ignore[index]
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    if args.markdown:
        print(table(result))


MODES = ("monitor_default", "monitor_on", "monitor_off")


def table(result: dict) -> str:
    stores = list(result["stores"].values())
    head = ["command"] + [f"{s['pages']:,} pages, {mode.replace('_', ' ')}: CPU / wall"
                          for s in stores for mode in MODES if mode in s]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    names = list(next(iter(stores))[next(k for k in MODES if k in stores[0])])
    for name in names:
        cells = [f"`{name}`"]
        for s in stores:
            for mode in MODES:
                if mode in s:
                    m = s[mode][name]
                    cells.append(f"{m['cpu_s']:.2f} s / {m['wall_s']:.2f} s")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
