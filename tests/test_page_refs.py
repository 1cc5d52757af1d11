"""Ids a person can type: unique prefixes (pg_ optional, any case), titles, short ids in tables."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pcp_cli.store.refs import MIN_SHOWN, shortener
from tests.conftest import cli, snapshot
from tests.terminal import run_in_terminal

ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def add(store: Path, text: str, *extra: str) -> str:
    result = cli("add", text, *extra, "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    return result.json["page_id"]


def make_page(store: Path, page_id: str, title: str) -> None:
    """A page with a chosen id (a dropped head file, adopted like a hand-written page)."""
    folder = store / "pages" / "user" / "tester"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{page_id}.md").write_text(
        f"---\npage_id: {page_id}\ntitle: {title}\n---\n{title}\n", "utf-8")
    assert cli("ls", "--store", str(store)).code == 0  # adopts it


def test_a_unique_prefix_names_the_page_with_or_without_pg_and_in_any_case(
        store: Path) -> None:
    page_id = add(store, "Tidewatch architecture\n\nThree services behind a queue.")
    make_page(store, "pg_01ZZZZZZZZZZZZZZZZZZZZZZZZ", "Another page")
    for typed in (page_id[:11], page_id[3:11], page_id[:11].lower(), page_id[3:14].lower()):
        result = cli("show", typed, "--json", "--store", str(store))
        assert result.code == 0, (typed, result.stderr)
        assert result.json["page_id"] == page_id
    # every command that takes a page: history, revise, archive
    assert cli("history", page_id[3:12], "--store", str(store)).code == 0
    revised = cli("revise", page_id[:12], "new text", "--store", str(store), "--json")
    assert revised.code == 0 and revised.json["page_id"] == page_id


def test_an_ambiguous_prefix_is_a_usage_error_listing_the_candidates(store: Path) -> None:
    first, second = "pg_01M8R7A1AAAAAAAAAAAAAAAAAA", "pg_01M8R7A1BBBBBBBBBBBBBBBBBB"
    make_page(store, first, "First")
    make_page(store, second, "Second")
    before = snapshot(store)
    result = cli("archive", "pg_01M8R7A1", "--store", str(store))
    assert result.code == 2, result.stderr
    assert "matches 2 pages" in result.stderr
    assert first in result.stderr and second in result.stderr
    assert "First" in result.stderr and "Second" in result.stderr
    assert snapshot(store) == before
    as_json = cli("show", "01m8r7a1", "--json", "--store", str(store))
    assert as_json.code == 2
    assert as_json.error_json["error"]["candidates"] == [first, second]
    # one more character settles it
    assert cli("show", "pg_01M8R7A1B", "--json", "--store", str(store)).json["page_id"] == second


def test_a_title_names_a_page_when_only_one_page_has_it(store: Path) -> None:
    page_id = add(store, "Tidewatch architecture\n\nThree services.")
    add(store, "Tidewatch roadmap")
    result = cli("show", "tidewatch ARCHITECTURE", "--json", "--store", str(store))
    assert result.code == 0 and result.json["page_id"] == page_id
    # a title two pages share: says which pages, changes nothing
    other = add(store, "Tidewatch architecture\n\nA second page with the same title.")
    before = snapshot(store)
    both = cli("tombstone", "Tidewatch architecture", "--store", str(store))
    assert both.code == 2
    assert page_id in both.stderr and other in both.stderr
    assert snapshot(store) == before
    # no such title: exit 3, and the titles that contain the words are suggested
    missing = cli("show", "tidewatch", "--store", str(store))
    assert missing.code == 3
    assert "no page has the id or title 'tidewatch'" in missing.stderr
    assert "Tidewatch roadmap" in missing.stderr


def test_an_active_page_wins_over_its_archived_namesake(store: Path) -> None:
    old = add(store, "Weekly plan")
    assert cli("archive", old, "--store", str(store)).code == 0
    new = add(store, "Weekly plan")
    assert cli("show", "Weekly plan", "--json", "--store", str(store)).json["page_id"] == new


def test_ls_on_a_terminal_shows_short_unique_ids_never_cut_and_json_keeps_whole_ones(
        store: Path) -> None:
    ids = [add(store, f"Page number {n} with a title long enough to need squeezing "
               "in a narrow terminal") for n in range(5)]
    make_page(store, "pg_01M8R7A1AAAAAAAAAAAAAAAAAA", "Twin one")
    make_page(store, "pg_01M8R7A1AAAAZZZZZZZZZZZZZZ", "Twin two")
    for columns in (80, 120):
        shown = run_in_terminal("ls", "--store", str(store), columns=columns,
                                env={"PCP_PAGER": "cat"})
        assert shown.code == 0, shown.stderr
        printed = re.findall(r"pg_[0-9A-Z]+", shown.screen)
        assert "…" not in shown.screen
        assert len(printed) == 7, shown.screen
        for short in printed:
            assert len(short) >= 3 + MIN_SHOWN
            # each printed id is a whole prefix that names exactly one page
            result = cli("show", short, "--json", "--store", str(store))
            assert result.code == 0, (short, result.stderr)
        assert "pg_01M8R7A1AAAAA" in printed and "pg_01M8R7A1AAAAZ" in printed
    whole = cli("ls", "--json", "--store", str(store)).json
    assert {p["page_id"] for p in whole} >= set(ids)
    piped = cli("ls", "--store", str(store)).stdout  # piped: whole ids for scripts
    assert all(page_id in piped for page_id in ids)


def test_ls_limit_lists_the_newest_first(store: Path) -> None:
    ids = [add(store, f"Page {n}") for n in range(4)]
    listed = cli("ls", "--limit", "2", "--json", "--store", str(store)).json["pages"]
    assert [p["page_id"] for p in listed] == ids[::-1][:2]
    assert [p["page_id"] for p in cli("ls", "-n", "3", "--json", "--store",
                                      str(store)).json["pages"]] == ids[::-1][:3]
    assert cli("ls", "--limit", "0", "--store", str(store)).code == 2


ulids = st.text(alphabet=ULID_CHARS, min_size=26, max_size=26).map(lambda u: "pg_" + u)


@settings(max_examples=60, deadline=None)
@given(st.lists(ulids, min_size=1, max_size=40, unique=True), st.data())
def test_short_ids_are_unique_prefixes_of_at_least_eight_characters(ids: list[str],
                                                                    data: st.DataObject) -> None:
    # near-collisions: copy a long prefix of one id into others
    base = data.draw(st.sampled_from(ids))
    extra = [base[:k] + data.draw(st.text(alphabet=ULID_CHARS, min_size=29 - k, max_size=29 - k))
             for k in data.draw(st.lists(st.integers(min_value=4, max_value=28), max_size=5))]
    every = sorted(set(ids) | set(extra))
    shorten = shortener(every)
    for page_id in every:
        short = shorten(page_id)
        assert page_id.startswith(short)
        assert len(short) >= 3 + MIN_SHOWN
        assert [other for other in every if other.lower().startswith(short.lower())] == [page_id]


def test_a_title_of_several_words_that_matches_nothing_is_not_found_on_every_command(
        store: Path) -> None:
    add(store, "Tidewatch roadmap")
    before = snapshot(store)
    for command in (("show",), ("edit",), ("history",), ("archive",), ("revise", "-", "x"),
                    ("link", "-", "related_to", "Tidewatch roadmap"), ("review", "accept")):
        args = [a if a != "-" else "Tidewatch architecture notes" for a in command]
        if "Tidewatch architecture notes" not in args:
            args.append("Tidewatch architecture notes")
        result = cli(*args, "--store", str(store))
        assert result.code == 3, (command, result.stderr)
        assert "no page has the id or title 'Tidewatch architecture notes'" in result.stderr
        assert "safe identifier" not in result.stderr
        assert "--traceback" not in result.stderr
        assert "`pcp ls` lists pages" in result.stderr  # the hint a one-word miss gets
    as_json = cli("show", "../../etc/passwd", "--json", "--store", str(store))
    assert as_json.code == 3 and as_json.error_json["error"]["code"] == "not_found"
    assert snapshot(store) == before


def test_imported_ids_are_shortened_too_and_every_command_takes_the_short_form(
        store: Path) -> None:
    sessions = Path(__file__).parent / "data" / "sessions" / "claude" / "projects"
    assert cli("import", str(sessions), "--store", str(store)).code == 0
    make_page(store, "chatgpt-conv-6790a1b2c3d4e5f6a7b8c9d0", "Imported one")
    make_page(store, "chatgpt-conv-6790a1b2ffffffffffffffff", "Imported two")
    make_page(store, "ks-001", "A short id")
    whole = {p["page_id"] for p in cli("ls", "--json", "--store", str(store)).json}
    long_ids = {i for i in whole if len(i) >= 26}
    assert len(long_ids) >= 4 and not any(
        re.fullmatch(r"pg_[0-9A-HJKMNP-TV-Z]{26}", i) for i in long_ids)  # none is a ULID
    shown = run_in_terminal("ls", "--store", str(store), columns=120,
                            env={"PCP_PAGER": "cat"})
    assert shown.code == 0, shown.stderr
    for page_id in long_ids:
        short = next(w for w in shown.screen.split() if page_id.startswith(w) and len(w) >= 8)
        assert len(short) < len(page_id), (page_id, shown.screen)
        for command in ("show", "history"):
            result = cli(command, short, "--json", "--store", str(store))
            assert result.code == 0, (command, short, result.stderr)
            assert result.json["page_id"] == page_id
    assert "chatgpt-conv-6790a1b2c" in shown.screen and "chatgpt-conv-6790a1b2f" in shown.screen
    assert "ks-001" in shown.screen.split()
