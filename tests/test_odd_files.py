"""Files that are not what they seem: a store inside a store, duplicate YAML keys, hard links
and symlinks under pages/, an emptied head file, an edit that keeps the size and the mtime."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import cli


def add(store: Path, text: str, *extra: str) -> dict:
    result = cli("add", text, "--store", str(store), "--json", *extra)
    assert result.code == 0, result.stderr
    return result.json


def doctor_kinds(store: Path) -> dict[str, list[dict]]:
    found = cli("doctor", "--store", str(store), "--json").json["findings"]
    kinds: dict[str, list[dict]] = {}
    for finding in found:
        kinds.setdefault(finding["kind"], []).append(finding)
    return kinds


# -- a store inside another store -----------------------------------------------------------

def test_init_refuses_a_store_inside_another(store: Path) -> None:
    inner = store / "pages" / "user" / "tester" / "inner"
    result = cli("init", str(inner), "--owner", "inner")
    assert result.code == 2, result.stderr
    assert f"inside the pcp store {store.resolve()}" in result.stderr
    assert not (inner / "pcp.yaml").exists()


def test_init_refuses_a_store_around_an_existing_one(tmp_path: Path) -> None:
    inner = tmp_path / "outer" / "projects" / "inner"
    assert cli("init", str(inner), "--owner", "inner").code == 0
    result = cli("init", str(tmp_path / "outer"), "--owner", "outer")
    assert result.code == 2, result.stderr
    assert f"holds the pcp store {inner.resolve()}" in result.stderr
    assert not (tmp_path / "outer" / "pcp.yaml").exists()


@pytest.mark.parametrize("marker", ["pcp.yaml", ".git"])
def test_the_scan_never_crosses_into_a_nested_store(store: Path, marker: str) -> None:
    """A store (or repository) made inside another's pages/ by hand, not by `pcp init`."""
    inner = store / "pages" / "user" / "tester" / "inner"
    if marker == "pcp.yaml":
        import shutil

        made = store.parent / "elsewhere"
        assert cli("init", str(made), "--owner", "inner").code == 0
        shutil.move(str(made), str(inner))
        page = add(inner, "the inner store's page")
        head = next((inner / "pages").rglob(f"{page['page_id']}.md"))
    else:
        (inner / ".git").mkdir(parents=True)
        head = inner / "README.md"
        head.write_text("# a repository's readme\n")
    before = head.read_bytes()
    listed = cli("ls", "--store", str(store), "--json")
    assert listed.code == 0, listed.stderr
    assert listed.json == []
    assert head.read_bytes() == before, "the inner store's head file was taken over"
    assert not doctor_kinds(store)
    assert cli("validate", str(store)).code == 0


# -- links under pages/ -----------------------------------------------------------------------

def test_a_hard_link_to_an_outside_file_is_refused_and_never_written_through(
        store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Private notes\n\nnot for the store\n")
    link = store / "pages" / "user" / "tester" / "linked.md"
    link.parent.mkdir(parents=True, exist_ok=True)
    os.link(outside, link)
    listed = cli("ls", "--store", str(store), "--json")
    assert listed.code == 0
    assert "Private" not in listed.stdout
    assert cli("search", "private", "--store", str(store), "--json").json["results"] == []
    kinds = doctor_kinds(store)
    assert [f["path"] for f in kinds["hard_link"]] == ["pages/user/tester/linked.md"]
    assert cli("doctor", "--fix", "--store", str(store)).code == 8  # manual: reported, kept
    assert cli("validate", str(store)).code == 5
    assert outside.read_text() == "# Private notes\n\nnot for the store\n"
    assert link.exists() and os.stat(link).st_nlink == 2


def test_a_page_hard_linked_elsewhere_is_written_by_rename_never_through_the_link(
        store: Path, tmp_path: Path) -> None:
    page = add(store, "shared words")
    head = next((store / "pages").rglob(f"{page['page_id']}.md"))
    outside = tmp_path / "copy.md"
    os.link(head, outside)
    before = outside.read_bytes()
    result = cli("revise", page["page_id"], "new words", "--store", str(store))
    assert result.code == 0, result.stderr
    assert outside.read_bytes() == before, "the revise wrote through the hard link"


@pytest.mark.parametrize("target", ["passwd", "markdown"])
def test_symlinks_are_flagged_by_validate_and_doctor_alike(store: Path, tmp_path: Path,
                                                            target: str) -> None:
    outside = tmp_path / ("passwd" if target == "passwd" else "notes.md")
    outside.write_text("root:x:0:0:root:/root:/bin/bash\n" if target == "passwd"
                       else "---\ntitle: outside\n---\nsecret\n")
    link = store / "pages" / "user" / "tester" / "link.md"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    valid = cli("validate", str(store), "--json")
    assert valid.code == 5
    assert [p["path"] for p in valid.json["problems"]] == ["pages/user/tester/link.md"]
    assert "symlink" in valid.json["problems"][0]["message"]
    kinds = doctor_kinds(store)
    assert [f["path"] for f in kinds["symlink"]] == ["pages/user/tester/link.md"]
    assert "secret" not in cli("ls", "--store", str(store), "--json").stdout


def test_doctor_reports_a_hand_edited_revision_file_as_validate_does(store: Path) -> None:
    import json

    page = add(store, "words")
    path = store / "revisions" / page["page_id"] / f"{page['revision_id']}.json"
    data = json.loads(path.read_text())
    data["payload"]["content"] = "forged words"
    path.write_text(json.dumps(data))
    assert cli("validate", str(store)).code == 5
    found = cli("doctor", "--store", str(store), "--json")
    assert found.code == 8
    invalid = [f for f in found.json["findings"] if f["path"] == str(path.relative_to(store))]
    assert invalid and "content_hash" in invalid[0]["message"]


def test_doctor_never_counts_a_live_writers_temp_file(store: Path) -> None:
    """A temp file whose writer is still running is its write in progress, not a leftover."""
    import subprocess
    import sys

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folder = store / "pages" / "user" / "tester"
        folder.mkdir(parents=True, exist_ok=True)
        live = folder / f".x.md.pcp-tmp-{sleeper.pid}"
        live.write_text("half")
        assert cli("doctor", "--store", str(store)).code == 0
        assert cli("validate", str(store)).code == 0
        assert cli("doctor", "--fix", "--store", str(store)).code == 0
        assert live.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    kinds = doctor_kinds(store)
    assert [f["path"] for f in kinds["temp_file"]] == [str(live.relative_to(store))]


@pytest.mark.parametrize("folder", ["vaults", "leases", "pages/user/tester"])
def test_doctor_fix_removes_an_interrupted_writes_temp_file_wherever_validate_sees_it(
        store: Path, folder: str) -> None:
    """An import killed while writing its vault record (or a lease, or a page) leaves a temp
    file: doctor names it and --fix removes it, so validate is clean again."""
    where = store / folder
    where.mkdir(parents=True, exist_ok=True)
    left = where / ".vt_x.json.pcp-tmp-999999999"  # no process has this pid
    left.write_text("half")
    assert cli("validate", str(store)).code == 5
    assert [f["path"] for f in doctor_kinds(store)["temp_file"]] == [f"{folder}/{left.name}"]
    assert cli("doctor", "--fix", "--store", str(store)).code == 0
    assert not left.exists()
    assert cli("validate", str(store)).code == 0


# -- duplicate YAML keys -----------------------------------------------------------------------

def test_a_duplicate_frontmatter_key_is_invalid_input_with_file_and_line(store: Path) -> None:
    page = add(store, "my medical notes", "--title", "Medical")
    head = next((store / "pages").rglob(f"{page['page_id']}.md"))
    text = head.read_text()
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("sensitivity:"))
    lines.insert(at, "sensitivity: high\n")
    head.write_text("".join(lines))
    rel = str(head.relative_to(store))
    valid = cli("validate", str(store), "--json")
    assert valid.code == 5
    problem = valid.json["problems"][0]
    assert problem["path"] == rel and problem["line"] == at + 2
    assert "duplicate key 'sensitivity'" in problem["message"]
    kinds = doctor_kinds(store)
    assert [f["path"] for f in kinds["invalid_file"]] == [rel]
    # never served as the low-sensitivity page it was
    assert cli("search", "medical", "--store", str(store), "--json").json["results"] == []
    revised = cli("revise", page["page_id"], "x", "--store", str(store))
    assert revised.code == 5
    assert f"{rel}:{at + 2}" in revised.stderr and "duplicate key" in revised.stderr
    assert head.read_text().count("sensitivity:") == 2  # the person's text is kept


def test_a_duplicate_key_in_pcp_yaml_is_invalid_input(store: Path) -> None:
    manifest = store / "pcp.yaml"
    manifest.write_text(manifest.read_text() + "owner_id: someone-else\n")
    result = cli("ls", "--store", str(store))
    assert result.code == 5, result.stderr
    assert "pcp.yaml:" in result.stderr and "duplicate key 'owner_id'" in result.stderr


def test_a_duplicate_key_in_imported_frontmatter_is_refused(store: Path, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("---\ntitle: One\ntags: [a]\ntitle: Two\n---\nbody\n")
    result = cli("import", str(note), "--store", str(store))
    # bad frontmatter skips the file (the importer's rule for any unreadable frontmatter),
    # naming the file and the line of the second key; nothing is imported from it
    assert result.code == 0, result.stderr
    assert "duplicate key 'title' (first given on line 2) (line 4)" in result.stderr
    assert "note.md" in result.stderr
    assert cli("ls", "--store", str(store), "--json").json == []


# -- an emptied head file ----------------------------------------------------------------------

def test_an_emptied_head_file_is_refused_never_a_new_junk_page(store: Path) -> None:
    page = add(store, "words worth keeping")
    head = next((store / "pages").rglob(f"{page['page_id']}.md"))
    head.write_text("")
    listed = cli("ls", "--store", str(store), "--json").json
    # served from its last revision meanwhile (store_layout/README.md); no junk page either
    assert [p["page_id"] for p in listed] == [page["page_id"]]
    assert len(list((store / "revisions").iterdir())) == 2  # .gitkeep + the one page
    kinds = doctor_kinds(store)
    assert [f["page_id"] for f in kinds["emptied_head_file"]] == [page["page_id"]]
    revised = cli("revise", page["page_id"], "x", "--store", str(store))
    assert revised.code == 5 and "is empty" in revised.stderr
    assert cli("doctor", "--fix", "--store", str(store)).code == 0
    assert "words worth keeping" in head.read_text()
    assert cli("doctor", "--store", str(store)).code == 0


def test_a_head_file_stripped_of_its_frontmatter_is_a_hand_edit_of_that_page(
        store: Path) -> None:
    page = add(store, "old words", "--title", "Kept title")
    head = next((store / "pages").rglob(f"{page['page_id']}.md"))
    head.write_text("new words, no frontmatter\n")
    shown = cli("show", page["page_id"], "--store", str(store), "--json").json["page"]
    assert shown["payload"]["content"] == "new words, no frontmatter\n"
    assert shown["title"] == "Kept title"
    assert len(list((store / "revisions").iterdir())) == 2
    history = cli("history", page["page_id"], "--store", str(store), "--json").json
    assert len(history["revisions"]) == 2
    assert cli("doctor", "--store", str(store)).code == 0


# -- an edit that keeps the size and the mtime ---------------------------------------------------

def _sneaky_edit(store: Path, page_id: str, old: str, new: str) -> Path:
    assert len(old) == len(new)
    head = next((store / "pages").rglob(f"{page_id}.md"))
    stat = head.stat()
    head.write_text(head.read_text().replace(old, new))
    os.utime(head, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert head.stat().st_size == stat.st_size
    return head


def test_doctor_finds_an_edit_that_kept_size_and_mtime(store: Path) -> None:
    page = add(store, "the meeting is on monday")
    cli("ls", "--store", str(store))  # the catalog has seen the file
    _sneaky_edit(store, page["page_id"], "monday", "friday")
    kinds = doctor_kinds(store)
    assert [f["page_id"] for f in kinds["hand_edit"]] == [page["page_id"]]
    assert cli("doctor", "--fix", "--store", str(store)).code == 0
    shown = cli("show", page["page_id"], "--store", str(store), "--json").json["page"]
    assert "friday" in shown["payload"]["content"]
    assert len(cli("history", page["page_id"], "--store", str(store), "--json")
               .json["revisions"]) == 2


def test_index_records_an_edit_that_kept_size_and_mtime(store: Path) -> None:
    page = add(store, "the meeting is on monday")
    assert cli("index", "--store", str(store)).code == 0
    _sneaky_edit(store, page["page_id"], "monday", "friday")
    assert cli("index", "--store", str(store)).code == 0
    history = cli("history", page["page_id"], "--store", str(store), "--json").json
    assert len(history["revisions"]) == 2
    found = cli("search", "friday", "--store", str(store), "--json").json["results"]
    assert [r["id"] for r in found] == [page["page_id"]]


# -- one set of checks ---------------------------------------------------------------------------

def test_doctor_reports_every_path_validate_does(store: Path, tmp_path: Path) -> None:
    """Several kinds of damage at once: every file validate names, doctor names too."""
    import json

    pages = [add(store, f"page {n}") for n in range(3)]
    heads = {p["page_id"]: next((store / "pages").rglob(f"{p['page_id']}.md")) for p in pages}
    # a revision edited by hand, a head file with a bad value, a symlink, a broken relation
    rev = store / "revisions" / pages[0]["page_id"] / f"{pages[0]['revision_id']}.json"
    data = json.loads(rev.read_text())
    data["payload"]["content"] = "forged"
    rev.write_text(json.dumps(data))
    text = heads[pages[1]["page_id"]].read_text()
    heads[pages[1]["page_id"]].write_text(text.replace("sensitivity: low", "sensitivity: huge"))
    (tmp_path / "o.md").write_text("x\n")
    (heads[pages[2]["page_id"]].parent / "link.md").symlink_to(tmp_path / "o.md")
    (store / "relations" / "rel_broken.json").write_text("{not json")
    problems = cli("validate", str(store), "--json").json["problems"]
    assert len({p["path"] for p in problems}) >= 4
    findings = cli("doctor", "--store", str(store), "--json").json["findings"]
    assert {p["path"] for p in problems} <= {f["path"] for f in findings}


@pytest.mark.slow
def test_doctor_fix_beside_live_writers_reports_no_interrupted_write(store: Path) -> None:
    """Writers keep writing while doctor --fix runs again and again: their temp files are
    writes in progress, never reported as interrupted (7 false findings in 105 runs before)."""
    import subprocess
    import sys

    from tests.test_concurrency import HELPERS, helper_env, setup_pages

    pages = [p["page_id"] for p in setup_pages(store, 3)]
    writers = [subprocess.Popen(
        [sys.executable, str(HELPERS / "writer.py"), str(store), str(n), "0", str(n), "lib",
         *pages], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=helper_env())
        for n in range(2)]
    try:
        false = []
        for _ in range(25):
            found = cli("doctor", "--fix", "--store", str(store), "--json").json["findings"]
            false += [f for f in found if f["kind"] == "temp_file"]
        assert not false, false[:3]
    finally:
        for proc in writers:
            proc.kill()
            proc.wait()


# -- one of the store's folders replaced by a file --------------------------------------------

@pytest.mark.parametrize("folder", ["pages", "revisions", "relations", "events"])
def test_a_folder_replaced_by_a_file_is_reported_and_nothing_is_written(
        store: Path, folder: str) -> None:
    import shutil

    from tests.conftest import snapshot

    first = add(store, "first page")["page_id"]
    shutil.rmtree(store / folder)
    (store / folder).write_text("not a folder\n")
    before = snapshot(store)
    doctor = cli("doctor", "--fix", "--store", str(store), "--json")
    assert doctor.code == 8, doctor.stderr
    assert [(f["kind"], f["path"]) for f in doctor.json["findings"]] == [("not_a_folder", folder)]
    for args in (("add", "another page"), ("revise", first, "new words"),
                 ("link", first, "related_to", first)):  # writes: refused, the path named
        done = cli(*args, "--store", str(store))
        assert done.code == 8, (args, done.stderr)
        first_line = done.stderr.splitlines()[0]
        assert f"/{folder} is not a folder (a file is where" in first_line or \
            f"/{folder}: a file is where a folder must be" in first_line, done.stderr
    status = cli("status", "--store", str(store))  # never a clean store
    assert status.code == 8 and f"/{folder} is not a folder" in status.stderr, status.stderr
    for args in (("related", first), ("history", first), ("ls",)):  # reads: never unexpected
        done = cli(*args, "--store", str(store))
        assert done.code in (0, 3, 8), (args, done.stderr)
        assert "Traceback" not in done.stderr and "unexpected" not in done.stderr, done.stderr
    assert snapshot(store) == before


def test_the_change_scan_and_validate_agree_on_what_a_head_file_is(store: Path,
                                                                    tmp_path: Path) -> None:
    """The catalog's fast walk (statted through folder descriptors) takes exactly the files
    `walk_pages` (validate, doctor) takes as head files: no symlink, hard link, hidden file,
    folder named like a page, non-Markdown file or nested store's file."""
    from pcp_cli.store.files import head_files, walk_pages

    page = add(store, "a real page")
    pages = store / "pages"
    deep = pages / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("---\ntitle: deep\n---\nbody\n", "utf-8")
    (pages / ".hidden.md").write_text("hidden\n", "utf-8")
    (pages / "notes.txt").write_text("not markdown\n", "utf-8")
    (pages / "folder.md").mkdir()
    (pages / "folder.md" / "inside.md").write_text("inside\n", "utf-8")
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n", "utf-8")
    (pages / "link.md").symlink_to(outside)
    os.link(outside, pages / "hard.md")
    nested = pages / "nested"
    nested.mkdir()
    (nested / "pcp.yaml").write_text("format: pcp-store/1\n", "utf-8")
    (nested / "theirs.md").write_text("theirs\n", "utf-8")
    expected = sorted(path.relative_to(store).as_posix() for path, stat, _ in walk_pages(pages)
                      if stat is not None)
    found = head_files(pages, "pages")
    assert sorted(rel for rel, _ in found) == expected
    assert "pages/a/b/c/deep.md" in expected and "pages/folder.md/inside.md" in expected
    assert any(rel.endswith(f"/{page['page_id']}.md") for rel in expected)
    assert not {"pages/link.md", "pages/hard.md", "pages/.hidden.md",
                "pages/nested/theirs.md"} & set(expected)
    by_rel = dict(found)
    for rel in expected:
        assert by_rel[rel].st_ino == os.lstat(store / rel).st_ino


# -- a head file ahead of its revision: damage, never an interrupted write ---------------------

def _head_of(store: Path, page_id: str) -> Path:
    return next((store / "pages").rglob(f"{page_id}.md"))


@pytest.mark.parametrize("hand_edited", [False, True])
def test_doctor_fix_keeps_the_newest_text_when_its_revision_file_is_lost(
        store: Path, hand_edited: bool) -> None:
    """pcp writes a revision before the head naming it, so a head whose revision is missing
    holds the only copy of the newest text: --fix records it, never rolls it back."""
    page_id = add(store, "# T\n\none")["page_id"]
    assert cli("revise", page_id, "two", "--store", str(store)).code == 0
    assert cli("revise", page_id, "three, the newest", "--store", str(store)).code == 0
    head = _head_of(store, page_id)
    named = next(line.split(": ", 1)[1] for line in head.read_text("utf-8").splitlines()
                 if line.startswith("revision_id:"))
    (store / "revisions" / page_id / f"{named}.json").unlink()
    if hand_edited:
        head.write_text(head.read_text("utf-8").replace("three, the newest", "three, edited"))
    newest = "three, edited" if hand_edited else "three, the newest"
    found = doctor_kinds(store)
    kind = "hand_edit" if hand_edited else "missing_revision"
    assert list(found) == [kind], found
    if not hand_edited:
        assert named in found[kind][0]["message"]
    fixed = cli("doctor", "--fix", "--store", str(store), "--json")
    assert fixed.code == 0 and fixed.json["findings"][0]["fixed"], fixed.stdout
    shown = cli("show", page_id, "--store", str(store), "--json")
    assert newest in shown.json["page"]["payload"]["content"], shown.stdout
    assert newest in head.read_text("utf-8")
    texts = [json.loads(p.read_text("utf-8"))["payload"]["content"]
             for p in (store / "revisions" / page_id).glob("*.json")]
    assert sum(newest in text for text in texts) == 1  # recorded once, as a revision
    assert cli("doctor", "--store", str(store)).code == 0
    assert cli("validate", "--store", str(store)).code == 0


# -- damage that reads must not answer as "nothing" --------------------------------------------

def _two_pages(store: Path) -> tuple[str, str]:
    first = add(store, "# Alpha\n\nalpha words")["page_id"]
    second = add(store, "# Beta\n\nbeta words", "--namespace", "project:x")["page_id"]
    return first, second


@pytest.mark.parametrize("read_first", [False, True], ids=["fresh", "after_a_clean_read"])
@pytest.mark.parametrize("damage", ["revision_folder", "namespace_folder", "pages"])
def test_a_folder_replaced_by_a_file_is_damage_to_reads_and_doctor(store: Path, damage: str,
                                                                   read_first: bool) -> None:
    """Also after a read found the store clean and remembered it (`.pcp/folder-check`): the
    next reads look at what changed since, and still see the damage."""
    import shutil

    from tests.conftest import snapshot

    first, second = _two_pages(store)
    if read_first:
        assert cli("search", "words", "--store", str(store)).code == 0
        assert (store / ".pcp" / "folder-check").exists()
    target = {"revision_folder": store / "revisions" / first,
              "namespace_folder": store / "pages" / "project",
              "pages": store / "pages"}[damage]
    shutil.rmtree(target)
    target.write_text("not a folder\n")
    rel = target.relative_to(store).as_posix()
    before = snapshot(store)
    for args in (("ls",), ("ls", "--limit", "1"), ("search", "words"), ("show", first),
                 ("show", second)):
        done = cli(*args, "--store", str(store))
        assert done.code == 8, (args, done.code, done.stdout, done.stderr)
        errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and f"{rel}: not a folder" in errors[0], done.stderr
    for fix in ((), ("--fix",)):
        doctor = cli("doctor", *fix, "--store", str(store), "--json")
        assert doctor.code == 8, doctor.stderr
        found = [(f["kind"], f["path"], f["fixable"]) for f in doctor.json["findings"]]
        assert found == [("not_a_folder", rel, False)], found
    assert snapshot(store) == before


def test_a_clean_check_is_not_a_listing_of_every_page_after_an_edit(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a read found no damage, an edit (the catalog changed, `revisions/` did not) costs
    the next read a look at what the edit removed, not a listing of `revisions/`; a new page
    (a new folder there) lists it again."""
    from pcp_cli.upkeep import damage

    first, _ = _two_pages(store)
    assert cli("ls", "--store", str(store)).code == 0
    listings: list[int] = []
    real = damage._listed_damage
    monkeypatch.setattr(damage, "_listed_damage", lambda s: listings.append(1) or real(s))
    assert cli("revise", first, "alpha words, revised", "--store", str(store)).code == 0
    head = next((store / "pages").rglob(f"{first}.md"))
    head.write_text(head.read_text("utf-8") + "\nA hand edit.\n", "utf-8")
    assert cli("search", "alpha", "--store", str(store)).code == 0
    assert cli("ls", "--store", str(store)).code == 0
    assert listings == []
    add(store, "# Gamma\n\ngamma words")
    assert cli("ls", "--store", str(store)).code == 0
    assert listings == [1]


def test_a_garbage_head_file_is_served_from_its_last_revision(store: Path) -> None:
    first, _ = _two_pages(store)
    head = next((store / "pages").rglob(f"{first}.md"))
    head.write_bytes(os.urandom(3000).replace(b"<<<<<<<", b"") + b"\xff")
    listed = cli("ls", "--store", str(store), "--json")
    assert first in [p["page_id"] for p in listed.json]
    assert "listed from its last revision" in listed.stderr
    found = cli("search", "alpha", "--store", str(store), "--json").json["results"]
    assert [r["id"] for r in found] == [first] and "alpha" in found[0]["snippet"]
    shown = cli("show", first, "--store", str(store), "--json").json
    assert "alpha words" in shown["page"]["payload"]["content"]
    assert "invalid_file" in doctor_kinds(store)


def test_a_broken_head_file_marking_the_page_more_sensitive_is_not_served(store: Path) -> None:
    first, _ = _two_pages(store)
    head = next((store / "pages").rglob(f"{first}.md"))
    head.write_text(head.read_text("utf-8").replace("sensitivity: low", "sensitivity: high\n"
                                                    "tags: [unclosed"), "utf-8")
    assert first not in [p["page_id"] for p in cli("ls", "--store", str(store),
                                                   "--json").json]


def test_validate_sees_git_conflict_markers(store: Path) -> None:
    first, _ = _two_pages(store)
    head = next((store / "pages").rglob(f"{first}.md"))
    head.write_text(head.read_text("utf-8").replace(
        "alpha words", "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other"), "utf-8")
    valid = cli("validate", "--store", str(store), "--json")
    assert valid.code == 5
    assert [p["message"][:21] for p in valid.json["problems"]] == ["git conflict markers "]
    assert list(doctor_kinds(store)) == ["conflict_markers"]
