"""The tantivy-backed SearchIndex (the default engine). The only module that imports
tantivy.

Both engines see the same terms and the same query: pages are analysed by pcp's own
`text.analyze` (stems, stop words, CJK bigrams) and handed to tantivy as whitespace-separated
terms (tantivy's `whitespace` tokenizer neither lowercases nor drops long tokens, so a term is
indexed exactly as pcp wrote it, at the position pcp gave it); a query is parsed by the same
parser the whoosh engine uses and the parsed tree translated node by node, so `id:`, `type:`,
`tag:` ... terms are score-less filters on both, phrases are phrases, and AND/OR/NOT mean the
same. (A query of plain words skips the parser: `text.plain_query_terms` gives the terms its
parse would hold, and whoosh is not imported at all.) Rankings are tantivy's BM25, not whoosh's
BM25F: the set of pages a query returns is the same, the order among them may differ.

Layout of the index folder (the store's `.pcp/index/`), the same shape as the whoosh engine's:

    meta.json        engine, format version, current generation, built flag, doc count, the size
                     of every file of the generation, and the caller's own key/values
    WRITELOCK        held (flock) by whoever rebuilds or updates; readers never take it
    g-<hex>/         one tantivy index ("generation"); a rebuild writes a new one beside the old
                     and switches meta.json atomically, so a crashed rebuild changes nothing
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import itertools
import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import tantivy as T

from pcp_cli.errors import UsageError
from pcp_cli.index.generations import GenerationIndex, fatal, writer_busy
from pcp_cli.index.text import index_terms, matched_fields, plain_query_terms
from pcp_cli.index.types import (
    ENGINE_FORMATS,
    IndexDoc,
    IndexFilter,
    IndexHit,
    IndexStamp,
    filter_axes,
    normalize_score,
    time_bounds,
)
from pcp_cli.index.workers import Workers, available, serve

ENGINE = "tantivy"
ENGINE_FORMAT = ENGINE_FORMATS[ENGINE]
TAG_BOOST = 1.5  # the whoosh engine's field boost on `tag`
HIT_FIELDS = ("title", "body", "tag")
# tantivy's writer: one indexing thread per core is the default; the heap is split among them.
WRITER_HEAP = 256_000_000
UPDATE_HEAP = 50_000_000
# A rebuild of at least this many documents analyses their text in worker processes.
PARALLEL_THRESHOLD = 2000
ANALYSIS_WORKERS = 2
ANALYSIS_BATCH = 256
ANALYSIS_AHEAD = 4  # batches per worker queued or in work
# tantivy's indexing threads during a rebuild: one leaves the other core to the analysis
# workers (and two cost ~30% more CPU for the same index: more, smaller segments).
REBUILD_THREADS = 1
# The fields of the schema that hold exact values (one raw term each).
EXACT_FIELDS = ("path", "page_id", "revision_id", "type", "namespace", "ns_tree", "origin",
                "sensitivity", "lifecycle", "review", "timestamp")


def make_schema() -> Any:
    sb = T.SchemaBuilder()
    for name in EXACT_FIELDS:
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic",
                          fast=name == "timestamp")
    # `body` holds the title too (as on the whoosh engine): plain words search body and tag.
    sb.add_text_field("title", tokenizer_name="whitespace", index_option="position")
    sb.add_text_field("body", tokenizer_name="whitespace", index_option="position")
    sb.add_text_field("tag", tokenizer_name="raw", index_option="freq")
    # Everything a hit reports, as one small JSON list (bodies are never stored); stored only
    # (as a text field it was indexed too: one useless unique term per page).
    sb.add_bytes_field("hit", stored=True, indexed=False)
    return sb.build()


def _ns_tree(namespace: str) -> list[str]:
    parts = namespace.split(":")
    return [":".join(parts[: i + 1]) for i in range(len(parts))]


def _tag_terms(tags: Iterable[str]) -> list[str]:
    """The terms the whoosh engine's comma-separated, lowercased `tag` field holds."""
    out = []
    for tag in tags:
        for part in tag.replace(",", " ").split(","):
            term = part.strip().lower()
            if term:
                out.append(term)
    return out


def _analysed(doc: IndexDoc) -> tuple[str, str]:
    """(title terms, body terms): the title is searched alone, and as part of the body."""
    return _analyse(doc.title, doc.body)


def _analyse(title: str, body: str) -> tuple[str, str]:
    # the body field's terms are those of "title\nbody" (no token spans the line break)
    title_terms = index_terms(title)
    body_terms = index_terms(body)
    if title_terms and body_terms:
        return title_terms, f"{title_terms} {body_terms}"
    return title_terms, title_terms or body_terms


def _analyse_batch(texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`_analysed` for a batch of (title, body), in a worker process of a large rebuild."""
    return [_analyse(title, body) for title, body in texts]


def _analysis_worker(jobs: Any, results: Any) -> None:
    serve(_analyse_batch, jobs, results)


def _analysed_in(pool: Workers, docs: Iterable[IndexDoc]
                 ) -> Iterator[tuple[IndexDoc, tuple[str, str]]]:
    """Each document with its analysed text, in order, the analysis (pure Python, most of a
    rebuild's CPU) done by `pool`'s workers while this process reads the store; the
    documents themselves are always read here (the store's catalog connection belongs to
    this thread)."""
    held: deque[list[IndexDoc]] = deque()

    def batches() -> Iterator[list[tuple[str, str]]]:
        it = iter(docs)
        while batch := list(islice(it, ANALYSIS_BATCH)):
            held.append(batch)
            yield [(doc.title, doc.body) for doc in batch]

    for analysed in pool.map(batches(), ahead=ANALYSIS_AHEAD):
        yield from zip(held.popleft(), analysed, strict=True)


def _document(doc: IndexDoc, analysed: tuple[str, str] | None = None) -> Any:
    title_terms, body_terms = analysed or _analysed(doc)
    d = T.Document()
    origin = doc.origin or "generated"
    d.add_text("path", doc.path)
    d.add_text("page_id", doc.page_id)
    d.add_text("revision_id", doc.revision_id)
    d.add_text("type", doc.type)
    d.add_text("namespace", doc.namespace)
    for ns in _ns_tree(doc.namespace):
        d.add_text("ns_tree", ns)
    d.add_text("origin", origin)
    d.add_text("sensitivity", doc.sensitivity)
    d.add_text("lifecycle", doc.lifecycle_status)
    d.add_text("review", doc.review_status)
    d.add_text("timestamp", doc.timestamp)
    d.add_text("title", title_terms)
    d.add_text("body", body_terms)
    for tag in _tag_terms(doc.tags):
        d.add_text("tag", tag)
    d.add_bytes("hit", json.dumps([
        doc.page_id, doc.path, doc.revision_id, doc.type, doc.namespace, origin,
        doc.sensitivity, doc.lifecycle_status, doc.review_status, doc.timestamp, doc.mtime_ns,
        doc.title], ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return d


@contextlib.contextmanager
def _committing(writer: Any) -> Iterator[Any]:
    """Commit what the block wrote (and wait for tantivy's merges); roll back on any error."""
    try:
        yield writer
        writer.commit()
        writer.wait_merging_threads()
    except BaseException:
        with contextlib.suppress(BaseException):
            writer.rollback()
        raise


# ------------------------------------------------------------------------------- queries
def _parse(query: str) -> Any:
    """The whoosh query tree for `query`, exactly as the whoosh engine parses it: same syntax,
    same reading of text, same field analysis. (The parser is whoosh's, a core dependency.)"""
    from pcp_cli.index import _whoosh as W
    from pcp_cli.index.query import configure_parser, parse

    parser = _PARSER.get("parser")
    if parser is None:
        from whoosh.qparser import MultifieldParser, OrGroup

        parser = configure_parser(MultifieldParser(list(W.DEFAULT_FIELDS), W.make_schema(),
                                                   group=OrGroup))
        _PARSER["parser"] = parser
    return parse(parser, query)


_PARSER: dict[str, Any] = {}


def _regex_escape(text: str) -> str:
    # tantivy's regex (Rust `regex` syntax) accepts a backslash before any ASCII punctuation.
    return "".join("\\" + c if not c.isalnum() and c.isascii() else c for c in text)


class _Translator:
    """Turns a parsed whoosh query into a tantivy query over the same terms."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        self.schema = index._schema
        self.asked: set[tuple[str, str]] = set()

    def term(self, field: str, text: Any) -> Any:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        self.asked.add((field, text))
        return T.Query.term_query(self.schema, field, text)

    def words(self, pairs: list[tuple[str, str]]) -> Any:
        """What `self(parsed)` gives for the parse of a plain-word query whose terms are
        `pairs` (`plain_query_terms`): one term, or an OR of them."""
        nodes = [self._term_node(field, text) for field, text in pairs]
        if len(nodes) == 1:
            return nodes[0]
        return T.Query.boolean_query([(T.Occur.Should, node) for node in nodes])

    def _term_node(self, field: str, text: Any) -> Any:
        node = self.term(field, text)
        return T.Query.boost_query(node, TAG_BOOST) if field == "tag" else node

    def __call__(self, q: Any) -> Any:
        from whoosh import query as Q

        boost = getattr(q, "boost", 1.0)
        if boost == 0.0:  # an exact-value field term: matches, adds nothing to the score
            return T.Query.const_score_query(self._node(q, Q), 0.0)
        node = self._node(q, Q)
        if boost != 1.0 and not isinstance(q, Q.Every):
            return T.Query.boost_query(node, boost)
        return node

    def _node(self, q: Any, Q: Any) -> Any:  # noqa: N803 - whoosh.query, as the engine names it
        t = type(q)
        if t is Q.Term:
            return self._term_node(q.fieldname, q.text)
        if t is Q.Phrase:
            words = [w.decode("utf-8") if isinstance(w, bytes) else w for w in q.words]
            for w in words:
                self.asked.add((q.fieldname, w))
            if len(words) == 1:
                return T.Query.term_query(self.schema, q.fieldname, words[0])
            return T.Query.phrase_query(self.schema, q.fieldname, words,
                                        slop=max(0, int(q.slop) - 1))
        if t in (Q.And, Q.Or, Q.DefaultOr):
            occur = T.Occur.Must if t is Q.And else T.Occur.Should
            subs = [(occur, self(sub)) for sub in q.subqueries]
            if not subs:
                return T.Query.empty_query()
            return T.Query.boolean_query(subs)
        if isinstance(q, Q.AndNot):
            return T.Query.boolean_query([(T.Occur.Must, self(q.a)),
                                          (T.Occur.MustNot, self._unscored(q.b))])
        if isinstance(q, Q.AndMaybe):
            return T.Query.boolean_query([(T.Occur.Must, self(q.a)), (T.Occur.Should, self(q.b))])
        if isinstance(q, Q.Require):
            return T.Query.boolean_query([
                (T.Occur.Must, self(q.a)),
                (T.Occur.Must, T.Query.const_score_query(self(q.b), 0.0))])
        if t is Q.Not:
            return T.Query.boolean_query([(T.Occur.Must, T.Query.all_query()),
                                          (T.Occur.MustNot, self._unscored(q.query))])
        if t is Q.Prefix:
            terms = self.index._terms_with_prefix(q.fieldname, _text(q.text))
            return self._const_set(q.fieldname, terms)
        if t is Q.Wildcard:
            pattern = "".join(".*" if c == "*" else "." if c == "?" else _regex_escape(c)
                              for c in _text(q.text))
            return T.Query.const_score_query(
                T.Query.regex_query(self.schema, q.fieldname, pattern), 1.0)
        if t is Q.TermRange:
            terms = self.index._terms_in_range(
                q.fieldname, _text(q.start) if q.start is not None else None,
                _text(q.end) if q.end is not None else None, q.startexcl, q.endexcl)
            return self._const_set(q.fieldname, terms)
        if t is Q.Every:
            return T.Query.all_query()
        if q is Q.NullQuery or isinstance(q, Q.NullQuery.__class__):
            return T.Query.empty_query()
        raise UsageError(f"The tantivy engine cannot run this part of the query: {q}",
                         hint="Rephrase it with words, phrases, field:value, AND, OR, NOT.")

    def _unscored(self, q: Any) -> Any:
        return T.Query.const_score_query(self(q), 0.0)

    def _const_set(self, field: str, terms: list[str]) -> Any:
        if not terms:
            return T.Query.empty_query()
        return T.Query.const_score_query(T.Query.term_set_query(self.schema, field, terms), 1.0)


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _is_null(q: Any) -> bool:
    from whoosh import query as Q

    return q is Q.NullQuery or isinstance(q, Q.NullQuery.__class__)


# ------------------------------------------------------------------------------- the index
class SearchIndex(GenerationIndex):
    """A full-text index of pages on tantivy, opened on a folder it owns. Not thread-safe;
    one per thread. The same interface and promises as the whoosh engine's SearchIndex, and
    the same folder shape (`generations.GenerationIndex`).
    """

    ENGINE = ENGINE
    FORMAT = ENGINE_FORMAT

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self._schema: Any = None
        self._cache: dict[str, Any] = {}

    # ---------------------------------------------------------------- opening and writing

    def _open(self, generation: Path) -> tuple[Any, int]:
        ix = T.Index.open(str(generation))
        ix.config_reader(reload_policy="manual")
        count = ix.searcher().num_docs
        self._schema = ix.schema
        return ix, count

    def _build(self, generation: Path, docs: Iterable[IndexDoc],
               progress: Callable[[int], None] | None, tuned: bool) -> tuple[int, int]:
        """Above PARALLEL_THRESHOLD documents (with fork and more than one core), the text is
        analysed in worker processes, forked before tantivy's writer starts its threads. The
        first documents are analysed here before the fork, so that the workers inherit the
        terms of most of the vocabulary (stemming is most of the analysis of a word seen
        first) instead of each stemming it again."""
        it = iter(docs)
        head = list(islice(it, PARALLEL_THRESHOLD))
        with contextlib.ExitStack() as stack:
            analysed: Iterable[tuple[IndexDoc, tuple[str, str]]]
            if len(head) >= PARALLEL_THRESHOLD and available(ANALYSIS_WORKERS):
                first = [(doc, _analysed(doc)) for doc in head]
                pool = stack.enter_context(Workers(
                    _analysis_worker, n=ANALYSIS_WORKERS,
                    backlog=ANALYSIS_AHEAD * ANALYSIS_WORKERS))
                analysed = itertools.chain(first, _analysed_in(pool, it))
            else:
                analysed = ((doc, _analysed(doc)) for doc in itertools.chain(head, it))
            ix = T.Index(make_schema(), path=str(generation))
            writer = ix.writer(WRITER_HEAP, REBUILD_THREADS)
            n = 0
            with _committing(writer):
                for doc, terms in analysed:
                    writer.add_document(_document(doc, terms))
                    n += 1
                    if progress is not None and n % 1000 == 0:
                        progress(n)
        ix.reload()
        count = ix.searcher().num_docs
        del writer, ix
        return n, count

    def _apply(self, docs: Iterable[IndexDoc], paths: Iterable[str]) -> int:
        searcher = self._searcher()
        try:
            writer = self._ix.writer(UPDATE_HEAP, 1)
        except BaseException as exc:
            if fatal(exc):
                raise
            raise writer_busy() from exc
        n = 0
        with _committing(writer):
            for doc in docs:
                writer.delete_documents_by_term("path", doc.path)
                writer.add_document(_document(doc))
                n += 1
            for path in paths:
                if searcher.doc_freq("path", path):
                    writer.delete_documents_by_term("path", path)
                    n += 1
        del writer
        self._ix.reload()
        self._cache.clear()
        return n

    def _count(self) -> int:
        return int(self._ix.searcher().num_docs)

    def doc_count(self) -> int:
        self._require()
        return int(self._searcher().num_docs)

    # ---------------------------------------------------------------- reading

    def _searcher(self) -> Any:
        s = self._cache.get("searcher")
        if s is None:
            s = self._cache["searcher"] = self._ix.searcher()
        return s

    def _refresh(self) -> None:
        """Another process (or another SearchIndex on this folder) wrote: read what it wrote."""
        if self._stat_meta() == self._meta_stat:
            return
        self._load()
        self._require()

    def _terms(self, field: str) -> list[str]:
        """Every term of an exact-value field, sorted (kept until the index changes)."""
        key = f"terms:{field}"
        got = self._cache.get(key)
        if got is None:
            got = sorted(t for t, _ in self._searcher().terms_with_prefix(field, ""))
            self._cache[key] = got
        return got

    def _terms_with_prefix(self, field: str, prefix: str) -> list[str]:
        return [t for t, _ in self._searcher().terms_with_prefix(field, prefix)]

    def _terms_in_range(self, field: str, start: str | None, end: str | None,
                        startexcl: bool = False, endexcl: bool = False) -> list[str]:
        terms = self._terms(field)
        lo, hi = 0, len(terms)
        if start is not None:
            lo = (bisect.bisect_right if startexcl else bisect.bisect_left)(terms, start)
        if end is not None:
            hi = (bisect.bisect_left if endexcl else bisect.bisect_right)(terms, end)
        return terms[lo:hi]

    def _filter_clauses(self, f: IndexFilter) -> list[tuple[Any, Any]] | None:
        """The filter as score-less boolean clauses, or None when it admits nothing."""
        schema = self._schema
        clauses: list[tuple[Any, Any]] = []
        for field, allowed in filter_axes(f):
            if allowed is None:
                continue
            if not allowed:
                return None
            clauses.append((T.Occur.Must, T.Query.term_set_query(schema, field, list(allowed))))
        bounds = time_bounds(f)
        if bounds is not None:
            stamps = self._terms_in_range("timestamp", *bounds)
            if not stamps:
                return None
            clauses.append((T.Occur.Must, T.Query.term_set_query(schema, "timestamp", stamps)))
        if f.page_ids is not None:
            if not f.page_ids:
                return None
            clauses.append((T.Occur.Must,
                            T.Query.term_set_query(schema, "page_id", sorted(f.page_ids))))
        if f.exclude_types:
            clauses.append((T.Occur.MustNot,
                            T.Query.term_set_query(schema, "type", list(f.exclude_types))))
        if f.exclude_page_ids:
            clauses.append((T.Occur.MustNot, T.Query.term_set_query(
                schema, "page_id", sorted(f.exclude_page_ids))))
        return clauses

    def _parse(self, query: str) -> Any:
        """The parsed (whoosh) query for `query`, for tests and debugging. Raises UsageError."""
        return _parse(query)

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
        `explain` False: the hits' `matched_fields` are left empty, for `explain` to fill in
        for the hits a caller serves (working them out costs more than the search when a
        tie-break reads thousands of hits to serve ten). Raises UsageError for a malformed
        query, IndexNeedsRebuild when the index cannot be trusted.
        """
        self._check_search(sort, limit)
        self._require()
        with self._reading():
            built = self._query(query, filter)
            if built is None:
                return []
            full, translate = built
            searcher = self._searcher()
            if sort == "relevance":
                result = searcher.search(full, limit, count=False)
                ranked = [(addr, float(score)) for score, addr in result.hits]
            else:
                result = searcher.search(full, limit, count=False, order_by_field="timestamp",
                                         order=T.Order.Desc if sort == "newest" else T.Order.Asc)
                ranked = [(addr, 0.0) for _, addr in result.hits]
            # read in the order they are stored: neighbours share a compressed block
            order = sorted(range(len(ranked)),
                           key=lambda i: (ranked[i][0].segment_ord, ranked[i][0].doc))
            raw_docs: list[Any] = [None] * len(ranked)
            for i in order:
                raw_docs[i] = searcher.doc(ranked[i][0])["hit"][0]
            stored = [json.loads(doc) for doc in raw_docs]
            matched = self._matched(translate.asked, [s[1] for s in stored]) if explain else {}
            hits = []
            for (_, raw), hit in zip(ranked, stored, strict=True):
                hits.append(IndexHit(
                    page_id=hit[0], path=hit[1], revision_id=hit[2], type=hit[3],
                    namespace=hit[4], origin=hit[5], sensitivity=hit[6],
                    lifecycle_status=hit[7], review_status=hit[8], timestamp=hit[9],
                    mtime_ns=hit[10], score_raw=raw, score=normalize_score(raw),
                    matched_fields=matched_fields(matched.get(hit[1], ()), hit[11])
                    if explain else (),
                    title=hit[11],
                ))
        return hits

    def scores(self, query: str, *, filter: IndexFilter | None = None,  # noqa: A002
               limit: int = 10) -> list[float]:
        """The raw relevance scores of `search(query, filter=filter, limit=limit)`'s hits, best
        first, without reading a stored document: what deciding how many hits to fetch needs
        (`tiebreak.settled`)."""
        self._check_search("relevance", limit)
        self._require()
        with self._reading():
            built = self._query(query, filter)
            if built is None:
                return []
            result = self._searcher().search(built[0], limit, count=False)
            return [float(score) for score, _ in result.hits]

    def explain(self, query: str, hits: list[IndexHit]) -> list[IndexHit]:
        """`hits` (from `search(..., explain=False)` for `query`) with their `matched_fields`
        worked out, as `search` would have given them."""
        if not hits:
            return hits
        self._require()
        with self._reading():
            built = self._query(query, None)
            if built is None:
                return hits
            matched = self._matched(built[1].asked, [h.path for h in hits])
        return [dataclasses.replace(h, matched_fields=matched_fields(
            matched.get(h.path, ()), h.title)) for h in hits]

    def _query(self, query: str, flt: IndexFilter | None) -> tuple[Any, _Translator] | None:
        """The tantivy query for `query` among what `flt` admits, and its translator (which
        knows the terms asked); None when nothing can match. Call within `_reading()`."""
        plain = plain_query_terms(query)  # plain words: their terms, without whoosh's parser
        parsed = _parse(query) if plain is None else None
        if plain is None and _is_null(parsed):
            return None  # only stop words: nothing to look for
        self._refresh()
        clauses = self._filter_clauses(flt or IndexFilter())
        if clauses is None:
            return None
        translate = _Translator(self)
        user_q = translate(parsed) if plain is None else translate.words(plain)
        musts = [(T.Occur.Must, T.Query.const_score_query(q, 0.0))
                 for occur, q in clauses if occur == T.Occur.Must]
        nots = [(occur, q) for occur, q in clauses if occur != T.Occur.Must]
        full = T.Query.boolean_query([(T.Occur.Must, user_q), *musts, *nots]) \
            if clauses else user_q
        return full, translate

    def _matched(self, asked: set[tuple[str, str]], paths: list[str]) -> dict[str, list[Any]]:
        """path -> the asked (field, term) pairs that page holds, for the hits only."""
        out: dict[str, list[Any]] = {}
        if not paths or not asked:
            return out
        searcher = self._searcher()
        among = T.Query.term_set_query(self._schema, "path", paths)
        for fn, text in sorted(asked):
            if not searcher.doc_freq(fn, text):
                continue
            q = T.Query.boolean_query([(T.Occur.Must, T.Query.term_query(self._schema, fn, text)),
                                       (T.Occur.Must, among)])
            for _, addr in searcher.search(q, len(paths), count=False).hits:
                path = json.loads(searcher.doc(addr)["hit"][0])[1]
                out.setdefault(path, []).append((fn, text))
        return out

    def stamps(self) -> dict[str, IndexStamp]:
        """path -> (revision_id, mtime_ns) of every indexed document, to diff with the store."""
        self._require()
        with self._reading():
            self._refresh()
            searcher = self._searcher()
            n = searcher.num_docs
            out = {}
            if n:
                for _, addr in searcher.search(T.Query.all_query(), n, count=False).hits:
                    hit = json.loads(searcher.doc(addr)["hit"][0])
                    out[hit[1]] = IndexStamp(hit[2], hit[10])
            return out

    def close(self) -> None:
        self._cache.clear()
        self._ix = None
        self._schema = None




__all__ = ["ENGINE", "SearchIndex", "make_schema"]

