"""Text analysis shared by indexing, querying and snippets. Pure Python; whoosh-free.

English words are lowercased, stop words dropped and Porter-stemmed, so "running" finds
"runs". Chinese, Japanese and Korean are not split by spaces, so each CJK run becomes
overlapping character bigrams at consecutive positions ("即适者生存" -> 即适 适者 者生 生存);
a CJK query goes through the same analysis and becomes a phrase of bigrams, which finds a word
anywhere inside a sentence. A CJK run of one character is kept as a unigram.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from functools import lru_cache

from pcp_cli.errors import UsageError

_CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0002ffff"  # CJK extensions B..
)
CJK_RE = re.compile(f"[{_CJK_RANGES}]+")
# A CJK run, or a run of word characters that are not CJK (and not "_").
TOKEN_RE = re.compile(f"(?P<cjk>[{_CJK_RANGES}]+)|(?P<word>[^\\W_{_CJK_RANGES}]+)")

MIN_WORD = 2  # shorter Latin tokens are dropped (same on both sides)

# whoosh's English stop list, copied so that this module stays whoosh-free.
STOP_WORDS = frozenset(
    "a an and are as at be by can for from have if in is it may not of on or tbd that "  # noqa: SIM905
    "the this to us we when will with yet you your".split()
)


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    # Porter2 (Snowball English): whoosh's older porter module stems "running" to "runn".
    from whoosh.lang.porter2 import stem as porter  # small, pure module

    return porter(word)


def is_cjk(text: str) -> bool:
    return CJK_RE.search(text) is not None


def analyze(text: str) -> Iterator[tuple[str, int, int, int]]:
    """Yield (term, position, start_char, end_char) for indexing and querying."""
    pos = 0
    for m in TOKEN_RE.finditer(text):
        run = m.group()
        start = m.start()
        if m.lastgroup == "cjk":
            if len(run) == 1:
                yield run, pos, start, start + 1
                pos += 1
                continue
            for i in range(len(run) - 1):
                yield run[i : i + 2], pos, start + i, start + i + 2
                pos += 1
        else:
            word = run.lower()
            if len(word) < MIN_WORD or word in STOP_WORDS:
                continue
            yield stem(word), pos, start, m.end()
            pos += 1


# -- the fast path of indexing ------------------------------------------------------------
# `analyze` is the definition; indexing (a rebuild analyses every page) computes the same
# terms faster. A text without CJK is split more simply into the same tokens (TOKEN_RE's word
# runs; on ASCII text, the runs of [a-z0-9] of the lowercased text), and each distinct word's
# term ("" when dropped) is computed once and remembered: a rebuild's vocabulary is small
# beside its token count. tests/index/test_engines.py checks `index_terms` and `positions`
# against `analyze` on arbitrary text.
_PLAIN_WORD_RE = re.compile(r"[^\W_]+")
# ASCII text: every character but a letter or digit becomes a space, then str.split() (twice
# as fast as a regex).
_ASCII_SPACES = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})
_TERM_OF: dict[str, str] = {}  # word as split -> its term, "" when analysis drops it
_TERM_OF_MAX = 500_000


def _term(word: str) -> str:
    low = word.lower()
    return "" if len(low) < MIN_WORD or low in STOP_WORDS else stem(low)


def _learn(words: list[str]) -> None:
    cache = _TERM_OF
    new = set(words).difference(cache)
    if len(cache) + len(new) > _TERM_OF_MAX:
        cache.clear()
        new = set(words)
    for word in new:
        cache[word] = _term(word)


def learn_words(texts: Iterable[str]) -> None:
    """Compute (and remember) the term of every word of `texts` not seen yet: before a large
    rebuild forks its workers, so that each inherits the stems of most of the vocabulary
    instead of computing them again (stemming is most of what a new word costs)."""
    for text in texts:
        if text.isascii():
            words = text.lower().translate(_ASCII_SPACES).split()
        else:
            words = [m.group() for m in TOKEN_RE.finditer(text) if m.lastgroup == "word"]
        if not _TERM_OF.keys() >= set(words):
            _learn(words)


def _word_terms(words: list[str]) -> list[str]:
    """The term of each word ("" where analysis drops it), in order."""
    try:
        return list(map(_TERM_OF.__getitem__, words))
    except KeyError:
        _learn(words)
    try:
        return list(map(_TERM_OF.__getitem__, words))
    except KeyError:  # another thread emptied the full cache meanwhile
        return [_term(word) for word in words]


def index_term_list(text: str) -> list[str]:
    """`terms(text)`, faster (see above)."""
    if text.isascii():
        return list(filter(None, _word_terms(text.lower().translate(_ASCII_SPACES).split())))
    if CJK_RE.search(text) is None:
        return list(filter(None, _word_terms(_PLAIN_WORD_RE.findall(text))))
    out: list[str] = []
    for cjk, word in TOKEN_RE.findall(text):
        if word:
            term = _TERM_OF.get(word)
            if term is None:
                if len(_TERM_OF) >= _TERM_OF_MAX:
                    _TERM_OF.clear()
                term = _TERM_OF[word] = _term(word)
            if term:
                out.append(term)
        elif len(cjk) == 1:
            out.append(cjk)
        else:
            out.extend([cjk[i : i + 2] for i in range(len(cjk) - 1)])
    return out


def index_terms(text: str) -> str:
    """`" ".join(terms(text))`, faster: what the tantivy engine indexes."""
    if text.isascii():
        words = text.lower().translate(_ASCII_SPACES).split()
        return " ".join(filter(None, _word_terms(words)))
    return " ".join(index_term_list(text))


def positions(text: str) -> dict[str, list[int]]:
    """term -> its positions in `text`, in order: what `analyze` yields, grouped by term (for
    the whoosh engine's indexing, where it is the hottest code)."""
    out: dict[str, list[int]] = {}
    get = out.get
    for pos, term in enumerate(index_term_list(text)):
        got = get(term)
        if got is None:
            out[term] = [pos]
        else:
            got.append(pos)
    return out


def terms(text: str) -> list[str]:
    return [t for t, _, _, _ in analyze(text)]


# --------------------------------------------------------------------------------------------
# Reading a query: a question is text. What a person or an assistant types is searched as
# written; syntax is recognised only where it is unambiguous, and nothing is refused for its
# punctuation (docs/search.md, "Query syntax").
#
# Syntax: "double-quoted phrases", AND / OR / NOT between terms, balanced parentheses,
# `field:value` for the fields below, and a `*` ending a word (a prefix). Everything else is
# text: a `?` (never a wildcard), a stray quote or parenthesis, `word:` for a field that does
# not exist (`CS:GO`, `email: me@x.com`), a known field with nothing after it (`title: art`),
# an operator with nothing to join, single quotes, brackets, `^`. Text is then analysed like
# any page (punctuation ignored), so `Rome?` finds what `Rome` finds.
#
# `read_query` writes the query in the dialect of the parser both engines use (whoosh's, set up
# by index/query.configure_parser to know only this syntax); only an empty query is refused.

# query-name -> schema field
FIELD_ALIASES = {
    "title": "title",
    "body": "body",
    "tag": "tag",
    "tags": "tag",
    "type": "type",
    "namespace": "namespace",
    "ns": "namespace",
    "origin": "origin",
    "sensitivity": "sensitivity",
    "lifecycle": "lifecycle",
    "status": "lifecycle",
    "review": "review",
    "id": "page_id",
    "page_id": "page_id",
    "rev": "revision_id",
    "revision_id": "revision_id",
    "date": "timestamp",
    "timestamp": "timestamp",
    "path": "path",
}
QUERY_FIELDS = frozenset(FIELD_ALIASES.values())  # the fields the parser knows, by these names
TEXT_FIELDS = ("title", "body")
_HINT = (
    'Use words, "quoted phrases", field:value (fields: '
    + ", ".join(sorted(FIELD_ALIASES))
    + "), AND, OR, NOT and parentheses."
)
OPERATORS = ("AND", "OR", "NOT")
# Words the parser would read as operators though they are not ours: written in lower case,
# which analysis does anyway.
_FOREIGN_OPERATORS = frozenset(("ANDNOT", "ANDMAYBE", "REQUIRE", "TO"))
_FIELD_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(.*)", re.S)
# Characters that are never syntax in a word: question marks (whoosh's one-character
# wildcards, in four scripts), brackets (ranges), ^ (boosts), double quotes (phrases are split
# out before words are read).
_NOT_SYNTAX = str.maketrans({c: " " for c in "?\u055e\u061f\u1367[]{}^\""})
_WORDISH = re.compile(r"\w")
_EDGE_LEFT = re.compile(r"^\W+")
_EDGE_RIGHT = re.compile(r"\W+$")
_LONE_QUOTE = re.compile(r"(?<!\w)'|'(?!\w)")
_EXACT_TAIL = ".,;:!?"
_STAR_END = re.compile(r"\w\*+\W*$")  # a word ending in * (then punctuation): a prefix


def _clean_word(token: str) -> list[str]:
    """A word as text: no character the parser would read as syntax, no punctuation at its
    edges (`Rome?` -> `Rome`, `(sic)` -> `sic`); a `*` ending it stays (a prefix)."""
    out = []
    for piece in token.translate(_NOT_SYNTAX).split():
        star = _STAR_END.search(piece) is not None
        piece = _EDGE_RIGHT.sub("", _EDGE_LEFT.sub("", piece))
        words = _LONE_QUOTE.sub(" ", piece.replace("*", " ")).split()
        if star and words:
            words[-1] += "*"
        out += [w.lower() if w in OPERATORS or w in _FOREIGN_OPERATORS else w for w in words]
    return out


class _Tok:
    """One token of a read query: kind "word", "phrase", "field", "op", "open", "close"."""

    __slots__ = ("kind", "text", "words")

    def __init__(self, kind: str, text: str, words: tuple[str, ...] = ()) -> None:
        self.kind, self.text, self.words = kind, text, words


def _field_token(name: str, value: str) -> _Tok | None:
    """`name:value` as a field term, or None when it is text (an unknown field; a field with
    no value is the caller's)."""
    field = FIELD_ALIASES.get(name.lower())
    if field is None:
        return None
    if field in TEXT_FIELDS:
        words = _clean_word(value)
        if not words:
            return None
        if len(words) == 1:
            return _Tok("field", f"{field}:{words[0]}", (words[0].rstrip("*"),))
        phrase = " ".join(w.rstrip("*") for w in words)
        return _Tok("field", f'{field}:"{phrase}"', tuple(words))
    core = value.rstrip(_EXACT_TAIL) if not value.endswith("*") else value
    if not core or "'" in core or not _WORDISH.search(core):
        return None
    if core.endswith("*"):
        return _Tok("field", f"{field}:{core}")
    if field == "tag":
        core = core.lower()
    # Exact-value fields: quote the value literally so ids and namespaces with ':' survive.
    return _Tok("field", f"{field}:'{core}'")


def _tokens(query: str) -> list[_Tok]:
    """The query as tokens, every one of them valid syntax or text."""
    parts = query.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one is text
        parts[-2:] = [parts[-2] + " " + parts[-1]]
    toks: list[_Tok] = []
    for i, part in enumerate(parts):
        if i % 2 == 1:  # a quoted phrase
            words = tuple(w for t in part.split() for w in _clean_word(t))
            words = tuple(w.rstrip("*") for w in words if w.rstrip("*"))
            if not words:
                continue
            prev = toks[-1] if toks else None
            if prev is not None and prev.kind == "field?" and parts[i - 1][-1:].isspace():
                _demote(toks)  # `title: "a b"`: the field name is text
                prev = None
            if prev is not None and prev.kind == "field?":
                # `title:"two words"`, `tag:"olive oil"`: the phrase is the field's value
                name = prev.text
                field = FIELD_ALIASES[name.lower()]
                toks.pop()
                if field in TEXT_FIELDS:
                    toks.append(_Tok("field", f'{field}:"{" ".join(words)}"', words))
                else:
                    made = _field_token(name, " ".join(words))
                    toks.extend([made] if made else [_Tok("word", w) for w in words])
                continue
            toks.append(_Tok("phrase", '"' + " ".join(words) + '"', words))
            continue
        last_end = -1
        for m in re.finditer(r"[()]|[^\s()]+", part):
            raw = m.group()
            if toks and toks[-1].kind == "field?":
                if raw == "(" and m.start() == last_end:
                    # `type:(a OR b)`: the group's field
                    toks[-1] = _Tok("open", FIELD_ALIASES[toks[-1].text.lower()] + ":(")
                    last_end = m.end()
                    continue
                _demote(toks)
            last_end = m.end()
            if raw in "()":
                toks.append(_Tok("open" if raw == "(" else "close", raw))
            elif raw in OPERATORS:
                toks.append(_Tok("op", raw))
            elif (m := _FIELD_TOKEN.fullmatch(raw)) is not None and \
                    m.group(1).lower() in FIELD_ALIASES:
                if m.group(2):
                    made = _field_token(m.group(1), m.group(2))
                    toks.extend([made] if made else
                                [_Tok("word", w, (w,)) for w in _clean_word(raw)])
                else:  # `title:` then a phrase or a group: its value; else it is text
                    toks.append(_Tok("field?", m.group(1)))
            else:
                toks.extend(_Tok("word", w, (w.rstrip("*"),)) for w in _clean_word(raw))
    if toks and toks[-1].kind == "field?":
        _demote(toks)
    return _grouped(toks)


def _demote(toks: list[_Tok]) -> None:
    """The last token, a field name with no value (`title: art`), as the word it is."""
    name = toks.pop().text
    toks.extend(_Tok("word", w, (w,)) for w in _clean_word(name))


def _grouped(toks: list[_Tok]) -> list[_Tok]:
    """Balanced parentheses kept, the others dropped (a `field:(` dropped leaves its field
    name as a word); operators kept where they join terms, dropped where they join nothing."""
    stack: list[int] = []
    keep = [True] * len(toks)
    for i, t in enumerate(toks):
        if t.kind == "open":
            stack.append(i)
        elif t.kind == "close":
            if stack:
                stack.pop()
            else:
                keep[i] = False
    for i in stack:
        keep[i] = False
    kept: list[_Tok] = []
    for t, k in zip(toks, keep, strict=True):
        if k:
            kept.append(t)
        elif t.text.endswith(":("):  # a `field:(` with no group after all: the name is text
            kept.extend(_Tok("word", w, (w,)) for w in _clean_word(t.text[:-2]))
    toks = kept
    changed = True
    while changed:  # dropping one token may strand its neighbour: until nothing changes
        changed = False
        out: list[_Tok] = []
        i = 0
        while i < len(toks):
            t = toks[i]
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            if t.kind == "open" and nxt is not None and nxt.kind == "close":  # an empty group
                if t.text.endswith(":("):  # `title:()`: the field name is text
                    out.extend(_Tok("word", w, (w,)) for w in _clean_word(t.text[:-2]))
                i += 2
                changed = True
                continue
            if t.kind == "op":
                prev = out[-1] if out else None
                starts = nxt is not None and (nxt.kind in ("word", "phrase", "field", "open")
                                              or (nxt.kind == "op" and nxt.text == "NOT"))
                if t.text == "NOT":
                    ok = nxt is not None and nxt.kind in ("word", "phrase", "field", "open")
                else:
                    ok = starts and prev is not None and prev.kind in ("word", "phrase",
                                                                       "field", "close")
                if not ok:
                    i += 1
                    changed = True
                    continue
            out.append(t)
            i += 1
        toks = out
    return toks


def read_query(query: str, *, syntax: bool = True) -> str:
    """`query` in the parser's dialect: its syntax where it is valid, the rest as text (see
    above); "" when nothing in it can be searched (only punctuation or operators). Raises
    UsageError only for an empty query. `syntax` False reads every operator, parenthesis and
    field as text (what a query of only NOT clauses is searched as)."""
    if not query or not query.strip():
        raise UsageError("The search query is empty.", hint=_HINT)
    toks = _tokens(query)
    if not syntax:
        toks = [_Tok("word", w) for t in toks if t.kind in ("word", "phrase", "field")
                for w in _clean_word(t.text.replace("'", " ").replace(":", " "))]
    return " ".join(t.text for t in toks)


def plain_words(query: str) -> list[str] | None:
    """The words of a query that uses no syntax (no phrase, field, operator, group or
    prefix), as they will be searched (`Rome?` -> ["Rome"]); None when it uses some."""
    if not query or not query.strip():
        return None
    toks = _tokens(query)
    if any(t.kind != "word" or t.text.endswith("*") for t in toks):
        return None
    return [t.text for t in toks]


def check_and_rewrite_query(query: str) -> str:
    """`read_query` (the name callers knew when a query could be malformed)."""
    return read_query(query)


# A query of plain ASCII words (letters and digits) between spaces, tabs or newlines.
_PLAIN_QUERY_RE = re.compile(r"[ \t\r\n]*[A-Za-z0-9]+(?:[ \t\r\n]+[A-Za-z0-9]+)*[ \t\r\n]*")
# Words whoosh's parser may read as operators: such a query takes the parser's path.
_OPERATOR_WORDS = frozenset(("AND", "OR", "NOT", "ANDNOT", "ANDMAYBE", "REQUIRE", "TO"))


def plain_query_terms(query: str) -> list[tuple[str, str]] | None:
    """The (field, term) pairs whoosh's parser (as both engines set it up: words search `body`
    and `tag`, OR-grouped) makes of a query of plain words, in its order; None for any other
    query, which then goes through the parser.

    Each word gives its `body` term (none when analysis drops it: a stop word, one letter) and
    its lowercased `tag` term; the parser's normalization keeps the first of equal terms. This
    spares the tantivy engine whoosh's import (~60 ms of a whole-process `pcp search`) for the
    queries people type most; tests/index/test_plain_query.py checks it against the parser.
    """
    if _PLAIN_QUERY_RE.fullmatch(query) is None:
        return None
    words = query.split()
    if _OPERATOR_WORDS.intersection(words):
        return None
    pairs: dict[tuple[str, str], None] = {}
    for word in words:
        term = _term(word)
        if term:
            pairs.setdefault(("body", term))
        pairs.setdefault(("tag", word.lower()))
    return list(pairs)


def query_words(query: str) -> list[str]:
    """The plain search words of a query (no operators, no field names) for snippets: its
    words, the words of its phrases and of its `title:`/`body:` values, read as `read_query`
    reads them."""
    if not query or not query.strip():
        return []
    return [w for t in _tokens(query) for w in t.words if w]


# --------------------------------------------------------------------------------------------
# Snippets


def _matcher(query_terms: Sequence[str]) -> tuple[re.Pattern[str] | None, set[str]]:
    """One regex that finds candidate matches; Latin candidates are confirmed by their stem."""
    stems: set[str] = set()
    alts: list[str] = []
    for raw in query_terms:
        for m in TOKEN_RE.finditer(raw):
            run = m.group()
            if m.lastgroup == "cjk":
                alts.append(re.escape(run))
                continue
            word = run.lower()
            if len(word) < MIN_WORD or word in STOP_WORDS:
                continue
            s = stem(word)
            stems.add(s)
            # Porter stems are nearly prefixes of their words ("happi" <- "happy"): match on
            # the stem less its last letter, then confirm.
            prefix = s[:-1] if len(s) > 3 else s[:3] if len(s) >= 3 else s
            alts.append(r"\b" + re.escape(prefix) + r"[^\W_]*")
    if not alts:
        return None, stems
    alts.sort(key=len, reverse=True)
    return re.compile("|".join(alts), re.IGNORECASE), stems


# A snippet is chosen among the first this many matches: a huge page full of the query's
# words costs a bounded list, not one entry per word (a 10 MB page held 150,000).
MAX_SNIPPET_HITS = 2_000


def _find(pattern: re.Pattern[str], stems: set[str], text: str) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    for m in pattern.finditer(text):
        if len(found) >= MAX_SNIPPET_HITS:
            break
        s = m.group()
        if is_cjk(s):
            found.append((m.start(), m.end(), s))
            continue
        # A Latin candidate may have swallowed CJK or digits after it; keep the word part.
        wm = TOKEN_RE.match(s)
        if wm is None or wm.lastgroup != "word":
            continue
        key = stem(wm.group().lower())
        if key in stems:
            found.append((m.start(), m.start() + wm.end(), key))
    return found


def match_terms(text: str, query_terms: Sequence[str]) -> list[tuple[int, int, str]]:
    """(start, end, term) of each match of the query's words in `text` (a word by its stem, a
    CJK run as written), in order: the first MAX_SNIPPET_HITS of them."""
    pattern, stems = _matcher_of(tuple(query_terms))
    return _find(pattern, stems, text) if pattern is not None else []


def highlights(text: str, query_terms: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of each match of the query's words in `text` (a snippet's highlights)."""
    return [(start, end) for start, end, _ in match_terms(text, query_terms)]


@lru_cache(maxsize=64)
def _matcher_of(query_terms: tuple[str, ...]) -> tuple[re.Pattern[str] | None, set[str]]:
    return _matcher(query_terms)


_WS = re.compile(r"\s+")


def make_snippet(
    text: str, query_terms: Sequence[str], max_chars: int = 240
) -> tuple[str, list[tuple[int, int]]]:
    """Cut a window of at most `max_chars` around the best match and return highlight spans.

    The window is the one holding the most distinct query terms (then the earliest); it starts a
    little before the first match, at a word boundary when one is near. Whitespace is collapsed.
    "…" marks a cut. Spans are (start, end) offsets into the returned snippet. With no match,
    the start of the text is returned with no spans.
    """
    if max_chars < 8:
        raise ValueError("max_chars must be at least 8")
    pattern, stems = _matcher(query_terms)
    hits = _find(pattern, stems, text) if pattern is not None else []
    if hits:
        best, best_key = 0, (-1, 0)
        j = 0
        for i, (start, _, _) in enumerate(hits):
            while j < len(hits) and hits[j][1] - start <= max_chars * 3 // 4:
                j += 1
            distinct = len({h[2] for h in hits[i:j]})
            key = (distinct, j - i)
            if key > best_key:
                best, best_key = i, key
        anchor = hits[best][0]
    else:
        anchor = 0
    # Work on a raw slice wide enough to survive whitespace collapsing, then cut exactly.
    lo = max(0, anchor - max_chars)
    raw = text[lo : anchor + 4 * max_chars]
    lead_raw = _WS.sub(" ", text[lo:anchor])
    window = _WS.sub(" ", raw)
    at = len(lead_raw)  # the anchor in the collapsed window
    start = max(0, at - max_chars // 5) if hits else 0
    if start <= 15:  # so close to the start that cutting saves nothing
        start = 0
    else:  # never cut inside a word: back up to a space if one is close, else go forward
        space = window.rfind(" ", max(0, start - 15), start + 1)
        if space == -1:
            space = window.find(" ", start, min(at, start + 15))
        if space != -1:
            start = space + 1
    cut_left = lo > 0 or start > 0
    body = window[start:].rstrip()
    if start == 0 and lo == 0:
        body = body.lstrip()
    room = max_chars - (1 if cut_left else 0)
    cut_right = len(body) > room or lo + len(raw) < len(text)
    if cut_right:
        room -= 1
        body = body[:room]
        space = body.rfind(" ", max(0, room - 15))
        if space > room // 2:
            body = body[:space]
        body = body.rstrip()
    snippet = ("…" if cut_left else "") + body + ("…" if cut_right else "")
    spans: list[tuple[int, int]] = []
    if pattern is not None:
        offset = 1 if cut_left else 0
        for s, e, _ in _find(pattern, stems, body):
            spans.append((s + offset, e + offset))
    return snippet, spans


def matched_fields(matched: Iterable[tuple[str, str | bytes]], title: str,
                   asked_fields: Collection[str] | None = None) -> tuple[str, ...]:
    """Which fields matched (among `asked_fields`, default all), as both engines report them.
    `body` holds the title too, so its matches are split by whether the term is one of the
    title's."""
    fields: set[str] = set()
    body_terms = set()
    for fn, term in matched:
        if asked_fields is not None and fn not in asked_fields:
            continue
        if fn == "body":
            body_terms.add(term.decode("utf-8") if isinstance(term, bytes) else term)
        else:
            fields.add(fn)
    if body_terms:
        in_title = body_terms & set(terms(title))
        if in_title:
            fields.add("title")
        if body_terms - in_title:
            fields.add("body")
    return tuple(sorted(fields))
