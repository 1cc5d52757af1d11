"""Freshness benchmark: what seeing every edit costs, before and after, on one store each.

    python bench/freshness_bench.py STORE [--base CHECKOUT] [--runs 15] [--skip-process]
        [--fresh-clone]

STORE is a pcp store with a built index (copy one: this script edits pages and the catalog).
With `--base CHECKOUT` (another export of the code, e.g. `git archive main | tar -x -C DIR`)
the same measurements run with that code on its own copy of STORE (`STORE-base`, made by
`cp -a` if missing: the two catalog schemas must not share one store), the two in turn.

Each code base runs in its own interpreter started with `python -S` and PYTHONPATH set to
that checkout plus this venv's site-packages, so neither picks up the other (or an editable
install). Measured, per code base:

- `refresh_ms`: `Store.refresh()` on an unchanged store (median of --runs, wall and CPU);
- `search_open_ms`: open + refresh + `api.search` in process (what one MCP call or one
  `pcp search` pays beyond imports), unchanged store, median;
- an edit saved in place (appended text: new size, same inode), an edit saved by rename, and
  a same-size in-place rewrite with the file's and folder's mtime put back: the next search's
  time, its extra over `search_open_ms`, and whether it found the edit;
- whole process `python -S -m pcp_cli search Q --json` against `rg -l -i` over pages/, the
  base, the branch and rg taking turns on each query (medians, and the ratio to rg);
- `--catalog-only`: only the change scan, on a store copied without its index (pages/,
  pcp.yaml, .pcp/catalog.sqlite): the first refresh after the copy, an unchanged refresh, and
  the refresh after each kind of edit, with whether the catalog saw the new bytes;
- `--fresh-clone`: a copy of STORE without `.pcp/` and the time of the first `pcp search`
  (the first byte on stdout and the process's exit), per code base.

Prints one JSON object. Not a test: the numbers go in RESULTS.md with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = next(p for p in sys.path if p.endswith("site-packages"))
QUERIES = ["time", "people", "memory", "garden recipe", "travel budget", "piano coffee",
           "marathon doctor", "library notebook", "nonexistentword"]

WORKER = r"""
import json, os, statistics, sys, time
from pathlib import Path
from pcp_cli import api

root = Path(sys.argv[1]); runs = int(sys.argv[2])
out = {}

def med(fn, n):
    walls, cpus = [], []
    for _ in range(n):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0); cpus.append(time.process_time() - c0)
    return round(statistics.median(walls) * 1000, 1), round(statistics.median(cpus) * 1000, 1)

def search(q):
    with api.open_store(root, readonly=True) as s:
        return api.search(s, q)

search("warm")  # catch up whatever copying the store changed
search("warm")
with api.open_store(root, readonly=True) as s:
    out["pages"] = s.catalog.count()
    out["refresh_ms"], out["refresh_cpu_ms"] = med(s.refresh, runs)
    victim = next(root / e.path for e in s.entries(types=("note",), statuses=("active",))[
        len(s.entries(types=("note",), statuses=("active",))) // 2:] if e.sensitivity != "high")
out["search_open_ms"], out["search_open_cpu_ms"] = med(lambda: search("garden"), runs)
base = out["search_open_ms"]

def edit(word, how):
    text = victim.read_text("utf-8")
    if how == "same_size_mtime_kept":
        old = text.rstrip("\n").rsplit(None, 1)[-1]
        new = (word * 3)[:len(old)]
        st, folder = victim.stat(), victim.parent.stat()
        with open(victim, "r+b") as fh:
            fh.write(text[: text.rstrip("\n").rfind(old)].encode() + new.encode()
                     + text[text.rstrip("\n").rfind(old) + len(old):].encode())
        os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.utime(victim.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))
        return new
    text = text.rstrip("\n") + f"\n\nEdited: {word}.\n"
    if how == "rename":
        tmp = victim.with_name(f".{victim.name}.tmp")
        tmp.write_text(text, "utf-8")
        os.replace(tmp, victim)
    else:
        victim.write_text(text, "utf-8")
    return word

for how in ("in_place", "rename", "same_size_mtime_kept"):
    word = edit(f"zqx{how.replace('_', '')}", how)
    time.sleep(0.2)  # past the racy tick, as a person's edit would be
    t0 = time.perf_counter()
    data = search(word)
    t = (time.perf_counter() - t0) * 1000
    out[f"edit_{how}_next_search_ms"] = round(t, 1)
    out[f"edit_{how}_extra_ms"] = round(t - base, 1)
    out[f"edit_{how}_found"] = data["count"] >= 1
    search("settle")
print(json.dumps(out))
"""


# --catalog-only: the change scan alone (Store.refresh), for a store copied without its index.
CATALOG_WORKER = r"""
import hashlib, json, os, statistics, sys, time
from pathlib import Path
from pcp_cli import api

root = Path(sys.argv[1]); runs = int(sys.argv[2])
out = {}
s = api.open_store(root, readonly=True)
t0 = time.perf_counter(); s.refresh(); out["first_refresh_after_copy_s"] = round(
    time.perf_counter() - t0, 2)
s.refresh()
out["pages"] = s.catalog.count()

def med(n):
    walls, cpus = [], []
    for _ in range(n):
        c0, t0 = time.process_time(), time.perf_counter()
        s.refresh()
        walls.append(time.perf_counter() - t0); cpus.append(time.process_time() - c0)
    return round(statistics.median(walls) * 1000, 1), round(statistics.median(cpus) * 1000, 1)

out["refresh_ms"], out["refresh_cpu_ms"] = med(runs)
entries = s.entries(types=("note",), statuses=("active",))
victim = root / entries[len(entries) // 2].path
rel = victim.relative_to(root).as_posix()
out["victim_folder_files"] = len(os.listdir(victim.parent))

def seen():
    row = s.catalog.entries("path = ?", (rel,))[0]
    return row.digest == hashlib.sha256(victim.read_bytes()).hexdigest()

for i, how in enumerate(("in_place", "rename", "same_size_mtime_kept")):
    text = victim.read_text("utf-8")
    if how == "same_size_mtime_kept":
        st, folder = victim.stat(), victim.parent.stat()
        data = text.encode()
        data = data[:-3] + (b"ZZ\n" if data[-3:] != b"ZZ\n" else b"YY\n")
        with open(victim, "r+b") as fh:
            fh.write(data)
        os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.utime(victim.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))
    elif how == "rename":
        tmp = victim.with_name(f".{victim.name}.tmp")
        tmp.write_text(text + f"\nEdited {i}.\n", "utf-8")
        os.replace(tmp, victim)
    else:
        victim.write_text(text + f"\nEdited {i}.\n", "utf-8")
    time.sleep(0.2)
    c0, t0 = time.process_time(), time.perf_counter()
    s.refresh()
    out[f"edit_{how}_refresh_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    out[f"edit_{how}_refresh_cpu_ms"] = round((time.process_time() - c0) * 1000, 1)
    out[f"edit_{how}_seen"] = seen()
    s.refresh()
print(json.dumps(out))
"""


def env_for(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{checkout}{os.pathsep}{SITE}",
            "PYTHONDONTWRITEBYTECODE": "1"}


def run_worker(checkout: Path, store: Path, runs: int, code: str = WORKER) -> dict:
    # cwd: `-c` puts the working folder first on sys.path, so it must be the checkout's.
    out = subprocess.run([sys.executable, "-S", "-c", code, str(store), str(runs)],
                         env=env_for(checkout), capture_output=True, text=True, check=True,
                         cwd=checkout)
    return json.loads(out.stdout.strip().splitlines()[-1])


def process_time(checkout: Path, store: Path, q: str) -> tuple[float, float]:
    """Wall time of the whole process, and the time to its first byte of stdout."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-S", "-m", "pcp_cli", "search", q, "--store",
                             str(store), "--json"], env=env_for(checkout), cwd=checkout,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    proc.stdout.read(1)
    first = time.perf_counter() - t0
    proc.stdout.read()
    proc.wait()
    return time.perf_counter() - t0, first


def rg_time(store: Path, q: str) -> float:
    pattern = [a for w in q.split() for a in ("-e", w)]
    t0 = time.perf_counter()
    subprocess.run(["rg", "-l", "-i", *pattern, str(store / "pages")], capture_output=True)
    return time.perf_counter() - t0


def fresh_clone(store: Path, dest: Path) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(store, dest, ignore=shutil.ignore_patterns(".pcp"), symlinks=True)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--base", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--skip-process", action="store_true")
    ap.add_argument("--fresh-clone", action="store_true")
    ap.add_argument("--catalog-only", action="store_true",
                    help="only the change scan (a store copied without its index)")
    args = ap.parse_args()
    sides = {"branch": (ROOT, args.store)}
    if args.base:
        base_store = args.store.with_name(args.store.name + "-base")
        if not base_store.exists():
            subprocess.run(["cp", "-a", str(args.store), str(base_store)], check=True)
        sides["base"] = (args.base, base_store)
    res: dict[str, object] = {"load_before": os.getloadavg(), "cpus": os.cpu_count()}
    for name, (checkout, store) in sides.items():
        res[name] = run_worker(checkout, store, args.runs,
                               CATALOG_WORKER if args.catalog_only else WORKER)
    if args.catalog_only:
        res["load_after"] = os.getloadavg()
        print(json.dumps(res, indent=1))
        return
    if not args.skip_process:
        times: dict[str, list[float]] = {name: [] for name in (*sides, "rg")}
        for checkout, store in sides.values():  # warm up
            process_time(checkout, store, "warm")
        for q in QUERIES:
            for name, (checkout, store) in sides.items():
                times[name].append(process_time(checkout, store, q)[0])
            times["rg"].append(rg_time(args.store, q))
        rg = statistics.median(times["rg"])
        res["process_rg_median_ms"] = round(rg * 1000, 1)
        for name in sides:
            med = statistics.median(times[name])
            res[f"process_{name}_median_ms"] = round(med * 1000, 1)
            res[f"process_{name}_over_rg"] = round(med / rg, 2)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
        res["python_startup_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    if args.fresh_clone:
        for name, (checkout, store) in sides.items():
            clone = fresh_clone(store, store.with_name(store.name + "-clone"))
            total, first = process_time(checkout, clone, "garden")
            res[f"fresh_clone_{name}_first_output_s"] = round(first, 2)
            res[f"fresh_clone_{name}_exit_s"] = round(total, 2)
            shutil.rmtree(clone, ignore_errors=True)
    res["load_after"] = os.getloadavg()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
