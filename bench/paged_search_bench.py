"""What `--as-of` and a graph search cost on a big store, against plain search in the same run.

    python bench/paged_search_bench.py [-n 100000] [--work DIR] [--runs 7]
        [--relations 20000] [--revised 1000]

Uses (or generates, with store_search_bench.py's generator) a store of N pages under WORK, then
adds, written directly in the store format: RELATIONS typed relations between random pages and
a second revision, dated after the as-of moment, for REVISED pages (renamed into place, as an
editor or git would, so the catalog's folder scan sees them). Then, in process, with the store
opened per call as the CLI does, it times medians of RUNS runs over a few queries:

- plain `api.search` (text mode) — the baseline;
- the same with `as_of` (the revised pages searched in an index of their old revisions, built
  by the first query and kept under `.pcp/asof-index/`; pages created later left out): the
  first query (building it) and the median of the next ones;
- `mode="graph"` at depth 1 and 2 (relations read through the `.pcp/` cache), and the first
  graph search after the relations folder changed (cache rebuilt);
- `api.related` at depth 2, and `list_pages` / `stats` with and without `as_of`.

Prints one JSON object. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from store_search_bench import gen_store  # noqa: E402

from pcp_cli import api  # noqa: E402
from pcp_cli.model.page import Actor, ProvenanceStep, Relation, Revision, file_json  # noqa: E402
from pcp_cli.store.headfile import render_head  # noqa: E402

AS_OF = "2025-06-30"
LATER = "2026-09-01T12:00:00.000Z"
QUERIES = ["memory", "garden recipe", "travel budget", "piano coffee", "library notebook"]
TYPES = ["depends_on", "related_to", "derived_from", "inspired_by", "com.example.reviews"]


def add_history(root: Path, relations: int, revised: int, seed: int = 11) -> dict[str, int]:
    marker = root / ".pcp-bench-history"
    if marker.exists():
        return json.loads(marker.read_text())
    rng = random.Random(seed)
    actor = Actor("user", "usr_bench")
    with api.open_store(root, readonly=True) as store:
        entries = store.entries(statuses=None, review=None)
    ids = [e.page_id for e in entries if e.page_id]
    for i in range(relations):
        a, b = rng.sample(entries, 2)
        rel = Relation(f"rel_bench{i:08d}", rng.choice(TYPES), a.page_id, a.revision_id,
                       b.page_id, b.revision_id, "2021-01-01T00:00:00.000Z", actor)
        (root / "relations" / f"{rel.relation_id}.json").write_text(file_json(rel.to_dict()))
    with api.open_store(root, readonly=True) as store:
        for entry in rng.sample(entries, revised):
            old = store.load_revision(entry.page_id, entry.revision_id)
            state = old.state.evolve(content=old.state.content + "\n\nRevised later: zqxlater.")
            rev = Revision(f"{entry.revision_id}_2", state, LATER, actor,
                           (ProvenanceStep("revise", "user", "usr_bench", LATER,
                                           (old.revision_id,)),),
                           old.page_created_at, parent_revision_id=old.revision_id)
            store.layout.revision_path(entry.page_id, rev.revision_id).write_text(
                file_json(rev.to_dict()))
            head = root / entry.path
            tmp = head.with_name(f".{head.name}.tmp")
            tmp.write_text(render_head(rev))
            os.replace(tmp, head)
    made = {"pages": len(ids), "relations": relations, "revised": revised}
    marker.write_text(json.dumps(made))
    return made


def median_ms(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1000, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--relations", type=int, default=20_000)
    ap.add_argument("--revised", type=int, default=1_000)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="pcp-paged-bench-"))
    root = work / f"store-{args.n}"
    res: dict[str, object] = {"load_before": os.getloadavg(), "cpus": os.cpu_count()}
    if not (root / "pcp.yaml").exists():
        t = time.perf_counter()
        gen_store(root, args.n)
        res["generate_s"] = round(time.perf_counter() - t, 1)
    t = time.perf_counter()
    res["history"] = add_history(root, args.relations, args.revised)
    with api.open_store(root, readonly=True) as store:
        api.index_store(store)  # catch the index up with the revised pages
    res["history_and_catch_up_s"] = round(time.perf_counter() - t, 1)

    def run(**kw):  # type: ignore[no-untyped-def]
        def call() -> None:
            with api.open_store(root, readonly=True) as store:
                for q in QUERIES:
                    api.search(store, q, **kw)
        return call

    per = len(QUERIES)
    run()()  # warm: index open
    import shutil

    shutil.rmtree(root / ".pcp" / "asof-index", ignore_errors=True)
    t = time.perf_counter()
    with api.open_store(root, readonly=True) as store:
        api.search(store, QUERIES[0], as_of=AS_OF)
    res["search_as_of_first_ms"] = round((time.perf_counter() - t) * 1000, 1)
    base = median_ms(run(), args.runs) / per
    res["search_text_ms"] = round(base, 1)
    for name, kw in (("search_as_of_ms", {"as_of": AS_OF}),
                     ("search_graph_depth1_ms", {"mode": "graph"}),
                     ("search_graph_depth2_ms", {"mode": "graph", "depth": 2})):
        value = median_ms(run(**kw), args.runs) / per
        res[name] = round(value, 1)
        res[name.replace("_ms", "_ratio")] = round(value / base, 2)
    (root / ".pcp" / "relations-cache.json").unlink(missing_ok=True)
    t = time.perf_counter()
    run(mode="graph")()
    res["search_graph_cold_relations_cache_ms"] = round((time.perf_counter() - t) * 1000 / per, 1)
    with api.open_store(root, readonly=True) as store:
        sample = [r["id"] for r in api.search(store, "memory", limit=5)["results"]]

    def related() -> None:
        with api.open_store(root, readonly=True) as store:
            for page_id in sample:
                api.related(store, page_id, depth=2)
    res["related_depth2_ms"] = round(median_ms(related, args.runs) / max(1, len(sample)), 1)

    def listing(as_of: str | None) -> None:
        with api.open_store(root, readonly=True) as store:
            api.list_pages(api.as_of_view(store, as_of))
            api.stats(store, as_of=as_of)
    res["ls_and_stats_ms"] = median_ms(lambda: listing(None), 3)
    res["ls_and_stats_as_of_ms"] = median_ms(lambda: listing(AS_OF), 3)
    with api.open_store(root, readonly=True) as store:
        same = api.search(store, "memory", as_of=LATER)
        now = api.search(store, "memory")
    res["as_of_after_last_change_equals_now"] = (
        [r["id"] for r in same["results"]] == [r["id"] for r in now["results"]])
    res["load_after"] = os.getloadavg()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
