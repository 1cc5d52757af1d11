from __future__ import annotations

import pytest

from pcp_cli.render import distill
from pcp_cli.render.distill import extract_name
from tests.render.render_personas import ada, keystone, profile


def test_ada_distillation():
    prof, keystones, _ = ada()
    result = distill(keystones, prof)
    rec = result.record
    assert rec["name"] == "Ada Lumen"  # "Ada is a …" does not shorten the fuller name
    assert rec["profession"] == "Freelance data-visualization developer and science writer"
    assert rec["primary_focus"].startswith("Building 'Tidewatch'")
    assert "state its assumptions" in rec["how_interacts_with_ai"]
    assert "25 focused hours" in rec["working_style"]
    assert "Dr. Okonkwo" in result.summary
    # not derived: kept
    assert rec["values"] == prof.state.record["values"]
    assert rec["tools_and_workflows"] == prof.state.record["tools_and_workflows"]
    assert result.input_revision_ids == tuple(sorted(r.revision_id for r in keystones))
    assert distill(list(reversed(keystones)), prof) == result


def test_pinned_fields_are_never_overwritten():
    prof = profile(
        {
            "name": "Bo Chen",
            "primary_focus": "Hand-written focus",
            "working_style": "Hand-written style",
            "pinned": ["primary_focus", "summary"],
        },
        "Hand-written summary.",
    )
    keystones = [
        keystone("o", "Bo is building a bridge model.", category="objective"),
        keystone("c", "Cannot work on Fridays.", category="constraint"),
        keystone("i", "Bo is a structural engineer.", category="identity"),
    ]
    result = distill(keystones, prof)
    assert result.record["primary_focus"] == "Hand-written focus"
    assert result.summary == "Hand-written summary."
    assert result.record["working_style"] == "Cannot work on Fridays."
    assert result.record["profession"] == "Structural engineer"
    assert result.record["pinned"] == ["primary_focus", "summary"]
    assert "rev_o" not in result.input_revision_ids  # only fed a pinned field
    assert set(result.changed) == {"working_style", "profession"}


def test_only_current_affirmed_low_sensitivity_keystones_are_used():
    keystones = [
        keystone("h", "Zed is a spy.", category="identity", sensitivity="high"),
        keystone("p", "Mia is a pilot.", category="identity", review_status="proposed"),
        keystone("s", "Old focus.", category="objective", lifecycle_status="superseded"),
        keystone("x", "Older objective still marked active.", category="objective"),
        keystone("y", "Newer objective.", category="objective", supersedes="x"),
    ]
    result = distill(keystones, None)
    assert "name" not in result.record and "profession" not in result.record
    assert result.record["primary_focus"] == "Newer objective"
    assert result.input_revision_ids == ("rev_y",)


def test_slot_goes_to_newest_high_authority_objective():
    keystones = [
        keystone(
            "a",
            "Inferred new focus.",
            category="objective",
            origin="inferred",
            created_at="2026-06-01T00:00:00Z",
        ),
        keystone("b", "Stated old focus.", category="objective", created_at="2025-01-01T00:00:00Z"),
        keystone("c", "Stated new focus.", category="objective", created_at="2025-06-01T00:00:00Z"),
    ]
    assert distill(keystones, None).record["primary_focus"] == "Stated new focus"


def test_nothing_to_derive_keeps_the_current_values():
    prof = profile({"name": "Bo", "working_style": "Calm."}, "Summary.")
    result = distill([], prof)
    assert result.record == {"name": "Bo", "working_style": "Calm.", "pinned": []}
    assert result.summary == "Summary." and result.input_revision_ids == () and not result.changed


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My name is Ada Lumen.", "Ada Lumen"),
        ("my name is Bo Chen and I build bridges.", "Bo Chen"),
        ("Ada Lumen is a freelance developer.", "Ada Lumen"),
        ("Ada is an engineer.", "Ada"),
        ("She is a freelance developer.", None),
        ("The team is a small one.", None),
        ("Left a PhD to work in data viz.", None),
        ("Works with Ada, who is a designer.", None),
        ("my name is not important", None),
        ("Dr. Okonkwo is a marine biologist.", None),
        ("I am a developer.", None),
    ],
)
def test_name_extraction_is_conservative(text, name):
    assert extract_name(text) == name
