"""`pcp timeline list` / `api.timeline`: v1 events, date order, partial-date ranges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pcp_cli import api
from tests.conftest import V12_SCHEMAS, cli

EVENT = Draft202012Validator(
    json.loads((V12_SCHEMAS / "timeline-event.schema.json").read_text(encoding="utf-8")))


def listing(root: Path, *args: str) -> dict:
    out = cli("timeline", "list", *args, "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return out.json


def add_event(root: Path, date: str, summary: str) -> str:
    out = cli("timeline", "add", date, summary, "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return out.json["page_id"]


def test_events_validate_and_are_ordered_by_date(example):
    data = listing(example)
    assert set(data) == {"schema_version", "count", "filters_applied", "events", "next_cursor"}
    assert data["count"] == len(data["events"]) == 6
    for event in data["events"]:
        assert not list(EVENT.iter_errors(event))
    dates = [e["date"] for e in data["events"]]
    assert dates == ["2019", "2020-03", "2021-08", "2023", "2024-06", "2025-11"]


def test_partial_dates_compared_as_spans(example):
    year = add_event(example, "2024", "A whole-year event.")
    day = add_event(example, "2024-06-15", "A one-day event.")
    window = [e["id"] for e in listing(example, "--from", "2024-01", "--to", "2024-12")["events"]]
    assert year in window and day in window and "tl-005" in window  # tl-005 is 2024-06
    assert "tl-004" not in window  # 2023
    june = [e["id"] for e in listing(example, "--from", "2024-06-10", "--to", "2024-06-20")
            ["events"]]
    assert set(june) == {year, "tl-005", day}  # the year and the month contain those days
    after = [e["date"] for e in listing(example, "--from", "2024-07")["events"]]
    assert after == ["2024", "2025-11"]
    before = [e["date"] for e in listing(example, "--to", "2020")["events"]]
    assert before == ["2019", "2020-03"]
    ordered = [e["date"] for e in listing(example, "--from", "2024", "--to", "2024")["events"]]
    assert ordered == ["2024", "2024-06", "2024-06-15"]


def test_query_and_limit(example):
    data = listing(example, "--query", "tidewatch")
    assert data["events"] and all("tidewatch" in e["summary"].lower() for e in data["events"])
    assert data["filters_applied"]["query"] == "tidewatch"
    limited = listing(example, "--limit", "2")
    assert [e["date"] for e in limited["events"]] == ["2019", "2020-03"]
    assert limited["filters_applied"]["matched"] == 6


@pytest.mark.parametrize("args", [("--from", "2024-13"), ("--to", "last year"),
                                  ("--from", "2025", "--to", "2024"), ("--limit", "0")])
def test_bad_arguments_are_usage_errors(example, args):
    out = cli("timeline", "list", *args, "--store", str(example))
    assert out.code == 2 and "Error:" in out.stderr


def test_scopes_and_suppression(example):
    with api.open_store(example, readonly=True) as store:
        assert api.timeline(store, scopes=[])["events"] == []
        assert api.timeline(store, scopes=["project:*"])["events"] == []
        data = api.timeline(store, suppressed=frozenset({"tl-001"}))
    assert "tl-001" not in [e["id"] for e in data["events"]] and data["count"] == 5


def test_human_output(example):
    out = cli("timeline", "list", "--store", str(example))
    assert out.code == 0 and out.stdout.splitlines()[0].startswith("2019\t")
