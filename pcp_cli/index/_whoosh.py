"""The whoosh-backed SearchIndex: what only whoosh needs (its schema, scorer, matchers and
pcp's ranking loops over its posting blocks). Shared with the tantivy engine: the query
language (`query.py`), the generation files (`generations.py`), text analysis (`text.py`);
a large rebuild's writer lives in `_whoosh_build.py`.

Layout of the index folder (the store's `.pcp/index/`):

    meta.json        format version, current generation, built flag, doc count, the size of
                     every file of the generation, and the caller's own key/values
    WRITELOCK        held (flock) by whoever rebuilds or updates; readers never take it
    g-<hex>/         one whoosh index ("generation"); a rebuild writes a new one beside the old
                     and switches meta.json atomically, so a crashed rebuild changes nothing
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, NamedTuple

from pcp_cli.index.query import import_whoosh_compat

import_whoosh_compat()  # before any whoosh import (a no-op once pcp_cli.index.query ran it)

from whoosh import index as whoosh_index  # noqa: E402
from whoosh import query as Q  # noqa: E402
from whoosh import scoring  # noqa: E402
from whoosh.analysis import CompositeAnalyzer, Token, Tokenizer  # noqa: E402
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema  # noqa: E402
from whoosh.formats import Positions  # noqa: E402
from whoosh.index import LockError  # noqa: E402
from whoosh.matching import AndNotMatcher  # noqa: E402
from whoosh.qparser import MultifieldParser, OrGroup  # noqa: E402

from pcp_cli.index._whoosh_doc import fields as _fields  # noqa: E402
from pcp_cli.index.generations import LOCK, META, GenerationIndex, writer_busy  # noqa: E402
from pcp_cli.index.query import (  # noqa: E402
    DEFAULT_FIELDS,
    HIT_FIELDS,
    configure_parser,
    explicit_or,
    filter_query,
    parse,
)
from pcp_cli.index.text import (  # noqa: E402
    TEXT_FIELDS,
    analyze,
    learn_words,
    matched_fields,
)
from pcp_cli.index.text import positions as term_positions  # noqa: E402
from pcp_cli.index.types import (  # noqa: E402
    ENGINE_FORMATS,
    IndexDoc,
    IndexFilter,
    IndexHit,
    IndexStamp,
    normalize_score,
)

__all__ = ["SearchIndex", "make_schema", "normalize_score", "explicit_or", "DEFAULT_FIELDS",
           "HIT_FIELDS", "META", "LOCK"]

# Below this many documents a rebuild uses one process; above, worker processes.
MP_THRESHOLD = 2000
# A word whose body term is in more than this share of the documents is "common": the rarer
# words' documents are scored first, and its postings read in full only if a page without a
# rarer word could still reach the top (see _rank_terms).
COMMON_DF = 0.5
# How many of the rarer words' best documents that first pass scores completely.
BOOSTED = 50
# Slack on the upper bound that decides whether that first pass was enough: float sums in
# another order differ in the last bits, and a bound must never be a hair too low.
BOUND_SLACK = 1e-9
# A filter on a one-value field (`lifecycle`, `review`, `sensitivity`, …) with at most this
# many distinct values is read from whichever side has fewer postings (see _outside).
FEW_VALUES = 64


class PcpTokenizer(Tokenizer):
    """Feeds `text.analyze` (stemmed English + CJK bigrams) to whoosh."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __call__(  # type: ignore[override]
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not tokenize:  # whoosh asks for the value as one token (wildcards, ranges)
            t.original = t.text = value.lower()
            t.boost = 1.0
            if positions:
                t.pos = start_pos
            if chars:
                t.startchar, t.endchar = start_char, start_char + len(value)
            yield t
            return
        for term, pos, sc, ec in analyze(value):
            t.text = term
            t.boost = 1.0
            t.stopped = False
            if keeporiginal:
                t.original = term
            if positions:
                t.pos = start_pos + pos
            if chars:
                t.startchar, t.endchar = start_char + sc, start_char + ec
            yield t


class PcpPositions(Positions):
    """whoosh's Positions format, fed by `text.positions` straight from the text.

    whoosh's own `word_values` runs the analyzer one `Token` object at a time through two
    generator layers and two dicts; for pcp's analyzer that is the same terms, positions,
    frequencies and weights (each token's boost is 1.0) as grouping `text.analyze`'s output,
    which `text.positions` does in one loop. Indexing is most of a rebuild's CPU. Postings
    are byte for byte whoosh's; an index written with plain Positions reads the same.
    """

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Iterator[Any]:
        if not isinstance(value, str):  # a pre-tokenized list: whoosh's own path
            yield from super().word_values(value, analyzer, **kwargs)
            return
        fb = self.field_boost
        encode = self.encode
        for term, poslist in term_positions(value).items():
            n = len(poslist)
            yield (term, n, float(n) * fb, encode(poslist))


def _text_field() -> TEXT:
    field = TEXT(analyzer=CompositeAnalyzer(PcpTokenizer()), multitoken_query="phrase")
    field.format = PcpPositions(field_boost=field.format.field_boost)
    return field


def make_schema() -> Schema:
    return Schema(
        path=ID(unique=True),
        page_id=ID,
        revision_id=ID,
        # `title:` queries only. Plain words search `body`, which holds the title too: each
        # searched field is one more posting list whoosh walks in Python per word, and
        # searching title and body separately made common-word queries three times slower.
        title=_text_field(),
        body=_text_field(),
        tag=KEYWORD(lowercase=True, commas=True, scorable=True, field_boost=1.5),
        type=ID,
        namespace=ID,
        ns_tree=KEYWORD(commas=True),
        origin=ID,
        sensitivity=ID,
        lifecycle=ID,
        review=ID,
        timestamp=ID(sortable=True),
        # Everything a hit reports, in one small stored tuple (bodies are never stored).
        hit=STORED,
    )


class _LengthTableScorer(scoring.BM25FScorer):
    """whoosh's BM25F scorer, bit for bit, without its per-document field-length lookup.

    whoosh reads each document's (one-byte, quantized) field length through a column reader
    and two method calls, about a third of the time spent per matching document. Here the
    segment's length bytes are read once (cached on the segment reader) and the BM25 length
    normalisation is precomputed for each of the 256 byte values, with the same arithmetic in
    the same order as `scoring.bm25`, so scores and rankings are exactly whoosh's own.
    """

    def __init__(
        self,
        searcher: Any,
        fieldname: str,
        text: Any,
        B: float,
        K1: float,
        lengths: bytes,
        qf: float = 1,
    ) -> None:
        super().__init__(searcher, fieldname, text, B, K1, qf=qf)
        from whoosh.util.numeric import byte_to_length

        avgfl = self.avgfl
        # byte 0 is "no length stored": whoosh then uses 1 (doc_field_length's default here)
        self._norm = [
            K1 * ((1 - B) + B * (byte_to_length(i) if i else 1) / avgfl) for i in range(256)
        ]
        self._k1p1 = K1 + 1
        self._lengths = lengths
        self._nlengths = len(lengths)

    def score(self, matcher: Any) -> float:
        d = matcher.id()
        tf = matcher.weight()
        norm = self._norm[self._lengths[d] if d < self._nlengths else 0]
        return self.idf * ((tf * self._k1p1) / (tf + norm))


def _segment_lengths(searcher: Any, fieldname: str) -> bytes | None:
    """The raw one-byte field lengths of the searcher's segment, or None if whoosh's layout is
    not the one this was written for (then the standard scorer is used)."""
    reader = searcher.reader()
    cache = reader.__dict__.setdefault("_pcp_lengths", {})
    if fieldname in cache:
        return cache[fieldname]
    lengths = None
    try:
        from whoosh.codec import whoosh3

        perdoc = reader._perdoc
        col = perdoc._cached_reader(whoosh3._lenfield(fieldname), whoosh3.LENGTHS_COLUMN)
        if col is not None and getattr(col, "_fixedlen", None) == 1:
            lengths = bytes(col._dbfile.get(col._basepos, col._count))
            if len(lengths) != col._count:
                lengths = None
    except Exception:  # another codec or whoosh version: fall back to whoosh's own lookup
        lengths = None
    cache[fieldname] = lengths
    return lengths


class _Weighting(scoring.BM25F):
    """BM25F with the same parameters and scores, scored through `_LengthTableScorer`."""

    def scorer(self, searcher: Any, fieldname: str, text: Any, qf: float = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return super().scorer(searcher, fieldname, text, qf=qf)
        lengths = _segment_lengths(searcher, fieldname)
        if lengths is None:
            return super().scorer(searcher, fieldname, text, qf=qf)
        B = self._field_B.get(fieldname, self.B)
        return _LengthTableScorer(searcher, fieldname, text, B, self.K1, lengths, qf=qf)


class _Unscored(Q.WrappingQuery):
    """Matches what its child matches, with a score of 0: a filter, not a relevance signal.

    (whoosh's ConstantScoreQuery cannot give 0, its list matcher reads a weight of 0 as "none
    given" and scores 1; and a boost of 0 is dropped by a prefix that expands to one term.)
    """

    def _rewrap(self, child: Q.Query) -> Q.Query:
        return self.__class__(child)

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        from whoosh.matching import NullMatcherClass, WrappingMatcher

        m = self.child.matcher(searcher, context)
        return m if isinstance(m, NullMatcherClass) else WrappingMatcher(m, boost=0.0)


class _AndNotMatcher(AndNotMatcher):  # type: ignore[misc]
    def _find_first(self) -> None:
        if self.a.is_active() and self.b.is_active():
            self._find_next()


class _AndNot(Q.AndNot):
    """whoosh's AndNot, with a matcher that checks the first positive document too.

    whoosh's AndNotMatcher only compares the two sides' first documents when they are equal:
    if the excluded side starts earlier, the first positive document is served even when it
    is excluded (`tide NOT shell` returned a page saying "tide shell" whenever another
    "shell" page came before it in the index).
    """

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        scored = self.a.matcher(searcher, context)
        excluded = self.b.matcher(searcher, searcher.boolean_context())
        if not excluded.is_active():
            return scored
        return _AndNotMatcher(scored, excluded)


def _unscored(q: Q.Query) -> Q.Query:
    """`q` with each subquery that `_ExactFieldsUnscored` marked (boost 0) made `_Unscored`,
    and each AndNot made `_AndNot`.

    An OR above one becomes whoosh's DefaultOr (a tree of union matchers): on a small index
    whoosh otherwise pre-loads an OR's scores into an array and treats a score of 0 as "no
    match", which lost the unscored matches.
    """
    if getattr(q, "boost", 1.0) == 0.0:
        return _Unscored(q.with_boost(1.0))
    if isinstance(q, Q.AndNot):
        return _AndNot(_unscored(q.a), _unscored(q.b))
    if isinstance(q, Q.BinaryQuery):  # AndMaybe, ...: their own constructor
        return q.__class__(_unscored(q.a), _unscored(q.b))
    if isinstance(q, Q.CompoundQuery):
        subs = [_unscored(sub) for sub in q.subqueries]
        if subs == q.subqueries:
            return q
        cls = Q.DefaultOr if isinstance(q, Q.Or) else q.__class__
        return cls(subs, boost=q.boost)
    return q


def _whoosh_top(searcher: Any, q: Q.Query, allowed: Any, limit: int) -> list[tuple[int, float]]:
    """The top `limit` (docnum, score) of any query, by whoosh's own matchers and scorer, with
    every matching document scored: no block-quality skipping and no matcher replacement.

    whoosh's default top-N collector prunes with per-term quality bounds and replaces matchers
    as the threshold rises; measured on the bench store it dropped pages that belonged in the
    top 10 (`thing school family student` lost its best page, even with optimize=False), so
    its `limit` is not used for relevance.
    """
    from whoosh.collectors import FilterCollector, TopCollector

    collector: Any = TopCollector(limit, usequality=False, replace=0)
    if allowed is not None:
        collector = FilterCollector(collector, allowed)
    searcher.search_with_collector(q, collector)
    return [(hit.docnum, float(hit.score or 0.0)) for hit in collector.results()]


class SearchIndex(GenerationIndex):
    """A full-text index of pages, opened on a folder it owns. Not thread-safe; one per thread.
    The folder's shape (meta.json, the lock, generations, rebuild and updates) is
    `generations.GenerationIndex`; this class is what only whoosh needs.
    """

    ENGINE = "whoosh"
    FORMAT = ENGINE_FORMATS["whoosh"]

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self._searcher: Any = None
        self._parser: Any = None

    # ---------------------------------------------------------------- opening and writing

    def _open(self, generation: Path) -> tuple[Any, int]:
        ix = whoosh_index.open_dir(str(generation))
        # Not ix.doc_count(): with several segments that opens a full reader.
        return ix, sum(seg.doc_count() for seg in ix._segments())

    def _build(self, generation: Path, docs: Iterable[IndexDoc],
               progress: Callable[[int], None] | None, tuned: bool) -> tuple[int, int]:
        from pcp_cli.index import _whoosh_build as build
        from pcp_cli.index.workers import available

        ix = whoosh_index.create_in(str(generation), make_schema())
        it = iter(docs)
        head = list(islice(it, MP_THRESHOLD))
        if tuned and len(head) >= MP_THRESHOLD and available(build.WORKERS):
            # the workers fork with the terms of the first pages' words already known
            learn_words(f"{doc.title}\n{doc.body}" for doc in head)
            n = build.parallel(ix, _chain(head, it), progress)
        else:
            n = build.serial(ix, _chain(head, it), progress, tuned)
        count = ix.doc_count()
        ix.close()
        return n, count

    def _apply(self, docs: Iterable[IndexDoc], paths: Iterable[str]) -> int:
        try:
            writer = self._ix.writer(timeout=2.0, compound=False)
        except LockError as exc:
            raise writer_busy() from exc
        n = 0
        try:
            for doc in docs:
                writer.update_document(**_fields(doc))
                n += 1
            for path in paths:
                n += writer.delete_by_term("path", path)
        except BaseException:
            writer.cancel()
            raise
        writer.commit()
        return n

    def _count(self) -> int:
        return sum(seg.doc_count() for seg in self._ix._segments())

    def doc_count(self) -> int:
        self._require()
        return int(self._ix.doc_count())

    # ---------------------------------------------------------------- reading

    def _get_searcher(self) -> Any:
        # Not Searcher.refresh(): whoosh-reloaded 2.7.5 re-adds the reused reader's segments, so
        # a document deleted or replaced in an existing segment is still found.
        s = self._searcher
        if s is not None and self._ix.latest_generation() != s.reader().generation():
            s.close()
            s = None
        if s is None:
            s = self._searcher = self._ix.searcher(weighting=_Weighting())
        return s

    def _allowed(self, searcher: Any, flt: IndexFilter) -> Any:
        """The set of document numbers `flt` admits, computed once per searcher and filter.

        whoosh checks each matching document against it before scoring, so pages outside the
        filter never become candidates; caching it saves walking e.g. every `lifecycle:active`
        posting on each search.
        """
        cache = searcher.__dict__.setdefault("_pcp_allowed", {})
        key: Any = flt
        try:
            hash(flt)
        except TypeError:  # lists instead of tuples: fine, just not cached
            key = None
        if key is not None and key in cache:
            return cache[key]
        constraint, excluded = filter_query(flt) or (None, None)
        if constraint is None and excluded is None:
            allowed = None
        else:
            allowed = _docset(searcher, constraint) if constraint is not None else None
            dropped = _docset(searcher, excluded) if excluded is not None else set()
            if allowed is not None and dropped is not None:
                allowed -= dropped
            else:
                base = Q.Every() if constraint is None else constraint
                q = base if excluded is None else Q.AndNot(base, excluded)
                allowed = set(searcher.docs_for_query(q))
        if flt.page_ids is not None or flt.exclude_page_ids:
            allowed = _restrict_pages(searcher, allowed, flt)
        if len(cache) > 32:
            cache.clear()
        if key is not None:
            cache[key] = allowed
        return allowed

    def _get_parser(self) -> Any:
        if self._parser is None:
            # Plain OR, ranked by BM25F: a page with more of the words scores higher anyway.
            # OrGroup.factory(0.9) ranks a little better but doubles matching time in whoosh.
            self._parser = configure_parser(
                MultifieldParser(list(DEFAULT_FIELDS), self._ix.schema, group=OrGroup))
        return self._parser

    def _parse(self, query: str) -> Q.Query:
        """The whoosh query for `query` (as index/query.parse reads it): UsageError only for an
        empty one."""
        return _unscored(parse(self._get_parser(), query))

    def search(
        self,
        query: str,
        *,
        filter: IndexFilter | None = None,  # noqa: A002 - the interface's word
        limit: int = 10,
        sort: str = "relevance",
        explain: bool = True,
    ) -> list[IndexHit]:
        """Ranked hits for `query` among documents `filter` admits.

        `sort` is "relevance", "newest" or "oldest" (by `timestamp`; hits then score 0).
        `explain` is the interface's (tantivy's `search`): whoosh works out the matched
        fields of every hit as it ranks them, from the posting blocks it decoded anyway.
        Raises UsageError for a malformed query, IndexNeedsRebuild when the index cannot be
        trusted.
        """
        self._check_search(sort, limit)
        self._require()
        user_q = self._parse(query)
        if isinstance(user_q, Q.NullQuery.__class__) or user_q is Q.NullQuery:
            return []  # only stop words: nothing to look for
        flt = filter or IndexFilter()
        if filter_query(flt) is None:
            return []
        asked = {(fn, t) for fn, t in user_q.iter_all_terms()}
        asked_fields = {fn for fn, _ in asked}
        with self._reading():
            searcher = self._get_searcher()
            # The docnums of each posting block decoded by this search, by block, so that
            # working out the hits' matched fields decodes none twice; dropped after it.
            searcher.__dict__["_pcp_block_ids"] = {}
            allowed = self._allowed(searcher, flt)
            if allowed is not None and not allowed:
                # Nothing is admitted. (Never hand whoosh an empty filter set: it reads an
                # empty set as "no filter" and would return pages the filter excludes.)
                return []
            plain = groups = None
            if sort == "relevance":
                # (`narrowed` may come out empty: only pcp's own loops read it, never whoosh.)
                core, narrowed = _narrow(searcher, user_q, allowed)
                plain = _plain_terms(core)
                groups = _plain_groups(core) if plain is None else None
            if (plain is not None or groups is not None) and narrowed is not None \
                    and not narrowed:
                ranked = []  # the filters and NOTs leave no page (`way NOT way`)
            elif plain is not None:
                ranked = _rank_terms(searcher, plain, narrowed, limit)
            elif groups is not None:
                ranked = _rank_and(searcher, groups, narrowed, limit)
            elif sort == "relevance":
                ranked = _whoosh_top(searcher, user_q, allowed, limit)
            else:
                # Not terms=True: whoosh would then record the matching terms of every
                # candidate; the fields that matched are worked out for the returned hits only.
                results = searcher.search(
                    user_q,
                    limit=limit,
                    filter=allowed,
                    sortedby="timestamp",
                    reverse=sort == "newest",
                )
                # Sorted by date, whoosh puts the sort key where the score goes: no score then.
                ranked = [(hit.docnum, 0.0) for hit in results]
            matched = _matched_terms(searcher, [d for d, _ in ranked], asked)
            searcher.__dict__.pop("_pcp_block_ids", None)
            hits = []
            for docnum, raw in ranked:
                stored = searcher.stored_fields(docnum)["hit"]
                fields = matched_fields(matched.get(docnum, ()), stored[11], asked_fields)
                hits.append(
                    IndexHit(
                        page_id=stored[0],
                        path=stored[1],
                        revision_id=stored[2],
                        type=stored[3],
                        namespace=stored[4],
                        origin=stored[5],
                        sensitivity=stored[6],
                        lifecycle_status=stored[7],
                        review_status=stored[8],
                        timestamp=stored[9],
                        mtime_ns=stored[10],
                        score_raw=raw,
                        score=normalize_score(raw),
                        matched_fields=fields,
                    )
                )
        return hits

    def scores(self, query: str, *, filter: IndexFilter | None = None,  # noqa: A002
               limit: int = 10) -> list[float]:
        """The raw relevance scores of `search(query, filter=filter, limit=limit)`'s hits."""
        return [hit.score_raw for hit in self.search(query, filter=filter, limit=limit)]

    def explain(self, query: str, hits: list[IndexHit]) -> list[IndexHit]:
        """`hits` with their matched fields: whoosh's `search` worked them out already."""
        return hits

    def stamps(self) -> dict[str, IndexStamp]:
        """path -> (revision_id, mtime_ns) of every indexed document, to diff with the store."""
        self._require()
        with self._reading():
            reader = self._get_searcher().reader()
            return {
                s["hit"][1]: IndexStamp(s["hit"][2], s["hit"][10])
                for s in reader.all_stored_fields()
            }

    def close(self) -> None:
        if self._searcher is not None:
            with contextlib.suppress(Exception):
                self._searcher.close()
            self._searcher = None
        if self._ix is not None:
            with contextlib.suppress(Exception):
                self._ix.close()
            self._ix = None
        self._parser = None


def _docset(searcher: Any, q: Q.Query) -> set[int] | None:
    """The (non-deleted) documents matching a filter query made of terms, ORs and ANDs, read
    straight from the posting blocks into Python sets; None for any other query (the caller
    then asks whoosh). whoosh's docs_for_query walks a matcher tree one document at a time,
    which was most of a fresh process's first search."""
    if type(q) is Q.And and q.subqueries:
        outside = [_outside(searcher, sub) for sub in q.subqueries]
        if all(o is not None for o in outside):  # the default filter: see _outside
            return _live(searcher).difference(*outside)
    values = _field_values(q)
    if values is not None:
        fieldname, texts = values
        excluded = _outside(searcher, q)
        if excluded is not None:
            return _live(searcher) - excluded
        out: set[int] = set()
        for text in texts:
            got = _term_docs(searcher, fieldname, text)
            if got is None:
                return None
            out |= got
        return out
    if type(q) in (Q.Or, Q.And):
        sets = []
        for sub in q.subqueries:
            got = _docset(searcher, sub)
            if got is None:
                return None
            sets.append(got)
        if not sets:
            return None
        out = sets[0]
        for other in sets[1:]:
            if type(q) is Q.Or:
                out |= other
            else:
                out &= other
        return out
    return None


def _field_values(q: Q.Query) -> tuple[str, list[str]] | None:
    """(field, values) of a term, or of an OR of terms of one field; None for anything else."""
    if type(q) is Q.Term:
        return q.fieldname, [q.text]
    if type(q) is Q.Or and q.subqueries and all(type(sub) is Q.Term for sub in q.subqueries) \
            and len({sub.fieldname for sub in q.subqueries}) == 1:
        return q.subqueries[0].fieldname, [sub.text for sub in q.subqueries]
    return None


def _outside(searcher: Any, q: Q.Query) -> set[int] | None:
    """The documents a filter term (or an OR of terms of one field) leaves out, when that is
    the cheaper side to read; None when it is not, or cannot be read that way.

    The default filter admits most pages (`lifecycle:active`, `review:affirmed`, the lower
    sensitivities): reading what it admits decoded nearly every document number once per
    axis in each process's first search, a cost that grew with the store. For a one-value
    field (an ID: at most one term per document) where, in every segment, every document has
    a value (its terms' document counts add up to the segment's) and the values asked for hold
    most of the documents, what the filter admits is every live document less the postings of
    the other values, which are few. Global docnums (`_live` leaves out the deleted ones)."""
    values = _field_values(q)
    if values is None:
        return None
    fieldname, texts = values
    try:
        field = searcher.schema[fieldname]
        wanted = {field.to_bytes(text) for text in texts}
    except (KeyError, ValueError):
        return None
    if not isinstance(field, ID):
        return None
    out: set[int] = set()
    for sub, offset in searcher.leaf_searchers():
        reader = sub.reader()
        found = _few_values(reader, fieldname)
        n = reader.doc_count_all()
        if found is None or sum(df for _, df in found) != n or \
                2 * sum(df for tb, df in found if tb in wanted) <= n:
            return None
        for tb, _ in found:
            if tb not in wanted:
                docs = _segment_docs(reader, fieldname, tb)
                out.update(docs if not offset else [d + offset for d in docs])
    return out


def _live(searcher: Any) -> set[int]:
    """Every live (not deleted) global docnum."""
    out: set[int] = set()
    for sub, offset in searcher.leaf_searchers():
        reader = sub.reader()
        out.update(range(offset, offset + reader.doc_count_all()))
        if reader.has_deletions():
            out.difference_update(d + offset for d in reader.deleted_docs_set)
    return out


def _page_docs(searcher: Any, page_ids: frozenset[str]) -> set[int]:
    """The documents of these pages: posting lookups for a few, one stored-field pass (kept
    with the searcher) for many."""
    if len(page_ids) <= 8000:  # a posting lookup costs about 1/9000 of the pass (100k pages)
        out: set[int] = set()
        for page_id in page_ids:
            out |= _term_docs(searcher, "page_id", page_id) or set()
        return out
    by_page = searcher.__dict__.get("_pcp_page_docs")
    if by_page is None:
        by_page = {}
        for docnum, stored in searcher.reader().iter_docs():
            by_page.setdefault(stored["hit"][0], set()).add(docnum)
        searcher.__dict__["_pcp_page_docs"] = by_page
    return {d for page_id in page_ids for d in by_page.get(page_id, ())}


def _restrict_pages(searcher: Any, allowed: set[int] | None, flt: IndexFilter) -> set[int]:
    if flt.page_ids is not None:
        docs = _page_docs(searcher, flt.page_ids)
        allowed = docs if allowed is None else allowed & docs
    elif allowed is None:
        allowed = set(searcher.docs_for_query(Q.Every()))
    if flt.exclude_page_ids:
        allowed = allowed - _page_docs(searcher, flt.exclude_page_ids)
    return allowed


def _term_docs(searcher: Any, fieldname: str, text: str) -> set[int] | None:
    try:
        tb = searcher.schema[fieldname].to_bytes(text)
    except (KeyError, ValueError):
        return None
    out: set[int] = set()
    for sub, offset in searcher.leaf_searchers():
        docs = _segment_docs(sub.reader(), fieldname, tb)
        out.update(docs if not offset else (d + offset for d in docs))
    return out


def _segment_docs(reader: Any, fieldname: str, tb: bytes) -> set[int]:
    """The live documents of one segment holding a term, read straight from its postings."""
    from whoosh.codec.whoosh3 import W3LeafMatcher
    from whoosh.matching.wrappers import FilterMatcher

    if (fieldname, tb) not in reader:
        return set()
    m = reader.postings(fieldname, tb)
    deleted: Any = ()
    if type(m) is FilterMatcher and m._exclude:
        deleted, m = m._ids, m.child
    docs: set[int] = set()
    if type(m) is W3LeafMatcher:
        while m.is_active():
            if m._ids is None:
                _read_ids(m)
            docs.update(m._ids[m._i : m._blocklength])
            m._next_block()
    else:
        docs.update(m.all_ids())
    if deleted:
        docs.difference_update(deleted)
    return docs


def _few_values(reader: Any, fieldname: str) -> list[tuple[bytes, int]] | None:
    """(term, document count) of every value of a field in one segment, or None when it has
    more than FEW_VALUES of them."""
    values: list[tuple[bytes, int]] = []
    for (fn, tb), info in reader.iter_from(fieldname, b""):
        if fn != fieldname:
            break
        if len(values) == FEW_VALUES:
            return None
        values.append((tb, info.doc_frequency()))
    return values


def _narrow(searcher: Any, q: Q.Query, allowed: Any) -> tuple[Q.Query, Any]:
    """Peel off the parts of `q` that only say which documents qualify, as a smaller
    `allowed`: the `_Unscored` terms of an AND (`type:note budget`) and the NOT of an AndNot
    (`budget NOT draft`). Neither adds to whoosh's score (an AndNot scores its positive side),
    so ranking what is left among the narrowed documents is the same ranking. Returns `q` and
    `allowed` unchanged when a part is not a plain term query (`_docset` cannot read it)."""
    if isinstance(q, Q.AndNot):
        core, narrowed = _narrow(searcher, q.a, allowed)
        excluded = _docset(searcher, _unwrap(q.b))
        if excluded is None:
            return q, allowed
        if narrowed is None:
            narrowed = set(range(searcher.reader().doc_count_all()))
        return core, narrowed - excluded
    if type(q) is Q.And:
        filters = [sub for sub in q.subqueries if isinstance(sub, _Unscored)]
        rest = [sub for sub in q.subqueries if not isinstance(sub, _Unscored)]
        if not filters or len(rest) != 1:
            return q, allowed
        narrowed = allowed
        for sub in filters:
            docs = _docset(searcher, sub.child)
            if docs is None:
                return q, allowed
            narrowed = docs if narrowed is None else narrowed & docs
        core, narrowed = _narrow(searcher, rest[0], narrowed)
        return core, narrowed
    return q, allowed


def _unwrap(q: Q.Query) -> Q.Query:
    """`q` without `_Unscored` wrappers (which change scores, not matches)."""
    if isinstance(q, _Unscored):
        return _unwrap(q.child)
    if type(q) in (Q.Or, Q.DefaultOr):
        return Q.Or([_unwrap(sub) for sub in q.subqueries])
    if type(q) is Q.And:
        return Q.And([_unwrap(sub) for sub in q.subqueries])
    return q


class _Phrase(NamedTuple):
    """An exact phrase leaf (`"time year"`): its words, in order, in one positional field."""

    fieldname: str
    words: tuple[str, ...]


class _Filter(NamedTuple):
    """An exact-value term that matches with a score of 0 (`tag:work` beside words: see
    `ExactFieldsUnscored`): its pages are matches, ranked by the other leaves alone."""

    fieldname: str
    text: str


# A leaf of the queries pcp ranks itself: a (field, text) term, an exact phrase, or a term
# that matches unscored.
Leaf = tuple[str, str] | _Phrase | _Filter


def _plain_terms(q: Q.Query) -> list[Leaf] | None:
    """The leaves of a query that is one word-field term, exact phrase or unscored term, or a
    plain OR of them (what unquoted words, quoted phrases and `tag:` terms among words parse
    to), else None."""
    if type(q) in (Q.Term, Q.Phrase, _Unscored):
        leaves = [q]
    elif type(q) in (Q.Or, Q.DefaultOr) and q.boost == 1.0 and not q.minmatch and not q.scale:
        leaves = q.subqueries
    else:
        return None
    out: list[Leaf] = []
    for t in leaves:
        if type(t) is _Unscored:
            child = t.child
            if type(child) is not Q.Term or child.boost != 1.0 or child.minquality \
                    or not isinstance(child.text, str):
                return None
            out.append(_Filter(child.fieldname, child.text))
            continue
        if type(t) is Q.Phrase:
            # whoosh's own Phrase: slop 1 is "adjacent, in order"; title and body keep positions
            if t.boost != 1.0 or t.slop != 1 or t.fieldname not in TEXT_FIELDS \
                    or len(t.words) < 2 or not all(isinstance(w, str) for w in t.words):
                return None
            out.append(_Phrase(t.fieldname, tuple(t.words)))
            continue
        if type(t) is not Q.Term or t.boost != 1.0 or t.minquality or t.fieldname not in HIT_FIELDS:
            return None
        out.append((t.fieldname, t.text))
    return out


def _plain_groups(q: Q.Query) -> list[list[Leaf]] | None:
    """For an AND of plain words or OR-groups of them (`python AND code`,
    `(travel OR vacation) AND hotel`), the terms of each part, else None."""
    if type(q) is not Q.And or q.boost != 1.0 or len(q.subqueries) < 2:
        return None
    groups = []
    for sub in q.subqueries:
        terms = _plain_terms(sub)
        if terms is None:
            return None
        groups.append(terms)
    return groups


def _rank_and(
    searcher: Any, groups: list[list[Leaf]], allowed: Any, limit: int
) -> list[tuple[int, float]]:
    """The top `limit` (docnum, score) for an AND of OR-groups: a document must match every
    group and scores the sum of the groups' scores, as in whoosh's intersection matcher. The
    smallest group is read first; each next one only scores documents all earlier ones had."""
    reader = searcher.reader()

    def size(terms: list[Leaf]) -> int:
        return sum(_doc_frequency(reader, t) for t in terms)

    accs: dict[int, dict[int, float]] = {}
    within = allowed
    for i in sorted(range(len(groups)), key=lambda i: size(groups[i])):
        acc: dict[int, float] = {}
        _accumulate(searcher, groups[i], acc, within)
        if not acc:
            return []
        accs[i] = within = acc
    parts = [accs[i] for i in range(len(groups))]
    total: dict[int, float] = {}
    for d in within:
        score = parts[0][d]
        for part in parts[1:]:
            score = score + part[d]
        total[d] = score
    return _top(total, limit)


def _rank_terms(
    searcher: Any, terms: list[Leaf], allowed: Any, limit: int
) -> list[tuple[int, float]]:
    """The top `limit` (docnum, score) for an OR of terms: exactly the top `limit` of every
    document `allowed` admits that holds any of the terms, scored as whoosh's BM25F scores them
    (the sum of each term's score), ties by docnum.

    One shortcut, taken only when it provably changes nothing: when some words are very common
    (their `body` term is in more than COMMON_DF of the documents, like "time" on 98% of
    pages) and others are not, the rarer words' best BOOSTED documents are scored first,
    common words included. If the `limit`-th best of those beats anything a document outside
    them could score (the next rarer-word score plus the most the common words can add, from
    whoosh's own per-term bound), that is the answer; otherwise every posting is scored.
    """
    if any(type(t) is _Phrase for t in terms):
        return _rank_phrases(searcher, terms, allowed, limit)
    reader = searcher.reader()
    n = reader.doc_count_all() or 1
    common = [t for t in terms if type(t) is tuple and t[0] == "body"
              and reader.doc_frequency(*t) > COMMON_DF * n]
    rarer = [t for t in terms if t not in common]
    # Contributions kept per distinct term: the rarer terms' when the shortcut is tried (so
    # that when it cannot prove its answer they are not read a second time), and a repeated
    # term's ("year year"). The final sums are made term by term in the query's order, from
    # these or from the postings: the same floats in the same order as one pass over all.
    parts: dict[Leaf, dict[int, float]] = {}
    if common and rarer and sum(_doc_frequency(reader, t) for t in rarer) >= limit:
        for t in rarer:
            if t not in parts:
                parts[t] = {}
                _accumulate(searcher, [t], parts[t], allowed)
        ranked = _rank_rarer_first(searcher, _summed(rarer, parts), common, limit)
        if ranked is not None:
            return ranked
    for t in terms:
        if t not in parts and terms.count(t) > 1:
            parts[t] = {}
            _accumulate(searcher, [t], parts[t], allowed)
    if not parts:
        acc: dict[int, float] = {}
        _accumulate(searcher, terms, acc, allowed)
        return _top(acc, limit)
    return _top(_summed(terms, parts, searcher, allowed), limit)


def _summed(terms: list[Leaf], parts: dict[Leaf, dict[int, float]], searcher: Any = None,
            allowed: Any = None) -> dict[int, float]:
    """docnum -> the sum of its terms' contributions, added in `terms`' order, each from
    `parts` or, for a term without one, from its postings."""
    acc: dict[int, float] = {}
    get = acc.get
    for t in terms:
        part = parts.get(t)
        if part is None:
            _accumulate(searcher, [t], acc, allowed)
            continue
        for g, score in part.items():
            acc[g] = get(g, 0.0) + score
    return acc


def _rank_rarer_first(
    searcher: Any,
    acc: dict[int, float],
    common: list[tuple[str, str]],
    limit: int,
) -> list[tuple[int, float]] | None:
    """`_rank_terms`'s shortcut: the exact top `limit`, or None when it cannot be proven.
    `acc`: every admitted document's score from the rarer terms."""
    keep = max(BOOSTED, 3 * limit)
    best = _top(acc, keep + 1)
    if len(best) < limit:
        return None  # too few documents hold a rarer word: the top needs common-only ones
    outside = best[keep][1] if len(best) > keep else 0.0  # best rarer score left out
    scored = dict(best[:keep])
    _accumulate(searcher, common, scored, scored, candidates=True)
    top = _top(scored, limit)
    bound = (outside + _max_score(searcher, common)) * (1 + BOUND_SLACK)
    return top if top[-1][1] > bound else None


def _max_score(searcher: Any, terms: list[tuple[str, str]]) -> float:
    """An upper bound on what `terms` can add to any one document's score: the sum of each
    term's `max_quality()` (whoosh's bound from the term's highest weight and shortest field
    length), the largest over the segments."""
    total = 0.0
    weighting = searcher.weighting
    for fn, text in terms:
        tb = searcher.schema[fn].to_bytes(text)
        most = 0.0
        for sub, _ in searcher.leaf_searchers():
            if (fn, tb) in sub.reader():
                most = max(most, sub.postings(fn, tb, weighting=weighting).max_quality())
        total += most
    return total


def _accumulate(
    searcher: Any,
    terms: list[Leaf],
    acc: dict[int, float],
    allowed: Any,
    *,
    candidates: bool = False,
) -> None:
    """Add each term's BM25F contribution to `acc` (global docnum -> score).

    whoosh walks an OR through a tree of union matchers, several method calls per matching
    document and term. Here each term's posting list is read block by block and its
    contributions summed per document (term by term, as whoosh's array union does), with the
    same scorer; documents outside `allowed` are never scored. `candidates`: only documents
    already in `acc` are scored, and posting blocks holding none of them are not decoded.
    """
    from whoosh.codec.whoosh3 import W3LeafMatcher
    from whoosh.matching.wrappers import FilterMatcher

    if any(type(t) is not tuple for t in terms):  # phrases, unscored terms: leaf by leaf
        for t in terms:
            if type(t) is _Phrase:
                _accumulate_phrase(searcher, t, acc, acc.keys() if candidates else allowed)
            elif type(t) is _Filter:
                _accumulate_filter(searcher, t, acc, acc.keys() if candidates else allowed)
            else:
                _accumulate(searcher, [t], acc, allowed, candidates=candidates)
        return
    schema = searcher.schema
    weighting = searcher.weighting
    get = acc.get
    seen = searcher.__dict__.get("_pcp_block_ids")
    for sub, offset in searcher.leaf_searchers():
        reader = sub.reader()
        wanted: list[int] = []
        if candidates:
            end = offset + reader.doc_count_all()
            wanted = sorted(g - offset for g in acc if offset <= g < end)
            if not wanted:
                continue
        for fn, text in terms:
            try:
                tb = schema[fn].to_bytes(text)
            except ValueError:
                continue
            if (fn, tb) not in reader:
                continue
            m = sub.postings(fn, tb, weighting=weighting)
            deleted: Any = ()
            if type(m) is FilterMatcher and m._exclude:
                deleted, m = m._ids, m.child
            scorer = m.scorer if type(m) is W3LeafMatcher else None
            if type(scorer) is _LengthTableScorer:
                idf, k1p1, norm = scorer.idf, scorer._k1p1, scorer._norm
                lengths, nlen = scorer._lengths, scorer._nlengths
                lo = 0  # the block's first docnum is above the previous block's last
                while m.is_active():
                    hi = m._maxid
                    if candidates:
                        at = bisect.bisect_left(wanted, lo)
                        upto = bisect.bisect_right(wanted, hi, at)
                        lo = hi + 1
                        if at == upto:
                            m._next_block()
                            continue
                    if m._ids is None:
                        _read_ids(m)
                        if seen is not None:
                            seen[(id(m._postfile), m._dataoffset)] = m._ids
                    if m._weights is None:
                        m._read_weights()
                    ids, weights = m._ids, m._weights
                    if candidates:  # look up the few wanted docnums, not every posting
                        first, count = m._i, m._blocklength
                        for d in wanted[at:upto]:
                            i = bisect.bisect_left(ids, d, first, count)
                            if i < count and ids[i] == d and d not in deleted:
                                tf = weights[i]
                                nm = norm[lengths[d] if d < nlen else 0]
                                acc[d + offset] += idf * ((tf * k1p1) / (tf + nm))
                        m._next_block()
                        continue
                    for i in range(m._i, m._blocklength):
                        d = ids[i]
                        g = d + offset
                        if (allowed is not None and g not in allowed) or d in deleted:
                            continue
                        tf = weights[i]
                        nm = norm[lengths[d] if d < nlen else 0]
                        acc[g] = get(g, 0.0) + idf * ((tf * k1p1) / (tf + nm))
                    m._next_block()
            else:  # another codec or scorer: whoosh's own per-document calls
                while m.is_active():
                    d = m.id()
                    g = d + offset
                    if not ((allowed is not None and g not in allowed) or d in deleted):
                        acc[g] = get(g, 0.0) + m.score()
                    m.next()


def _read_ids(m: Any) -> None:
    """`W3LeafMatcher._read_ids`, with the docnums' running sum in C (whoosh's `delta_decode`
    is a Python generator: ~5% of a search)."""
    from itertools import accumulate

    if m._data is None:
        m._read_data()
    ids = m._data[0]
    m._ids = ids if m._byteids else tuple(accumulate(ids))


def _doc_frequency(reader: Any, leaf: Leaf) -> int:
    """How many documents hold the leaf's term (a phrase: at most its rarest word's)."""
    if type(leaf) is _Phrase:
        return min(reader.doc_frequency(leaf.fieldname, w) for w in leaf.words)
    return int(reader.doc_frequency(leaf[0], leaf[1]))


def _tree_sum(scores: list[float]) -> float:
    """The words' scores summed as whoosh's phrase matcher sums them: its intersection
    matchers form `make_binary_tree`'s tree (a + (b + c) for three words), so the float sum is
    bit for bit whoosh's."""
    if len(scores) == 1:
        return scores[0]
    half = len(scores) // 2
    return _tree_sum(scores[:half]) + _tree_sum(scores[half:])


def _decode_positions(value: bytes) -> Iterable[int]:
    """whoosh `Positions.decode_positions` (a pickled list of deltas after a length), with the
    running sum in C."""
    from itertools import accumulate
    from pickle import loads

    from whoosh.system import _INT_SIZE

    if not value.endswith(b"."):
        value += b"."
    return accumulate(loads(value[_INT_SIZE:]))


def _decoder(searcher: Any, fieldname: str) -> Callable[[bytes], Iterable[int]]:
    fmt = searcher.schema[fieldname].format
    if type(fmt).decode_positions is Positions.decode_positions:
        return _decode_positions
    return fmt.decode_positions  # type: ignore[no-any-return]


def _adjacent(values: tuple[bytes, ...], decode: Callable[[bytes], Iterable[int]]) -> bool:
    """Whether the words whose position lists these are stand side by side, in order, somewhere
    in the document: a start p with word i at p + i for every i (whoosh's SpanNear2 with slop 1,
    ordered, mindist 1, which is what a quoted phrase is). A word repeated in the phrase
    ("very very") needs as many consecutive positions."""
    starts: set[int] | None = None
    for i, value in enumerate(values):
        shifted = {p - i for p in decode(value)}
        starts = shifted if starts is None else starts & shifted
        if not starts:
            return False
    return True


def _word_postings(
    sub: Any, fieldname: str, tb: bytes, weighting: Any, wanted: list[int] | None,
    allowed: Any, offset: int, seen: dict[Any, Any] | None = None,
) -> dict[int, tuple[float, bytes]]:
    """Segment docnum -> (BM25F score, positions value) of one word, for the documents
    `allowed` admits (global docnums) or, with `wanted` (sorted segment docnums), for those
    only; posting blocks holding none of `wanted` are not decoded."""
    from whoosh.codec.whoosh3 import W3LeafMatcher
    from whoosh.matching.wrappers import FilterMatcher

    m = sub.postings(fieldname, tb, weighting=weighting)
    deleted: Any = ()
    if type(m) is FilterMatcher and m._exclude:
        deleted, m = m._ids, m.child
    scorer = m.scorer if type(m) is W3LeafMatcher else None
    out: dict[int, tuple[float, bytes]] = {}
    if type(scorer) is not _LengthTableScorer:  # another codec or scorer: whoosh's own calls
        keep = None if wanted is None else set(wanted)
        while m.is_active():
            d = m.id()
            if (keep is None or d in keep) and d not in deleted and (
                    allowed is None or d + offset in allowed):
                out[d] = (m.score(), m.value())
            m.next()
        return out
    idf, k1p1, norm = scorer.idf, scorer._k1p1, scorer._norm
    lengths, nlen = scorer._lengths, scorer._nlengths
    lo = 0
    while m.is_active():
        hi = m._maxid
        if wanted is not None:
            at = bisect.bisect_left(wanted, lo)
            upto = bisect.bisect_right(wanted, hi, at)
            lo = hi + 1
            if at == upto:
                m._next_block()
                continue
        if m._ids is None:
            _read_ids(m)
            if seen is not None:
                seen[(id(m._postfile), m._dataoffset)] = m._ids
        if m._weights is None:
            m._read_weights()
        if m._values is None:
            m._read_values()
        ids, weights, values = m._ids, m._weights, m._values
        first, count = m._i, m._blocklength
        if wanted is not None:
            for d in wanted[at:upto]:
                i = bisect.bisect_left(ids, d, first, count)
                if i < count and ids[i] == d and d not in deleted:
                    tf = weights[i]
                    nm = norm[lengths[d] if d < nlen else 0]
                    out[d] = (idf * ((tf * k1p1) / (tf + nm)), values[i])
        else:
            for i in range(first, count):
                d = ids[i]
                if d in deleted or (allowed is not None and d + offset not in allowed):
                    continue
                tf = weights[i]
                nm = norm[lengths[d] if d < nlen else 0]
                out[d] = (idf * ((tf * k1p1) / (tf + nm)), values[i])
        m._next_block()
    return out


def _phrase_docs(
    searcher: Any, phrase: _Phrase, allowed: Any
) -> dict[int, tuple[float, tuple[bytes, ...]]]:
    """Global docnum -> (the phrase's score if it is there, each word's positions) for every
    document `allowed` admits that holds all of the phrase's words: the candidates, not yet
    checked for adjacency. The score is whoosh's for a matching document (the sum of its
    words' BM25F scores, `_tree_sum`); the rarest word is read first and the others only in
    the posting blocks that hold its documents."""
    out: dict[int, tuple[float, tuple[bytes, ...]]] = {}
    fn = phrase.fieldname
    field = searcher.schema[fn]
    weighting = searcher.weighting
    seen = searcher.__dict__.get("_pcp_block_ids")
    for sub, offset in searcher.leaf_searchers():
        reader = sub.reader()
        try:
            tbs = [field.to_bytes(w) for w in phrase.words]
        except ValueError:
            return out
        if any((fn, tb) not in reader for tb in tbs):
            continue  # as whoosh's Phrase matcher: a missing word, no match in this segment
        distinct = sorted(dict.fromkeys(tbs), key=lambda tb: reader.doc_frequency(fn, tb))
        postings: dict[bytes, dict[int, tuple[float, bytes]]] = {}
        wanted: list[int] | None = None
        for tb in distinct:
            got = _word_postings(sub, fn, tb, weighting, wanted, allowed, offset, seen)
            wanted = sorted(got) if wanted is None else [d for d in wanted if d in got]
            postings[tb] = got
            if not wanted:
                break
        if not wanted:
            continue
        if len(tbs) == 2:  # the usual phrase: its tree is a + b
            first, second = postings[tbs[0]], postings[tbs[1]]
            for d in wanted:
                sa, va = first[d]
                sb, vb = second[d]
                out[d + offset] = (sa + sb, (va, vb))
            continue
        for d in wanted:
            per = [postings[tb][d] for tb in tbs]
            out[d + offset] = (_tree_sum([score for score, _ in per]),
                               tuple(value for _, value in per))
    return out


def _accumulate_filter(searcher: Any, leaf: _Filter, acc: dict[int, float], allowed: Any) -> None:
    """Each document `allowed` admits that holds the unscored term is a match: it gets 0.0
    added (whoosh's zero-boost matcher scores it 0.0 in the OR's sum)."""
    get = acc.get
    for g in _term_docs(searcher, leaf.fieldname, leaf.text) or ():
        if allowed is None or g in allowed:
            acc[g] = get(g, 0.0) + 0.0


def _accumulate_phrase(
    searcher: Any, phrase: _Phrase, acc: dict[int, float], allowed: Any
) -> None:
    """Add the phrase's score to `acc` for each document `allowed` admits that holds it."""
    decode = _decoder(searcher, phrase.fieldname)
    get = acc.get
    for g, (score, values) in _phrase_docs(searcher, phrase, allowed).items():
        if _adjacent(values, decode):
            acc[g] = get(g, 0.0) + score


def _rank_phrases(
    searcher: Any, leaves: list[Leaf], allowed: Any, limit: int
) -> list[tuple[int, float]]:
    """The exact top `limit` of an OR of terms and exact phrases, as whoosh ranks it (each
    matching leaf's score added in the leaves' order), checking phrases only where it matters.

    A phrase's score on a page does not depend on where its words stand, only whether they
    stand together. So every candidate (a page holding some term, or all of a phrase's words)
    gets an upper bound, its score if each of its phrases holds; candidates are taken best
    bound first (ties by docnum), their phrases checked from the stored positions, and the
    search stops once the `limit`-th best checked score is above the next bound. A bound is
    never below the checked score (the same non-negative terms added in the same order, some
    left out), so nothing left unchecked could rank. whoosh's span matcher instead decodes and
    compares the positions of every page holding all the words (`"time year"`: nearly all).
    """
    parts: list[dict[int, float]] = []
    acc: dict[int, float]
    checks: list[tuple[dict[int, tuple[bytes, ...]], Callable[[bytes], Iterable[int]]] | None]
    checks = []
    for leaf in leaves:
        if type(leaf) is _Phrase:
            docs = _phrase_docs(searcher, leaf, allowed)
            parts.append({g: score for g, (score, _) in docs.items()})
            checks.append(({g: values for g, (_, values) in docs.items()},
                           _decoder(searcher, leaf.fieldname)))
        elif type(leaf) is _Filter:
            acc = {}
            _accumulate_filter(searcher, leaf, acc, allowed)
            parts.append(acc)
            checks.append(None)
        else:
            acc = {}
            _accumulate(searcher, [leaf], acc, allowed)
            parts.append(acc)
            checks.append(None)
    if any(score < 0 for part in parts for score in part.values()):
        # (BM25F never scores below 0; were it ever to, a bound would not be one)
        total: dict[int, float] = {}
        for leaf in leaves:
            _accumulate(searcher, [leaf], total, allowed)
        return _top(total, limit)
    candidates: set[int] = set()
    for part in parts:
        candidates.update(part)
    bounds = []
    for g in candidates:
        bound = 0.0
        for part in parts:
            score = part.get(g)
            if score is not None:
                bound = bound + score
        bounds.append((-bound, g))
    heapq.heapify(bounds)
    best: list[tuple[float, int]] = []  # min-heap of (score, -docnum): the worst kept first
    while bounds:
        if len(best) >= limit and -bounds[0][0] < best[0][0]:
            break  # nothing left can reach the top `limit`
        _, g = heapq.heappop(bounds)
        score, matched = 0.0, False
        for part, check in zip(parts, checks, strict=True):
            got = part.get(g)
            if got is None or (check is not None and not _adjacent(check[0][g], check[1])):
                continue
            score, matched = score + got, True
        if not matched:
            continue
        item = (score, -g)
        if len(best) < limit:
            heapq.heappush(best, item)
        elif item > best[0]:
            heapq.heapreplace(best, item)
    return sorted(((-neg, score) for score, neg in best), key=lambda kv: (-kv[1], kv[0]))


def _top(acc: dict[int, float], limit: int) -> list[tuple[int, float]]:
    """The `limit` best (docnum, score), score descending, then docnum ascending.

    Same as sorting every item by (-score, docnum), but the cut-off score is found on the bare
    floats first, so only the few items at or above it are ever sorted as tuples.
    """
    if len(acc) <= limit:
        return sorted(acc.items(), key=lambda kv: (-kv[1], kv[0]))
    cut = heapq.nlargest(limit, acc.values())[-1]
    best = [kv for kv in acc.items() if kv[1] >= cut]
    best.sort(key=lambda kv: (-kv[1], kv[0]))
    return best[:limit]


def _matched_terms(
    searcher: Any, docnums: list[int], asked: set[tuple[str, Any]]
) -> dict[int, list[tuple[str, Any]]]:
    """docnum -> the asked (field, term) pairs that document holds, for the hits only.

    Reads only the posting blocks whose docnum range holds a hit, and a block the ranking
    already decoded in this search is not decoded again (its docnums are kept by block)."""
    from whoosh.codec.whoosh3 import W3LeafMatcher
    from whoosh.matching.wrappers import FilterMatcher

    out: dict[int, list[tuple[str, Any]]] = {}
    if not docnums:
        return out
    targets = sorted(set(docnums))
    seen = searcher.__dict__.get("_pcp_block_ids") or {}
    schema = searcher.schema
    segments = []
    for sub, offset in searcher.leaf_searchers():
        end = offset + sub.reader().doc_count_all()
        local = [g - offset for g in targets if offset <= g < end]
        if local:
            segments.append((sub.reader(), offset, local))
    for fn, text in sorted(asked, key=repr):
        try:
            tb = schema[fn].to_bytes(text) if fn in schema else None
        except Exception:  # e.g. a term whoosh cannot turn into bytes for this field
            continue
        if tb is None:
            continue
        for reader, offset, local in segments:
            if (fn, tb) not in reader:
                continue
            m = reader.postings(fn, tb)
            if type(m) is FilterMatcher:  # deletions: a hit is never a deleted document
                m = m.child
            held: list[int] = []
            if type(m) is W3LeafMatcher:
                lo = 0
                while m.is_active():
                    hi = m._maxid
                    at = bisect.bisect_left(local, lo)
                    upto = bisect.bisect_right(local, hi, at)
                    lo = hi + 1
                    if at != upto:
                        ids = seen.get((id(m._postfile), m._dataoffset))
                        if ids is None:
                            _read_ids(m)
                            ids = m._ids
                        count = len(ids)
                        for d in local[at:upto]:
                            i = bisect.bisect_left(ids, d)
                            if i < count and ids[i] == d:
                                held.append(d)
                    if upto == len(local):
                        break
                    m._next_block()
            else:
                want = set(local)
                held = [d for d in m.all_ids() if d in want]
            for d in held:
                out.setdefault(d + offset, []).append((fn, text))
    return out


def _chain(head: list[IndexDoc], rest: Iterator[IndexDoc]) -> Iterator[IndexDoc]:
    yield from head
    yield from rest

