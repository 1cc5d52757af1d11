"""Generate a deterministic synthetic store of pages for search benchmarks.

    python bench/gen_corpus.py OUT_DIR [-n 10000] [--seed 7]

Writes OUT_DIR/pages/<namespace as folders>/<page_id>.md, each with YAML frontmatter and a
Markdown body. Words follow a Zipf distribution over a vocabulary whose top ranks are common
English words and the rest made-up syllable words; about 3% of pages are long conversation
transcripts and about 3% are Chinese, Japanese or Korean.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from pathlib import Path

COMMON = """time year people way day man thing woman life child world school state family
student group country problem hand part place case week company system program question work
government number night point home water room mother area money story fact month lot right
study book eye job word business issue side kind head house service friend father power hour
game line end member law car city community name president team minute idea kid body
information back parent face others level office door health person art war history party
result change morning reason research girl guy moment air teacher force education running
project code python search index memory context profile keystone garden recipe travel budget
meeting design review deploy server database client model prompt answer concise style train
music piano coffee bread pasta garlic olive recipe marathon doctor insurance salary tax
vacation flight hotel museum paper library notebook schedule deadline release testing""".split()  # noqa: SIM905

TYPES = [
    ("note", 50),
    ("conversation", 3),
    ("document", 20),
    ("keystone", 12),
    ("timeline_event", 8),
    ("summary", 7),
]
NAMESPACES = [
    ("personal", 40),
    ("work", 20),
    ("work:acme", 15),
    ("work:acme:infra", 8),
    ("health", 7),
    ("projects:pcp", 10),
]
ORIGINS = ["user_stated", "approved", "recorded", "imported", "generated", "inferred"]
TAGS = ["travel", "food", "health", "work", "family", "idea", "todo", "music", "reading", "ml"]

ZH = "物竞天择即适者生存这是进化论的核心我们今天讨论人工智能与机器学习的发展历史和未来方向数据模型"
JA = [
    "子供のころよくしりとりをして遊びました",
    "東京で働いています",
    "機械学習の勉強をしています",
    "今日はいい天気ですね",
    "コーヒーが好きです",
]
KO = [
    "저는 서울에서 프로그래머로 일하고 있습니다",
    "오늘은 날씨가 좋네요",
    "기계 학습을 공부합니다",
    "커피를 좋아합니다",
]


def vocabulary(rng: random.Random, size: int) -> list[str]:
    syll = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
    words = list(dict.fromkeys(COMMON))
    seen = set(words)
    while len(words) < size:
        w = "".join(rng.choice(syll) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def zipf_cum(n: int, s: float = 1.07) -> list[float]:
    return list(itertools.accumulate(1.0 / (r**s) for r in range(1, n + 1)))


def weighted(rng: random.Random, pairs: list[tuple[str, int]]) -> str:
    return rng.choices([p for p, _ in pairs], [w for _, w in pairs])[0]


def sentences(rng: random.Random, vocab: list[str], cum: list[float], nwords: int) -> str:
    words = rng.choices(vocab, cum_weights=cum, k=nwords)
    out, i = [], 0
    while i < len(words):
        n = rng.randint(6, 18)
        chunk = words[i : i + n]
        out.append(chunk[0].capitalize() + " " + " ".join(chunk[1:]) + ".")
        i += n
    return " ".join(out)


def cjk_body(rng: random.Random) -> str:
    lang = rng.choice("zjk")
    if lang == "z":
        return "。".join("".join(rng.choices(ZH, k=rng.randint(8, 20))) for _ in range(8)) + "。"
    if lang == "j":
        return "。".join(rng.choice(JA) for _ in range(8)) + "。"
    return ". ".join(rng.choice(KO) for _ in range(8)) + "."


def page(rng: random.Random, i: int, vocab: list[str], cum: list[float]) -> tuple[str, str]:
    page_id = f"pg_{i:07d}"
    ptype = weighted(rng, TYPES)
    ns = weighted(rng, NAMESPACES)
    cjk = rng.random() < 0.03
    if ptype == "conversation":
        turns = []
        for t in range(rng.randint(20, 60)):
            who = "User" if t % 2 == 0 else "Assistant"
            turns.append(f"**{who}:** " + sentences(rng, vocab, cum, rng.randint(30, 150)))
        body = "\n\n".join(turns)
    elif cjk:
        body = cjk_body(rng)
    elif ptype == "keystone":
        body = sentences(rng, vocab, cum, rng.randint(10, 40))
    else:
        paras = [sentences(rng, vocab, cum, rng.randint(30, 120)) for _ in range(rng.randint(1, 4))]
        body = "\n\n".join(paras)
    title = " ".join(rng.choices(vocab, cum_weights=cum, k=rng.randint(2, 6))).capitalize()
    day = 1 + (i * 7919) % 2000
    year, rest = 2021 + day // 365, day % 365
    timestamp = f"{year}-{1 + rest // 31:02d}-{1 + rest % 28:02d}T{i % 24:02d}:00:00Z"
    meta = {
        "page_id": page_id,
        "revision_id": f"rev_{i:07d}_1",
        "type": ptype,
        "title": title,
        "namespace": ns,
        "owner_id": "usr_bench",
        "visibility": "private",
        "lifecycle_status": "active" if rng.random() < 0.9 else "superseded",
        "review_status": "affirmed" if rng.random() < 0.95 else "proposed",
        "origin": rng.choice(ORIGINS),
        "sensitivity": "high" if rng.random() < 0.05 else "low",
        "tags": sorted(set(rng.sample(TAGS, rng.randint(0, 3)))),
        "created_at": timestamp,
    }
    # JSON scalars are valid YAML, and quote whatever needs quoting.
    front = "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items())
    rel = f"pages/{ns.replace(':', '/')}/{page_id}.md"
    return rel, f"---\n{front}\n---\n\n# {title}\n\n{body}\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("-n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--vocab", type=int, default=50_000)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    vocab = vocabulary(rng, args.vocab)
    cum = zipf_cum(len(vocab))
    made: set[Path] = set()
    for i in range(args.n):
        rel, text = page(rng, i, vocab, cum)
        path = args.out / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {args.n} pages under {args.out / 'pages'}")


if __name__ == "__main__":
    main()
