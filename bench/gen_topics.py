"""Build a big synthetic store whose words are not shared by most pages (issue #35's second 1M
corpus), and a held-out query set drawn from it.

    python bench/gen_topics.py STORE [-n 1000000] [--topics 20000] [--seed 11]

`bench/gen_million.py` copies 20,000 pages with 5% of their words changed, and `gen_store`
draws every word from one Zipfian vocabulary: there the words a query names sit on most pages
(`year` on ~95%), which is the worst case for a search engine. Here each page belongs to one
of `--topics` topics and draws ~85% of its words from that topic's own 60 words (syllable words
of its own) and ~15% from the 200 common English words (Zipfian among themselves, as stop-like
words are in real notes): a topic word sits on about n / topics × 2 pages (two topics share a
word now and then), and a common word still sits on most pages. Pages have the same shapes as
`gen_store`'s (types, namespaces, 5% long transcripts, CJK pages, keystones and timeline events
with records, 5% high sensitivity); writes revision files and head files directly, no catalog,
no index (the first pcp command builds the catalog, `pcp index --engine tantivy` the index).

Also writes `STORE.queries.json` beside the store: 50 queries of the same shapes as
`bench/holdout_queries.json` (one to four words, AND / OR / NOT, a quoted phrase, `type:` and
`tag:` filters), drawn from the pages' own words with a seed no code was tuned on. Prints
progress to stderr and one JSON line at the end. Not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gen_corpus import (  # noqa: E402
    COMMON,
    NAMESPACES,
    ORIGINS,
    TAGS,
    TYPES,
    cjk_body,
    weighted,
    zipf_cum,
)

from pcp_cli.model.page import Actor, PageState, ProvenanceStep, Revision, file_json  # noqa: E402
from pcp_cli.store.headfile import render_head  # noqa: E402
from pcp_cli.store.layout import Layout  # noqa: E402
from pcp_cli.store.store import Store  # noqa: E402

TOPIC_WORDS = 60
COMMON_SHARE = 0.15


def topic_vocabulary(rng: random.Random, topics: int) -> list[list[str]]:
    """`topics` lists of `TOPIC_WORDS` made-up words; about 5% of a topic's words are shared
    with another topic (as "bank" is both money and rivers)."""
    syll = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
    common = set(COMMON)
    seen: set[str] = set()
    words: list[str] = []
    need = topics * TOPIC_WORDS
    while len(words) < need:
        w = "".join(rng.choice(syll) for _ in range(rng.randint(2, 4)))
        if w not in seen and w not in common:
            seen.add(w)
            words.append(w)
    lists = [words[t * TOPIC_WORDS:(t + 1) * TOPIC_WORDS] for t in range(topics)]
    for t in range(topics):
        for k in range(TOPIC_WORDS // 20):
            lists[t][k] = lists[rng.randrange(topics)][TOPIC_WORDS - 1 - k]
    return lists


class Words:
    """Draws a page's words: its topic's words uniformly, common words by their Zipf rank."""

    def __init__(self, topics: list[list[str]]) -> None:
        self.topics = topics
        self.common = list(dict.fromkeys(COMMON))
        self.common_cum = zipf_cum(len(self.common))

    def draw(self, rng: random.Random, topic: int, k: int) -> list[str]:
        n_common = sum(1 for _ in range(k) if rng.random() < COMMON_SHARE)
        words = rng.choices(self.topics[topic], k=k - n_common)
        words += rng.choices(self.common, cum_weights=self.common_cum, k=n_common)
        rng.shuffle(words)
        return words

    def sentences(self, rng: random.Random, topic: int, nwords: int) -> str:
        words = self.draw(rng, topic, nwords)
        out, i = [], 0
        while i < len(words):
            n = rng.randint(6, 18)
            chunk = words[i:i + n]
            out.append(chunk[0].capitalize() + " " + " ".join(chunk[1:]) + ".")
            i += n
        return " ".join(out)


def make_page(i: int, rng: random.Random, words: Words, topic: int) -> tuple[Revision, str]:
    page_id = f"pg_{i:07d}"
    ptype = weighted(rng, TYPES)
    ptype = "conversation" if rng.random() < 0.05 else ("note" if ptype == "conversation"
                                                        else ptype)
    ns = weighted(rng, NAMESPACES)
    if ptype == "conversation":
        body = "\n\n".join(("**User:** " if t % 2 == 0 else "**Assistant:** ")
                           + words.sentences(rng, topic, rng.randint(30, 150))
                           for t in range(rng.randint(20, 60)))
    elif rng.random() < 0.03:
        body = cjk_body(rng)
    elif ptype == "keystone":
        body = words.sentences(rng, topic, rng.randint(10, 40))
    else:
        body = "\n\n".join(words.sentences(rng, topic, rng.randint(30, 120))
                           for _ in range(rng.randint(1, 4)))
    title = " ".join(words.draw(rng, topic, rng.randint(2, 6))).capitalize()
    day = 1 + (i * 7919) % 2000
    year, rest = 2021 + day // 365, day % 365
    stamp = f"{year}-{1 + rest // 31:02d}-{1 + rest % 28:02d}T{i % 24:02d}:00:00.000Z"
    record: dict[str, object] = {}
    if ptype == "keystone":
        record = {"category": "other", "source": "user_stated"}
    elif ptype == "timeline_event":
        record = {"date": stamp[:7], "category": "other", "source": "user_stated"}
    state = PageState(
        page_id=page_id, type=ptype, namespace=ns, owner_id="usr_bench", content=body,
        title=title,
        lifecycle_status="active" if rng.random() < 0.9 else "superseded",
        review_status="affirmed" if rng.random() < 0.95 else "proposed",
        origin=rng.choice(ORIGINS),
        sensitivity="high" if rng.random() < 0.05 else "low",
        tags=tuple(sorted(set(rng.sample(TAGS, rng.randint(0, 3))))),
        record=record,
    )
    revision = Revision(
        revision_id=f"rev_{i:07d}", state=state, created_at=stamp,
        created_by=Actor("user", "usr_bench"),
        provenance=(ProvenanceStep(operation="write", actor_type="user", actor_id="usr_bench",
                                   timestamp=stamp),),
        page_created_at=stamp,
    )
    return revision, ns


def queries(rng: random.Random, words: Words, topics: int) -> list[str]:
    """50 queries shaped as bench/holdout_queries.json's, from the corpus's own words."""

    def topic_word(t: int | None = None) -> str:
        return rng.choice(words.topics[rng.randrange(topics) if t is None else t])

    def common() -> str:
        return rng.choices(words.common, cum_weights=words.common_cum, k=1)[0]

    out: list[str] = []
    for _ in range(5):
        t = rng.randrange(topics)
        out += [
            topic_word(t),
            f"{topic_word(t)} {topic_word(t)}",
            f"{topic_word(t)} {common()} {topic_word(t)}",
            f"{topic_word(t)} {topic_word()} {common()} {topic_word(t)}",
            f"{topic_word(t)} AND {topic_word(t)}",
            f"{topic_word(t)} OR {topic_word()}",
            f"{topic_word(t)} NOT {topic_word(t)}",
            f'"{topic_word(t)} {topic_word(t)}"',
            f"type:note {topic_word(t)}",
            f"tag:{rng.choice(TAGS)} {topic_word(t)}",
        ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("-n", type=int, default=1_000_000)
    ap.add_argument("--topics", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    t0 = time.time()
    if not (args.store / "pcp.yaml").exists():
        Store.init(args.store, owner_id="usr_bench", namespace="personal")
    lay = Layout(args.store)
    rng = random.Random(args.seed)
    words = Words(topic_vocabulary(rng, args.topics))
    made: set[Path] = set()
    written = 0
    for i in range(args.n):
        page_rng = random.Random(args.seed * 1_000_003 + i)  # resumable: page i alone decides
        path = lay.revision_path(f"pg_{i:07d}", f"rev_{i:07d}")
        if path.exists():
            continue
        revision, ns = make_page(i, page_rng, words, page_rng.randrange(args.topics))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file_json(revision.to_dict()), encoding="utf-8")
        head = lay.head_path(ns, revision.state.page_id)
        if head.parent not in made:
            head.parent.mkdir(parents=True, exist_ok=True)
            made.add(head.parent)
        head.write_text(render_head(revision), encoding="utf-8")
        written += 1
        if i % 50_000 == 0:
            print(f"{i}/{args.n} pages, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    qfile = args.store.with_name(args.store.name + ".queries.json")
    qfile.write_text(json.dumps(queries(random.Random(args.seed + 1), words, args.topics),
                                indent=0) + "\n", encoding="utf-8")
    print(json.dumps({"pages": args.n, "written": written, "topics": args.topics,
                      "queries": str(qfile), "total_s": round(time.time() - t0, 1)}))


if __name__ == "__main__":
    main()
