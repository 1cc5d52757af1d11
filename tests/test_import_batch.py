"""`pcp import` publishes pages in batches: a real process killed (SIGKILL) or refused by the
disk at many points of a batch leaves a store that `pcp doctor` reports and `pcp doctor --fix`
finishes, with whole pages only; the next import completes it and a third changes nothing.

The kill points are the file operations of `pcp_cli.store.atomic` (tests/helpers/fault_at.py),
chosen from the recorded sequence of the same import: inside the revision files' writes, their
fsyncs and renames, between the revision files and the head files, inside the head files'
renames and their folders' fsyncs, in the first, a middle and the last batch.

A batch is a group commit (`atomic.GroupCommit`): its temporary files written, one syncfs, its
revision files renamed, one syncfs, its head files renamed, one syncfs, then the catalog's
transaction. Every one of those steps is a kill point of every batch too; without syncfs (as
on a platform that has none) each file and folder is fsynced instead.
"""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from pcp_cli.store.store import Store
from tests.conftest import cli, snapshot
from tests.test_faults import OPS, durable, faulty, trace_of

NOTES = 24
BATCH = "10"  # pages per batch in the killed process: three batches (10, 10, 4)


def notes(folder: Path, count: int = NOTES) -> Path:
    folder.mkdir()
    for n in range(count):
        sub = folder / ("docs" if n % 5 == 0 else "notes")
        sub.mkdir(exist_ok=True)
        (sub / f"note-{n:02d}.md").write_text(
            f"---\ntitle: Note {n}\ntags: [tide]\n---\n# Note {n}\n\nThe tide gauge {n} "
            f"reads high.\n", "utf-8")
    return folder


def import_json(store: Path, folder: Path) -> dict:
    result = cli("import", str(folder), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    return result.json


def assert_whole(store: Path) -> int:
    """Every head file parses and names its page's one published revision; returns how many."""
    with Store.open(store) as opened:
        opened.catalog.refresh("full")
        entries = opened.catalog.entries()
        for entry in entries:
            assert entry.problem is None and entry.page_id, entry
            assert opened.revision_ids(entry.page_id) == [entry.revision_id]
        return len(entries)


def assert_finished(store: Path, folder: Path, kind: str) -> None:
    report = cli("doctor", "--store", str(store), "--json")
    assert report.code in (0, 8), report.stderr
    fixed = cli("doctor", "--fix", "--store", str(store), "--json")
    assert fixed.code in (0, 8), fixed.stderr
    clean = cli("doctor", "--store", str(store), "--json")
    assert clean.code == 0, (kind, clean.stdout, clean.stderr)
    assert cli("validate", str(store)).code == 0
    shown = assert_whole(store)
    summary = import_json(store, folder)
    assert summary["failed"] == 0 and summary["revised"] == 0, summary
    assert summary["created"] + summary["unchanged"] == NOTES, summary
    assert summary["unchanged"] == shown  # what doctor finished is the page, not a copy
    assert assert_whole(store) == NOTES
    again = import_json(store, folder)
    assert again["unchanged"] == NOTES, again


def kill_points(steps: list[tuple[str, str]]) -> list[tuple[str, int]]:
    """(op, n) pairs: first, middle and last call of each operation, and the first call of
    each operation on a head file (under pages/) - the step after a batch's revisions."""
    points: set[tuple[str, int]] = set()
    for op in OPS:
        calls = [path for kind, path in steps if kind == op]
        if not calls:
            continue
        points.update({(op, 1), (op, len(calls) // 2 or 1), (op, len(calls))})
        for n, path in enumerate(calls, 1):
            if "/pages/" in path:
                points.add((op, n))
                break
    return sorted(points)


@pytest.fixture
def traced(store: Path, tmp_path: Path) -> tuple[Path, Path, list[tuple[str, int]]]:
    folder = notes(tmp_path / "vault")
    steps = _trace(store, tmp_path, folder)
    renames = [path for op, path in steps if op == "rename"]
    heads = [i for i, path in enumerate(renames) if "/pages/" in path]
    revisions = [i for i, path in enumerate(renames) if "/revisions/" in path]
    # published in batches: a batch's revision files are all renamed before its head files
    assert len(heads) == len(revisions) == NOTES
    assert revisions[9] < heads[0] and heads[9] < revisions[10], renames
    return store, folder, kill_points(steps)


def _trace(store: Path, tmp_path: Path, folder: Path,
           **env: str) -> list[tuple[str, str]]:
    import os

    saved = dict(os.environ)
    os.environ.update(PCP_TEST_BATCH_PAGES=BATCH, **env)
    try:
        return trace_of(store, tmp_path, "import", str(folder))
    finally:
        os.environ.clear()
        os.environ.update(saved)


# A batch's steps as the trace names them (besides `write`): the syncs and the catalog.
SYNC_STEPS = ("syncfs", "commit", "committed")


def batch_steps(steps: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """The trace cut into its batches (each ends with the catalog's commit), each reduced to
    what the group commit does: writes and renames named by folder (revisions/ or pages/), the
    syncs, the commit."""
    batches: list[list[tuple[str, str]]] = [[]]
    for op, path in steps:
        if op in ("write", "rename", "fsync", "dirfsync"):
            where = "revisions" if "/revisions/" in path else "pages" if "/pages/" in path \
                else None
            if where is None:
                continue
            step = (op, where)
        elif op in SYNC_STEPS:
            step = (op, "")
        else:
            continue
        if not batches[-1] or batches[-1][-1] != step:  # a run of the same step, once
            batches[-1].append(step)
        if op == "committed":
            batches.append([])
    return [batch for batch in batches if batch]


def test_a_batch_is_made_durable_by_three_syncs_in_order(store: Path, tmp_path: Path) -> None:
    """With syncfs: no file of a batch is fsynced one by one; its files are written, synced,
    its revisions renamed and synced, then its heads renamed and synced, then the catalog
    commits: no head file is renamed into place before its revision is durable."""
    folder = notes(tmp_path / "vault")
    batches = batch_steps(_trace(store, tmp_path, folder))
    assert len(batches) == 3, batches
    for batch in batches:
        assert batch == [("write", "revisions"), ("write", "pages"), ("syncfs", ""),
                         ("rename", "revisions"), ("syncfs", ""), ("rename", "pages"),
                         ("syncfs", ""), ("commit", ""), ("committed", "")], batch


def test_without_syncfs_every_file_is_fsynced_before_its_rename(store: Path,
                                                                tmp_path: Path) -> None:
    """Where there is no syncfs, the same order with fsyncs: every temporary file fsynced
    before any rename, each batch's revision folders fsynced before its heads are renamed,
    the heads' folders before the catalog commits."""
    folder = notes(tmp_path / "vault")
    steps = _trace(store, tmp_path, folder, PCP_TEST_NO_SYNCFS="1")
    assert not any(op == "syncfs" for op, _ in steps)
    batches = batch_steps(steps)
    assert len(batches) == 3, batches
    for batch in batches:
        # the temporary files written and fsynced in parallel (in any order), then the
        # folders that hold the new folders
        first_rename = batch.index(("rename", "revisions"))
        assert {step[0] for step in batch[:first_rename]} <= {"write", "fsync", "dirfsync"}
        assert {"write", "fsync"} <= {step[0] for step in batch[:first_rename]}, batch
        assert batch[first_rename:] == [
            ("rename", "revisions"), ("dirfsync", "revisions"), ("rename", "pages"),
            ("dirfsync", "pages"), ("commit", ""), ("committed", "")], batch
    written = [path for op, path in steps if op == "write" and ".pcp-tmp-" in path
               and ("/pages/" in path or "/revisions/" in path)]
    fsynced = {path for op, path in steps if op == "fsync"}
    assert written and set(written) <= fsynced


def group_commit_points(steps: list[tuple[str, str]]) -> list[tuple[str, int]]:
    """(op, n): every sync and commit of every batch (before each syncfs: the batch's files
    written, its revisions renamed, its heads renamed; before and after the catalog's
    commit), and the first rename of each batch's revisions and of its heads (the step right
    after a sync)."""
    points: set[tuple[str, int]] = set()
    for op in SYNC_STEPS:
        points.update((op, n) for n in range(1, sum(1 for s, _ in steps if s == op) + 1))
    renames = [path for op, path in steps if op == "rename"]
    previous = ""
    for n, path in enumerate(renames, 1):
        where = "revisions" if "/revisions/" in path else "pages" if "/pages/" in path else ""
        if where and where != previous:
            points.add(("rename", n))
        previous = where
    return sorted(points)


@pytest.mark.slow
def test_an_import_killed_at_every_step_of_every_group_commit_is_finished(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL at each step of each batch's group commit (after its temporary files are
    written, after the first sync, after its revisions' renames, after their sync, after its
    heads' renames, before and after the catalog's commit): doctor accepts the store (after
    --fix) with whole pages only, nothing published is lost, and the next import completes
    it."""
    folder = notes(tmp_path / "vault")
    steps = _trace(store, tmp_path, folder)
    points = group_commit_points(steps)
    assert sum(1 for op, _ in points if op == "syncfs") == 9, points  # three batches, 3 each
    monkeypatch.setenv("PCP_TEST_BATCH_PAGES", BATCH)
    left: set[str] = set()
    for op, n in points:
        copy = tmp_path / f"kill-{op}-{n}"
        shutil.copytree(store, copy)
        done = faulty(copy, op, n, "kill", "import", str(folder))
        assert done.returncode == -signal.SIGKILL, (op, n, done.stderr)
        published = {rel: data for rel, data in durable(copy).items()
                     if ".pcp-tmp-" not in rel}  # temporary files are doctor's to remove
        report = cli("doctor", "--store", str(copy), "--json")
        left.update(f["kind"] for f in report.json["findings"]) if report.json else None
        assert_finished(copy, folder, f"{op} {n}")
        after = durable(copy)
        assert all(after.get(rel) == data for rel, data in published.items()), (op, n)
        shutil.rmtree(copy)
    # the kills left each window doctor mends: temporary files, revisions without heads
    assert {"missing_head_file", "temp_file"} <= left, left


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_failed_syncfs_falls_back_to_fsync(store: Path, tmp_path: Path, n: int) -> None:
    """EIO from the batch's first, second or third syncfs (another program's write error
    looks the same): the step is made durable by fsyncs instead, the import succeeds."""
    folder = notes(tmp_path / "vault")
    log = tmp_path / "trace.log"
    done = faulty(store, "syncfs", n, "EIO", "import", str(folder), trace=log)
    assert done.returncode == 0, done.stderr
    steps = [tuple(line.split(" ", 1)) for line in log.read_text().splitlines()]
    after = steps[[i for i, (op, _) in enumerate(steps) if op == "syncfs"][n - 1] + 1:]
    if n == 1:  # every temporary file fsynced before the first rename
        first = next(i for i, (op, _) in enumerate(after) if op == "rename")
        fsynced = {path for op, path in after[:first] if op == "fsync"}
        written = {path for op, path in steps if op == "write" and ".pcp-tmp-" in path
                   and "/revisions/" in path}
        assert written <= fsynced, (written, fsynced)
    assert any(op == "dirfsync" for op, _ in after)
    assert not any(op == "syncfs" for op, _ in after)  # fsyncs for the rest of the batch
    assert cli("doctor", "--store", str(store)).code == 0
    assert assert_whole(store) == NOTES


@pytest.mark.slow
def test_a_killed_batched_import_is_finished_by_doctor(
        traced: tuple[Path, Path, list[tuple[str, int]]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store, folder, points = traced
    monkeypatch.setenv("PCP_TEST_BATCH_PAGES", BATCH)
    assert len(points) >= 10, points
    left = set()
    for op, n in points:
        copy = tmp_path / f"kill-{op}-{n}"
        shutil.copytree(store, copy)
        done = faulty(copy, op, n, "kill", "import", str(folder))
        assert done.returncode == -signal.SIGKILL, (op, n, done.stderr)
        report = cli("doctor", "--store", str(copy), "--json")
        left.update(f["kind"] for f in report.json["findings"]) if report.json else None
        assert_finished(copy, folder, f"{op} {n}")
        shutil.rmtree(copy)
    # the kills hit the windows doctor mends, not only the edges
    assert {"missing_head_file", "temp_file"} <= left, left


def test_a_page_id_differing_only_in_case_is_refused_in_a_batch_and_after(store: Path) -> None:
    """The batch lists revisions/ once and answers new pages from that listing: an id that
    differs from a page's only in case is still refused, in the batch that made the page and
    in a later one; a new id is still written."""
    from pcp_cli.errors import InvalidInput

    with Store.open(store) as opened:
        with opened.batch():
            opened.write_page(opened.new_state("first", page_id="pg_CaseOne"))
            with pytest.raises(InvalidInput, match="only in case"):
                opened.write_page(opened.new_state("second", page_id="pg_caseone"))
        with opened.batch():
            assert opened.revision_ids("pg_nothing") == []
            with pytest.raises(InvalidInput, match="only in case"):
                opened.write_page(opened.new_state("third", page_id="PG_CASEONE"))
            opened.write_page(opened.new_state("fourth", page_id="pg_CaseTwo"))
        assert len(opened.revision_ids("pg_CaseOne")) == 1
        assert len(opened.revision_ids("pg_CaseTwo")) == 1


def test_the_listing_of_revisions_is_kept_between_holds_only_while_it_can_vouch(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large store's listing of revisions/ is used again by the next hold of the lock when
    the folder is unchanged, and made again when anything was added to it meanwhile: a page
    another writer created between the holds is still seen (its case twin refused)."""
    import os

    from pcp_cli.errors import InvalidInput
    from pcp_cli.store import kept_listing

    monkeypatch.setattr(kept_listing, "KEEP_MIN", 0)
    listings: list[str] = []
    real_listdir = os.listdir

    def counting(path: object) -> list[str]:
        if str(path).endswith("revisions"):
            listings.append(str(path))
        return real_listdir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", counting)
    with Store.open(store) as opened:
        with opened.batch():
            opened.write_page(opened.new_state("one", page_id="pg_KeptOne"))
        assert len(listings) == 1
        with opened.batch():  # unchanged since: the kept listing serves
            opened.write_page(opened.new_state("two", page_id="pg_KeptTwo"))
        assert len(listings) == 1
        with Store.open(store) as other:  # another writer, between the holds
            other.write_page(other.new_state("three", page_id="pg_Other"))
        listings.clear()
        with opened.batch(), pytest.raises(InvalidInput, match="only in case"):
            opened.write_page(opened.new_state("four", page_id="pg_OTHER"))
        assert len(listings) == 1  # listed again: the folder changed


@pytest.mark.parametrize("failing", [1, 2, 3])
def test_a_step_refused_after_syncfs_failed_undoes_the_whole_group_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: int) -> None:
    """syncfs fails at the first, second or third sync and so do the fsyncs that stand in for
    it: StorageFailed, and every file and folder is as it was (the renamed new file removed,
    the replaced one restored, the temporary files and new folders gone)."""
    import errno
    import os

    from pcp_cli.errors import StorageFailed
    from pcp_cli.store import atomic

    root = tmp_path / "files"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "old.md").write_bytes(b"old head\n")
    (root / "revisions").mkdir()
    before = snapshot(root)
    syncs = {"n": 0}

    def syncfs(fd: int) -> None:
        syncs["n"] += 1
        if syncs["n"] >= failing:
            raise OSError(errno.EIO, "Input/output error")

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(atomic, "syncfs", syncfs)
    commit = atomic.GroupCommit()
    revisions, heads = commit.stage(), commit.stage()
    revisions.add(root / "revisions" / "pg_1" / "rev_1.json", "{}", new=True)
    heads.add(root / "pages" / "old.md", "new head\n")
    heads.add(root / "pages" / "new" / "pg_1.md", "a new head\n")
    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(StorageFailed) as refused:
        commit.publish()
    monkeypatch.undo()
    assert "(EIO)" in refused.value.message and "as it was" in refused.value.message
    assert snapshot(root) == before
    assert sorted(p.name for p in root.rglob("*")) == ["old.md", "pages", "revisions"]
    assert syncs["n"] == failing  # the fsyncs stood in for every sync after the failed one


@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
@pytest.mark.parametrize(("op", "no_syncfs"), [
    ("write", False), ("rename", False),
    ("write", True), ("fsync", True), ("rename", True), ("dirfsync", True)])
def test_a_refused_write_undoes_its_whole_batch(store: Path, tmp_path: Path, op: str,
                                                no_syncfs: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """EIO at the last head file's step of the only batch: exit 11, the store as it was
    (every page of the batch undone, its revision files taken back), doctor clean; the next
    import writes it all. (Page by page, the pages before the refused one stayed written.)
    With syncfs and without it (each file and folder fsynced)."""
    if no_syncfs:
        monkeypatch.setenv("PCP_TEST_NO_SYNCFS", "1")
    folder = notes(tmp_path / "vault")
    steps = trace_of(store, tmp_path, "import", str(folder))
    calls = [path for kind, path in steps if kind == op]
    n = max(i for i, path in enumerate(calls, 1) if "/pages/" in path)
    before = snapshot(store)
    done = faulty(store, op, n, "EIO", "import", str(folder))
    assert done.returncode == 11, done.stderr
    assert done.stderr.startswith("Error: cannot write ") and "Traceback" not in done.stderr
    assert snapshot(store) == before
    assert cli("doctor", "--store", str(store)).code == 0
    summary = import_json(store, folder)
    assert summary["created"] == NOTES and summary["failed"] == 0
    assert durable(store)


# -- pcp ingest: events stored, then the page --------------------------------------------------

CONVERSATION = [
    {"type": "message", "conversation_id": "c1", "role": "user", "content": "Is the tide high?",
     "timestamp": "2026-05-14T09:30:00Z", "idempotency_key": "m1"},
    {"type": "message", "conversation_id": "c1", "role": "assistant", "content": "It is.",
     "timestamp": "2026-05-14T09:30:05Z", "idempotency_key": "m2"},
]


def ingest_file(tmp_path: Path, events: list[dict], name: str) -> Path:
    import json

    path = tmp_path / name
    path.write_text("".join(json.dumps(e) + "\n" for e in events), "utf-8")
    return path


def findings(store: Path, fix: bool = False) -> list[dict]:
    result = cli("doctor", *(["--fix"] if fix else []), "--store", str(store), "--json")
    assert result.code in (0, 8), result.stderr
    return result.json["findings"]


def test_an_ingest_killed_before_its_page_is_reported_and_finished(store: Path,
                                                                   tmp_path: Path) -> None:
    """The page exists: new events stored, the kill lands before its new revision. Doctor
    used to call this store clean; now it reports the events and --fix rolls the page up."""
    from tests.test_crash import die_at

    first = ingest_file(tmp_path, CONVERSATION[:1], "first.jsonl")
    done = cli("ingest", str(first), "--store", str(store), "--json")
    assert done.code == 0, done.stderr
    page_id = done.json["conversations"][0]["page_id"]
    more = ingest_file(tmp_path, CONVERSATION, "more.jsonl")
    killed = die_at("write_new", 1, "ingest", str(more), "--store", str(store))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    found = [f for f in findings(store) if f["kind"] == "unfinished_ingest"]
    assert len(found) == 1 and found[0]["page_id"] == page_id and found[0]["fixable"], found
    fixed = [f for f in findings(store, fix=True) if f["kind"] == "unfinished_ingest"]
    assert fixed and fixed[0]["fixed"], fixed
    assert cli("doctor", "--store", str(store)).code == 0
    page = cli("show", page_id, "--store", str(store), "--json").json["page"]
    assert "It is." in page["payload"]["content"]
    again = cli("ingest", str(more), "--store", str(store), "--json").json
    assert again["pages"]["unchanged"] == 1 and again["events"]["unchanged"] == 2


def test_an_ingest_killed_before_its_first_page_names_what_to_send_again(
        store: Path, tmp_path: Path) -> None:
    """A new conversation whose page was never written: the namespace the ingest was given is
    not in its events, so doctor reports it (not fixable) and says to send them again."""
    from tests.test_crash import die_at

    path = ingest_file(tmp_path, CONVERSATION, "c1.jsonl")
    killed = die_at("write_new", 1, "ingest", str(path), "--store", str(store))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    found = [f for f in findings(store, fix=True) if f["kind"] == "unfinished_ingest"]
    assert len(found) == 1 and not found[0]["fixable"] and not found[0]["fixed"], found
    assert "send them again" in found[0]["message"]
    resent = cli("ingest", str(path), "--store", str(store), "--json")
    assert resent.code == 0 and resent.json["pages"]["created"] == 1, resent.stderr
    assert cli("doctor", "--store", str(store)).code == 0


def test_doctor_reads_each_event_file_once(store: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Its checks of interrupted deletes and ingests and its validation share one read."""
    from collections import Counter

    path = ingest_file(tmp_path, CONVERSATION, "c1.jsonl")
    assert cli("ingest", str(path), "--store", str(store)).code == 0
    added = cli("add", "a page to delete", "--store", str(store), "--json")
    assert cli("delete", added.json["page_id"], "--yes", "--store", str(store)).code == 0
    reads: Counter[str] = Counter()
    real = Path.read_bytes

    def counting(self: Path) -> bytes:
        if "events" in self.parts:
            reads[self.name] += 1
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    assert findings(store) == []
    assert len(reads) == 3, reads  # two messages and the delete
    assert set(reads.values()) == {1}, reads


@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
@pytest.mark.parametrize("op", OPS)
def test_a_refused_event_file_leaves_none_of_the_ingests_events(store: Path, tmp_path: Path,
                                                               op: str) -> None:
    """The events of one ingest are published as one batch: EIO at any of its file steps exits
    11 with the store exactly as it was; sending the events again stores them all."""
    more = [{**CONVERSATION[1], "idempotency_key": f"m{n}", "content": f"Reply {n}."}
            for n in range(3, 7)]
    path = ingest_file(tmp_path, CONVERSATION + more, "c1.jsonl")
    steps = trace_of(store, tmp_path, "ingest", str(path))
    calls = [where for kind, where in steps if kind == op]
    in_events = [n for n, where in enumerate(calls, 1) if "/events/" in where]
    assert in_events, steps
    before = snapshot(store)
    for n in sorted({in_events[0], in_events[-1]}):
        done = faulty(store, op, n, "EIO", "ingest", str(path))
        assert done.returncode == 11, (op, n, done.stderr)
        assert "Traceback" not in done.stderr
        assert snapshot(store) == before, (op, n)
    assert findings(store) == []
    again = cli("ingest", str(path), "--store", str(store), "--json")
    assert again.code == 0 and again.json["events"]["stored"] == 6, again.stdout
    assert findings(store) == []
