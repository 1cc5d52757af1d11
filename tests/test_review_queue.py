"""Review that fits a queue of fifty: grouped listing with evidence, several ids at once (all
checked first), accept after editing, and stepping through on a terminal."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import cli, snapshot
from tests.terminal import run_in_terminal

CHAT = """### User · 2024-06-12 10:00

I'm a data engineer at Frachtwerk. I live in Porto. I prefer short answers. I have two kids.
"""


@pytest.fixture
def queued(store: Path) -> tuple[Path, dict[str, str]]:
    assert cli("add", "--type", "conversation", "--title", "chat", "--store", str(store), "-",
               input=CHAT).code == 0
    result = cli("propose", "--json", "--store", str(store))
    assert result.code == 0, result.stderr
    return store, {p["content"]: p["id"] for p in result.json["proposals"]}


def test_list_groups_by_category_with_the_evidence_beside(queued) -> None:
    store, ids = queued
    listing = cli("review", "list", "--store", str(store))
    assert listing.code == 0
    rows = [line.split("\t") for line in listing.stdout.splitlines() if "\t" in line]
    categories = [row[1] for row in rows]
    assert categories == sorted(categories)  # grouped
    porto = next(row for row in rows if row[0] == ids["Lives in Porto."])
    assert porto[1] == "identity" and "I live in Porto." in porto[4]
    assert porto[4].endswith("(chat, 2024-06-12)")  # the conversation's title and date
    assert cli("review", "--store", str(store)).stdout == listing.stdout
    items = cli("review", "list", "--json", "--store", str(store)).json
    assert {i["page_id"] for i in items} == set(ids.values())
    assert all(i["source_spans"] for i in items)


def test_accept_and_reject_take_several_ids(queued) -> None:
    store, ids = queued
    accepted = cli("review", "accept", ids["Lives in Porto."], ids["Has two kids."], "--json",
                   "--store", str(store))
    assert accepted.code == 0, accepted.stderr
    assert [r["page_id"] for r in accepted.json] == [ids["Lives in Porto."],
                                                     ids["Has two kids."]]
    rejected = cli("review", "reject", ids["Prefers short answers."],
                   ids["Works at Frachtwerk."], "--reason", "old", "--store", str(store))
    assert rejected.code == 0
    assert rejected.stdout.count("rejected ") == 2
    prompt = cli("export", "--format", "micro_prompt", "--store", str(store)).stdout
    assert "Lives in Porto." in prompt and "Has two kids." in prompt
    assert "short answers" not in prompt
    left = cli("review", "--json", "--store", str(store)).json
    assert [i["content"] for i in left] == ["Is a data engineer at Frachtwerk."]


def test_an_unknown_or_settled_id_changes_nothing(queued) -> None:
    store, ids = queued
    before = snapshot(store)
    unknown = cli("review", "accept", ids["Lives in Porto."], "no-such-id", "--store",
                  str(store))
    assert unknown.code == 3 and "no-such-id" in unknown.stderr
    assert snapshot(store) == before
    assert cli("review", "accept", ids["Has two kids."], "--store", str(store)).code == 0
    before = snapshot(store)
    settled = cli("review", "reject", ids["Lives in Porto."], ids["Has two kids."], "--store",
                  str(store))
    assert settled.code == 2 and "not awaiting review" in settled.stderr
    assert snapshot(store) == before


EDITOR = ("import sys; p = sys.argv[1]; t = open(p).read(); "
          "open(p, 'w').write({!r} + t[t.index('\\n'):])")


def test_accept_edit_accepts_the_edited_claim(queued, monkeypatch, tmp_path: Path) -> None:
    store, ids = queued
    script = tmp_path / "edit.py"
    script.write_text(EDITOR.format("Lives in Porto, Portugal."), "utf-8")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    result = cli("review", "accept", ids["Lives in Porto."], "--edit", "--store", str(store))
    assert result.code == 0, result.stderr
    page = cli("show", ids["Lives in Porto."], "--json", "--store", str(store)).json["page"]
    assert page["payload"]["content"].strip() == "Lives in Porto, Portugal."
    assert page["review_status"] == "affirmed" and page["integrity"] == "edited"
    assert "Lives in Porto, Portugal." in cli("export", "--format", "micro_prompt", "--store",
                                             str(store)).stdout
    two = cli("review", "accept", ids["Has two kids."], ids["Works at Frachtwerk."], "--edit",
              "--store", str(store))
    assert two.code == 2


def test_accept_edit_to_nothing_accepts_nothing(queued, monkeypatch, tmp_path: Path) -> None:
    store, ids = queued
    script = tmp_path / "empty.py"
    script.write_text("import sys; open(sys.argv[1], 'w').write('# nothing\\n')", "utf-8")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    before = snapshot(store)
    result = cli("review", "accept", ids["Lives in Porto."], "--edit", "--store", str(store))
    assert result.code == 2 and "empty" in result.stderr
    assert snapshot(store) == before


def test_next_needs_a_terminal(queued) -> None:
    store, _ = queued
    result = cli("review", "next", "--store", str(store), input="a\n")
    assert result.code == 2 and "terminal" in result.stderr


def test_next_steps_through_the_queue_on_a_terminal(queued) -> None:
    store, ids = queued
    listed = cli("review", "--store", str(store)).stdout.splitlines()
    order = [line.split("\t")[2] for line in listed if "\t" in line]  # as `pcp review` shows
    # accept the first, reject the second, skip the third, then quit
    result = run_in_terminal("review", "next", "--store", str(store), typed="arsq",
                             env={"PCP_STORE": str(store), "NO_COLOR": "1",
                                  "PYTHONPATH": os.getcwd()})
    assert result.code == 0, result.stderr
    assert "[1/5]" in result.screen and order[0] in result.screen
    assert "accepted 1, rejected 1, skipped 1" in result.screen
    left = {i["content"] for i in cli("review", "--json", "--store", str(store)).json}
    assert left == set(order[2:])
    assert order[0] in cli("export", "--format", "micro_prompt", "--store", str(store)).stdout


def test_bulk_by_category_numbers_ranges_and_all(queued) -> None:
    store, ids = queued
    listed = cli("review", "--store", str(store)).stdout.splitlines()
    order = [line.split("\t")[0] for line in listed if "\t" in line]  # numbered 1, 2, ...
    before = snapshot(store)
    assert cli("review", "accept", "9", "--store", str(store)).code == 2  # no such number
    assert cli("review", "accept", "--category", "nothing", "--store", str(store)).code == 2
    assert cli("review", "accept", "--store", str(store)).code == 2  # names none
    assert snapshot(store) == before
    done = cli("review", "accept", "1-2", "--json", "--store", str(store))
    assert done.code == 0, done.stderr
    assert [r["page_id"] for r in done.json] == order[:2]
    identity = [i["page_id"] for i in cli("review", "--json", "--store", str(store)).json
                if i["category"] == "identity"]
    rejected = cli("review", "reject", "--category", "identity", "--json", "--store",
                   str(store))
    answer = rejected.json if isinstance(rejected.json, list) else [rejected.json]  # one: itself
    assert rejected.code == 0 and [r["page_id"] for r in answer] == identity
    assert cli("review", "accept", "--all", "--store", str(store)).code == 0
    assert cli("review", "--json", "--store", str(store)).json == []


def test_the_terminal_listing_numbers_proposals_and_names_the_conversation(queued) -> None:
    store, ids = queued
    result = run_in_terminal("review", "--store", str(store),
                             env={"PCP_STORE": str(store), "NO_COLOR": "1", "PCP_PAGER": "cat",
                                  "PYTHONPATH": os.getcwd()})
    assert result.code == 0, result.stderr
    assert "#1" in result.screen and "#5" in result.screen
    assert "chat, 2024-06-12" in result.screen and "@rev_" not in result.screen
    assert max(len(line) for line in result.screen.splitlines()) <= 100
