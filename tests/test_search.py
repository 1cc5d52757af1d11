"""`pcp search` and `api.search`: the §4.2 safeguards, the envelope, the query syntax."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pcp_cli import api
from tests.conftest import V12_SCHEMAS, cli

pytestmark = pytest.mark.usefixtures("engine")

# The v1 envelope, plus the Paged Context Protocol's cursor for the next page of results.
ENVELOPE = {"schema_version", "query", "count", "filters_applied", "results", "next_cursor"}
RESULT_VALIDATOR = Draft202012Validator(
    json.loads((V12_SCHEMAS / "search-result.schema.json").read_text(encoding="utf-8")))


@pytest.fixture(autouse=True)
def _close_indexes() -> Iterator[None]:
    yield
    from pcp_cli.query.index_sync import close_all

    close_all()


def search(root: Path, *args: str) -> dict:
    out = cli("search", *args, "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return out.json


def ids(data: dict) -> list[str]:
    return [r["id"] for r in data["results"]]


def add(root: Path, text: str, *args: str) -> str:
    out = cli("add", text, *args, "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return out.json["page_id"]


# -- the envelope -------------------------------------------------------------------------------
def test_envelope_has_exactly_the_v1_keys_and_results_validate(example):
    data = search(example, "tidewatch")
    assert set(data) == ENVELOPE
    assert data["schema_version"] == "1.0" and data["query"] == "tidewatch"
    assert data["count"] == len(data["results"]) > 0
    for result in data["results"]:
        errors = [e.message for e in RESULT_VALIDATOR.iter_errors(result)]
        assert not errors, errors
        assert 0 <= result["score"] <= 1
        assert result["source_system"] == "pcp" and result["source_id"] == result["id"]
        ext = result["extensions"]["org.pcp-cli"]
        assert ext["page_id"] == result["id"] and ext["revision_id"].startswith("rev_")
        assert ext["scope"]["namespace"] in ("user:ada-lumen", "project:tidewatch")
        assert ext["matched_fields"] and set(ext["read_views"]) >= {"manifest", "payload"}
    # best first, but for nearly tied results, which come by authority and recency instead
    # (query/tiebreak.py): no result ever follows one it outscores by more than the band
    from pcp_cli.query.tiebreak import TIE_EPSILON

    scores = [r["score"] for r in data["results"]]
    assert all(later <= earlier / (1 - TIE_EPSILON) + 1e-4
               for i, earlier in enumerate(scores) for later in scores[i + 1:])


def test_filters_applied_says_what_ran(example):
    filters = search(example, "tidewatch")["filters_applied"]
    assert filters["limit"] == 10 and "capped" not in filters
    assert filters["current_only"] is True and filters["include_sensitive"] is False
    assert filters["types"] is None and filters["exclude_types"] is None
    assert filters["min_score"] is None and filters["scopes_requested"] is None
    # the namespaces that were searched, named: the whole store here
    assert filters["scopes"] == ["project:tidewatch", "user:ada-lumen"]
    assert filters["relevance_scores"] == "present"
    assert filters["sensitivity_filtering"] == "all_records"
    assert filters["review_status"] == "affirmed_only"
    assert "suppressed" not in filters  # only when the caller asked for suppression


def test_snippet_is_capped_and_around_the_match(example):
    long_text = ("filler words about nothing in particular. " * 40
                 + "The quokka appeared at the very end. " + "more filler text here. " * 40)
    page = add(example, long_text, "--title", "Long page")
    result = search(example, "quokka")["results"][0]
    assert result["id"] == page
    assert len(result["snippet"]) <= 240 and "quokka" in result["snippet"]
    assert result["snippet"].startswith("…") and result["snippet"].endswith("…")
    start, end = result["extensions"]["org.pcp-cli"]["highlights"][0]
    assert result["snippet"][start:end].lower() == "quokka"


# -- limits -------------------------------------------------------------------------------------
def test_limit_defaults_to_10_and_is_capped_at_25(store):
    for i in range(30):
        add(store, f"Harbour note number {i} about the harbour.")
    data = search(store, "harbour")
    assert data["count"] == 10 and data["filters_applied"]["limit"] == 10
    data = search(store, "harbour", "--limit", "100")
    assert data["count"] == 25
    assert data["filters_applied"]["limit"] == 25
    assert data["filters_applied"]["limit_requested"] == 100
    assert data["filters_applied"]["capped"] is True
    human = cli("search", "harbour", "--limit", "100", "--store", str(store))
    assert "at most 25" in human.stderr
    assert search(store, "harbour", "--limit", "3")["count"] == 3


def test_limit_below_one_is_a_usage_error(example):
    out = cli("search", "tidewatch", "--limit", "0", "--store", str(example))
    assert out.code == 2 and "limit" in out.stderr


# -- current only, sensitivity, proposals ------------------------------------------------------
def test_superseded_archived_tombstoned_hidden_unless_asked(example):
    archived = add(example, "Zanzibar travel plan, archived.")
    tombstoned = add(example, "Zanzibar spice list, withdrawn.")
    active = add(example, "Zanzibar ferry times.")
    assert cli("archive", archived, "--store", str(example)).code == 0
    assert cli("tombstone", tombstoned, "--store", str(example)).code == 0
    assert set(ids(search(example, "zanzibar"))) == {active}
    data = search(example, "zanzibar", "--include-superseded")
    assert set(ids(data)) == {active, archived}  # tombstoned pages are withdrawn for good
    assert data["filters_applied"]["current_only"] is False
    # The example's superseded keystone ks-003 (Svelte + D3) and its successor ks-008.
    assert "ks-003" not in ids(search(example, "svelte"))
    assert "ks-003" in ids(search(example, "svelte", "--include-superseded"))


def test_high_sensitivity_hidden_unless_include_sensitive(example):
    assert search(example, "doctor check-up")["results"] == []
    data = search(example, "doctor check-up", "--include-sensitive")
    assert ids(data) == ["health-notes"]
    assert data["results"][0]["sensitivity"] == "high"
    assert data["filters_applied"]["include_sensitive"] is True


def test_proposals_never_appear(example):
    text = (example / "pages/user/ada-lumen/ks-p01.md").read_text()
    word = text.split("---\n")[-1].split()[2]
    for flags in ((), ("--include-superseded", "--include-sensitive")):
        assert "ks-p01" not in ids(search(example, word, *flags, "--limit", "25"))
        assert "ks-p01" not in ids(search(example, "id:ks-p01", *flags))


# -- relevance floor and types ------------------------------------------------------------------
def test_min_score_floor(example):
    everything = search(example, "tidewatch")
    floor = everything["results"][2]["score"]
    data = search(example, "tidewatch", "--min-score", str(floor))
    assert data["results"] and all(r["score"] >= floor for r in data["results"])
    assert len(data["results"]) < len(everything["results"])
    assert data["filters_applied"]["min_score"] == floor
    assert data["filters_applied"]["unscored_kept"] == 0
    out = cli("search", "tidewatch", "--min-score", "2", "--store", str(example))
    assert out.code == 2 and "between 0 and 1" in out.stderr


def test_type_filters(example):
    keystones = search(example, "tidewatch", "--type", "keystone")
    assert keystones["results"] and {r["type"] for r in keystones["results"]} == {"keystone"}
    assert keystones["filters_applied"]["types"] == ["keystone"]
    others = search(example, "tidewatch", "--exclude-type", "timeline_event",
                    "--exclude-type", "keystone")
    assert others["results"]
    assert not {r["type"] for r in others["results"]} & {"timeline_event", "keystone"}
    assert others["filters_applied"]["exclude_types"] == ["timeline_event", "keystone"]
    out = cli("search", "tidewatch", "--type", "recipe", "--store", str(example))
    assert out.code == 2 and "unknown type" in out.stderr


# -- scopes -------------------------------------------------------------------------------------
def test_scope_applies_before_ranking(example):
    # The best match for "lighthouse" lives outside the allowed scope.
    best = add(example, "Lighthouse lighthouse lighthouse: the lighthouse keeper's log.",
               "--namespace", "project:secret")
    weak = add(example, "A short mention of a lighthouse, among many other words about "
               "tides, charts, sensors, buoys and the coastline.", "--namespace",
               "project:tidewatch")
    everything = search(example, "lighthouse")
    assert ids(everything)[0] == best
    scoped = search(example, "lighthouse", "--scope", "project:tidewatch", "--limit", "1")
    assert ids(scoped) == [weak] and scoped["count"] == 1
    assert scoped["filters_applied"]["scopes"] == ["project:tidewatch"]
    assert ids(search(example, "lighthouse", "--scope", "project:*")) == [best, weak]
    assert ids(search(example, "lighthouse", "--scope", "user:ada-lumen")) == []
    with api.open_store(example, readonly=True) as store:
        nothing = api.search(store, "lighthouse", scopes=[])
        assert nothing["count"] == 0 and nothing["results"] == []


def test_suppressed_pages_never_candidates_and_limit_still_filled(store):
    made = [add(store, f"Orchard diary entry {i}: apples apples apples.") for i in range(8)]
    with api.open_store(store, readonly=True) as opened:
        full = api.search(opened, "apples", limit=5)
        hidden = frozenset(ids(full)[:3])
        data = api.search(opened, "apples", limit=5, suppressed=hidden)
    assert data["count"] == 5 and not hidden & set(ids(data))
    assert set(ids(data)) <= set(made)
    assert data["filters_applied"]["suppressed"] == 3


# -- query syntax -------------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_a_usage_error_with_a_hint(example, query):
    out = cli("search", query, "--store", str(example))
    assert out.code == 2, out
    assert "Error:" in out.stderr and "Hint:" in out.stderr
    assert "Traceback" not in out.stderr
    js = cli("search", query, "--store", str(example), "--json")
    assert js.code == 2 and js.error_json["error"]["code"] == "usage"


@pytest.mark.parametrize(("query", "plain"), [
    ("Tidewatch?", "Tidewatch"),                       # a trailing ? is not a wildcard
    ('"unbalanced tidewatch', "unbalanced tidewatch"),  # a lone quote is text
    ("(tidewatch", "tidewatch"), ("tidewatch)", "tidewatch"),
    ("colour:red tidewatch", '"colour red" tidewatch'),  # an unknown field is text
    ("AND tidewatch", "tidewatch"), ("tidewatch OR", "tidewatch"),
    ("NOT tidewatch", "tidewatch"),                    # only NOT: its words
    ("title: tidewatch?", "title tidewatch"),          # a field with nothing after it
    ("email: ada@example.org?", "email ada@example.org"),
])
def test_a_question_is_searched_as_written_never_refused(example, query, plain):
    out = cli("search", query, "--store", str(example), "--json")
    assert out.code == 0, out
    assert ids(out.json) == ids(search(example, plain))


def test_query_syntax_phrases_fields_and_operators(example):
    assert "ks-002" in ids(search(example, "type:keystone tidewatch"))
    assert {r["type"] for r in search(example, "type:keystone tidewatch")["results"]} == {
        "keystone"}
    assert ids(search(example, '"community ocean-sensor networks"'))
    both = set(ids(search(example, "tidewatch AND sensor")))
    assert both and both <= set(ids(search(example, "tidewatch OR sensor")))
    assert "tidewatch-architecture" not in ids(search(example, "tidewatch NOT sveltekit"))
    assert set(ids(search(example, "ns:project:tidewatch tidewatch"))) <= {
        "tidewatch-architecture", "conv-tidewatch-mobile"}


def test_cjk_query_finds_text_inside_a_sentence(example):
    assert ids(search(example, "即适者生存")) == ["reading-notes-zh"]
    assert ids(search(example, "生存")) == ["reading-notes-zh"]


# -- human output -------------------------------------------------------------------------------
def test_plain_text_when_piped(example):
    out = cli("search", "tidewatch", "--store", str(example))
    assert out.code == 0
    first = out.stdout.splitlines()[0].split("\t")
    assert len(first) == 6 and first[0] and first[1] in ("conversation", "note", "keystone",
                                                         "timeline_event", "profile")
    float(first[3])
    nothing = cli("search", "zzyzx", "--store", str(example))
    assert nothing.code == 0 and nothing.stdout == "" and "No results" in nothing.stderr


def test_hits_on_a_terminal_read_at_100_columns(example):
    """Title, then id and what it is, then the snippet over the whole width: no hit squeezed
    into a table column (a long id left the snippet 25 columns, one hit 13 lines)."""
    from tests.terminal import run_in_terminal

    out = run_in_terminal("search", "tidewatch", "--limit", "5", "--store", str(example),
                          env={"NO_COLOR": "1", "PCP_PAGER": "cat"}, columns=100)
    assert out.code == 0, out.stderr
    lines = out.screen.rstrip("\n").splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100
    heads = [i for i, line in enumerate(lines) if line[:4].strip().rstrip(".").isdigit()]
    assert len(heads) == 5 and lines[heads[0]].startswith(" 1. ")
    assert "Tidewatch architecture notes" in out.screen  # titles, not only ids
    assert "tidewatch-architecture · note · user_stated" in out.screen
    for start, end in zip(heads, [*heads[1:], len(lines)], strict=True):
        assert end - start <= 6  # title, id line, a snippet of at most four lines


@pytest.mark.parametrize("args", [
    ("tidewatch", "--json"),
    ("tidewatch", "--json", "--limit", "40", "--type", "keystone", "--type", "note"),
    ("svelte", "--json", "--include-superseded", "--min-score=0.1", "--scope", "user:*"),
    ("tidewatch",),
    ("doctor", "--include-sensitive", "--exclude-type", "keystone"),
    ("(broken", "--json"),
    ("tidewatch", "--type", "recipe"),
    ("Where is Tidewatch?", "--json", "--exclude-stale", "--scope", "*", "--mode", "auto"),
])
def test_fast_path_answers_exactly_like_the_typer_command(example, args):
    assert cli("index", "--store", str(example)).code == 0
    fast = cli("search", *args, "--store", str(example))
    slow = cli("--traceback", "search", *args, "--store", str(example))
    assert (fast.code, fast.stdout, fast.stderr) == (slow.code, slow.stdout, slow.stderr)


def test_whole_process_search(example):
    from tests.conftest import run_pcp

    out = run_pcp("search", "即适者生存", "--store", str(example), "--json")
    assert out.code == 0 and [r["id"] for r in out.json["results"]] == ["reading-notes-zh"]
    bad = run_pcp("search", " ", "--store", str(example))
    assert bad.code == 2 and "Hint:" in bad.stderr


def test_adding_an_or_word_never_returns_fewer_pages(store: Path) -> None:
    # issue #10: 12 pages for "ocean", then 1 for "ocean OR kelp" and "ocean kelp", labelled
    # "approximate: very common words only re-ranked the best candidates of the rarer words"
    for n in range(12):
        add(store, f"The ocean is deep and wide, note {n}", "--title", f"Ocean {n}")
    kelp = add(store, "Kelp forests grow tall", "--title", "Forest")
    add(store, "Nothing to see here", "--title", "Misc")
    ocean = search(store, "ocean", "--limit", "25")
    assert ocean["count"] == 12
    for query in ("ocean OR kelp", "ocean kelp"):
        data = search(store, query, "--limit", "25")
        assert data["count"] == 13, query
        assert set(ids(data)) == set(ids(ocean)) | {kelp}
        assert "ranking" not in data["filters_applied"]
        assert data["filters_applied"]["relevance_scores"] == "present"
        scores = [r["score"] for r in data["results"]]
        assert scores == sorted(scores, reverse=True)


def test_not_never_returns_a_page_with_the_excluded_word(store: Path) -> None:
    add(store, "shell only")
    add(store, "tide shell")
    pool = add(store, "tide pool")
    assert ids(search(store, "tide NOT shell")) == [pool]  # was: "tide shell" too


# -- field-only matches are score-less: kept, labelled, never dropped by --min-score ------------
def test_an_exact_id_match_is_kept_by_min_score_and_labelled(example: Path) -> None:
    data = search(example, "id:ks-001", "--min-score", "0.5")
    assert ids(data) == ["ks-001"]  # was dropped: every field match scored a constant 0.0909
    result = data["results"][0]
    assert "score" not in result
    assert result["extensions"]["org.pcp-cli"]["score"].startswith("absent: ")
    assert not list(RESULT_VALIDATOR.iter_errors(result))
    filters = data["filters_applied"]
    assert filters["unscored_kept"] == 1
    assert filters["relevance_scores"].startswith("absent: ")


@pytest.mark.parametrize("query", ["type:keystone", "tag:tidewatch", "ns:project:tidewatch"])
def test_field_only_queries_carry_no_score(example: Path, query: str) -> None:
    data = search(example, query, "--limit", "25")
    assert data["results"], query
    assert all("score" not in r for r in data["results"])
    assert all(not list(RESULT_VALIDATOR.iter_errors(r)) for r in data["results"])
    assert data["filters_applied"]["relevance_scores"].startswith("absent: ")
    floor = search(example, query, "--limit", "25", "--min-score", "0.9")
    assert ids(floor) == ids(data)  # a relevance floor never drops a score-less result


def test_a_tag_term_beside_words_narrows_like_type(store: Path) -> None:
    """`tag:work year` = pages tagged work about the year, as docs/search.md says of every
    exact field (it used to read as "tagged work, or about the year")."""
    tagged = add(store, "the year in review", "--tag", "work")
    add(store, "a year of gardening")  # about the year, not tagged work
    add(store, "standup notes", "--tag", "work")  # tagged work, not about the year
    assert ids(search(store, "tag:work year")) == [tagged]
    assert ids(search(store, "year tag:work")) == [tagged]
    assert len(ids(search(store, "tag:work OR year"))) == 3  # OR written out stays OR
    words = {r["id"]: r["score"] for r in search(store, "year")["results"]}
    assert search(store, "tag:work year")["results"][0]["score"] == words[tagged]


def test_words_beside_a_field_term_are_scored_by_the_words_alone(example: Path) -> None:
    both = search(example, "type:keystone tidewatch")
    words = {r["id"]: r["score"] for r in search(example, "tidewatch", "--type", "keystone",
                                                    "--limit", "25")["results"]}
    assert both["results"] and both["filters_applied"]["relevance_scores"] == "present"
    for r in both["results"]:
        assert r["score"] == words[r["id"]]  # the type: term adds nothing to the score


def test_mixed_scored_and_score_less_results_say_partial(example: Path) -> None:
    data = search(example, "id:ks-001 OR tidewatch", "--limit", "25")
    assert ids(data)[-1] == "ks-001"  # score-less: after every scored result
    assert "score" not in data["results"][-1]
    assert all("score" in r for r in data["results"][:-1]) and data["count"] > 1
    assert data["filters_applied"]["relevance_scores"].startswith(
        f"partial: 1 of {data['count']} results matched only exact fields")
