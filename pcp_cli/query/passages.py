"""Answer at the passage: a hit in a long page names the turn or paragraph that matched.

A page's passages are, for a conversation, its turns (the text under each `### User · …` /
`### Assistant · …` heading, a long turn cut again as below) and, for any other page, its
paragraphs merged into pieces of about 1,000 characters (semantic/chunks.py: the same passages
semantic search embeds). Each has its character span in the body and, in a conversation, its
message index (0 for the first turn) and role.

Ranking: the best `POOL` text matches are re-ranked by their best passage. Every passage of
those pages is scored with BM25 against the query's words that say what it is about (not
`FUNCTION_WORDS`): the passage's length against the pool's mean (a very short one counted as
`SHORT` of the mean), each word's rarity among the pool's passages, and a conversation's turn
together with the `WINDOW - 1` turns after it (a question and its answer). A page's rank is
`(1 - PASSAGE_WEIGHT) * page score / best page score + PASSAGE_WEIGHT * best passage score /
best passage score of the pool`, and for a page of several passages never less than its best
passage's share alone. A 15,000-word transcript with the one turn that answers is then ranked
for that turn rather than diluted by the other 14,900 words (what BM25F's length
normalisation does to it). Pages below the pool keep the engine's order after it. The snippet
of every result is cut from its best passage (the window of it with most of the query's
words), and `source_spans` locates that passage so a client can read it back (`read_around`).
The constants were chosen on LoCoMo's development conversations (bench/memory_search.py).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pcp_cli.index.text import highlights, make_snippet, match_terms
from pcp_cli.model.transcript import HEADING
from pcp_cli.semantic.chunks import split as chunk_split

POOL = 30  # how many of the best text matches are re-ranked by their best passage
PASSAGE_WEIGHT = 0.5  # how much the best passage counts beside the page's own score
K1, B = 1.2, 0.75  # BM25's constants
WINDOW = 2  # a conversation's turns are scored with the (WINDOW - 1) turns after them
SHORT = 0.5  # a passage shorter than this share of the mean is scored as if this long
MAX_NEIGHBOURS = 5
# Words that say what kind of question it is, not what it is about: they choose no passage
# (the index's stop words are fewer; these still count in the page's own score).
FUNCTION_WORDS = frozenset("""
what when where which who whom whose why how did does do done doing has have had having was
were been being am is are get got gets i me my mine myself you your yours he him his she her
hers it its we us our they them their theirs this that these those there here some any
about would could should shall might must can will just also very really so than then too
""".split())


@dataclass(frozen=True)
class Passage:
    """`start`..`end`: the passage's text in the body. `index`: its message index in a
    conversation (the turn's, for every piece of a long turn), else its paragraph index.
    `heading`: where its turn's heading line starts (a conversation's), else `start`."""

    start: int
    end: int
    index: int
    kind: str  # "message" or "paragraph"
    role: str | None = None
    heading: int = 0

    def locator(self) -> dict[str, Any]:
        """The `source_spans` entry of a result whose best passage this is."""
        out: dict[str, Any] = {"field": "body", "start": self.start, "end": self.end,
                               "passage": self.kind}
        if self.kind == "message":
            out["message_index"] = self.index
            out["role"] = (self.role or "").lower()
        else:
            out["paragraph_index"] = self.index
        return out


def split(body: str, page_type: str | None) -> list[Passage]:
    """The body's passages, in order."""
    if page_type == "conversation":
        turns = list(HEADING.finditer(body))
        if turns:
            return _turns(body, turns)
    return [Passage(c.start, c.end, i, "paragraph", None, c.start)
            for i, c in enumerate(chunk_split(body))]


def _turns(body: str, headings: list[re.Match[str]]) -> list[Passage]:
    out: list[Passage] = []
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(body)
        text = body[heading.end():end]
        lead = len(text) - len(text.lstrip())
        start = heading.end() + lead
        stop = heading.end() + len(text.rstrip())
        if stop <= start:
            continue
        if stop - start <= 1600:
            out.append(Passage(start, stop, index, "message", heading.group(1), heading.start()))
            continue
        for chunk in chunk_split(body[start:stop]):  # a long turn: its pieces, one index
            out.append(Passage(start + chunk.start, start + chunk.end, index, "message",
                               heading.group(1), heading.start()))
    return out


def content_stems(words: Sequence[str]) -> set[str]:
    """The terms `match_terms` reports for the query's words that say what it is about."""
    from pcp_cli.index.text import MIN_WORD, STOP_WORDS, TOKEN_RE, stem

    out = set()
    for word in words:
        for m in TOKEN_RE.finditer(word):
            run = m.group()
            if m.lastgroup == "cjk":
                out.add(run)
            elif len(run) >= MIN_WORD and run.lower() not in STOP_WORDS and \
                    run.lower() not in FUNCTION_WORDS:
                out.add(stem(run.lower()))
    return out


@dataclass
class Scored:
    """A page's passages with their scores against one query; `best` the index of the best
    (None when no passage holds a query word)."""

    passages: list[Passage]
    scores: list[float]
    best: int | None

    @property
    def best_passage(self) -> Passage | None:
        return None if self.best is None else self.passages[self.best]

    @property
    def best_score(self) -> float:
        return 0.0 if self.best is None else self.scores[self.best]


class Pool:
    """The passages of several pages scored against one query, on one scale (each word's
    rarity among all of them, each passage's length against their mean)."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = [w for w in words if w.lower() not in FUNCTION_WORDS] or list(words)
        self._counts: dict[str, tuple[list[Passage], list[dict[str, int]]]] = {}

    def add(self, key: str, body: str, page_type: str | None) -> None:
        passages = split(body, page_type)
        counts: list[dict[str, int]] = [{} for _ in passages]
        if passages and self.words:
            starts = [p.start for p in passages]
            for start, _end, term in match_terms(body, self.words):
                at = bisect_right(starts, start) - 1
                if at >= 0 and start < passages[at].end:
                    row = counts[at]
                    row[term] = row.get(term, 0) + 1
        self._counts[key] = (passages, counts)

    def __contains__(self, key: str) -> bool:
        return key in self._counts

    def coverage(self, key: str) -> float:
        """The share of the query's words (those that say what it is about) that page `key`
        holds anywhere: 1.0 when it holds every one."""
        wanted = content_stems(self.words)
        if not wanted or key not in self._counts:
            return 0.0
        held = {t for row in self._counts[key][1] for t in row}
        return len(held & wanted) / len(wanted)

    def scored(self) -> dict[str, Scored]:
        every = [(p, c) for passages, counts in self._counts.values()
                 for p, c in zip(passages, counts, strict=True)]
        if not every:
            return {key: Scored(list(p), [], None) for key, (p, _c) in self._counts.items()}
        total = len(every)
        mean = sum(p.end - p.start for p, _ in every) / total or 1.0
        holding: dict[str, int] = {}
        for _p, c in every:
            for term in c:
                holding[term] = holding.get(term, 0) + 1
        idf = {t: math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in holding.items()}
        out: dict[str, Scored] = {}
        for key, (passages, counts) in self._counts.items():
            scores = []
            for i, (p, c) in enumerate(zip(passages, counts, strict=True)):
                length = max(p.end - p.start, SHORT * mean)
                if WINDOW > 1 and p.kind == "message":
                    # an exchange: a turn and the reply after it, scored together
                    c = dict(c)
                    for q, d in zip(passages[i + 1:i + WINDOW], counts[i + 1:i + WINDOW],
                                    strict=False):
                        length += q.end - q.start
                        for t, n in d.items():
                            c[t] = c.get(t, 0) + n
                    length /= WINDOW
                norm = K1 * (1 - B + B * length / mean)
                scores.append(sum(idf[t] * tf * (K1 + 1) / (tf + norm) for t, tf in c.items()))
            best = max(range(len(scores)), key=scores.__getitem__) if scores else None
            if best is not None and scores[best] <= 0:
                best = None
            out[key] = Scored(passages, scores, best)
        return out


TURN_SEPARATOR = " — "


def snippet(body: str, scored: Scored, words: Sequence[str],
            room: int = 240) -> tuple[str, list[tuple[int, int]]]:
    """A result's snippet and its highlights: the window of its best passage around the
    query's words and, in a conversation when that turn is short, the start of the turns after
    it (the reply to a short question), up to `room` characters."""
    assert scored.best is not None
    best = scored.passages[scored.best]
    text, spans = make_snippet(body[best.start:best.end], words, room)
    if best.kind != "message" or text.endswith("…") or len(text) > room - 40:
        return text, spans
    after = " ".join(" ".join(body[p.start:p.end].split())
                     for p in scored.passages[scored.best + 1:scored.best + 3])
    if not after:
        return text, spans
    tail = TURN_SEPARATOR + after
    space = room - len(text)
    if len(tail) > space:
        cut = tail[:space - 1]
        at = cut.rfind(" ")
        tail = (cut[:at] if at > len(TURN_SEPARATOR) else cut).rstrip() + "…"
    spans += [(len(text) + a, len(text) + b) for a, b in highlights(tail, words)]
    return text + tail, spans


def score_one(body: str, page_type: str | None, words: Sequence[str]) -> Scored:
    """One page's passages scored on their own (a page outside a ranking's pool)."""
    pool = Pool(words)
    pool.add("", body, page_type)
    return pool.scored()[""]


def rerank(raw: dict[str, float], scored: dict[str, Scored],
           weight: float | None = None) -> dict[str, float]:
    """New raw scores for the pooled pages (`raw`: their engine scores, by key): page score
    and best passage combined as the module docstring says, in the units of the best page
    score (so scores stay comparable with the engine's and monotonic in the new order)."""
    weight = PASSAGE_WEIGHT if weight is None else weight
    top = max(raw.values(), default=0.0)
    best = max((s.best_score for s in scored.values()), default=0.0)
    if top <= 0:
        return dict(raw)
    out = {}
    for key, score in raw.items():
        passage = scored[key].best_score / best if best > 0 and key in scored else 0.0
        combined = (1 - weight) * score / top + weight * passage
        if key in scored and len(scored[key].passages) > 1:
            # a page of many passages scores at least what its best one would alone
            combined = max(combined, passage)
        out[key] = top * combined
    return out


def read_around(body: str, page_type: str | None, start: int, end: int,
                neighbours: int = 1) -> dict[str, Any]:
    """The passages overlapping `start`..`end` of the body with `neighbours` passages on each
    side (whole turns, headings included, in a conversation): `{start, end, text,
    passages: [{index, start, end, role?}], first_index, last_index}`."""
    passages = split(body, page_type)
    if not passages:
        return {"start": 0, "end": 0, "text": "", "passages": []}
    hit = [i for i, p in enumerate(passages) if p.start < max(end, start + 1) and p.end > start]
    if not hit:  # between passages (a heading, blank lines): the nearest one after
        after = [i for i, p in enumerate(passages) if p.start >= start]
        hit = [after[0] if after else len(passages) - 1]
    lo = max(0, hit[0] - neighbours)
    hi = min(len(passages) - 1, hit[-1] + neighbours)
    # whole turns: widen to every piece of the first and last turn
    while lo > 0 and passages[lo - 1].index == passages[lo].index and \
            passages[lo].kind == "message":
        lo -= 1
    while hi + 1 < len(passages) and passages[hi + 1].index == passages[hi].index and \
            passages[hi].kind == "message":
        hi += 1
    first, last = passages[lo], passages[hi]
    span_start = first.heading if first.kind == "message" else first.start
    out = {
        "start": span_start, "end": last.end, "text": body[span_start:last.end],
        "passages": [{**p.locator(), "matched": lo + k in hit}
                     for k, p in enumerate(passages[lo:hi + 1])],
    }
    return out
