"""`pcp index --rebuild` of the text index alone, for one engine, as one process to time.

    /usr/bin/time -v python bench/index_rebuild.py STORE [--engine whoosh|tantivy]

The code path of `pcp index --rebuild --engine E` without the semantic vectors (which
`pcp index` also rebuilds when the extra is installed): opens the store (a full verify scan),
then rebuilds the search index from the catalog and the head files. Prints one JSON object:
wall and CPU seconds of the rebuild alone, peak RSS, and the index's size on disk. Not a test.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("--engine", choices=("whoosh", "tantivy"), default="whoosh")
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    with api.open_store(args.store) as store:
        t1, c1 = time.perf_counter(), time.process_time()
        report = api.index_store(store, rebuild=True, vectors=False, engine=args.engine)
        t2, c2 = time.perf_counter(), time.process_time()
    index = args.store / ".pcp" / "index"
    size = sum(p.stat().st_size for p in index.rglob("*") if p.is_file())
    print(json.dumps({
        "engine": report["engine"], "documents": report["documents"],
        "open_s": round(t1 - t0, 2), "open_cpu_s": round(c1 - c0, 2),
        "rebuild_wall_s": round(t2 - t1, 2),
        "rebuild_cpu_s": round(c2 - c1, 2),
        # children: tantivy's indexing threads are this process's, counted in process_time
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "index_mb": round(size / 1e6, 1),
    }))


if __name__ == "__main__":
    main()
