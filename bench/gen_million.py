"""Build a big synthetic store fast: a base made by store_search_bench's `gen_store`, then copies
of its pages with new ids, text varied a little, and hashes recomputed (issue #25's 1M run).

    python bench/gen_million.py STORE [-n 1000000] [--base 20000] [--vary 0.05]

`gen_store(root, base, long_share=0.05)` writes pages pg_0000000..pg_{base-1} (revision file +
head file, ~90 s for 20,000 pages). Then page j = i + k*base (k = 1, 2, ...) is page i with
`--vary` of its content words and one title word replaced by words drawn from the same Zipfian
vocabulary (seeded by j, so runs are repeatable): a search finds the copies among other pages
with scores that differ, not as n/base identical hits. The copy's revision id, page id and content
hash are its own. Writes files directly, as the base does (no catalog, no index: the first pcp
command builds the catalog, `pcp index --engine tantivy` the index). Prints progress to stderr
and one JSON line at the end. Not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gen_corpus import vocabulary, zipf_cum  # noqa: E402
from store_search_bench import gen_store  # noqa: E402

from pcp_cli.model.page import Revision, file_json  # noqa: E402
from pcp_cli.store.headfile import render_head  # noqa: E402
from pcp_cli.store.layout import Layout  # noqa: E402


def vary(text: str, rng: random.Random, vocab: list[str], cum: list[float], share: float) -> str:
    """`text` with about `share` of its space-separated words replaced (punctuation and line
    breaks around a word are kept)."""
    words = text.split(" ")
    m = max(1, int(len(words) * share))
    for pos, new in zip(rng.sample(range(len(words)), min(m, len(words))),
                        rng.choices(vocab, cum_weights=cum, k=m), strict=False):
        old = words[pos]
        core = old.strip(".,;:!?*\n")
        if core and core.isascii() and core.isalpha():
            words[pos] = old.replace(core, new, 1)
    return " ".join(words)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("-n", type=int, default=1_000_000)
    ap.add_argument("--base", type=int, default=20_000)
    ap.add_argument("--vary", type=float, default=0.05)
    args = ap.parse_args()
    t0 = time.time()
    if not (args.store / "pcp.yaml").exists():
        gen_store(args.store, args.base, long_share=0.05)
    t_base = time.time() - t0
    print(f"base {args.base} pages: {t_base:.0f} s", file=sys.stderr, flush=True)
    lay = Layout(args.store)
    vocab = vocabulary(random.Random(7), 50_000)  # gen_store's vocabulary (same seed, same draw)
    cum = zipf_cum(len(vocab))
    made: set[Path] = set()
    copies = (args.n - 1) // args.base
    written = 0
    for i in range(args.base):
        src = lay.revision_path(f"pg_{i:07d}", f"rev_{i:07d}")
        rev = Revision.from_dict(json.loads(src.read_text("utf-8")))
        for k in range(1, copies + 1):
            j = i + k * args.base
            if j >= args.n:
                break
            pid, rid = f"pg_{j:07d}", f"rev_{j:07d}"
            path = lay.revision_path(pid, rid)
            if path.exists():  # resumed run
                continue
            rng = random.Random(j)
            st = rev.state
            state = replace(st, page_id=pid,
                            content=vary(st.content, rng, vocab, cum, args.vary),
                            title=vary(st.title or "", rng, vocab, cum, 0.0))
            r2 = replace(rev, revision_id=rid, state=state, content_hash="")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(file_json(r2.to_dict()), encoding="utf-8")
            head = lay.head_path(state.namespace, pid)
            if head.parent not in made:
                head.parent.mkdir(parents=True, exist_ok=True)
                made.add(head.parent)
            head.write_text(render_head(r2), encoding="utf-8")
            written += 1
        if i % 1000 == 0:
            print(f"{i}/{args.base} base pages copied, {written} written, "
                  f"{time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    print(json.dumps({"pages": args.n, "base": args.base, "copies_written": written,
                      "base_s": round(t_base, 1), "total_s": round(time.time() - t0, 1)}))


if __name__ == "__main__":
    main()
