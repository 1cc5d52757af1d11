"""Page references a person can type: a whole id, a unique prefix of one, or a page's title.

Ids are `pg_` + a 26-character ULID (or an imported id, often as long), too long to type or to
fit a table. Like git's short hashes, any prefix that names one page will do, with or without
`pg_` and in either case; tables show every id's shortest unique prefix (at least `MIN_SHOWN`
characters after `pg_`).
A page's title works too when exactly one page has it. Every front end resolves through here.

The set of pages is the revision folders (what `Store.page_exists` answers from), so a page
whose head file is missing still counts, and a prefix that looks unique is unique.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pcp_cli.errors import NotFound, UsageError
from pcp_cli.model.ids import is_safe_id

if TYPE_CHECKING:
    from pcp_cli.store.catalog import Entry
    from pcp_cli.store.store import Store

KIND_PREFIX = "pg_"
MIN_SHOWN = 8  # characters of an id (after `pg_`) a table shows at least (pg_01M8R7A1)
MIN_TYPED = 4  # characters (after pg_) a typed prefix needs, so `pg_0` never matches by luck
MAX_LISTED = 10  # candidates an ambiguity error lists
_ID_CHARS = re.compile(r"^[A-Za-z0-9._-]+$")
_KIND = re.compile(r"^[a-z]+_")  # an id's kind prefix (pg_, ks_), left out of MIN_SHOWN
# A machine-made part of an id (a hash, a UUID, a ULID): 12 or more letters and digits, at
# least three of them digits. Ids with one are shortened; names someone chose are not.
_OPAQUE = re.compile(r"(?=[0-9A-Za-z]*(?:\d[0-9A-Za-z]*){3})[0-9A-Za-z]{12,}")


def page_ids(store: Store) -> list[str]:
    """Every page id in the store, sorted."""
    try:
        names = os.listdir(store.layout.revisions)
    except FileNotFoundError:
        return []
    return sorted(name for name in names if is_safe_id(name))


def resolve(store: Store, ref: str) -> str:
    """The page id `ref` names: the id itself, a unique prefix of one, or a unique title.

    Raises UsageError (exit 2) when it names several pages, listing them, and NotFound when it
    names none (with the pages whose title contains it, if any).
    """
    ref = ref.strip()
    if not ref:
        raise UsageError("an empty page id", hint="`pcp ls` lists pages and their ids")
    if is_safe_id(ref) and store.page_exists(ref):
        return ref
    if _ID_CHARS.match(ref):
        matches = _prefix_matches(page_ids(store), ref)
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise _ambiguous(store, f"page id prefix {ref!r} matches {len(matches)} pages",
                             matches, "type more characters of the id")
    return _by_title(store, ref)


def _prefix_matches(ids: Sequence[str], ref: str) -> list[str]:
    bare = ref[len(KIND_PREFIX):] if ref.lower().startswith(KIND_PREFIX) else ref
    if len(bare) < MIN_TYPED:
        return []
    wanted = [ref] if ref.lower().startswith(KIND_PREFIX) else [ref, KIND_PREFIX + ref]
    exact = [i for w in wanted for i in _starting_with(ids, w)]
    if exact:
        return sorted(set(exact))
    # ULIDs are upper case and people type lower case: fall back to a case-blind match.
    folded = [w.lower() for w in wanted]
    return [i for i in ids if any(i.lower().startswith(w) for w in folded)]


def _starting_with(ids: Sequence[str], prefix: str) -> list[str]:
    start = bisect.bisect_left(ids, prefix)
    found = []
    for page_id in ids[start:]:
        if not page_id.startswith(prefix):
            break
        found.append(page_id)
    return found


def _by_title(store: Store, ref: str) -> str:
    entries = [e for e in store.catalog.entries(
        "page_id IS NOT NULL AND problem IS NULL AND lower(title) = lower(?)", (ref,))]
    if len(entries) > 1:  # one active page among archived or superseded namesakes: that one
        active = [e for e in entries if e.lifecycle_status == "active"]
        if len(active) == 1:
            entries = active
    ids = sorted({e.page_id for e in entries if e.page_id})
    if len(ids) == 1:
        return ids[0]
    if ids:
        raise _ambiguous(store, f"{len(ids)} pages have the title {ref!r}", ids,
                         "give one of their ids")
    near = store.catalog.entries(
        "page_id IS NOT NULL AND problem IS NULL AND instr(lower(title), lower(?)) > 0", (ref,))
    # A reference that is no safe id is still a name a person typed (a multi-word title):
    # nothing matched it, exit 3, never "not a safe identifier". It is never used as a path.
    hint = "`pcp ls` lists pages; `pcp search WORDS` finds them by content"
    error = NotFound(f"no page has the id or title {ref!r}", hint=hint)
    if near:
        shown = sorted({e.page_id for e in near if e.page_id})
        error.hint = f"titles that contain it: {_listing(store, shown, near)}"
    raise error


class AmbiguousPage(UsageError):
    """A typed page reference that names several pages (exit 2); `candidates` are their ids."""

    def __init__(self, message: str, *, hint: str, candidates: list[str],
                 details: list[str]) -> None:
        super().__init__(message, hint=hint)
        self.candidates = candidates
        self.details = details

    def to_json(self) -> dict[str, object]:
        data = super().to_json()
        error = data["error"]
        assert isinstance(error, dict)
        error["candidates"] = self.candidates
        return data


def _ambiguous(store: Store, message: str, ids: list[str], advice: str) -> UsageError:
    entries = [e for pid in ids for e in store.catalog.by_page_id(pid)[:1]]
    return AmbiguousPage(message, hint=f"{advice}; the pages:", candidates=ids,
                         details=[_describe(pid, entries) for pid in ids])


def _listing(store: Store, ids: list[str], entries: Sequence[Entry]) -> str:
    shorten = short_ids(store)
    shown = [f"{shorten(pid)} ({_title(pid, entries)})" for pid in ids[:MAX_LISTED]]
    more = f" and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    return ", ".join(shown) + more


def _title(page_id: str, entries: Sequence[Entry]) -> str:
    for entry in entries:
        if entry.page_id == page_id:
            return entry.title or entry.type or "untitled"
    return "no head file"


def _describe(page_id: str, entries: Sequence[Entry]) -> str:
    for entry in entries:
        if entry.page_id == page_id:
            return (f"{page_id}  {entry.type}  {entry.lifecycle_status}  {entry.namespace}  "
                    f"{entry.title}")
    return page_id


def short_ids(store: Store, ids: Sequence[str] | None = None) -> Callable[[str], str]:
    """A function giving each machine-made page id (one with a kind prefix such as `pg_`, or
    with a hash, UUID or ULID in it: ULIDs and imported ids alike) its shortest unique prefix in
    this store, at least `MIN_SHOWN` characters after a kind prefix (`MIN_SHOWN` in all without
    one), and always one that `resolve` takes back to that page. An id someone chose (`ks-001`,
    `tidewatch-architecture`) is shown whole: it is already a name."""
    every = page_ids(store) if ids is None else sorted(ids)
    return shortener(every)


def shortener(sorted_ids: Sequence[str]) -> Callable[[str], str]:
    """`short_ids` over a given sorted id list (no store needed)."""

    def shorten(page_id: str) -> str:
        kind = _KIND.match(page_id)
        if kind is None and not _OPAQUE.search(page_id):
            return page_id  # a name someone chose (`ks-001`, `tidewatch-architecture`): whole
        need = (kind.end() if kind else 0) + MIN_SHOWN
        need = max(need, _shared(sorted_ids, page_id, page_id) + 1)
        if not page_id.lower().startswith(KIND_PREFIX):
            # `resolve` also tries `pg_` + what was typed: no pg_ id may start with the prefix
            need = max(need, _shared(sorted_ids, KIND_PREFIX + page_id, page_id)
                       - len(KIND_PREFIX) + 1)
        return page_id[:need] if need < len(page_id) else page_id

    return shorten


def _shared(sorted_ids: Sequence[str], key: str, page_id: str) -> int:
    """The longest prefix (case-blind) `key` shares with an id of `sorted_ids` other than
    `page_id`; its sorted neighbours are the only candidates."""
    at = bisect.bisect_left(sorted_ids, key)
    longest = 0
    for neighbour in (at - 1, at, at + 1):
        if 0 <= neighbour < len(sorted_ids) and sorted_ids[neighbour] != page_id:
            other = sorted_ids[neighbour].lower()
            longest = max(longest, len(os.path.commonprefix([key.lower(), other])))
    return longest
