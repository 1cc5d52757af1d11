"""Nearly tied results prefer the higher-authority, then the newer statement (PCP §5 SHOULD),
the same on both search engines; relevance still decides everything it separates, and cursor
pages agree with one long page (pcp_cli/query/tiebreak.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcp_cli.query import tiebreak
from tests.conftest import cli

pytestmark = pytest.mark.usefixtures("engine")


def _ok(*args: str):
    out = cli(*args, "--json")
    assert out.code == 0, (args, out.stderr)
    return out.json


def _ranked(store, query: str, *args: str) -> list[tuple[str, str]]:
    data = _ok("search", query, *args, "--store", str(store))
    return [(r["id"], r["origin"]) for r in data["results"]]


def test_a_user_stated_keystone_outranks_the_inferred_opposite(store):
    s = ("--store", str(store))
    # the inferred one first, so that index order alone would put it first
    _ok("keystone", "add", "Ada prefers dark mode in every editor", "--source", "inferred",
        "--id", "ks-inferred", *s)
    _ok("keystone", "add", "Ada prefers light mode in every editor", "--source", "user_stated",
        "--id", "ks-user", *s)
    data = _ok("search", "prefers mode editor", *s)
    results = data["results"]
    assert [(r["id"], r["origin"]) for r in results] == [("ks-user", "user_stated"),
                                                         ("ks-inferred", "inferred")]
    assert results[0]["score"] == pytest.approx(results[1]["score"], rel=tiebreak.TIE_EPSILON)
    assert data["filters_applied"]["tie_break"] == tiebreak.RULE


def test_among_equal_authority_the_newer_observation_comes_first(store):
    s = ("--store", str(store))
    _ok("timeline", "add", "2025-06", "Moved the studio to the harbour", "--id", "tl-new", *s)
    _ok("timeline", "add", "2019-02", "Moved the studio to the harbour", "--id", "tl-old", *s)
    assert [i for i, _ in _ranked(store, "studio harbour")] == ["tl-new", "tl-old"]


def test_relevance_still_decides_what_it_separates(store):
    s = ("--store", str(store))
    _ok("keystone", "add", "Harbour harbour harbour: the harbour is where Ada works", "--source",
        "inferred", "--id", "ks-strong", *s)
    _ok("keystone", "add", "Ada once walked past a harbour on a long and winding holiday "
        "through several towns", "--source", "user_stated", "--id", "ks-weak", *s)
    assert [i for i, _ in _ranked(store, "harbour")] == ["ks-strong", "ks-weak"]


def test_cursor_pages_agree_with_one_long_page(store):
    """Thirty pages the query scores the same, of mixed origins: paging five at a time serves
    exactly the order one page of 25 does, with no page served twice."""
    s = ("--store", str(store))
    origins = ("generated", "inferred", "user_stated", "imported", "recorded")
    for n in range(30):
        _ok("add", f"Tide table number {n:02d}", "--origin", origins[n % 5], *s)
    whole = [i for i, _ in _ranked(store, "tide table", "-n", "25")]
    assert [o for _, o in _ranked(store, "tide table", "-n", "6")] == ["user_stated"] * 6
    paged: list[str] = []
    cursor = None
    while len(paged) < 25:
        args = ("search", "tide table", "-n", "5", *s) + (("--cursor", cursor) if cursor else ())
        data = _ok(*args)
        paged += [r["id"] for r in data["results"]]
        cursor = data["next_cursor"]
    assert paged == whole and len(set(paged)) == 25


def test_bands_and_settled():
    eps = tiebreak.TIE_EPSILON
    near, edge, out = 10 * (1 - eps / 2), 10 * (1 - eps), 10 * (1 - 3 * eps)
    scores = [10.0, near, edge, out, 5.0, 0.0, 0.0]
    assert tiebreak.bands(scores) == [(0, 3), (3, 4), (4, 5), (5, 6), (6, 7)]
    assert not tiebreak.settled(scores[:3], 2)  # the band at position 1 may go on
    assert tiebreak.settled(scores[:4], 2)
    assert tiebreak.settled(scores[:2], 5)  # fewer than needed: nothing more exists
    items = [("a", 10.0, "inferred", "2026"), ("b", near, "user_stated", "2020"),
             ("c", edge, "user_stated", "2024"), ("d", 4.0, "user_stated", "2026"),
             ("e", 0.0, "user_stated", "2026")]
    ordered = tiebreak.order(items, score=lambda i: i[1], origin=lambda i: i[2],
                             observed=lambda i: i[3])
    assert [i[0] for i in ordered] == ["c", "b", "a", "d", "e"]
    assert tiebreak.authority("nonsense") == tiebreak.authority("generated")


@given(st.lists(st.one_of(st.none(), st.text(alphabet="0123456789-:TZ.+é😀\ud7ff\U0010fffe",
                                             max_size=10)), max_size=30))
def test_the_newest_first_key_orders_as_negated_code_points(stamps):
    """The key that orders a band by observed time (a string of mirrored characters) sorts
    exactly as the tuple of negated code points it replaced: later first, a prefix before
    what extends it, a missing time last."""
    def plain(stamp):
        return (1, ()) if not stamp else (0, tuple(-ord(c) for c in stamp))

    by_key = sorted(range(len(stamps)), key=lambda i: tiebreak._newest_first(stamps[i]))
    by_plain = sorted(range(len(stamps)), key=lambda i: plain(stamps[i]))
    assert by_key == by_plain
