"""What an import keeps: a sensitivity the source states (and one the person raised in pcp, on
every re-import), and the observed time of a note nobody changed (touching a file is no
change)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pcp_cli.store.store import Store, page_id_for_key
from tests.adapters.adapter_builders import gpt_branching, write_zip
from tests.conftest import cli

BANK = "---\ntitle: Bank\nsensitivity: high\n---\nMy bank pin is 4455.\n"


def imp(store: Path, source: Path, *args: str) -> dict[str, Any]:
    result = cli("import", str(source), "--store", str(store), "--json", *args)
    assert result.code == 0, result.stderr
    return result.json


def vault_of(tmp_path: Path, notes: dict[str, str]) -> Path:
    """A vault folder holding each file name -> text."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in notes.items():
        (vault / name).write_text(text)
    return vault


def head(store: Path, key: str) -> dict[str, Any]:
    with Store.open(store, readonly=True) as opened:
        opened.refresh()
        return opened.current(page_id_for_key(key)).to_dict()


def revisions(store: Path, key: str) -> int:
    return len(list((store / "revisions" / page_id_for_key(key)).glob("*.json")))


def found(store: Path, query: str, *extra: str) -> str:
    """The snippets of what `pcp search` finds, as one text."""
    result = cli("search", query, "--store", str(store), "--json", *extra)
    assert result.code == 0, result.stderr
    return " | ".join(hit["snippet"] for hit in result.json["results"])


# -- sensitivity ------------------------------------------------------------------------------

def test_a_note_marked_high_is_imported_high_and_found_only_when_asked(store: Path,
                                                                      tmp_path: Path) -> None:
    vault = vault_of(tmp_path, {"bank.md": BANK,
                                "kelp.md": "# Kelp\n\nMy kelp pin is on the board.\n"})
    imp(store, vault)
    page = head(store, "markdown:bank.md")
    assert page["sensitivity"] == "high"
    assert "sensitivity" not in page["extensions"].get("org.pcp-cli.frontmatter", {})
    assert "kelp pin" in found(store, "pin") and "4455" not in found(store, "pin")
    assert "4455" in found(store, "pin", "--include-sensitive")
    # the same file dropped under pages/ is kept high too: both doors agree
    dropped = store / "pages" / "user" / "tester" / "dropped.md"
    dropped.parent.mkdir(parents=True, exist_ok=True)
    dropped.write_text(BANK.replace("4455", "7788"))
    assert "7788" not in found(store, "pin") and "7788" in found(store, "pin",
                                                                "--include-sensitive")


@pytest.mark.parametrize(("said", "kept"), [("High", "high"), (" medium ", "medium"),
                                            ("low", "low")])
def test_a_stated_sensitivity_is_read_in_any_case(store: Path, tmp_path: Path, said: str,
                                                  kept: str) -> None:
    vault = vault_of(tmp_path, {"note.md": f"---\nsensitivity: '{said}'\n---\nbody\n"})
    imp(store, vault)
    assert head(store, "markdown:note.md")["sensitivity"] == kept


def test_a_sensitivity_pcp_cannot_read_skips_the_note_naming_the_line(store: Path,
                                                                      tmp_path: Path) -> None:
    vault = vault_of(tmp_path, {
        "secret.md": "---\ntitle: PIN\nsensitivity: secret\n---\nMy pin.\n",
        "kelp.md": "# Kelp\n"})
    summary = imp(store, vault)
    assert (summary["created"], summary["skipped"]) == (1, 1)
    [problem] = summary["problems"]
    assert problem["item"] == "secret.md"
    assert "sensitivity: 'secret' is not one of low, medium, high" in problem["reason"]
    assert problem["reason"].endswith("(line 3)")
    assert found(store, "pin", "--include-sensitive") == ""


def test_a_reimport_never_lowers_a_sensitivity_the_person_raised(store: Path,
                                                                  tmp_path: Path) -> None:
    vault = vault_of(tmp_path, {"health.md": "# Health\n\nSaw the doctor about my back.\n"})
    note = vault / "health.md"
    imp(store, vault)
    page_id = page_id_for_key("markdown:health.md")
    assert cli("revise", page_id, "--sensitivity", "high", "--store", str(store)).code == 0

    assert imp(store, vault)["unchanged"] == 1  # the source did not change
    note.write_text("# Health\n\nSaw the doctor about my back, twice.\n")
    assert imp(store, vault)["revised"] == 1
    page = head(store, "markdown:health.md")
    assert "twice" in page["payload"]["content"] and page["sensitivity"] == "high"
    assert found(store, "doctor") == ""
    before = revisions(store, "markdown:health.md")
    assert imp(store, vault)["unchanged"] == 1  # and no revision churns on every import
    assert revisions(store, "markdown:health.md") == before

    # a source that stops saying high does not lower it either
    note.write_text("---\nsensitivity: low\n---\n# Health\n\nAll better.\n")
    imp(store, vault)
    assert head(store, "markdown:health.md")["sensitivity"] == "high"


def test_a_changed_conversation_keeps_the_sensitivity_the_person_gave_it(
        store: Path, tmp_path: Path) -> None:
    imp(store, write_zip(tmp_path / "1.zip", {"conversations.json": [gpt_branching()]}))
    key = "chatgpt:conversation:conv-branch"
    assert cli("revise", page_id_for_key(key), "--sensitivity", "high", "--store",
               str(store)).code == 0
    changed = gpt_branching()
    changed["mapping"]["u2"]["message"]["content"]["parts"] = ["Thanks, that helps with my debt."]
    summary = imp(store, write_zip(tmp_path / "2.zip", {"conversations.json": [changed]}))
    assert summary["revised"] == 1
    page = head(store, key)
    assert "my debt" in page["payload"]["content"] and page["sensitivity"] == "high"


def test_an_archive_round_trip_keeps_a_sensitive_timeline_event_sensitive(
        store: Path, tmp_path: Path) -> None:
    added = cli("timeline", "add", "2024-03-01", "Diagnosed with asthma", "--store", str(store),
                "--json").json
    assert cli("revise", added["page_id"], "--sensitivity", "high", "--store",
               str(store)).code == 0
    cli("timeline", "add", "2024-04-01", "Moved to Porto", "--store", str(store))
    archive = tmp_path / "archive.json"
    archive.write_text(cli("export", "--format", "archive", "--include-sensitive", "--store",
                           str(store)).stdout)
    other = tmp_path / "other"
    assert cli("init", str(other), "--owner", "tester").code == 0
    imp(other, archive)

    def summaries(*extra: str) -> list[str]:
        listed = cli("timeline", "list", "--store", str(other), "--json", *extra).json
        return [event["summary"] for event in listed["events"]]

    assert summaries() == ["Moved to Porto"]
    assert summaries("--include-sensitive") == ["Diagnosed with asthma", "Moved to Porto"]
    again = json.loads(cli("export", "--format", "archive", "--include-sensitive", "--store",
                           str(other)).stdout)
    assert [e["extensions"] for e in again["timeline_events"]] == [
        {"org.pcp-cli": {"sensitivity": "high"}}, {}]


# -- observed time: touching a file is no change ---------------------------------------------

def test_touching_a_note_is_no_change_and_keeps_its_observed_time(store: Path,
                                                                  tmp_path: Path) -> None:
    vault = vault_of(tmp_path, {"tide.md": "# Tide\n\nThe gauge reads high.\n"})
    note = vault / "tide.md"
    os.utime(note, (1_700_000_000, 1_700_000_000))
    imp(store, vault)
    first = head(store, "markdown:tide.md")
    assert first["record"]["observed_at"] == "2023-11-14T22:13:20.000Z"

    os.utime(note, (1_800_000_000, 1_800_000_000))  # `touch`, a fresh checkout of the vault
    planned = imp(store, vault, "--dry-run")
    assert (planned["unchanged"], planned["revised"]) == (1, 0)
    summary = imp(store, vault)
    assert (summary["unchanged"], summary["revised"]) == (1, 0)
    assert revisions(store, "markdown:tide.md") == 1
    assert head(store, "markdown:tide.md")["record"]["observed_at"] == \
        "2023-11-14T22:13:20.000Z"

    note.write_text("# Tide\n\nThe gauge reads low.\n")  # an edit is a change, observed now
    os.utime(note, (1_800_000_000, 1_800_000_000))
    assert imp(store, vault)["revised"] == 1
    assert head(store, "markdown:tide.md")["record"]["observed_at"] == \
        "2027-01-15T08:00:00.000Z"


def test_a_note_dated_in_its_frontmatter_keeps_that_date_whatever_its_mtime(
        store: Path, tmp_path: Path) -> None:
    vault = vault_of(tmp_path, {"dated.md": "---\nupdated: 2024-05-01\n---\nbody\n"})
    note = vault / "dated.md"
    imp(store, vault)
    os.utime(note, (1_800_000_000, 1_800_000_000))
    assert imp(store, vault)["unchanged"] == 1
    assert head(store, "markdown:dated.md")["record"]["updated_at"] == "2024-05-01"


# -- what the person decided stays -----------------------------------------------------------

def test_a_tombstoned_page_stays_tombstoned_when_its_note_changes(store: Path,
                                                                  tmp_path: Path) -> None:
    vault = vault_of(tmp_path, {"old-flame.md": "# Old flame\n\nThings I would rather forget.\n"})
    note = vault / "old-flame.md"
    imp(store, vault)
    page_id = page_id_for_key("markdown:old-flame.md")
    assert cli("tombstone", page_id, "--store", str(store)).code == 0
    note.write_text("# Old flame\n\nThings I would rather forget, and more.\n")
    assert imp(store, vault)["revised"] == 1
    page = head(store, "markdown:old-flame.md")
    assert page["lifecycle_status"] == "tombstoned" and "and more" in page["payload"]["content"]
    assert found(store, "forget") == ""
    assert imp(store, vault)["unchanged"] == 1


def test_a_rejected_proposal_stays_rejected_when_the_export_changes(store: Path,
                                                                   tmp_path: Path) -> None:
    from tests.adapters.adapter_builders import CLAUDE_USERS

    imp(store, write_zip(tmp_path / "1.zip", {"users.json": CLAUDE_USERS}))
    [proposal] = cli("review", "--json", "--store", str(store)).json
    assert cli("review", "reject", proposal["page_id"], "--store", str(store)).code == 0
    renamed = json.loads(json.dumps(CLAUDE_USERS))
    renamed[0]["full_name"] = renamed[0]["full_name"] + " Lumen-Smith"
    summary = imp(store, write_zip(tmp_path / "2.zip", {"users.json": renamed}))
    assert summary["revised"] == 1
    assert cli("review", "--json", "--store", str(store)).json == []  # not proposed again
    page = cli("show", proposal["page_id"], "--json", "--store", str(store)).json["page"]
    assert page["review_status"] == "rejected"
