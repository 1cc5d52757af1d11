"""SearchPages through the CLI: modes, filters, cursors, the store as of a date, related, diff,
open relation types and capabilities checked against what the store really does."""

from __future__ import annotations

import pytest

from tests.conftest import cli, snapshot

pytestmark = pytest.mark.usefixtures("engine")

EXT = "org.pcp-cli"


def run(store, *args, code=0):
    out = cli(*args, "--store", str(store), "--json")
    assert out.code == code, (args, out.stdout, out.stderr)
    return out.json if code == 0 else out


def add(store, text, *extra):
    return run(store, "add", text, *extra)["page_id"]


def ids(data):
    return [r["id"] for r in data["results"]]


def ext(result):
    return result["extensions"][EXT]


@pytest.fixture
def pages(store, monkeypatch):
    """Notes, events and relations written at pinned times (storage time != observed time)."""
    monkeypatch.setenv("PCP_NOW", "2026-01-10T09:00:00.000Z")
    made = {
        "plan": add(store, "Garden plan: raised beds, tomatoes and basil.", "--tag", "garden",
                    "--namespace", "project:garden"),
        "soil": add(store, "Soil test for the raised beds: pH 6.5.", "--origin", "recorded",
                    "--namespace", "project:garden"),
        "code": add(store, "Call parse_frontmatter(text) -> dict before rendering.",
                    "--tag", "code"),
        "trip": add(store, "Travel notes: the garden museum in Lisbon.", "--origin",
                    "imported"),
    }
    monkeypatch.setenv("PCP_NOW", "2026-02-01T09:00:00.000Z")
    made["late"] = run(store, "timeline", "add", "2019-04", "Planted the first garden bed",
                       "--category", "milestone")["page_id"]
    made["early"] = run(store, "timeline", "add", "2024-05", "Garden bed rebuilt with cedar",
                        "--category", "milestone")["page_id"]
    run(store, "link", made["plan"], "depends_on", made["soil"])
    run(store, "link", made["trip"], "inspired_by", made["plan"])
    monkeypatch.delenv("PCP_NOW")
    return made


def test_modes_each_match_their_own_way(store, pages):
    text = run(store, "search", "garden")
    assert {ext(r)["match_channel"] for r in text["results"]} == {"text"}
    assert text["filters_applied"]["mode"] == "text"
    exact = run(store, "search", "parse_frontmatter(text) ->", "--mode", "exact")
    assert ids(exact) == [pages["code"]] and ext(exact["results"][0])["match_channel"] == "exact"
    assert ids(run(store, "search", "raised beds, tomatoes", "--mode", "exact")) == [pages["plan"]]
    assert ids(run(store, "search", "beds tomatoes", "--mode", "exact")) == []
    auto = run(store, "search", "parse_frontmatter", "--mode", "auto")
    assert auto["filters_applied"]["mode"] == "exact" and auto["filters_applied"]["mode_reason"]
    # temporal: by observed time (the events' own dates), not by when they were stored
    temporal = run(store, "search", "garden", "--mode", "temporal", "--type", "timeline_event")
    assert ids(temporal) == [pages["late"], pages["early"]]
    assert [ext(r)["observed_at"] for r in temporal["results"]] == ["2019-04", "2024-05"]
    window = run(store, "search", "*", "--mode", "temporal", "--from", "2024", "--to", "2024-12")
    assert ids(window) == [pages["early"]]
    graph = run(store, "search", "tomatoes", "--mode", "graph", "--depth", "2")
    assert ids(graph)[0] == pages["plan"]
    reached = {r["id"]: ext(r) for r in graph["results"][1:]}
    assert set(reached) == {pages["soil"], pages["trip"]}  # both directions
    assert {e["match_channel"] for e in reached.values()} == {"graph"}
    assert reached[pages["trip"]]["graph"]["direction"] == "incoming"
    followed = run(store, "search", "tomatoes", "--mode", "graph", "--relation-type",
                   "depends_on")
    assert ids(followed) == [pages["plan"], pages["soil"]]


@pytest.mark.parametrize("args, words", [
    (["--mode", "fuzzy"], "unknown mode"),
    (["--status", "tombstoned"], "never returned"),
    (["--relation-type", "reviewz"], "unknown relation type"),
    (["--from", "last week"], "not a date"),
    (["--as-of", "yesterday"], "not a date"),
    (["--cursor", "bm90IGEgY3Vyc29y"], "cursor is not valid"),
])
def test_bad_search_arguments_are_one_line_errors(store, pages, args, words):
    before = snapshot(store)
    out = cli("search", "garden", *args, "--store", str(store))
    assert out.code == 2, out.stderr
    assert words in out.stderr and "Traceback" not in out.stderr
    assert snapshot(store) == before


def test_every_filter_applies_before_ranking_and_is_reported(store, pages):
    # One word per query: multi-word OR ranking is truth-search's (issue #10), not this test's.
    def found(query, *args):
        return set(ids(run(store, "search", query, *args)))

    assert found("beds", "--origin", "recorded") == {pages["soil"]}
    assert found("beds", "--tag", "garden") == {pages["plan"]}
    assert found("beds", "--namespace", "project:garden") == {pages["plan"], pages["soil"]}
    assert found("garden", "--relation-type", "inspired_by") == {pages["trip"], pages["plan"]}
    assert found("garden", "--from", "2024-01", "--type", "timeline_event") == {pages["early"]}
    assert found("garden", "--to", "2020", "--type", "timeline_event") == {pages["late"]}
    run(store, "archive", pages["soil"])
    assert pages["soil"] not in found("beds")
    assert pages["soil"] in found("beds", "--status", "archived")
    data = run(store, "search", "garden", "--origin", "recorded", "--tag", "x", "--namespace",
               "project:garden", "--relation-type", "depends_on", "--status", "active",
               "--from", "2020", "--to", "2027")
    applied = data["filters_applied"]
    for key, value in (("origins", ["recorded"]), ("tags", ["x"]),
                       ("namespaces", ["project:garden"]), ("relation_types", ["depends_on"]),
                       ("lifecycle_status", ["active"]), ("observed_from", "2020"),
                       ("observed_to", "2027"), ("as_of", None), ("mode", "text")):
        assert applied[key] == value, key


def test_cursors_page_through_and_go_stale(store, pages):
    first = run(store, "search", "garden", "--limit", "2")
    assert first["count"] == 2 and first["next_cursor"]
    second = run(store, "search", "garden", "--limit", "2", "--cursor",
                 first["next_cursor"])
    assert not set(ids(first)) & set(ids(second))
    everything = run(store, "search", "garden", "--limit", "25")
    assert ids(first) + ids(second) == ids(everything)[:len(ids(first) + ids(second))]
    listing = run(store, "ls", "--limit", "2")
    rest = run(store, "ls", "--limit", "2", "--cursor", listing["next_cursor"])
    assert len(listing["pages"]) == 2 and rest["pages"][0] not in listing["pages"]
    events = run(store, "timeline", "list", "--limit", "1")
    assert events["next_cursor"] and events["count"] == 1
    scopes = run(store, "scopes", "--limit", "1")
    assert scopes["next_cursor"] and scopes["scopes"][0]["display_name"]
    other = cli("search", "soil", "--limit", "2", "--cursor", first["next_cursor"], "--store",
                str(store))
    assert other.code == 2 and "different request" in other.stderr
    add(store, "A new page changes the store.")
    for args, token in ((["search", "garden", "--limit", "2"],
                         first["next_cursor"]), (["ls", "--limit", "2"],
                                                 listing["next_cursor"]),
                        (["timeline", "list", "--limit", "1"], events["next_cursor"]),
                        (["scopes", "--limit", "1"], scopes["next_cursor"])):
        stale = cli(*args, "--cursor", token, "--store", str(store))
        assert stale.code == 2 and "stale" in stale.stderr, args


def test_the_store_as_of_a_date(store, monkeypatch):
    monkeypatch.setenv("PCP_NOW", "2025-03-01T10:00:00.000Z")
    ks = run(store, "keystone", "add", "Prefers tea in the morning", "--category",
             "preference")["page_id"]
    run(store, "profile", "set", "name", "Ada")
    gone = add(store, "A page that will be deleted: walrus.")
    monkeypatch.setenv("PCP_NOW", "2025-09-01T10:00:00.000Z")
    run(store, "revise", ks, "Prefers coffee in the morning")
    run(store, "profile", "set", "name", "Ada Lumen")
    later = add(store, "Written after the summer: coffee grinder.")
    run(store, "timeline", "add", "2025-08", "Moved to Lisbon", "--category", "move")
    monkeypatch.delenv("PCP_NOW")
    s = str(store)
    then = run(store, "search", "tea", "--as-of", "2025-06-30")
    assert ids(then) == [ks] and "tea" in then["results"][0]["snippet"]
    assert then["filters_applied"]["as_of"] == "2025-06-30T23:59:59.999Z"
    assert set(ids(run(store, "search", "coffee"))) == {ks, later}
    shown = run(store, "show", ks, "--as-of", "2025-06-30")
    assert shown["page"]["payload"]["content"].startswith("Prefers tea")
    assert shown["as_of"] == "2025-06-30T23:59:59.999Z"
    assert run(store, "show", later, "--as-of", "2025-06-30", code=3).code == 3
    listed = {p["page_id"] for p in run(store, "ls", "--as-of", "2025-06-30")}
    assert later not in listed and ks in listed
    assert run(store, "timeline", "list", "--as-of", "2025-06-30")["events"] == []
    assert run(store, "timeline", "list")["count"] == 1
    assert run(store, "stats", "--as-of", "2025-06-30")["total"] == 3
    assert run(store, "stats", "--as-of", "2025-01-01")["total"] == 0
    for fmt in ("micro_prompt", "markdown", "json", "archive"):
        past = cli("export", "--format", fmt, "--as-of", "2025-06-30", "--store", s)
        now = cli("export", "--format", fmt, "--store", s)
        assert past.code == now.code == 0, past.stderr
        assert "Ada Lumen" not in past.stdout and "Ada Lumen" in now.stdout, fmt
        if fmt != "json":  # the json profile holds no keystones
            assert "tea" in past.stdout and "coffee" not in past.stdout, fmt
            assert "coffee" in now.stdout, fmt
    profile = cli("profile", "show", "--format", "micro_prompt", "--as-of", "2025-06-30",
                  "--store", s)
    assert "tea" in profile.stdout
    # a page deleted since is gone from every time
    cli("delete", gone, "--yes", "--store", s)
    assert ids(run(store, "search", "walrus", "--as-of", "2025-06-30")) == []
    assert gone not in {p["page_id"] for p in run(store, "ls", "--as-of", "2025-06-30")}


def test_related_walks_both_directions_bounded_and_within_scopes(store, pages):
    one = run(store, "related", pages["plan"])
    assert {p["page_id"] for p in one["pages"]} == {pages["soil"], pages["trip"]}
    direction = {p["page_id"]: p["via"]["direction"] for p in one["pages"]}
    assert direction == {pages["soil"]: "outgoing", pages["trip"]: "incoming"}
    assert {p["page_id"] for p in run(store, "related", pages["soil"])["pages"]} == {
        pages["plan"]}
    two = run(store, "related", pages["soil"], "--depth", "2")
    assert {(p["page_id"], p["depth"]) for p in two["pages"]} == {(pages["plan"], 1),
                                                                  (pages["trip"], 2)}
    typed = run(store, "related", pages["soil"], "--depth", "2", "--type", "depends_on")
    assert [p["page_id"] for p in typed["pages"]] == [pages["plan"]]
    # never into (nor through) a scope the caller may not read
    scoped = run(store, "related", pages["soil"], "--depth", "2", "--scope", "project:*")
    assert [p["page_id"] for p in scoped["pages"]] == [pages["plan"]]
    assert cli("related", pages["soil"], "--depth", "9", "--store", str(store)).code == 2
    assert cli("related", "nope", "--store", str(store)).code == 3


def test_diff_shows_the_markdown_then_the_fields(store):
    page = add(store, "line one\nline two\n", "--title", "Old")
    first = run(store, "show", page)["revision_id"]
    run(store, "revise", page, "line one\nline 2\n", "--title", "New")
    data = run(store, "diff", page)
    assert data["from_revision_id"] == first
    assert "-line two" in data["diff"] and "+line 2" in data["diff"]
    assert {"field": "title", "from": "Old", "to": "New"} in data["fields"]
    human = cli("diff", page, first, "--store", str(store))
    assert human.code == 0
    assert human.stdout.index("+line 2") < human.stdout.index("title: 'Old' -> 'New'")
    assert cli("diff", page, "rev_nope", "--store", str(store)).code == 3


def test_namespaced_relation_types_are_allowed_bare_unknown_refused(store, pages):
    rel = run(store, "link", pages["plan"], "com.example.reviews", pages["code"])
    assert rel["relation_type"] == "com.example.reviews"
    assert cli("validate", "--store", str(store)).code == 0
    bad = cli("link", pages["plan"], "reviews", pages["code"], "--store", str(store))
    assert bad.code == 2 and "unknown relation type" in bad.stderr
    found = run(store, "search", "garden", "--relation-type", "com.example.reviews")
    assert ids(found) == [pages["plan"]]


def test_capabilities_claim_what_the_cli_does(store, pages):
    caps = run(store, "capabilities")
    for mode in caps["search"]["modes"]:
        query = "*" if mode == "temporal" else "garden"
        assert cli("search", query, "--mode", mode, "--store", str(store)).code == 0, mode
    for mode in caps["search"]["unavailable_modes"]:
        assert cli("search", "garden", "--mode", mode, "--store", str(store)).code == 2
    commands = cli("--help").stdout
    from pcp_cli.query.stats import OPERATION_COMMANDS

    for op in caps["operations"]:
        assert f" {OPERATION_COMMANDS[op]} " in commands or \
            f"\n  {OPERATION_COMMANDS[op]}" in commands or \
            cli(OPERATION_COMMANDS[op], "--help").code == 0, op
    assert ("IngestEvent" in caps["operations"]) == (cli("ingest", "--help").code == 0)
    assert "SuppressPages" not in caps["operations"]  # an MCP session's, not the CLI's


def test_a_filter_that_admits_nothing_returns_nothing_for_phrase_queries(store, monkeypatch):
    # A Chinese query is a phrase query; whoosh reads an empty filter set as "no filter", so a
    # filter admitting no page used to return pages of every type, scope and time.
    monkeypatch.setenv("PCP_NOW", "2026-01-01T00:00:00.000Z")
    add(store, "有限乘积紧致性的证明", "--namespace", "project:math")
    add(store, "保密：有限乘积", "--sensitivity", "high", "--namespace", "project:secret")
    monkeypatch.delenv("PCP_NOW")
    assert len(ids(run(store, "search", "有限乘积"))) == 1
    assert ids(run(store, "search", "有限乘积", "--type", "keystone")) == []
    assert ids(run(store, "search", "有限乘积", "--scope", "project:secret")) == []
    assert ids(run(store, "search", "有限乘积", "--as-of", "2025-01-01")) == []
