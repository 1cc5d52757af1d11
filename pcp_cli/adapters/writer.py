"""Writing a stream of import items through the store, and the summary of what happened.

The parsers (chatgpt, claude, markdown) only read; this module turns their `ImportItem`s into
pages with `Store.upsert_page`, keyed by `ImportItem.key`, so that:

- importing the same export again creates nothing (every item comes back `unchanged`), an item
  that changed in the source gets one new revision, and an item the person edited after the
  import keeps the edit while the source has not changed;
- every write is atomic (revision file, then head file), so a killed import leaves no partial
  page and the next run carries on where it stopped;
- keystone and profile proposals are stored with `review_status: proposed` and are never
  affirmed here;
- links between items (`[[wikilinks]]`, a Claude doc and its project) become `related_to`
  relations once the pages exist, each pair once however often the import runs.

A malformed item is reported and skipped and the rest is imported. A file-level problem (a
truncated file, a file that is not JSON) and an item the store refuses count as *failed*.
"""

from __future__ import annotations

import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcp_cli.adapters.base import ImportItem, ItemProblem
from pcp_cli.errors import InvalidInput, PcpError, RevisionConflict, StoreLocked, UsageError
from pcp_cli.model.actors import actor_string
from pcp_cli.model.filenames import is_text, shown
from pcp_cli.model.page import OBSERVED_AT, Actor, PageState, source_time
from pcp_cli.store import lifecycle
from pcp_cli.store.frontmatter import MAX_BODY_BYTES
from pcp_cli.store.store import Store, page_id_for_key

RELATION_TYPE = "related_to"
# Hold the writer lock for at most this long at a time (then publish the batch written
# meanwhile), so other writers get a turn during a long import without paying for the lock, or
# a round of fsyncs, on every single page.
LOCK_BATCH_SECONDS = 1.0
# Errors that make one item fail; anything else (a full disk, a held lock) stops the import,
# which the next run resumes.
ITEM_WRITE_ERRORS = (InvalidInput, RevisionConflict, UsageError)


@dataclass
class ImportSummary:
    """What an import did (or, with dry_run, would do). `to_dict()` is the `--json` shape."""

    format: str
    dry_run: bool
    source: str = ""
    namespace: str = ""
    created: int = 0
    revised: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    by_type: dict[str, dict[str, int]] = field(default_factory=dict)
    proposals: int = 0
    relations_created: int = 0
    relations_unchanged: int = 0

    def count(self, page_type: str, status: str) -> None:
        setattr(self, status, getattr(self, status) + 1)
        bucket = self.by_type.setdefault(page_type, {"created": 0, "revised": 0, "unchanged": 0})
        bucket[status] += 1

    def problem(self, source: str, item: str | None, reason: str, outcome: str) -> None:
        # Named as a person can read them (a file name that is not UTF-8, escaped).
        entry = {"source": shown(source), "item": None if item is None else shown(item),
                 "reason": reason if is_text(reason) else shown(reason), "outcome": outcome}
        if outcome == "warning":
            self.warnings.append(entry)
            return
        self.problems.append(entry)
        setattr(self, outcome, getattr(self, outcome) + 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "dry_run": self.dry_run,
            "created": self.created,
            "revised": self.revised,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "failed": self.failed,
            "problems": self.problems,
            "source": shown(self.source),
            "namespace": self.namespace,
            "by_type": {key: self.by_type[key] for key in sorted(self.by_type)},
            "proposals": self.proposals,
            "relations": {"created": self.relations_created,
                          "unchanged": self.relations_unchanged},
            "warnings": self.warnings,
        }


def write_items(
    store: Store,
    results: Iterable[ImportItem | ItemProblem],
    *,
    format: str,  # noqa: A002
    namespace: str | None = None,
    dry_run: bool = False,
    source: str = "",
    actor: Actor | None = None,
) -> ImportSummary:
    """Write a parser's stream through `store` (or only plan it, with `dry_run`)."""
    writer = _Writer(store, fmt=format, namespace=namespace, dry_run=dry_run, source=source,
                     actor=actor)
    return writer.run(results)


class _Batches:
    """The store's writer lock, held across a few writes at a time (never in a dry run), as a
    `Store.batch()`: the pages written while it is held are published together when it is
    released (and in between when the batch fills), so their fsyncs are paid per batch."""

    def __init__(self, store: Store, enabled: bool) -> None:
        self._store = store
        self._enabled = enabled
        self._stack = ExitStack()
        self._since: float | None = None

    def before_write(self) -> None:
        if self._enabled and self._since is None:
            self._stack.enter_context(self._store.batch())
            self._since = time.monotonic()

    def after_write(self) -> None:
        if self._since is not None and time.monotonic() - self._since >= LOCK_BATCH_SECONDS:
            self.release()

    def release(self) -> None:
        self._stack.close()
        self._stack = ExitStack()
        self._since = None


class _Writer:
    def __init__(self, store: Store, *, fmt: str, namespace: str | None, dry_run: bool,
                 source: str, actor: Actor | None) -> None:
        self.store = store
        self.dry_run = dry_run
        self.namespace = namespace or store.default_namespace
        self.actor = actor or Actor("tool", f"pcp-import-{fmt}")
        name = Path(source).name if source else fmt
        self.note = f"imported from {shown(name)}"
        self.summary = ImportSummary(format=fmt, dry_run=dry_run, source=source,
                                     namespace=self.namespace)
        self.batches = _Batches(store, enabled=not dry_run)
        # key -> content hash of what this dry run would write for it (a real run lets the store
        # judge repeats, so it skips hashing every page twice).
        self.written: dict[str, str] = {}
        self.links: list[tuple[str, str]] = []

    def run(self, results: Iterable[ImportItem | ItemProblem]) -> ImportSummary:
        items = 0
        file_failures: list[str] = []
        try:
            for result in _guard_reads(results, self.summary.source):
                if isinstance(result, ItemProblem):
                    self._problem(result)
                    if result.item is None:
                        file_failures.append(f"{result.source}: {result.reason}")
                    continue
                items += 1
                self._item(result)
            if not items and file_failures and not self.summary.skipped:
                raise InvalidInput("nothing could be read from this export",
                                   path=self.summary.source or None, details=file_failures)
            self.batches.release()  # every page published before the links name them
            self._link()
        except StoreLocked as exc:
            raise stopped_by_lock(exc, self.summary) from None
        finally:
            self.batches.release()
        return self.summary

    # -- items --------------------------------------------------------------------------------
    def _problem(self, problem: ItemProblem) -> None:
        reason = problem.reason if problem.line is None else (
            f"{problem.reason} (line {problem.line})")
        if not problem.skipped:
            outcome = "warning"
        elif problem.item is None:
            outcome = "failed"  # a whole file, or the rest of one, could not be read
        else:
            outcome = "skipped"
        self.summary.problem(problem.source, problem.item, reason, outcome)

    def _item(self, item: ImportItem) -> None:
        size = len(item.content) if item.content.isascii() else len(item.content.encode())
        if size > MAX_BODY_BYTES:  # its head file would be over the store's limit
            self._item_problem(item, f"too large for one page ({size:,} bytes of text, over "
                               f"the {MAX_BODY_BYTES:,}-byte limit); skipped", "skipped")
            return
        try:
            state = self._state(item)
        except ITEM_WRITE_ERRORS as exc:
            self._item_problem(item, f"not importable: {exc.message}", "failed")
            return
        if item.key in self.written:
            self._item_problem(item, "appears more than once in this export; the last one "
                               "is kept", "warning")
        if self.dry_run:
            status = self._plan(item, state)
        else:
            self.batches.before_write()
            try:
                status = self.store.upsert_page(state, key=item.key, actor=self.actor,
                                                operation="import", source_note=self.note,
                                                weak_observed=item.weak_timestamp).status
            except ITEM_WRITE_ERRORS as exc:
                self._item_problem(item, f"could not be written: {exc.message}", "failed")
                return
            finally:
                self.batches.after_write()
        self.written[item.key] = state.content_hash if self.dry_run else ""
        self.summary.count(item.type, status)
        if item.kind != "page" and status != "unchanged":
            self.summary.proposals += 1
        self.links.extend((item.key, target) for target in item.links)

    def _item_problem(self, item: ImportItem, reason: str, outcome: str) -> None:
        """A problem with an item the parser accepted: named by its exact source ref."""
        where = item.source_refs[0] if item.source_refs else item.key
        self.summary.problem(self.summary.source, where, reason, outcome)

    def _state(self, item: ImportItem) -> PageState:
        record = dict(item.record)
        # When the source says the item was made or last changed: its observed time, which
        # search results and freshness use instead of the time of this import.
        # (Written only when the record does not already say it, e.g. as `updated_at`.)
        if item.timestamp and source_time(item.type, record) != item.timestamp:
            record[OBSERVED_AT] = item.timestamp
        fields: dict[str, Any] = {
            "type": item.type,
            "title": item.title,
            "namespace": item.namespace or self.namespace,
            "origin": item.origin,
            "sensitivity": item.sensitivity,
            "tags": tuple(item.tags),
            "source_refs": tuple(item.source_refs),
            "record": record,
            "extensions": dict(item.extensions),
            # Proposals wait in the review queue; an import never affirms them.
            "review_status": "affirmed" if item.kind == "page" else "proposed",
        }
        if item.kind == "keystone_proposal":
            record.setdefault("category", "other")
            record.setdefault("source", "imported")
            # v1.2 §3.2.1: the importer wrote this claim (from what the source remembered)
            record.setdefault("generated_by", actor_string(self.actor))
            if record["category"] in ("rule", "preference"):
                fields["instruction_policy"] = "advisory"
        return self.store.new_state(item.content, **fields)

    def _plan(self, item: ImportItem, state: PageState) -> str:
        """What upsert_page would answer, without writing (dry run)."""
        if item.key in self.written:
            return "unchanged" if self.written[item.key] == state.content_hash else "revised"
        return self.store.plan_upsert(state, key=item.key, weak_observed=item.weak_timestamp)

    # -- links --------------------------------------------------------------------------------
    def _link(self) -> None:
        if not self.links:
            return
        existing = {
            frozenset((rel.from_page_id, rel.to_page_id))
            for rel in self.store.relations()
            if rel.relation_type == RELATION_TYPE
        }
        handled: set[frozenset[str]] = set()
        for from_key, to_key in _unique(self.links):
            source, target = page_id_for_key(from_key), page_id_for_key(to_key)
            if source == target or not (self._exists(from_key) and self._exists(to_key)):
                continue
            pair = frozenset((source, target))
            if pair in handled:  # the other direction of a link seen in this run
                continue
            handled.add(pair)
            if pair in existing:
                self.summary.relations_unchanged += 1
                continue
            if not self.dry_run:
                self.batches.before_write()
                try:
                    lifecycle.link(self.store, source, RELATION_TYPE, target, actor=self.actor,
                                   note=f"linked in the source ({from_key} -> {to_key})")
                except PcpError as exc:
                    self.summary.problem(from_key, to_key, f"link not recorded: {exc.message}",
                                         "failed")
                    continue
                finally:
                    self.batches.after_write()
            self.summary.relations_created += 1

    def _exists(self, key: str) -> bool:
        if key in self.written and self.dry_run:
            return True
        return self.store.page_exists(page_id_for_key(key))


def stopped_by_lock(exc: StoreLocked, summary: ImportSummary) -> StoreLocked:
    """The lock timed out part way: say exactly what is in the store, and how to finish."""
    done = summary.created + summary.revised
    if not done and not summary.unchanged:
        return exc  # nothing was written: the plain message says it all
    return StoreLocked(
        f"{exc.message}; this import stopped part way: {summary.created} page(s) created, "
        f"{summary.revised} revised and {summary.unchanged} unchanged are in the store, the "
        "rest of the export is not imported yet",
        hint="run the same import again to finish it (what is already imported comes back "
        "unchanged); PCP_LOCK_TIMEOUT sets how long a write waits for the lock")


# Errors reading the export itself (a damaged zip member, an unreadable file). Raised inside the
# parser's stream, they end that stream as a failure; errors writing the store stop the import.
READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError)


def _guard_reads(results: Iterable[ImportItem | ItemProblem], source: str
                 ) -> Iterator[ImportItem | ItemProblem]:
    try:
        yield from results
    except READ_ERRORS as exc:
        yield ItemProblem(source, None, f"the export could not be read further; the rest was "
                          f"not imported ({type(exc).__name__}: {exc})")


def _unique(pairs: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    for pair in pairs:
        if pair not in seen:
            seen.add(pair)
            yield pair
