"""Messages that read like a person wrote them, and the small surprises of issue #14."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.adapters.adapter_builders import gpt_branching, write_zip
from tests.conftest import cli, snapshot


def add(store: Path, text: str, *extra: str) -> str:
    return cli("add", text, *extra, "--store", str(store), "--json").json["page_id"]


def title_of(store: Path, page: str) -> str:
    return cli("show", page, "--json", "--store", str(store)).json["page"]["title"]


def test_revise_derives_the_title_again_when_the_first_line_changed(store: Path) -> None:
    page = add(store, "Old first line\n\nbody")
    assert cli("revise", page, "New first line\n\nbody", "--store", str(store)).code == 0
    assert title_of(store, page) == "New first line"
    # --title wins, and a title set by hand then stays when the text changes
    assert cli("revise", page, "Third\n\nbody", "--title", "Chosen", "--store",
               str(store)).code == 0
    assert title_of(store, page) == "Chosen"
    assert cli("revise", page, "Fourth\n\nbody", "--store", str(store)).code == 0
    assert title_of(store, page) == "Chosen"
    hand = add(store, "Some text", "--title", "Hand title")
    assert cli("revise", hand, "Other text", "--store", str(store)).code == 0
    assert title_of(store, hand) == "Hand title"


def test_init_says_the_owner_came_from_the_folder_name(tmp_path: Path) -> None:
    result = cli("init", str(tmp_path / "Ada's Context"))
    assert result.code == 0
    assert "owner ada-s-context" in result.stdout
    assert "taken from the folder name" in result.stderr and "--owner ID" in result.stderr
    chosen = cli("init", str(tmp_path / "other"), "--owner", "ada")
    assert "folder name" not in chosen.stderr


def test_init_git_on_an_existing_store_says_what_it_did(store: Path) -> None:
    before = snapshot(store)
    result = cli("init", str(store), "--git")
    assert result.code == 0, result.stderr
    assert "Initialised" not in result.stdout
    assert "already a pcp store" in result.stdout and "left it as it was" in result.stdout
    assert "set up git sync" in result.stdout.lower()
    assert "Created a git repository" in result.stdout
    def store_files(files: dict[str, bytes]) -> dict[str, bytes]:
        return {k: v for k, v in files.items()
                if k.split("/")[0] in ("pages", "revisions", "relations", "pcp.yaml")}

    assert store_files(snapshot(store)) == store_files(before)  # the store left as it was
    as_json = cli("init", str(store), "--git", "--json").json
    assert as_json["created"] is False and as_json["git"]["created"] is False


def test_one_revision_is_singular(store: Path) -> None:
    page = add(store, "Only once")
    result = cli("delete", page, "--yes", "--store", str(store))
    assert result.code == 0
    assert "(1 revision, 0 relations)" in result.stdout


def test_capabilities_print_no_python_reprs(store: Path) -> None:
    shown = cli("capabilities", "--store", str(store)).stdout
    assert not re.search(r"\b(True|False|None)\b", shown), shown
    # `no` without the semantic extra, its model and settings with it: never a dict's repr
    semantic = next(line for line in shown.splitlines() if line.startswith("search.semantic: "))
    assert not re.search(r"[{}\[\]']", semantic), semantic


def test_an_impossible_date_is_called_impossible(store: Path) -> None:
    before = snapshot(store)
    result = cli("timeline", "add", "2024-02-30", "Nothing", "--store", str(store))
    assert result.code == 2
    assert "2024-02-30 is impossible: February 2024 has 29 days" in result.stderr
    assert "is impossible: there is no month 13" in cli(
        "timeline", "add", "2024-13", "x", "--store", str(store)).stderr
    assert "is not YYYY, YYYY-MM or YYYY-MM-DD" in cli(
        "timeline", "add", "24-1-1", "x", "--store", str(store)).stderr
    listed = cli("timeline", "list", "--from", "2023-02-29", "--store", str(store))
    assert listed.code == 2 and "February 2023 has 28 days" in listed.stderr
    assert snapshot(store) == before
    assert cli("timeline", "add", "2024-02-29", "Leap day", "--store", str(store)).code == 0


def test_forcing_the_wrong_format_says_so_instead_of_importing_nothing(store: Path,
                                                                      tmp_path: Path) -> None:
    export = write_zip(tmp_path / "chatgpt.zip", {"conversations.json": [gpt_branching()]})
    before = snapshot(store)
    result = cli("import", str(export), "--format", "claude", "--store", str(store))
    assert result.code == 5, result.stderr
    assert "does not look like a Claude export (it looks like a ChatGPT export)" in result.stderr
    assert "--format chatgpt" in result.stderr
    assert snapshot(store) == before
    assert cli("import", str(export), "--format", "chatgpt", "--store", str(store)).code == 0


def test_a_parsers_multi_line_error_is_one_line(store: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("this is not JSON", "utf-8")
    result = cli("import", str(bad), "--format", "chatgpt", "--store", str(store))
    assert result.code == 5
    lines = result.stderr.splitlines()
    assert all("right here" not in line and line.strip() != ")" for line in lines), lines
    assert len(lines) <= 3, lines
    as_json = cli("import", str(bad), "--format", "chatgpt", "--json", "--store", str(store))
    assert "\n" not in json.loads(as_json.stderr)["error"]["message"]
