"""Which of two results relevance does not separate comes first (PCP §5: default results SHOULD
prefer the newest high-authority declarations).

Relevance ranks first. Results whose relevance is nearly tied form a *band*: walking the
ranking best first, a band opens at a result and holds every following result whose raw score
is at least `1 - TIE_EPSILON` times the opening one. Within a band, results are ordered by

1. origin authority, strongest first: user_stated > approved > recorded > imported >
   generated > inferred (`vocab.ORIGIN_AUTHORITY`; an unknown origin counts as generated),
2. observed time, newest first (a result without one after those with one),
3. the engine's own order.

A result without a score (it matched only exact fields) is never moved. The rule runs in the
query layer on the hits an engine returned, so it is the same for every engine. A search that
may serve results up to position N fetches hits until the band holding position N is closed
(`settled`), so that a band is never cut by the fetch and cursor pages agree with one long page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pcp_cli.model import vocab

T = TypeVar("T")

# Scores within 2% of a band's best are tied: BM25 differences that small come from document
# length and term statistics, not from what the page says. 5% cost 1.7-2.0% of nDCG@10 on the
# held-out queries, 2% cost 0.5% (bench/RESULTS.md, "Issue #22: authority and recency
# tie-break").
TIE_EPSILON = 0.02
# A fetch is widened (doubled) at most up to this many hits to close the last band.
MAX_FETCH = 4096
RULE = (f"results within {TIE_EPSILON:.0%} of the best score of their band: higher-authority "
        "origin first (" + " > ".join(vocab.ORIGIN_AUTHORITY) + "), then newer observed time")
_WEAKEST = vocab.ORIGIN_AUTHORITY.index("generated")


def authority(origin: str | None) -> int:
    """Lower is stronger; an unknown origin counts as `generated` (under-claim)."""
    if origin in vocab.ORIGIN_AUTHORITY:
        return vocab.ORIGIN_AUTHORITY.index(origin)
    return _WEAKEST


def bands(scores: Sequence[float]) -> list[tuple[int, int]]:
    """[start, end) of each band of a best-first list of raw scores; a score <= 0 (none) is a
    band of its own."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(scores):
        top = scores[i]
        j = i + 1
        if top > 0:
            floor = top * (1 - TIE_EPSILON)
            while j < len(scores) and scores[j] > 0 and scores[j] >= floor:
                j += 1
        out.append((i, j))
        i = j
    return out


def settled(scores: Sequence[float], need: int) -> bool:
    """True when no hit past these could join the band holding position `need - 1` (the last
    one a caller may serve): that band ends before the last score fetched."""
    if need <= 0 or len(scores) <= need:
        return True  # every hit there is was fetched (or none is needed)
    for start, end in bands(scores):
        if start <= need - 1 < end:
            return end < len(scores)
    return True


def order(items: Sequence[T], *, score: Callable[[T], float], origin: Callable[[T], str],
          observed: Callable[[T], str | None]) -> list[T]:
    """`items` (best first by relevance) with each band ordered by authority, then recency."""
    scores = [score(item) for item in items]
    out: list[T] = []
    for start, end in bands(scores):
        band = list(items[start:end])
        if len(band) > 1:  # a stable sort: equal keys keep the engine's order
            band.sort(key=lambda item: (authority(origin(item)), _newest_first(observed(item))))
        out.extend(band)
    return out


def _newest_first(stamp: str | None) -> tuple[int, str]:
    """A sort key putting later ISO 8601 times first and a missing one last: each character
    mirrored (`_MIRROR`), so that of two stamps the one with the greater character at their
    first difference comes first, and of a stamp and its own prefix the prefix does (as a
    tuple of negated code points orders them; a band holds thousands of hits, and this is
    a tenth of that tuple's cost)."""
    if not stamp:
        return (1, "")
    return (0, stamp.translate(_MIRROR))


class _Mirror(dict[int, str]):
    """str.translate's table: code point c -> the character 0x10FFFF - c."""

    def __missing__(self, code: int) -> str:
        self[code] = mirrored = chr(0x10FFFF - code)
        return mirrored


_MIRROR = _Mirror()
