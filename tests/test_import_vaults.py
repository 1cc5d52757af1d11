"""Two Markdown folders holding the same paths (`README.md`, `todo.md`, daily notes) are two
vaults: each keeps its own pages, on every device, and nothing acknowledged is replaced."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pcp_cli.capture.watch import Watcher
from pcp_cli.store.store import page_id_for_key
from tests.conftest import Result, cli, run_pcp, snapshot

NOTES = {
    "work": {"README.md": "# Work readme\n\nThe quarterly roadmap for the harbour project.\n",
             "todo.md": "# Todo\n\nFile the tide-gauge report.\n",
             "daily/2026-01-01.md": "# New year at work\n\nSee [[todo]].\n"},
    "personal": {"README.md": "# Personal readme\n\nMy sourdough starter’s feeding times.\n",
                 "todo.md": "# Todo\n\nRepot the fig tree 🌱.\n",
                 "daily/2026-01-01.md": "# New year at home\n\nSee [[todo]].\n"},
}


def vault(parent: Path, name: str, notes: dict[str, str] | None = None) -> Path:
    folder = parent / name
    for rel, text in (notes or NOTES[name]).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def imp(store: Path, folder: Path, *args: str) -> Result:
    return cli("import", str(folder), "--store", str(store), "--json", *args)


def counts(result: Result) -> tuple[int, int, int]:
    assert result.code == 0, result.stderr
    data = result.json
    return data["created"], data["revised"], data["unchanged"]


def titles(store: Path) -> dict[str, str]:
    return {p["page_id"]: p["title"] for p in cli("ls", "--store", str(store), "--json").json}


def search(store: Path, words: str) -> list[str]:
    found = cli("search", words, "--store", str(store), "--json")
    assert found.code == 0, found.stderr
    listed = titles(store)
    return [listed[hit["id"]] for hit in found.json["results"]]


def test_two_vaults_with_the_same_paths_keep_their_own_pages(store: Path, tmp_path: Path) -> None:
    work, personal = vault(tmp_path, "work"), vault(tmp_path, "personal")
    folders = snapshot(work), snapshot(personal)
    first = imp(store, work)
    assert counts(first) == (3, 0, 0)
    assert first.json["vault"] == {"name": "work", "key_prefix": "markdown:"}
    # The first vault keeps the keys every store has always had: its ids are what they were.
    ids = {rel: page_id_for_key(f"markdown:{rel}") for rel in NOTES["work"]}
    assert set(ids.values()) <= set(titles(store))

    second = imp(store, personal)
    assert counts(second) == (3, 0, 0)  # before: 0 created, 2 revised (the work pages)
    assert second.json["vault"] == {"name": "personal", "key_prefix": "markdown@personal:"}
    listed = titles(store)
    assert len(listed) == 6
    assert {listed[ids[rel]] for rel in ids} == {"Work readme", "Todo", "New year at work"}
    assert search(store, "quarterly roadmap") == ["Work readme"]
    assert search(store, "sourdough starter") == ["Personal readme"]

    # Each vault's wikilink names its own todo.md, never the other vault's.
    home_day = page_id_for_key("markdown@personal:daily/2026-01-01.md")
    home_todo = page_id_for_key("markdown@personal:todo.md")
    related = cli("show", home_day, "--view", "relations", "--store", str(store), "--json").json
    assert home_todo in json.dumps(related) and ids["todo.md"] not in json.dumps(related)

    before = snapshot(store)
    assert counts(imp(store, work)) == (0, 0, 3)
    assert counts(imp(store, personal)) == (0, 0, 3)
    assert snapshot(store) == before  # not a file changed: no revision, no relation
    assert set(titles(store)) == set(listed)
    # what the store records, committed; nothing was written into either folder
    records = [json.loads(p.read_text()) for p in sorted((store / "vaults").iterdir())]
    assert sorted(records, key=lambda r: r["name"]) == [
        {"key_prefix": "markdown@personal:", "name": "personal"},
        {"key_prefix": "markdown:", "name": "work"}]
    assert (snapshot(work), snapshot(personal)) == folders


def test_the_same_vaults_on_another_device_find_their_pages(store: Path, tmp_path: Path) -> None:
    here = tmp_path / "here"
    for name in ("work", "personal"):
        assert counts(imp(store, vault(here, name)))[0] == 3
    # the store as git carries it to another device (no .pcp/), the vaults cloned elsewhere
    clone = tmp_path / "device-b" / "store"
    shutil.copytree(store, clone, ignore=shutil.ignore_patterns(".pcp"))
    there = tmp_path / "device-b" / "Documents"
    before = snapshot(clone)
    for name in ("personal", "work"):  # the other order too
        moved = shutil.copytree(here / name, there / name)
        assert counts(imp(clone, moved)) == (0, 0, 3)
    assert snapshot(clone) == before


def legacy(store: Path, *, keep_device_record: bool) -> None:
    """The store as pcp left it before vaults were recorded."""
    shutil.rmtree(store / "vaults")
    sources = store / ".pcp" / "imported-sources.json"
    if keep_device_record:
        data = json.loads(sources.read_text())
        sources.write_text(json.dumps({k: {"format": v["format"]} for k, v in data.items()}))
    else:
        sources.unlink()


@pytest.mark.parametrize("keep_device_record", [True, False],
                         ids=["the-device-that-imported-it", "another-device"])
def test_a_store_from_before_vaults_keeps_its_pages(store: Path, tmp_path: Path,
                                                     keep_device_record: bool) -> None:
    work = vault(tmp_path, "work")
    assert counts(imp(store, work)) == (3, 0, 0)
    legacy(store, keep_device_record=keep_device_record)
    ids = set(titles(store))

    # another folder with the same paths first: its notes are not the plain pages' folder
    # (their revisions say they were imported from "work"), so they get pages of their own
    assert counts(imp(store, vault(tmp_path, "personal"))) == (3, 0, 0)
    assert counts(imp(store, work)) == (0, 0, 3)  # and the old vault keeps its pages
    assert ids < set(titles(store)) and len(titles(store)) == 6

    legacy(store, keep_device_record=keep_device_record)
    # a folder sharing no path with the plain pages does not take their keys either
    other = imp(store, vault(tmp_path, "other", {"ideas.md": "# Ideas\n"}))
    assert other.json["vault"] == {"name": "other", "key_prefix": "markdown@other:"}
    assert counts(imp(store, work)) == (0, 0, 3)


def test_a_namesake_folder_is_refused_until_named(store: Path, tmp_path: Path) -> None:
    work = vault(tmp_path / "work", "notes", NOTES["work"])
    home = vault(tmp_path / "home", "notes", NOTES["personal"])
    assert counts(imp(store, work)) == (3, 0, 0)
    before = snapshot(store)

    refused = run_pcp("import", str(home), "--store", str(store))
    assert refused.code == 2, refused.stderr
    error = refused.stderr.splitlines()[0]
    assert error == (f"Error: {home}: {work} is already imported as vault 'notes'; import this "
                     "folder with --as NAME")
    assert "Traceback" not in refused.stderr
    assert snapshot(store) == before

    assert counts(imp(store, home, "--as", "home-notes")) == (3, 0, 0)
    # this device remembers the name: the next import (and `pcp watch`) need no --as
    assert counts(imp(store, home)) == (0, 0, 3)
    assert counts(imp(store, work)) == (0, 0, 3)
    assert search(store, "sourdough starter") == ["Personal readme"]
    assert search(store, "quarterly roadmap") == ["Work readme"]


def test_pages_whose_folder_cannot_be_named_stop_the_import(store: Path, tmp_path: Path) -> None:
    work = vault(tmp_path, "work")
    assert cli("import", ".", "--store", str(store), cwd=work).code == 0
    legacy(store, keep_device_record=False)  # and its revisions say "imported from "
    home = vault(tmp_path, "personal")
    before = snapshot(store)
    refused = imp(store, home)
    assert refused.code == 2
    assert refused.error_json["error"]["message"].startswith(f"{home}/")
    assert "--as NAME" in refused.error_json["error"]["message"]
    assert snapshot(store) == before
    assert counts(imp(store, home, "--as", "personal")) == (3, 0, 0)


def test_bad_vault_names_and_as_elsewhere_are_usage_errors(store: Path, tmp_path: Path) -> None:
    odd = vault(tmp_path, "a:b", NOTES["work"])
    before = snapshot(store)
    result = imp(store, odd)
    assert result.code == 2 and "--as NAME" in result.error_json["error"]["hint"]
    assert imp(store, odd, "--as", "x/y").code == 2
    chat = tmp_path / "conversations.json"
    chat.write_text("[]")
    assert imp(store, chat, "--format", "chatgpt", "--as", "x").code == 2
    assert snapshot(store) == before
    assert counts(imp(store, odd, "--as", "ab")) == (3, 0, 0)


def test_a_dry_run_records_no_vault(store: Path, tmp_path: Path) -> None:
    imp(store, vault(tmp_path, "work"))
    before = snapshot(store)
    planned = imp(store, vault(tmp_path, "personal"), "--dry-run")
    assert counts(planned) == (3, 0, 0)
    assert planned.json["vault"]["key_prefix"] == "markdown@personal:"
    assert snapshot(store) == before


def test_watching_two_vaults_touches_each_ones_own_pages(store: Path, tmp_path: Path) -> None:
    work, personal = vault(tmp_path, "work"), vault(tmp_path, "personal")
    said: list[str] = []
    watcher = Watcher(store, {work: "markdown", personal: "markdown"}, settle=0,
                      say=said.append)
    watcher.import_paths([work, personal])  # the catch-up of `pcp watch`
    assert len(titles(store)) == 6
    assert search(store, "sourdough starter") == ["Personal readme"]

    (personal / "README.md").unlink()
    watcher.import_paths([personal / "README.md"])
    statuses = {p["page_id"]: p["lifecycle_status"]
                for p in cli("ls", "--store", str(store), "--json", "--status", "active",
                                 "--status", "archived").json}
    assert statuses[page_id_for_key("markdown@personal:README.md")] == "archived"
    assert statuses[page_id_for_key("markdown:README.md")] == "active"

    (work / "todo.md").write_text("# Todo\n\nFile the tide-gauge report by Friday.\n")
    watcher.import_paths([work / "todo.md"])
    assert search(store, "Friday") == ["Todo"]
    assert search(store, "fig tree") == ["Todo"]
    assert not any("Traceback" in line for line in said)


@pytest.mark.slow
def test_a_real_watch_on_two_vaults(store: Path, tmp_path: Path) -> None:
    from tests.test_watch_folders import lifecycles, start, stop, until

    work, personal = vault(tmp_path, "work"), vault(tmp_path, "personal")
    proc = start(store, str(work), str(personal))
    try:
        until(lambda: len(titles(store)) == 6, "catch up with both vaults")
        (personal / "todo.md").rename(personal / "chores.md")
        chores = page_id_for_key("markdown@personal:chores.md")
        until(lambda: lifecycles(store).get(page_id_for_key("markdown@personal:todo.md"))
              == "superseded" and chores in titles(store), "link the renamed note")
    finally:
        stop(proc)
    assert lifecycles(store)[page_id_for_key("markdown:todo.md")] == "active"
    assert search(store, "fig tree") == ["Todo"]
    assert counts(imp(store, work)) == (0, 0, 3)
