"""init --git, status, resolve and sync one at a time: their JSON, their edge cases, their exits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.gitsync_helpers import (
    MARKER,
    Device,
    clone_device,
    first_device,
    fsck_clean,
    git,
    git_env,
    make_remote,
    no_markers_anywhere,
    write_editor,
)


@pytest.fixture(autouse=True)
def _git(monkeypatch: pytest.MonkeyPatch) -> None:
    git_env(monkeypatch)


def diverged_pair(tmp_path: Path, *, driver: bool) -> tuple[Device, Device, str]:
    """laptop and desktop both revised one page; the laptop has pushed, the desktop has not."""
    bare = make_remote(tmp_path)
    laptop = first_device(tmp_path, bare)
    page_id = laptop.add("# Plan\n\nFirst draft.")
    laptop.sync()
    desktop = clone_device(tmp_path, bare, "desktop", driver=driver)
    laptop.pcp("revise", page_id, "# Plan\n\nLaptop draft.")
    desktop.pcp("revise", page_id, "# Plan\n\nDesktop draft.")
    laptop.sync()
    return laptop, desktop, page_id


# -- init ---------------------------------------------------------------------------------------
def test_init_git_creates_a_repository_with_ignore_attributes_and_driver(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    data = cli("init", "--git", str(root), "--owner", "ada", "--json").json
    assert data["git"]["created"] is True
    assert (root / ".git").is_dir()
    assert ".pcp/" in (root / ".gitignore").read_text().splitlines()
    assert "pages/**/*.md merge=pcp" in (root / ".gitattributes").read_text().splitlines()
    assert git(root, "check-attr", "merge", "pages/user/ada/x.md").stdout.strip().endswith("pcp")


def shim(folder: Path) -> Path:
    """A `pcp-cli` on PATH, as `pipx install` or `uv tool install` would put there."""
    import sys

    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "pcp-cli"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m pcp_cli \"$@\"\n")
    script.chmod(0o755)
    return folder


def path_with(*folders: Path) -> str:
    """PATH holding `folders` and git, but no other pcp-cli."""
    import shutil

    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent
    return os.pathsep.join([*(str(f) for f in folders), str(git_dir), "/bin", "/usr/bin"])


@pytest.mark.slow
def test_the_merge_driver_is_registered_by_a_stable_name_that_outlives_its_venv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = shim(tmp_path / "venv-one" / "bin")
    monkeypatch.setenv("PATH", path_with(first))
    root = tmp_path / "ctx"
    assert cli("init", "--git", str(root), "--owner", "ada").code == 0
    driver = git(root, "config", "--get", "merge.pcp.driver").stdout.strip()
    assert driver == "pcp-cli merge-file %O %A %B %P"  # a name, not a path into the venv
    assert cli("doctor", "--store", str(root)).code == 0
    # the venv it was registered from is deleted; pcp is installed elsewhere on PATH
    import shutil

    shutil.rmtree(tmp_path / "venv-one")
    monkeypatch.setenv("PATH", path_with(shim(tmp_path / "pipx" / "bin")))
    assert cli("doctor", "--store", str(root)).code == 0
    # and nothing on PATH at all: doctor says the registered driver no longer runs
    monkeypatch.setenv("PATH", path_with())
    broken = cli("doctor", "--store", str(root))
    assert broken.code == 8
    assert "merge driver `pcp-cli merge-file %O %A %B %P` no longer runs" in broken.stdout


def test_without_pcp_cli_on_path_the_driver_is_this_interpreter_and_doctor_can_fix_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setenv("PATH", path_with())
    root = tmp_path / "ctx"
    assert cli("init", "--git", str(root), "--owner", "ada").code == 0
    driver = git(root, "config", "--get", "merge.pcp.driver").stdout.strip()
    assert driver.endswith("-m pcp_cli merge-file %O %A %B %P")
    assert driver.split(" -m ")[0].strip("'") == sys.executable
    # registered from a venv that is gone since
    git(root, "config", "merge.pcp.driver",
        "/gone/venv/bin/python -m pcp_cli merge-file %O %A %B %P")
    report = cli("doctor", "--store", str(root), "--json")
    assert report.code == 8
    found = [f for f in report.json["findings"] if f["kind"] == "merge_driver"]
    assert found and "no longer runs" in found[0]["message"] and not found[0]["fixed"]
    monkeypatch.setenv("PATH", path_with(shim(tmp_path / "pipx" / "bin")))
    fixed = cli("doctor", "--fix", "--store", str(root))
    assert fixed.code == 0, fixed.stdout + fixed.stderr
    assert git(root, "config", "--get", "merge.pcp.driver").stdout.strip() == \
        "pcp-cli merge-file %O %A %B %P"
    assert cli("doctor", "--store", str(root)).code == 0


def test_init_inside_a_work_tree_sets_up_git_without_the_flag(tmp_path: Path) -> None:
    git(tmp_path, "init", "--quiet", "repo")
    (tmp_path / "repo" / ".gitattributes").write_text("*.png binary\n")
    data = cli("init", str(tmp_path / "repo" / "context"), "--owner", "ada", "--json").json
    assert data["git"]["created"] is False
    assert data["git"]["repository"] == str((tmp_path / "repo").resolve())
    assert (tmp_path / "repo" / "context" / ".gitattributes").exists()
    assert git(tmp_path / "repo", "config", "--get", "merge.pcp.driver").returncode == 0


def test_init_outside_git_writes_no_attributes(tmp_path: Path) -> None:
    data = cli("init", str(tmp_path / "plain"), "--owner", "ada", "--json").json
    assert "git" not in data
    assert not (tmp_path / "plain" / ".gitattributes").exists()


def test_init_git_in_a_cloned_store_only_registers_the_driver(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    laptop = first_device(tmp_path, bare)
    laptop.add("hello")
    laptop.sync()
    desktop = clone_device(tmp_path, bare, "desktop", driver=False)
    assert desktop.status()["git"]["merge_driver"] is False
    before = desktop.files("pages")
    result = cli("init", "--git", str(desktop.root), "--json")
    assert result.code == 0, result.stderr
    assert desktop.status()["git"]["merge_driver"] is True
    assert desktop.files("pages") == before and not desktop.status()["git"]["uncommitted"]


# -- status -------------------------------------------------------------------------------------
def test_status_reports_without_recording(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    laptop = first_device(tmp_path, bare)
    page_id = laptop.add("# Note\n\nOriginal.")
    gone = laptop.add("# Other\n\nIts head file goes missing.")
    laptop.sync()
    head = next((laptop.root / "pages").rglob(f"{page_id}.md"))
    head.write_text(head.read_text().replace("Original.", "Edited by hand."))
    (laptop.root / "pages" / "dropped.md").write_text("# Dropped\n\nA new file.\n")
    next((laptop.root / "pages").rglob(f"{gone}.md")).unlink()
    revisions = laptop.files("revisions")

    status = laptop.status()
    assert laptop.files("revisions") == revisions  # status never records anything
    assert {(h["kind"], h["page_id"]) for h in status["hand_edits"]} == {
        ("edited", page_id), ("new_file", None)}
    assert status["missing_head_files"] == [{"page_id": gone, "revisions": 1}]
    uncommitted = {(c["path"], c["status"]) for c in status["git"]["uncommitted"]}
    assert (f"pages/user/ada/{page_id}.md", "M") in uncommitted
    assert ("pages/dropped.md", "??") in uncommitted
    assert status["clean"] is False
    human = laptop.pcp("status")
    assert "hand edit" in human.stdout and "missing head file" in human.stdout


def test_status_outside_git(store: Path) -> None:
    data = cli("status", "--store", str(store), "--json").json
    assert data["git"] is None and data["clean"] is True


# -- plain git pull (no pcp sync) ---------------------------------------------------------------
@pytest.mark.slow
def test_plain_git_pull_without_driver_is_detected_never_served_and_repaired(
        tmp_path: Path) -> None:
    laptop, desktop, page_id = diverged_pair(tmp_path, driver=False)
    desktop.git("add", "-A")
    desktop.git("commit", "-qm", "desktop draft")
    pull = desktop.git("pull", "--no-rebase", "--no-edit", "origin", "master", check=False)
    assert pull.returncode != 0  # git's text merge conflicts on the head file
    head = next((desktop.root / "pages").rglob(f"{page_id}.md"))
    assert MARKER in head.read_text()

    status = desktop.status()
    assert [c["page_id"] for c in status["conflicts"]] == [page_id]
    assert status["git"]["in_progress"] == "merge"
    assert status["git"]["unmerged"] == [f"pages/user/ada/{page_id}.md"]
    assert {d["page_id"] for d in status["diverged"]} == {page_id}
    shown = desktop.pcp("show", page_id, "--json").json
    assert MARKER not in str(shown) and shown["revision_id"] in shown["heads"]
    assert MARKER not in desktop.pcp("show", page_id).stdout
    assert MARKER not in desktop.pcp("ls", "--json").stdout
    assert MARKER not in desktop.pcp("show", page_id, "--view", "payload").stdout

    refused = desktop.pcp("sync", ok=False)
    assert refused.code == 4
    assert "middle of a merge" in refused.stderr and "pcp resolve PAGE_ID" in refused.stderr
    refused_json = desktop.pcp("sync", "--json", ok=False)
    assert refused_json.error_json["error"]["code"] == "git_busy"

    desktop.pcp("doctor", "--fix", ok=False)  # exits 8: divergence remains, needs a person
    assert MARKER not in head.read_text()
    desktop.git("add", "-A")
    desktop.git("commit", "-q", "--no-edit")
    desktop.sync()
    laptop.sync()
    no_markers_anywhere(desktop)
    assert laptop.files("pages") == desktop.files("pages")
    assert laptop.diverged() == desktop.diverged() == {page_id}


def test_plain_git_pull_with_driver_merges_without_markers(tmp_path: Path) -> None:
    laptop, desktop, page_id = diverged_pair(tmp_path, driver=True)
    desktop.git("add", "-A")
    desktop.git("commit", "-qm", "desktop draft")
    desktop.git("pull", "--no-rebase", "--no-edit", "origin", "master")
    no_markers_anywhere(desktop)
    heads = desktop.heads(page_id)
    assert len(heads) == 2
    shown = desktop.pcp("show", page_id, "--json").json
    assert shown["revision_id"] == heads[-1]  # the newer head, on every device
    assert desktop.status()["git"]["uncommitted"] == []
    fsck_clean(desktop.root)


# -- resolve ------------------------------------------------------------------------------------
def test_resolve_refusals(tmp_path: Path) -> None:
    laptop, desktop, page_id = diverged_pair(tmp_path, driver=True)
    desktop.sync()
    heads = desktop.heads(page_id)
    result = desktop.pcp("resolve", page_id, ok=False)
    assert result.code == 2 and "2 heads" in result.stderr
    result = desktop.pcp("resolve", page_id, "--keep", heads[0], "--edit", ok=False)
    assert result.code == 2
    result = desktop.pcp("resolve", "pg_nope", "--keep", heads[0], ok=False)
    assert result.code == 3
    result = desktop.pcp("resolve", page_id, "--keep", "rev_01NOPE", ok=False)
    assert result.code == 3
    os.environ["EDITOR"] = write_editor(tmp_path, "<<<<<<< ours\nA\n=======\nB\n>>>>>>> x\n")
    try:
        result = desktop.pcp("resolve", page_id, "--edit", ok=False)
    finally:
        del os.environ["EDITOR"]
    assert result.code == 5 and "conflict markers" in result.stderr
    assert len(desktop.heads(page_id)) == 2  # nothing recorded


def test_resolve_keep_an_older_revision_joins_both_heads(tmp_path: Path) -> None:
    laptop, desktop, page_id = diverged_pair(tmp_path, driver=True)
    desktop.sync()
    heads = desktop.heads(page_id)
    history = desktop.pcp("history", page_id, "--json").json["revisions"]
    first = history[0]["revision_id"]
    data = desktop.pcp("resolve", page_id, "--keep", first, "--json").json
    assert data["status"] == "resolved" and sorted(data["parents"]) == sorted(heads)
    page = desktop.pcp("show", page_id, "--json").json["page"]
    assert page["payload"]["content"] == "# Plan\n\nFirst draft.\n"
    assert desktop.heads(page_id) == [data["revision_id"]]


def test_resolve_edit_offers_both_texts_and_records_the_result(tmp_path: Path) -> None:
    laptop, desktop, page_id = diverged_pair(tmp_path, driver=True)
    desktop.sync()
    heads = desktop.heads(page_id)
    seen = tmp_path / "seen.md"
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys, pathlib, shutil\n"
        f"shutil.copy(sys.argv[1], {str(seen)!r})\n"
        "pathlib.Path(sys.argv[1]).write_text('# Plan\\n\\nBoth drafts, combined.\\n')\n")
    os.environ["EDITOR"] = f"{__import__('sys').executable} {script}"
    try:
        data = desktop.pcp("resolve", page_id, "--edit", "--json").json
    finally:
        del os.environ["EDITOR"]
    proposal = seen.read_text()
    assert "Laptop draft." in proposal and "Desktop draft." in proposal
    assert all(h in proposal for h in heads)
    assert data["status"] == "resolved" and sorted(data["parents"]) == sorted(heads)
    assert desktop.heads(page_id) == [data["revision_id"]]
    page = desktop.pcp("show", page_id, "--json").json["page"]
    assert page["payload"]["content"] == "# Plan\n\nBoth drafts, combined.\n"
    assert desktop.status()["diverged"] == []


def test_resolve_repairs_a_conflicted_head_file_of_an_undiverged_page(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    laptop = first_device(tmp_path, bare)
    page_id = laptop.add("Just one head")
    head = next((laptop.root / "pages").rglob(f"{page_id}.md"))
    good = head.read_bytes()
    head.write_bytes(b"<<<<<<< HEAD\n" + good + b"=======\nx\n>>>>>>> other\n")
    assert [c["page_id"] for c in laptop.status()["conflicts"]] == [page_id]
    data = laptop.pcp("resolve", page_id, "--json").json
    assert data["status"] == "repaired" and head.read_bytes() == good
    assert laptop.pcp("resolve", page_id, "--json").json["status"] == "unchanged"


# -- sync ---------------------------------------------------------------------------------------
def test_sync_without_a_remote_commits_locally(tmp_path: Path) -> None:
    root = tmp_path / "solo"
    cli("init", "--git", str(root), "--owner", "ada")
    device = Device("solo", root)
    device.add("A thought")
    result = device.pcp("sync", "--json")
    data = result.json
    assert data["remote"] is None and data["pushed"] is False and len(data["committed"]) == 1
    assert "No git remote" in result.stderr
    again = device.sync()
    assert again["committed"] == []  # nothing to commit is not an error
    assert device.status()["clean"]
    unknown = device.pcp("sync", "--remote", "nowhere", ok=False)
    assert unknown.code == 2 and "no git remote named 'nowhere'" in unknown.stderr


def test_sync_records_hand_edits_before_committing(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    laptop = first_device(tmp_path, bare)
    page_id = laptop.add("# Note\n\nOriginal.")
    laptop.sync()
    head = next((laptop.root / "pages").rglob(f"{page_id}.md"))
    head.write_text(head.read_text().replace("Original.", "Edited in vim."))
    data = laptop.sync("-m", "my message")
    assert [e["page_id"] for e in data["hand_edits"]] == [page_id]
    assert laptop.git("log", "-1", "--format=%s").stdout.strip() == "my message"
    assert len(laptop.heads(page_id)) == 1
    assert laptop.status()["clean"]


def test_sync_to_an_unreachable_remote_exits_10_and_keeps_the_commit(tmp_path: Path) -> None:
    root = tmp_path / "away"
    cli("init", "--git", str(root), "--owner", "ada")
    device = Device("away", root)
    device.git("remote", "add", "origin", str(tmp_path / "no-such-remote.git"))
    device.add("Written offline")
    result = device.pcp("sync", "--json", ok=False)
    assert result.code == 10
    error = result.error_json["error"]
    assert error["code"] == "remote_failed" and "cannot reach remote 'origin'" in error["message"]
    assert device.git("rev-parse", "--verify", "HEAD", check=False).returncode == 0
    assert device.status()["git"]["uncommitted"] == []


def test_sync_refuses_during_a_rebase(tmp_path: Path) -> None:
    root = tmp_path / "r"
    cli("init", "--git", str(root), "--owner", "ada")
    device = Device("r", root)
    (root / ".git" / "rebase-merge").mkdir()
    result = device.pcp("sync", ok=False)
    assert result.code == 4 and "middle of a rebase" in result.stderr
    assert device.status()["git"]["in_progress"] == "rebase"


@pytest.mark.slow
def test_sync_a_store_in_a_subfolder_commits_only_the_store(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    git(tmp_path, "clone", "--quiet", str(bare), "dotfiles")
    repo = tmp_path / "dotfiles"
    (repo / "unrelated.txt").write_text("not pcp's business\n")
    cli("init", str(repo / "context"), "--owner", "ada")
    laptop = Device("laptop", repo / "context")
    page_id = laptop.add("Lives in a subfolder")
    data = laptop.sync()
    assert data["pushed"] is True
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert all(path.startswith("context/") for path in committed)
    assert git(repo, "status", "--porcelain").stdout.strip() == "?? unrelated.txt"

    git(tmp_path, "clone", "--quiet", str(bare), "dotfiles2")
    desktop = Device("desktop", tmp_path / "dotfiles2" / "context")
    desktop.pcp("revise", page_id, "Desktop version")
    laptop.pcp("revise", page_id, "Laptop version")
    desktop.sync()
    report = laptop.sync()
    assert report["merged"] == "merged"  # init inside the work tree registered the driver
    desktop.sync()
    assert laptop.files("pages") == desktop.files("pages")
    assert laptop.diverged() == desktop.diverged() == {page_id}
    no_markers_anywhere(laptop)


def hand_edited_on_both_sides(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Two devices agreeing on one head, then each editing it by hand and committing with plain
    git; the laptop has pushed, the desktop has not pulled yet."""
    laptop, desktop, page_id = diverged_pair(tmp_path, driver=True)
    desktop.sync()
    laptop.sync()
    laptop.pcp("resolve", page_id, "--keep", laptop.heads(page_id)[0])
    laptop.sync()
    desktop.sync()
    for device, words in ((laptop, "laptop hand"), (desktop, "desktop hand")):
        head = next((device.root / "pages").rglob(f"{page_id}.md"))
        head.write_text(head.read_text().rstrip("\n") + f"\n\n{words}\n")
        device.git("commit", "-qam", f"{words} (plain git)")
    laptop.git("push", "-q", "origin", "master")
    return laptop, desktop, page_id


@pytest.mark.slow
def test_sync_records_a_hand_edit_committed_with_plain_git_on_both_sides(tmp_path: Path) -> None:
    """Neither side's text may be lost, even when both were committed without pcp."""
    laptop, desktop, page_id = hand_edited_on_both_sides(tmp_path)
    report = desktop.sync()  # records the desktop's edit, then the driver keeps the laptop's
    assert [e["page_id"] for e in report["hand_edits"]] == [page_id]
    assert [e["page_id"] for e in report["recorded_after_merge"]] == [page_id]
    contents = {desktop.pcp("show", page_id, "--rev", h, "--view", "payload", "--json")
                .json["payload"]["content"] for h in desktop.heads(page_id)}
    assert any("laptop hand" in c for c in contents)
    assert any("desktop hand" in c for c in contents)
    laptop.sync()  # the laptop records its own committed edit too (it cannot know): harmless
    desktop.sync()
    assert laptop.files("revisions") == desktop.files("revisions")
    assert laptop.files("pages") == desktop.files("pages")
    no_markers_anywhere(desktop)


@pytest.mark.slow
def test_driver_conflict_from_plain_git_pull_is_settled_by_resolve(tmp_path: Path) -> None:
    """Both sides edited by hand and committed with plain git, pulled with plain git: the driver
    keeps ours without markers and reports a conflict; `pcp resolve` records both sides."""
    laptop, desktop, page_id = hand_edited_on_both_sides(tmp_path)
    pull = desktop.git("pull", "--no-rebase", "--no-edit", "origin", "master", check=False)
    assert pull.returncode != 0
    head = next((desktop.root / "pages").rglob(f"{page_id}.md"))
    assert MARKER not in head.read_text() and "desktop hand" in head.read_text()
    assert desktop.status()["git"]["unmerged"] == [f"pages/user/ada/{page_id}.md"]
    assert desktop.pcp("sync", ok=False).code == 4

    refused = desktop.pcp("resolve", page_id, ok=False)  # records both sides, then asks
    assert refused.code == 2
    heads = desktop.heads(page_id)
    contents = [desktop.pcp("show", page_id, "--rev", h, "--view", "payload", "--json")
                .json["payload"]["content"] for h in heads]
    assert len(heads) == 2
    assert any("laptop hand" in c for c in contents) and any("desktop hand" in c for c in contents)
    data = desktop.pcp("resolve", page_id, "--keep", heads[0], "--json").json
    assert data["status"] == "resolved"
    assert desktop.status()["git"]["unmerged"] == []
    desktop.git("commit", "-q", "--no-edit")
    desktop.sync()
    laptop.sync()  # records its own plain-git edit as well (a documented, visible duplicate)
    desktop.sync()
    assert laptop.files("revisions") == desktop.files("revisions")
    assert laptop.files("pages") == desktop.files("pages")
    assert laptop.diverged() == desktop.diverged()
    fsck_clean(desktop.root)


def test_sync_when_the_remote_refuses_the_push_exits_10(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    laptop = first_device(tmp_path, bare)
    laptop.add("First")
    laptop.sync()
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'read-only today' >&2\nexit 1\n")
    hook.chmod(0o755)
    laptop.add("Second")
    result = laptop.pcp("sync", ok=False)
    assert result.code == 10
    assert "refused the push" in result.stderr and "run `pcp sync` again" in result.stderr
    assert laptop.status()["git"]["uncommitted"] == []  # committed locally all the same
