"""The plain values that cross the index boundary. Nothing here knows about whoosh."""

from __future__ import annotations

from dataclasses import dataclass, field

# Bump when the schema, the analyzer or the meaning of a field changes: an index written with
# another version is rebuilt instead of read.
FORMAT_VERSION = 2  # 2: `timestamp` is the observed time, unclassified sensitivity
# What each engine writes as meta.json's format_version. Never equal across engines (and each
# meta.json names its engine too), so neither engine mistakes the other's index for its own.
ENGINE_FORMATS: dict[str, int | str] = {
    "whoosh": FORMAT_VERSION,
    "tantivy": f"tantivy-{FORMAT_VERSION}.2",  # .2: `hit` is stored only
}

# Both engines' raw score s -> s / (s + NORM_K): monotonic, in [0, 1), about 0.5 for one good
# match.
NORM_K = 10.0


def normalize_score(raw: float) -> float:
    if raw <= 0:
        return 0.0
    return raw / (raw + NORM_K)


@dataclass(frozen=True)
class IndexDoc:
    """One page as the index sees it. `path` is the unique key (store-relative head file)."""

    path: str
    page_id: str
    revision_id: str
    title: str
    body: str  # indexed, never stored
    type: str
    namespace: str
    origin: str = "generated"
    sensitivity: str = "low"
    lifecycle_status: str = "active"
    review_status: str = "affirmed"
    tags: tuple[str, ...] = ()
    timestamp: str = ""  # ISO 8601; sorts and filters as a string
    mtime_ns: int = 0  # of the head file when it was read; lets the caller spot changes


@dataclass(frozen=True)
class IndexFilter:
    """What a search may see. Every constraint is applied inside the query, before ranking.

    `None` means "no constraint on this axis"; an empty tuple means "nothing is allowed"
    (a client granted no scope finds nothing, rather than everything).
    """

    namespaces: tuple[str, ...] | None = None
    # With subtrees, a granted "work" also admits "work:projects" and deeper.
    namespace_subtrees: bool = False
    types: tuple[str, ...] | None = None
    exclude_types: tuple[str, ...] = ()
    lifecycle_statuses: tuple[str, ...] | None = ("active",)
    sensitivities: tuple[str, ...] | None = ("low", "medium")
    review_statuses: tuple[str, ...] | None = ("affirmed",)
    since: str | None = None  # inclusive ISO prefix bounds on `timestamp`
    until: str | None = None
    origins: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None  # any of them (compared case-insensitively)
    # Exactly these pages (restrictions the query layer works out from the store itself:
    # relations, observed time, the store as of a date), and pages never to admit.
    page_ids: frozenset[str] | None = None
    exclude_page_ids: frozenset[str] = frozenset()

    @classmethod
    def everything(cls) -> IndexFilter:
        """No constraint at all (maintenance, tests)."""
        return cls(lifecycle_statuses=None, sensitivities=None, review_statuses=None)


def filter_axes(f: IndexFilter) -> list[tuple[str, tuple[str, ...] | None]]:
    """The filter's exact-value axes, as both engines apply them: (index field, the values
    admitted, or None for no constraint; an empty tuple admits nothing)."""
    return [
        ("ns_tree" if f.namespace_subtrees else "namespace", f.namespaces),
        ("type", f.types),
        ("lifecycle", f.lifecycle_statuses),
        ("sensitivity", f.sensitivities),
        ("review", f.review_statuses),
        ("origin", f.origins),
        ("tag", None if f.tags is None else tuple(t.lower() for t in f.tags)),
    ]


def time_bounds(f: IndexFilter) -> tuple[str | None, str | None] | None:
    """The inclusive `timestamp` term range of `since`/`until` (an ISO prefix bound: `until`
    admits every timestamp that starts with it), or None without either."""
    if f.since is None and f.until is None:
        return None
    return f.since, None if f.until is None else f.until + "\uffff"


@dataclass(frozen=True)
class IndexHit:
    page_id: str
    path: str
    revision_id: str
    type: str
    namespace: str
    origin: str
    sensitivity: str
    lifecycle_status: str
    review_status: str
    timestamp: str
    mtime_ns: int
    score_raw: float
    score: float  # normalized into [0, 1]
    matched_fields: tuple[str, ...] = field(default=())
    # the page's title as indexed, where the engine keeps it (for `explain`), not compared
    title: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True)
class IndexStamp:
    """What the index holds for one path: enough for a caller to diff against the store."""

    revision_id: str
    mtime_ns: int
