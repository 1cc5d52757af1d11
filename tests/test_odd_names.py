"""A file whose name is not UTF-8 (a Latin-1 name from an old share or zip) stops nothing: every
importer skips it with a warning that names it escaped (`caf\\xe9.md`) and imports the rest; the
store's own commands name such a file under `pages/` and serve every page; `pcp watch` says it
once and keeps watching. Nothing is printed or stored raw, and no traceback is shown.

Real processes where the name meets stdout, stderr or a JSON document: the bug was there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from tests.adapters.adapter_builders import gpt_branching, write_folder
from tests.conftest import cli, run_pcp

LATIN1 = os.fsdecode(b"caf\xe9")  # "café" in Latin-1: not UTF-8, so a lone surrogate in Python
SHOWN = "caf\\xe9"  # how pcp names it
SESSIONS = Path(__file__).parent / "data" / "sessions"
CLAUDE_LOG = SESSIONS / "claude" / "projects" / "-home-ada-code-tidewatch" / \
    "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"


@pytest.fixture(autouse=True)
def _names_allowed(tmp_path: Path) -> None:
    try:
        (tmp_path / f"{LATIN1}.probe").write_text("x")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses names that are not UTF-8")


def vault(folder: Path) -> Path:
    folder.mkdir()
    (folder / "tide.md").write_text("# Tide\n\nThe tide gauge reads high.\n")
    (folder / f"{LATIN1}.md").write_text("# Cafe\n\nNotes from the cafe.\n")
    (folder / LATIN1).mkdir()
    (folder / LATIN1 / "inside.md").write_text("# Inside\n\nA note in an oddly named folder.\n")
    (folder / "plain").mkdir()
    (folder / "plain" / "kelp.md").write_text("# Kelp\n\nKelp grows fast.\n")
    return folder


def titles(store: Path) -> set[str]:
    return {page["title"] for page in cli("ls", "--store", str(store), "--json").json}


def test_a_note_whose_name_is_not_utf8_is_skipped_by_name_and_the_rest_imported(
        store: Path, tmp_path: Path) -> None:
    folder = vault(tmp_path / "vault")
    human = run_pcp("import", str(folder), "--store", str(store))
    assert human.code == 0, human.stderr
    assert "Traceback" not in human.stderr
    assert "created 2, revised 0, unchanged 0, skipped 2, failed 0" in human.stdout
    assert f"skipped: {folder}/{SHOWN}.md [{SHOWN}.md]: the file name is not valid UTF-8" \
        in human.stderr
    assert f"[{SHOWN}/inside.md]" in human.stderr
    assert titles(store) == {"Tide", "Kelp"}

    again = run_pcp("import", str(folder), "--store", str(store), "--json")
    assert again.code == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["unchanged"], summary["skipped"]) == (2, 2)
    assert {p["item"] for p in summary["problems"]} == {f"{SHOWN}.md", f"{SHOWN}/inside.md"}


def test_a_vault_whose_own_folder_is_not_named_in_utf8_imports(store: Path,
                                                               tmp_path: Path) -> None:
    folder = tmp_path / LATIN1
    folder.mkdir()
    (folder / "tide.md").write_text("# Tide\n\nThe tide gauge reads high.\n")
    result = run_pcp("import", str(folder), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["created"] == 1 and summary["source"].endswith(SHOWN)
    [page] = cli("ls", "--store", str(store), "--json").json
    shown = run_pcp("show", page["page_id"], "--store", str(store), "--json")
    assert shown.code == 0, shown.stderr
    assert json.loads(shown.stdout)["page"]["provenance"][0]["note"] == \
        f"imported from {SHOWN}"


def test_session_logs_and_chat_exports_skip_what_is_not_named_in_utf8(store: Path,
                                                                     tmp_path: Path) -> None:
    logs = tmp_path / "projects" / "-home-ada-code-tidewatch"
    logs.mkdir(parents=True)
    shutil.copy(CLAUDE_LOG, logs / CLAUDE_LOG.name)
    shutil.copy(CLAUDE_LOG, logs / f"{LATIN1}.jsonl")
    result = run_pcp("import", str(tmp_path / "projects"), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["created"] == 1 and summary["skipped"] == 1
    assert summary["problems"][0]["item"] == f"-home-ada-code-tidewatch/{SHOWN}.jsonl"

    export = write_folder(tmp_path / "chatgpt", {"conversations.json": [gpt_branching()],
                                                 f"conversations-{LATIN1}.json": []})
    result = run_pcp("import", str(export), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["format"] == "chatgpt" and summary["created"] == 1
    assert [p["item"] for p in summary["problems"]] == [f"conversations-{SHOWN}.json"]


def test_an_archive_whose_file_name_is_not_utf8_imports_and_imports_again_unchanged(
        example: Path, store: Path, tmp_path: Path) -> None:
    archive = tmp_path / f"{LATIN1}.json"
    archive.write_text(cli("export", "--format", "archive", "--store", str(example)).stdout)
    first = run_pcp("import", str(archive), "--store", str(store), "--json")
    assert first.code == 0, first.stderr
    assert json.loads(first.stdout)["created"] > 0
    again = run_pcp("import", str(archive), "--store", str(store), "--json")
    assert again.code == 0, again.stderr
    assert json.loads(again.stdout)["created"] == 0


def test_a_file_under_pages_whose_name_is_not_utf8_is_named_and_every_page_served(
        store: Path) -> None:
    page = cli("add", "The tide gauge reads high.", "--store", str(store), "--json").json
    folder = next((store / "pages").rglob(f"{page['page_id']}.md")).parent
    (folder / f"{LATIN1}.md").write_text("dropped by hand\n")
    (folder / LATIN1).mkdir()
    (folder / LATIN1 / "inner.md").write_text("in an oddly named folder\n")
    for args in (("ls", "--json"), ("status",), ("status", "--json"), ("search", "tide"),
                 ("search", "tide", "--json")):
        result = cli(*args, "--store", str(store))
        assert result.code == 0, (args, result.stderr)
        assert "unexpected" not in result.stderr
    listed = run_pcp("ls", "--store", str(store))  # a real process: its stdout is UTF-8
    assert listed.code == 0 and "Traceback" not in listed.stderr
    assert page["page_id"] in listed.stdout
    doctor = run_pcp("doctor", "--store", str(store), "--json")
    assert doctor.code == 8, doctor.stderr  # reported, left for the person to rename
    found = {(f["kind"], f["path"].rsplit("/", 1)[-1]) for f in json.loads(doctor.stdout)[
        "findings"]}
    assert found == {("not_text", f"{SHOWN}.md"), ("not_text", SHOWN)}
    validate = run_pcp("validate", str(store))
    assert validate.code != 0 and f"{SHOWN}.md" in validate.stderr
    assert "Traceback" not in validate.stderr

    # renamed, it is adopted like any file dropped under pages/
    (folder / f"{LATIN1}.md").rename(folder / "cafe.md")
    assert "dropped by hand" in cli("search", "dropped", "--store", str(store)).stdout


def test_git_status_names_a_file_that_is_not_utf8_escaped(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "gitstore"
    assert cli("init", str(root), "--owner", "tester", "--git").code == 0
    (root / f"{LATIN1}.txt").write_text("x")
    result = run_pcp("status", "--store", str(root), "--json")
    assert result.code == 0, result.stderr
    paths = {c["path"] for c in json.loads(result.stdout)["git"]["uncommitted"]}
    assert f"{SHOWN}.txt" in paths


def settled(watcher) -> list[Path]:
    """What the watcher would import next: its pending paths once their stat held still (its
    settle time is 0: the second look)."""
    for _ in range(3):
        ready = watcher.ready()
        if ready:
            return ready
    raise AssertionError("nothing pending")


def test_the_watcher_names_a_note_that_is_not_utf8_once_and_imports_the_rest(
        store: Path, tmp_path: Path) -> None:
    """The watcher's own logic, in this process (the real watch below is in the slow set)."""
    from pcp_cli.capture.watch import Watcher

    folder = tmp_path / "vault"
    folder.mkdir()
    said: list[str] = []
    watcher = Watcher(store, {folder: "markdown"}, settle=0, say=said.append)
    bad, good = folder / f"{LATIN1}.md", folder / "tide.md"
    bad.write_text("# Cafe\n")
    good.write_text("# Tide\n\nhigh\n")
    watcher.note([bad, good])
    watcher.note([bad])
    watcher.import_paths(settled(watcher))
    assert titles(store) == {"Tide"}
    skipped = [line for line in said if line.startswith("skipped:")]
    assert skipped == [f"skipped: {folder}/{SHOWN}.md [{SHOWN}.md]: the file name is not valid "
                       "UTF-8; skipped (rename the file to import it)"]
    bad.rename(folder / "cafe.md")  # renamed from a name never imported: just a new note
    watcher.note([bad, folder / "cafe.md"], moved=True)
    watcher.import_paths(settled(watcher))
    assert titles(store) == {"Tide", "Cafe"}


@pytest.mark.slow
def test_a_real_watch_skips_a_note_that_is_not_utf8_and_keeps_watching(
        store: Path, tmp_path: Path) -> None:
    from tests.test_watch_folders import pages, start, until

    folder = tmp_path / "vault"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nthere from the start\n")
    proc = start(store, str(folder))
    try:
        until(lambda: "First" in pages(store), "catch up with the vault")
        (folder / f"{LATIN1}.md").write_text("# Cafe\n\nnot imported\n")
        (folder / "later.md").write_text("# Later\n\nwritten after the odd one\n")
        until(lambda: "Later" in pages(store), "import the note after the odd one")
        assert proc.poll() is None, "the watch ended"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and err.rstrip().endswith("stopped")
    assert err.count(f"skipped: {folder}/{SHOWN}.md [{SHOWN}.md]") == 1, err
    assert set(pages(store)) == {"First", "Later"}


def test_the_hook_log_keeps_a_path_that_is_not_utf8(store: Path) -> None:
    from pcp_cli.capture import queue

    queue.log(store, f"import of claude-code:x from /tmp/{LATIN1}.jsonl failed")
    assert f"/tmp/{SHOWN}" in (store / ".pcp" / "hooks" / "hooks.log").read_text("utf-8")


def test_shown_escapes_undecodable_bytes_and_control_characters() -> None:
    from pcp_cli.model.filenames import is_text, shown

    assert shown("plain/notes.md") == "plain/notes.md"
    assert shown("Café ☕.md") == "Café ☕.md"
    assert shown(f"{LATIN1}.md") == f"{SHOWN}.md"
    assert shown(b"caf\xe9.md") == f"{SHOWN}.md"
    assert shown("red\x1b[31m.md") == "red\\x1b[31m.md"
    assert shown("\ud800") == "\\ud800"  # a lone surrogate from JSON, not from a file name
    assert is_text("Café.md") and not is_text(f"{LATIN1}.md")


def test_watch_is_not_stopped_by_an_unexpected_error_in_one_folder(store: Path,
                                                                   tmp_path: Path,
                                                                   monkeypatch) -> None:
    from pcp_cli import api
    from pcp_cli.capture.watch import Watcher

    folder = tmp_path / "vault"
    folder.mkdir()
    (folder / "tide.md").write_text("# Tide\n")
    said: list[str] = []
    watcher = Watcher(store, {folder: "markdown"}, settle=0, say=said.append)

    def broken(*args, **kwargs):
        raise UnicodeEncodeError("utf-8", "x", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(api, "import_path", broken)
    watcher.import_paths([folder / "tide.md"])  # said, not raised
    assert said and "unexpected UnicodeEncodeError" in said[-1]


def test_an_argument_that_is_not_utf8_is_a_usage_error_naming_it(store: Path,
                                                                 tmp_path: Path) -> None:
    """A terminal in another encoding: a page reference, a namespace or a page's text that is
    not UTF-8 is exit 2 naming it; a path that is not UTF-8 is a path like any other."""
    for args in (("show", f"{LATIN1}"), ("add", f"{LATIN1} au lait"),
                 ("ls", "--namespace", LATIN1)):
        result = run_pcp(*args, "--store", str(store))
        assert result.code == 2, (args, result.stderr)
        assert f"Error: the argument {SHOWN}" in result.stderr and "Traceback" not in \
            result.stderr
    missing = run_pcp("import", str(tmp_path / LATIN1), "--store", str(store), "--json")
    assert missing.code == 5
    error = json.loads(missing.stderr)["error"]
    assert error["message"].endswith(f"{SHOWN}: no such file or folder")
