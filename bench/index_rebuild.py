"""`pcp index --rebuild` of the text index alone, for one engine, as one process to time.

    /usr/bin/time -v python bench/index_rebuild.py STORE [--engine whoosh|tantivy]

The code path of `pcp index --rebuild --engine E` without the semantic vectors (which
`pcp index` also rebuilds when the extra is installed): opens the store, runs the full verify
scan `pcp index` starts with, then rebuilds the search index from the catalog and the head
files. Prints one JSON object: wall and CPU seconds of each step, peak RSS, and the index's
size on disk. Not a test.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pcp_cli import api  # noqa: E402


def cpu() -> float:
    """CPU seconds of this process (all its threads) and of its finished children (whoosh's
    and tantivy's worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--engine", choices=("whoosh", "tantivy"), default="whoosh")
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), cpu()
    with api.open_store(args.store) as store:
        t1, c1 = time.perf_counter(), cpu()
        # `pcp index` starts with a full verify scan (content hashes of every head file)...
        store.refresh("verify")
        t2, c2 = time.perf_counter(), cpu()
        # ... then rebuilds: the step the engines differ in, timed alone
        from pcp_cli.index import choose_engine, engine_of
        from pcp_cli.query.index_sync import catch_up, close_all, index_dir, open_index

        choose_engine(index_dir(store), args.engine)
        close_all()
        with open_index(store) as ix:
            report = catch_up(store, ix, force_rebuild=True)
            engine = engine_of(ix)
        t3, c3 = time.perf_counter(), cpu()
    index = args.store / ".pcp" / "index"
    size = sum(p.stat().st_size for p in index.rglob("*") if p.is_file())
    print(json.dumps({
        "engine": engine, "documents": report.documents,
        "open_s": round(t1 - t0, 2), "open_cpu_s": round(c1 - c0, 2),
        "verify_scan_s": round(t2 - t1, 2), "verify_scan_cpu_s": round(c2 - c1, 2),
        "rebuild_wall_s": round(t3 - t2, 2), "rebuild_cpu_s": round(c3 - c2, 2),
        # CPU: every thread of this process (tantivy indexes in its own) and its children
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "index_mb": round(size / 1e6, 1),
    }))


if __name__ == "__main__":
    main()
