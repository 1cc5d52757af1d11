"""`pcp index --rebuild` on a copy of a store: wall, CPU, peak RSS and peak temporary disk.

    python bench/rebuild_bench.py STORE [--label NAME] [--interval 0.5] [--env NAME=VALUE]
        [--code DIR] [--switch ENGINE]

Runs `pcp --store STORE index --rebuild` (the store must already have a catalog: run
`pcp --store STORE index` once first) as a child process with its own TMPDIR, and polls the
disk use of the store's `.pcp/index/` folder plus that TMPDIR every `--interval` seconds: the
peak minus the final index size is the temporary disk a rebuild needs (the old generation is
kept until the new one is complete, so it is subtracted too). CPU and peak RSS are the
children's rusage (user + system of every process the rebuild started; RSS of the largest).
Prints one JSON line. Never run it on a shared corpus: copy it first.

`--switch ENGINE` times what a person switching engines runs instead: the text index is
deleted first and `pcp index --engine ENGINE` builds it (the vectors, if any, are only
checked; `--rebuild` would rebuild them too). `--code DIR` runs the pcp of another checkout
(e.g. `git archive main` unpacked) with this Python, for a before/after in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # removed meanwhile
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("store", type=Path)
    ap.add_argument("--label", default="")
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the child")
    ap.add_argument("--code", type=Path, help="run the pcp_cli of this checkout")
    ap.add_argument("--switch", choices=("whoosh", "tantivy"),
                    help="delete the text index, then `pcp index --engine ENGINE`")
    args = ap.parse_args()
    index_dir = args.store / ".pcp" / "index"
    before = du(index_dir)
    tmp = Path(tempfile.mkdtemp(prefix="rebuild-bench-"))
    env = dict(os.environ, TMPDIR=str(tmp))
    for item in args.env:
        k, _, v = item.partition("=")
        env[k] = v
    if args.code:
        pcp = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
               "from pcp_cli.cli import main; main()", str(args.code.resolve())]
    else:
        pcp = [shutil.which("pcp") or "pcp"]
    if args.switch:
        shutil.rmtree(index_dir, ignore_errors=True)
        before = 0
        cmd = [*pcp, "--store", str(args.store), "index", "--engine", args.switch, "--json"]
    else:
        cmd = [*pcp, "--store", str(args.store), "index", "--rebuild", "--json"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = before
    while proc.poll() is None:
        peak = max(peak, du(index_dir) + du(tmp))
        time.sleep(args.interval)
    wall = time.perf_counter() - t0
    out, err = proc.communicate()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    final = du(index_dir)
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({
        "label": args.label,
        "store": args.store.name,
        "rc": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 1),
        "peak_rss_mb": round(ru.ru_maxrss / 1024),
        "index_before_mb": round(before / 2**20),
        "index_final_mb": round(final / 2**20),
        "peak_disk_mb": round(peak / 2**20),
        # what the rebuild needed beyond the old index and the new one
        "peak_temp_mb": round(max(0, peak - before - final) / 2**20),
        "loadavg": os.getloadavg(),
        "report": json.loads(out) if proc.returncode == 0 and out.strip() else None,
        "stderr_tail": err.decode(errors="replace")[-300:] if proc.returncode else "",
    }))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
