from __future__ import annotations

from pcp_cli.render import profile_markdown
from tests.render.render_personas import ada, keystone, profile, state


def test_ada_golden(golden):
    prof, keystones, events = ada()
    text = profile_markdown(prof, keystones, events)
    golden("ada.profile.md", text)
    assert text.startswith("# Ada Lumen\n")
    assert text.endswith("_Profile as of 2026-01-15._\n")
    for heading in (
        "## Focus",
        "## Expertise",
        "## Values",
        "## How I work",
        "## How to work with me",
        "## Key facts",
        "### Identity",
        "## Recent timeline",
    ):
        assert f"\n{heading}\n" in text


def test_deterministic_regardless_of_order():
    prof, keystones, events = ada()
    assert profile_markdown(prof, keystones, events) == profile_markdown(
        prof, list(reversed(keystones)), list(reversed(events))
    )


def test_excludes_what_the_compact_views_exclude():
    keystones = [
        keystone("ok", "Visible.", category="rule"),
        keystone("h", "SECRET high.", category="rule", sensitivity="high"),
        keystone("p", "SECRET proposed.", category="rule", review_status="proposed"),
        keystone("s", "SECRET superseded.", category="rule", lifecycle_status="superseded"),
    ]
    events = [
        state("e", "timeline_event", "SECRET event.", record={"date": "2020"}, sensitivity="high")
    ]
    text = profile_markdown(profile({"name": "Bo"}), keystones, events)
    assert "Visible." in text and "SECRET" not in text


def test_recent_timeline_is_newest_first_and_capped():
    events = [
        state(f"e{y}", "timeline_event", f"Event of {y}.", record={"date": str(y)})
        for y in range(2000, 2020)
    ]
    text = profile_markdown(None, [], events)
    assert text.index("Event of 2019") < text.index("Event of 2018")
    assert "Event of 2009" not in text and "Event of 2010" in text


def test_empty_store():
    assert "No profile is available yet" in profile_markdown(None, [], [])
