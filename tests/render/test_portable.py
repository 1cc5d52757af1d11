"""profile_json and archive: every object valid against the published v1 schemas, unchanged."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from pcp_cli.errors import InvalidInput
from pcp_cli.render import archive, keystone_object, profile_json, timeline_object
from tests.conftest import V1_EXAMPLES
from tests.render.render_personas import SCHEMAS, ada, keystone, profile, state


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


PROFILE, KEYSTONE, EVENT = validator("profile"), validator("keystone"), validator("timeline-event")


def assert_valid(v: Draft202012Validator, obj: dict) -> None:
    errors = [e.message for e in v.iter_errors(obj)]
    assert not errors, errors


def test_format_checking_is_really_on():
    assert list(PROFILE.iter_errors({"schema_version": "1.0", "generated_at": "yesterday"}))


def test_ada_archive_validates_and_is_ordered():
    prof, keystones, events = ada()
    data = archive(prof, list(reversed(keystones)), list(reversed(events)), "2026-02-01T00:00:00Z")
    assert list(data) == [
        "schema_version",
        "kind",
        "generated_at",
        "profile",
        "keystones",
        "timeline_events",
    ]
    assert data["schema_version"] == "1.0" and data["kind"] == "pcp.full-archive"
    assert_valid(PROFILE, data["profile"])
    for obj in data["keystones"]:
        assert_valid(KEYSTONE, obj)
    for obj in data["timeline_events"]:
        assert_valid(EVENT, obj)
    assert [k["id"] for k in data["keystones"]] == [
        "ks-001",
        "ks-002",
        "ks-007",
        "ks-005",
        "ks-006",
        "ks-003",
        "ks-004",
    ]
    assert [e["id"] for e in data["timeline_events"]] == [f"tl-00{i}" for i in range(1, 7)]
    assert "pinned" not in data["profile"]
    assert data == archive(prof, keystones, events, "2026-02-01T00:00:00Z")


def test_ada_profile_matches_the_published_example():
    prof, _, _ = ada()
    expected = json.loads(
        (V1_EXAMPLES / "distilled-profile.example.json").read_text()
    )
    assert profile_json(prof) == expected


def test_no_profile_is_a_bare_valid_object():
    assert profile_json(None) == {"schema_version": "1.0"}
    assert_valid(PROFILE, profile_json(None))


def test_garbage_fields_are_normalised_or_left_out():
    rev = keystone(
        "ks-x",
        "Claim.",
        category="nonsense",
        created_at="2026-01-01 10:00:00+02:00",
        importance=3,
        origin="approved",
    )
    rev.state.record.update(
        {
            "confidence": "high",
            "last_confirmed_at": "not a date",
            "supersedes": 7,
            "source": "telepathy",
        }
    )
    obj = keystone_object(rev)
    assert_valid(KEYSTONE, obj)
    assert obj["category"] == "other"
    assert obj["created_at"] == "2026-01-01T08:00:00Z"
    assert obj["source"] == "user_stated"  # approved: affirmed by the person
    assert "importance" not in obj and "confidence" not in obj
    assert "last_confirmed_at" not in obj and "supersedes" not in obj

    prof = profile(
        {"name": 42, "values": ["ok", 3, ""], "domain_expertise": "not a list", "pinned": ["name"]},
        "Summary.",
        created_at="2026-01-01T00:00:00+01:00",
    )
    obj = profile_json(prof)
    assert_valid(PROFILE, obj)
    assert obj["values"] == ["ok"] and "name" not in obj and "domain_expertise" not in obj
    assert obj["generated_at"] == "2025-12-31T23:00:00Z"


def test_archive_exports_history_but_never_proposals_or_deleted():
    keystones = [
        keystone("a", "Active.", category="rule"),
        keystone("s", "Superseded.", category="rule", lifecycle_status="superseded"),
        keystone("h", "Sensitive.", category="rule", sensitivity="high"),
        keystone("p", "Proposed.", category="rule", review_status="proposed"),
        keystone("r", "Rejected.", category="rule", review_status="rejected"),
        keystone("t", "Deleted.", category="rule", lifecycle_status="tombstoned"),
    ]
    data = archive(None, keystones, [], "2026-02-01T00:00:00Z")
    assert {k["id"]: k["status"] for k in data["keystones"]} == {
        "a": "active",
        "s": "superseded",
        "h": "active",
    }
    for obj in data["keystones"]:
        assert_valid(KEYSTONE, obj)


def test_timeline_event_with_a_bad_date_is_refused():
    bad = state("tl-x", "timeline_event", "Something.", record={"date": "March 2020"})
    with pytest.raises(InvalidInput):
        timeline_object(bad)


def test_timeline_events_exported_are_current_only():
    events = [
        state("e1", "timeline_event", "One.", record={"date": "2020"}),
        state(
            "e2", "timeline_event", "Two.", record={"date": "2019-05"}, lifecycle_status="archived"
        ),
        state(
            "e3",
            "timeline_event",
            "Three.",
            record={"date": "2019-05-02"},
            review_status="proposed",
        ),
    ]
    data = archive(None, [], events, "2026-02-01T00:00:00Z")
    assert [e["id"] for e in data["timeline_events"]] == ["e1"]
    assert_valid(EVENT, data["timeline_events"][0])
