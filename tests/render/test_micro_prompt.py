"""The §4.1 micro_prompt contract, one test (or more) per point."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcp_cli.model.vocab import KEYSTONE_CATEGORIES
from pcp_cli.render import EMPTY, LIMIT, micro_prompt
from tests.render.render_personas import ada, keystone, profile

CURRENCY = re.compile(r"\n\n\(profile as of \d{4}-\d{2}-\d{2}\)\Z")


def date_line(text: str) -> str:
    return text.rsplit("\n", 1)[-1]


# -- golden ----------------------------------------------------------------------------------


def test_ada_golden(golden):
    prof, keystones, _ = ada()
    text = micro_prompt(prof, keystones)
    golden("ada.micro_prompt.txt", text + "\n")
    assert len(text) <= LIMIT
    assert text.endswith("(profile as of 2026-01-15)")


# -- budget ----------------------------------------------------------------------------------

words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
long_text = st.lists(words, max_size=400).map(" ".join)
categories = st.sampled_from([*KEYSTONE_CATEGORIES, "bogus"])
stamps = st.datetimes(timezones=st.just(__import__("datetime").UTC)).map(
    lambda d: d.isoformat().replace("+00:00", "Z")
)


@st.composite
def keystone_lists(draw):
    count = draw(st.integers(0, 60))
    return [
        keystone(
            f"ks-{i}",
            draw(long_text),
            category=draw(categories),
            created_at=draw(stamps),
            importance=draw(st.none() | st.floats(0, 1)),
            origin=draw(st.sampled_from(["user_stated", "approved", "inferred", "x"])),
        )
        for i in range(count)
    ]


@st.composite
def profiles(draw):
    if draw(st.booleans()):
        return None
    fields = [
        "name",
        "profession",
        "primary_focus",
        "communication_style",
        "working_style",
        "tools_and_workflows",
        "how_interacts_with_ai",
    ]
    record = {f: draw(long_text) for f in fields if draw(st.booleans())}
    record["values"] = draw(st.lists(long_text, max_size=30))
    record["domain_expertise"] = draw(st.lists(words, max_size=30))
    return profile(record, draw(long_text), created_at=draw(stamps))


@settings(max_examples=150, deadline=None)
@given(profiles(), keystone_lists())
def test_never_exceeds_limit_and_keeps_currency_line(prof, keystones):
    text = micro_prompt(prof, keystones)
    assert len(text) <= LIMIT
    assert text == EMPTY or CURRENCY.search(text) or text.endswith("(profile as of unknown date)")


def test_huge_inputs_trimmed_by_dropping_whole_sentences():
    sentences = [f"Fact number {i} is about item {i} and it matters." for i in range(500)]
    keystones = [
        keystone(f"ks-{i:03d}", s, category="preference", importance=i / 1000)
        for i, s in enumerate(sentences)
    ]
    text = micro_prompt(None, keystones)
    assert len(text) <= LIMIT
    body = text.rsplit("\n\n", 1)[0]
    kept = re.findall(r"Fact number \d+ is about item \d+ and it matters\.", body)
    assert body == "Preferences: " + " ".join(kept)  # whole sentences only
    # The most important (highest importance) are the ones kept.
    kept_numbers = sorted(int(re.search(r"\d+", s).group()) for s in kept)
    assert kept_numbers == list(range(500 - len(kept), 500))


def test_overlong_top_sentence_is_cut_at_a_word_with_an_ellipsis():
    name_words = [f"Word{i}" for i in range(600)]
    prof = profile({"name": " ".join(name_words)})
    text = micro_prompt(prof, [])
    assert len(text) <= LIMIT
    first = text.split("\n\n")[0]
    assert first.endswith("…")
    assert all(w in name_words for w in first[:-1].split(" "))


def test_a_single_giant_word_is_cut_with_an_ellipsis():
    text = micro_prompt(profile({"name": "x" * 5000}), [])
    assert len(text) <= LIMIT
    assert text.split("\n\n")[0].endswith("…")
    assert CURRENCY.search(text)


# -- content order ---------------------------------------------------------------------------


def test_identity_then_environment_then_collaboration():
    prof = profile(
        {
            "name": "Bo Chen",
            "profession": "Bridge engineer",
            "primary_focus": "Retrofitting the Elm Street bridge",
            "tools_and_workflows": "AutoCAD and Python",
            "how_interacts_with_ai": "Wants short answers",
        }
    )
    keystones = [
        keystone("r", "Always show units in calculations.", category="rule"),
        keystone("c", "Cannot work on Fridays.", category="constraint"),
    ]
    text = micro_prompt(prof, keystones)
    order = [
        text.index(s)
        for s in (
            "Bo Chen — Bridge engineer.",
            "Current focus:",
            "AutoCAD",
            "Cannot work on Fridays",
            "How to work with Bo:",
            "Always show units",
        )
    ]
    assert order == sorted(order)
    assert text.startswith("Bo Chen — Bridge engineer.")


# -- freshness and authority -----------------------------------------------------------------


def test_superseded_by_chain_is_dropped_even_if_still_marked_active():
    old = keystone("ks-old", "Uses Vim for everything.", category="preference")
    new = keystone(
        "ks-new",
        "Uses Helix as the main editor.",
        category="preference",
        supersedes="ks-old",
        created_at="2026-02-01T00:00:00Z",
    )
    text = micro_prompt(None, [old, new])
    assert "Helix" in text and "Vim" not in text


def test_a_proposed_successor_does_not_hide_the_affirmed_claim():
    old = keystone("ks-old", "Uses Vim for everything.", category="preference")
    new = keystone(
        "ks-new",
        "Uses Helix.",
        category="preference",
        supersedes="ks-old",
        review_status="proposed",
    )
    text = micro_prompt(None, [old, new])
    assert "Vim" in text and "Helix" not in text


def test_only_the_newest_revision_of_a_page_counts():
    v1 = keystone(
        "ks-1",
        "Lives in Lisbon.",
        category="identity",
        revision_id="rev_a",
        created_at="2025-01-01T00:00:00Z",
    )
    v2 = keystone(
        "ks-1",
        "Lives in Porto.",
        category="identity",
        revision_id="rev_b",
        created_at="2026-01-01T00:00:00Z",
    )
    for order in ([v1, v2], [v2, v1]):
        text = micro_prompt(None, order)
        assert "Porto" in text and "Lisbon" not in text


def test_duplicate_claims_keep_the_higher_authority_wording():
    inferred = keystone(
        "ks-a",
        "prefers  tea over coffee",
        category="preference",
        origin="inferred",
        created_at="2026-05-01T00:00:00Z",
    )
    stated = keystone(
        "ks-b",
        "Prefers tea over coffee.",
        category="preference",
        origin="user_stated",
        created_at="2025-01-01T00:00:00Z",
    )
    text = micro_prompt(None, [inferred, stated])
    assert text.count("tea over coffee") == 1
    assert "Prefers tea over coffee." in text


FILLER = [
    keystone(
        f"f{i:02d}",
        f"Filler identity sentence number {i} padding the budget out.",
        category="identity",
        importance=1.0,
    )
    for i in range(24)
]


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        # authority beats recency
        (
            dict(origin="user_stated", created_at="2024-01-01T00:00:00Z"),
            dict(origin="inferred", created_at="2026-01-01T00:00:00Z"),
        ),
        (dict(origin="approved"), dict(origin="imported")),
        (dict(origin="imported"), dict(origin="generated")),
        (dict(origin="generated"), dict(origin="inferred")),
        # same authority: newer confirmation wins
        (
            dict(last_confirmed_at="2026-03-01T00:00:00Z"),
            dict(last_confirmed_at="2026-02-01T00:00:00Z"),
        ),
    ],
)
def test_when_only_one_fits_the_newest_high_authority_claim_wins(winner, loser):
    pad = " and this sentence is padded to be long enough that only one of the two can fit"
    a = keystone("ks-win", f"Rule WINNER applies{pad}.", category="rule", importance=0.5, **winner)
    b = keystone("ks-lose", f"Rule LOSER applies{pad}.", category="rule", importance=0.5, **loser)
    filler = FILLER[:20]
    text = micro_prompt(None, [b, *filler, a])
    assert len(text) <= LIMIT
    assert "WINNER" in text and "LOSER" not in text
    assert all(f.state.content.strip() in text for f in filler)


def test_importance_orders_within_a_category():
    low = keystone("ks-low", "LOW importance note.", category="rule", importance=0.1)
    high = keystone("ks-high", "HIGH importance note.", category="rule", importance=0.9)
    text = micro_prompt(None, [low, high])
    assert text.index("HIGH") < text.index("LOW")


# -- exclusions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        dict(lifecycle_status="superseded"),
        dict(lifecycle_status="archived"),
        dict(lifecycle_status="tombstoned"),
        dict(sensitivity="high"),
        dict(review_status="proposed"),
        dict(review_status="rejected"),
    ],
)
def test_non_current_or_sensitive_keystones_never_appear(fields):
    ok = keystone("ks-ok", "Visible claim.", category="identity")
    bad = keystone(
        "ks-bad", "SECRET claim.", category="identity", created_at="2027-01-01T00:00:00Z", **fields
    )
    text = micro_prompt(None, [ok, bad])
    assert "SECRET" not in text
    assert date_line(text) == "(profile as of 2026-01-01)"


@pytest.mark.parametrize(
    "fields",
    [dict(sensitivity="high"), dict(review_status="proposed"), dict(lifecycle_status="archived")],
)
def test_an_unusable_profile_is_ignored(fields):
    prof = profile({"name": "SECRET Name"}, **fields)
    assert micro_prompt(prof, []) == EMPTY


# -- currency --------------------------------------------------------------------------------


def test_currency_date_is_the_newest_material_used():
    prof = profile({"name": "Bo Chen"}, created_at="2025-06-01T10:00:00Z")
    ks = keystone(
        "ks",
        "Likes maps.",
        category="preference",
        created_at="2025-01-01T00:00:00Z",
        last_confirmed_at="2026-03-04T23:00:00-05:00",
    )  # 2026-03-05 in UTC
    assert date_line(micro_prompt(prof, [ks])) == "(profile as of 2026-03-05)"
    assert date_line(micro_prompt(prof, [])) == "(profile as of 2025-06-01)"


def test_currency_date_ignores_material_trimmed_away():
    old = [
        keystone(
            f"o{i:02d}",
            f"Old identity fact {i} that fills the budget nicely.",
            category="identity",
            importance=1.0,
            created_at="2025-01-01T00:00:00Z",
        )
        for i in range(40)
    ]
    newest = keystone(
        "n",
        "NEWEST but unimportant.",
        category="other",
        importance=0.0,
        created_at="2026-09-09T00:00:00Z",
    )
    text = micro_prompt(None, [*old, newest])
    assert "NEWEST" not in text
    assert date_line(text) == "(profile as of 2025-01-01)"


# -- empty -----------------------------------------------------------------------------------


def test_empty_profile_returns_the_fixed_string():
    assert micro_prompt(None, []) == EMPTY
    assert micro_prompt(profile({"pinned": []}, ""), []) == EMPTY
    assert micro_prompt(None, [keystone("k", "   ", category="rule")]) == EMPTY
    assert EMPTY == "No profile is available yet in this context store."


# -- determinism -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(keystone_lists(), st.randoms(use_true_random=False))
def test_same_inputs_in_any_order_give_identical_bytes(keystones, rnd):
    shuffled = list(keystones)
    rnd.shuffle(shuffled)
    assert micro_prompt(None, keystones).encode() == micro_prompt(None, shuffled).encode()


def test_ada_is_order_independent():
    prof, keystones, _ = ada()
    assert micro_prompt(prof, keystones) == micro_prompt(prof, list(reversed(keystones)))


def test_long_profile_fields_lose_later_sentences_first():
    focus = "FIRST focus sentence. " + " ".join(
        f"Later detail {i} about Dr. Who and J. Smith." for i in range(60)
    )
    text = micro_prompt(profile({"name": "Bo", "primary_focus": focus}), [])
    assert len(text) <= LIMIT
    assert "Current focus: FIRST focus sentence." in text
    body = text.split("Current focus: ", 1)[1].rsplit("\n\n", 1)[0]
    later = [f"Later detail {i} about Dr. Who and J. Smith." for i in range(60)]
    kept = next(
        k for k in range(60, -1, -1) if body == " ".join(["FIRST focus sentence.", *later[:k]])
    )
    # whole sentences only, abbreviations and initials not taken for sentence ends
    assert 0 < kept < 60
    assert body.endswith("J. Smith.")


def test_a_keystone_the_profile_already_says_is_left_out():
    prof = profile({"primary_focus": "Building Tidewatch, an open-source dashboard for "
                    "community ocean-sensor networks"})
    echo = keystone("ks-echo", "Ada is building Tidewatch, an open-source dashboard for community "
                    "ocean-sensor networks.", category="objective")
    text = micro_prompt(prof, [echo])
    assert text.count("open-source dashboard") == 1


def test_keystones_that_share_words_are_both_kept():
    a = keystone("ks-a", "Her daughter Mia attends Lincoln Elementary school in Portland Oregon.",
                 category="relationship")
    b = keystone("ks-b", "Her son Leo attends Lincoln Elementary school in Portland Oregon.",
                 category="relationship")
    text = micro_prompt(None, [a, b])
    assert "Mia" in text and "Leo" in text
