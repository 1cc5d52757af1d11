"""`pcp ingest`: raw events in, stored once per key, rolled up into source-backed pages.

Through the real CLI on real store folders: what lands in events/, what the conversation page
says and where its source_spans point, idempotency and conflicts, bad lines (nothing stored),
and a crash at every file write.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcp_cli.model.validate import errors_for
from tests.conftest import cli, snapshot

EVENTS = [
    {"type": "message", "conversation_id": "c1", "role": "user",
     "content": "How do finite products preserve compactness?",
     "timestamp": "2026-05-14T09:30:00Z", "idempotency_key": "m1"},
    {"type": "tool_call", "conversation_id": "c1", "name": "search",
     "input": {"q": "tube lemma"}, "output": ["tube lemma"],
     "timestamp": "2026-05-14T09:30:03+00:00"},
    {"type": "message", "conversation_id": "c1", "role": "assistant",
     "content": "Use the tube lemma,\r\nthen induct.", "timestamp": "2026-05-14T11:30:05+02:00",
     "model": "m-1", "com.example.mood": "curious"},
    {"type": "reasoning", "conversation_id": "c1", "content": "They want Tychonoff's easy case.",
     "timestamp": "2026-05-14T09:30:04Z"},
    {"type": "note", "content": "Check the infinite case next.",
     "timestamp": "2026-06-01T08:00:00Z"},
]


def jsonl(events) -> str:
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)


def write(tmp_path: Path, events, name: str = "events.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(jsonl(events) if not isinstance(events, str) else events, encoding="utf-8")
    return path


def ingest(store: Path, path: Path | str, *extra: str):
    return cli("ingest", str(path), "--store", str(store), "--json", *extra)


def event_files(store: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (store / "events").rglob("ev_*.json")}


def conversation(store: Path, report: dict, conversation_id: str = "c1") -> dict:
    page = next(c for c in report["conversations"] if c["conversation_id"] == conversation_id)
    return cli("show", page["page_id"], "--json", "--store", str(store)).json


def test_events_land_immutably_and_roll_up_into_a_source_backed_page(store, tmp_path):
    result = ingest(store, write(tmp_path, EVENTS))
    assert result.code == 0, result.stderr
    report = result.json
    assert report["events"] == {"received": 5, "stored": 5, "unchanged": 0, "conflicts": 0}
    assert report["pages"] == {"created": 2, "revised": 0, "unchanged": 0}
    files = event_files(store)
    assert len(files) == 5
    for path in (store / "events").rglob("ev_*.json"):
        data = json.loads(path.read_text())
        # events/<yyyy>/<mm>/ of when the event happened (in UTC)
        assert path.parent.relative_to(store / "events").as_posix() == \
            data["occurred_at"][:7].replace("-", "/")
        assert errors_for("event", data) == []
    assistant = next(e for e in files.values() if e["data"].get("role") == "assistant")
    assert assistant["occurred_at"] == "2026-05-14T09:30:05.000Z"
    assert assistant["data"]["timestamp"] == "2026-05-14T11:30:05+02:00"  # the original kept
    # unknown fields kept, namespaced
    assert assistant["data"]["extensions"] == {"ingest:model": "m-1",
                                               "com.example.mood": "curious"}
    assert assistant["actor"] == {"actor_type": "user", "actor_id": "tester"}
    assert assistant["source"] == "ingest" and assistant["source_refs"] == ["events.jsonl:3"]

    page = conversation(store, report)["page"]
    assert page["type"] == "conversation" and page["integrity"] == "derived"
    assert page["title"] == "How do finite products preserve compactness?"
    text = page["payload"]["content"]
    assert "Use the tube lemma,\nthen induct." in text
    assert "tube lemma\"" not in text and "Tychonoff" not in text  # tool call, reasoning: events
    spans = page["facets"]["source_spans"]
    # every event the page was built from, in the order they happened
    assert [s["kind"] for s in spans] == ["message", "tool_call", "reasoning", "message"]
    for span in spans:
        event = json.loads((store / span["path"]).read_text())
        assert event["event_id"] == span["event_id"]
        if "start" in span:
            shown = event["data"]["content"].replace("\r\n", "\n")
            assert text[span["start"]:span["end"]] == shown
        else:
            assert event["kind"] in ("tool_call", "reasoning")
    assert page["record"]["event_count"] == 4 and page["record"]["message_count"] == 2
    step = page["provenance"][0]
    assert step["operation"] == "derive"
    assert sorted(step["input_event_ids"]) == sorted(s["event_id"] for s in spans)
    view = cli("show", page["page_id"], "--view", "source_spans", "--json",
               "--store", str(store)).json["source_spans"]
    assert view["spans"] == spans and view["source_refs"] == ["ingest:conversation:c1"]
    # a note without a conversation is a page of its own
    note = next(c for c in report["conversations"] if c["conversation_id"] is None)
    assert note["type"] == "note"
    assert cli("validate", "--store", str(store)).code == 0


def test_the_same_events_again_change_nothing(store, tmp_path):
    path = write(tmp_path, EVENTS)
    assert ingest(store, path).code == 0
    before = snapshot(store)
    again = ingest(store, path)
    assert again.code == 0
    assert again.json["events"]["stored"] == 0 and again.json["events"]["unchanged"] == 5
    assert again.json["pages"] == {"created": 0, "revised": 0, "unchanged": 2}
    assert snapshot(store) == before
    # an event without idempotency_key is keyed by its content: sent alone, still the same
    alone = ingest(store, write(tmp_path, EVENTS[1:2], "one.jsonl"))
    assert alone.json["events"]["unchanged"] == 1 and snapshot(store) == before


def test_new_events_revise_the_page_and_never_rewrite_it(store, tmp_path):
    first = ingest(store, write(tmp_path, EVENTS[:3])).json
    page_id = first["conversations"][0]["page_id"]
    first_rev = first["conversations"][0]["revision_id"]
    old_revision = (store / "revisions" / page_id / f"{first_rev}.json").read_bytes()
    later = {"type": "message", "conversation_id": "c1", "role": "user",
             "content": "And for infinite products?", "timestamp": "2026-05-14T09:31:00Z",
             "idempotency_key": "m9"}
    second = ingest(store, write(tmp_path, [later], "more.jsonl")).json
    assert second["pages"]["revised"] == 1
    head = cli("show", page_id, "--json", "--store", str(store)).json["page"]
    assert head["parent_revision_id"] == first_rev
    assert head["payload"]["content"].endswith("And for infinite products?\n")
    assert head["provenance"][0]["input_event_ids"] == [second["results"][0]["event_id"]]
    assert head["provenance"][0]["input_revision_ids"] == [first_rev]
    assert len(head["facets"]["source_spans"]) == 4
    # the earlier revision is untouched
    assert (store / "revisions" / page_id / f"{first_rev}.json").read_bytes() == old_revision
    history = cli("history", page_id, "--json", "--store", str(store)).json
    assert len(history["revisions"]) == 2


def test_an_event_that_happened_earlier_is_placed_in_order(store, tmp_path):
    ingest(store, write(tmp_path, [EVENTS[0], EVENTS[2]]))
    earlier = {"type": "message", "conversation_id": "c1", "role": "user",
               "content": "(typed first, arrived late)", "timestamp": "2026-05-14T09:29:00Z"}
    report = ingest(store, write(tmp_path, [earlier], "late.jsonl")).json
    text = conversation(store, report)["page"]["payload"]["content"]
    assert text.index("arrived late") < text.index("finite products")


def test_a_reused_key_with_other_content_is_a_conflict_and_stores_nothing(store, tmp_path):
    assert ingest(store, write(tmp_path, EVENTS)).code == 0
    before = snapshot(store)
    changed = [{**EVENTS[4]}, {**EVENTS[0], "content": "something else"}]
    result = cli("ingest", str(write(tmp_path, changed, "changed.jsonl")),
                 "--store", str(store))
    assert result.code == 4
    assert "changed.jsonl:2:" in result.stderr and "'m1'" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(store) == before
    as_json = ingest(store, tmp_path / "changed.jsonl")
    assert as_json.code == 4
    assert as_json.error_json["error"]["code"] == "idempotency_conflict"


def test_a_key_used_twice_in_one_file_with_other_content_is_a_conflict(store, tmp_path):
    events = [EVENTS[0], {**EVENTS[0], "content": "changed"}]
    result = cli("ingest", str(write(tmp_path, events)), "--store", str(store))
    assert result.code == 4
    assert "events.jsonl:2:" in result.stderr and "events.jsonl:1" in result.stderr
    assert not event_files(store)


BAD_LINES = [
    ('{"type": "message", "conversation_id": "c", "content": "x"}', "'role' is a required"),
    ('{"type": "message", "conversation_id": "c", "role": "user", "content": "x"',
     "not valid JSON"),
    ('[1, 2]', "must be a JSON object"),
    ('{"type": "chat", "content": "x"}', "'chat' is not one of"),
    ('{"type": "note", "content": "x", "timestamp": "yesterday"}', "not ISO 8601"),
    ('{"type": "note", "content": "x", "bad key!": 1}', "field name 'bad key!'"),
    ('{"type": "message", "conversation_id": "c", "role": "robot", "content": "x"}',
     "'robot' is not one of"),
    ('{"type": "note", "content": 7}', "7 is not of type 'string'"),
    ('{"type": "note", "content": "x", "namespace": "Not Valid"}', "namespace"),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_a_bad_line_is_named_and_nothing_is_stored(store, tmp_path, line, message):
    good = jsonl(EVENTS[:2])
    path = write(tmp_path, good + line + "\n" + jsonl(EVENTS[2:]))
    before = snapshot(store)
    result = cli("ingest", str(path), "--store", str(store))
    assert result.code == 5, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"Error: {path}:3: "), first
    assert message in first
    assert "Traceback" not in result.stderr
    assert snapshot(store) == before


def test_not_utf8_and_missing_file(store, tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(jsonl(EVENTS[:1]).encode() + '{"type": "note", "content": "caf\xe9"}\n'
                     .encode("latin-1"))
    result = cli("ingest", str(path), "--store", str(store))
    assert result.code == 5 and f"{path}:2: not valid UTF-8" in result.stderr
    missing = cli("ingest", str(tmp_path / "nope.jsonl"), "--store", str(store))
    assert missing.code == 5 and "no such file" in missing.stderr
    assert not event_files(store)


def test_stdin_namespace_and_source(store, tmp_path):
    result = cli("ingest", "-", "--namespace", "project:formal-math", "--source", "my-host",
                 "--store", str(store), "--json", input=jsonl(EVENTS[:3]))
    assert result.code == 0, result.stderr
    report = result.json
    assert report["source"] == "my-host"
    assert report["conversations"][0]["namespace"] == "project:formal-math"
    page = conversation(store, report)["page"]
    assert page["namespace"] == "project:formal-math"
    assert (store / "pages" / "project" / "formal-math" / f"{page['page_id']}.md").exists()
    # the same key from another source is another event (ids belong to their source)
    other = cli("ingest", "-", "--store", str(store), "--json", input=jsonl(EVENTS[:1])).json
    assert other["events"]["stored"] == 1
    assert other["results"][0]["event_id"] != report["results"][0]["event_id"]
    # a later event of the conversation may not move it to another namespace
    moved = {**EVENTS[0], "idempotency_key": "m2", "namespace": "user:elsewhere"}
    refused = cli("ingest", "-", "--source", "my-host", "--store", str(store),
                  input=jsonl([moved]))
    assert refused.code == 5 and "kept in namespace project:formal-math" in refused.stderr
    bad_source = cli("ingest", "-", "--source", "no spaces", "--store", str(store),
                     input=jsonl(EVENTS[:1]))
    assert bad_source.code == 2


def test_human_output_and_search_finds_the_conversation(store, tmp_path):
    result = cli("ingest", str(write(tmp_path, EVENTS)), "--store", str(store))
    assert result.code == 0
    assert "5 stored, 0 unchanged" in result.stdout
    assert "pages: 2 created" in result.stdout
    found = cli("search", "compactness", "--json", "--store", str(store)).json
    assert [r["type"] for r in found["results"]][:1] == ["conversation"]


CRASH = """
import os, signal, sys
from pcp_cli.cli.main import run
from pcp_cli.store import atomic, events, store
target, n = sys.argv[1], int(sys.argv[2])
calls = 0
def dying(*a, **kw):
    global calls
    calls += 1
    if calls == n:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*a, **kw)
real = getattr(atomic, target, None) or getattr(events, target)
for module in (store, events):
    if hasattr(module, target):
        setattr(module, target, dying)
code = run(sys.argv[3:])
print(f"finished {code} after {calls}")
"""


@pytest.mark.slow
@pytest.mark.parametrize("target", ["_write_events", "write_new", "write_atomic"])
def test_a_crash_at_any_write_is_finished_by_ingesting_again(store, tmp_path, target):
    path = write(tmp_path, EVENTS)
    clean = tmp_path / "clean"
    assert cli("init", str(clean), "--owner", "tester").code == 0
    assert ingest(clean, path).code == 0
    expected_events = set(event_files(clean))
    expected_pages = {p.name: p.read_text().split("\n---\n", 1)[1]
                      for p in (clean / "pages").rglob("pg_*.md")}
    for n in range(1, 40):
        root = tmp_path / f"s{n}"
        assert cli("init", str(root), "--owner", "tester").code == 0
        proc = subprocess.run([sys.executable, "-c", CRASH, target, str(n), "ingest", str(path),
                               "--store", str(root)], capture_output=True, text=True)
        finished = "finished 0" in proc.stdout
        assert cli("ls", "--store", str(root)).code == 0  # the store loads
        assert ingest(root, path).code == 0
        assert set(event_files(root)) == expected_events
        pages = {p.name: p.read_text().split("\n---\n", 1)[1]
                 for p in (root / "pages").rglob("pg_*.md")}
        assert pages == expected_pages
        assert cli("validate", "--store", str(root)).code == 0
        if finished:
            break
    else:
        pytest.fail("the ingest never finished")


def test_a_hand_edit_is_recorded_before_new_events_re_derive_the_page(store, tmp_path):
    report = ingest(store, write(tmp_path, EVENTS[:3])).json
    page_id = report["conversations"][0]["page_id"]
    head_file = next((store / "pages").rglob(f"{page_id}.md"))
    head_file.write_text(head_file.read_text() + "\nMy own margin note.\n")
    later = {**EVENTS[0], "idempotency_key": "m5", "content": "One more question.",
             "timestamp": "2026-05-14T10:00:00Z"}
    assert ingest(store, write(tmp_path, [later], "later.jsonl")).json["pages"]["revised"] == 1
    history = cli("history", page_id, "--json", "--store", str(store)).json["revisions"]
    assert [h["operation"] for h in history] == ["derive", "revise", "derive"]
    edit = cli("show", page_id, "--rev", history[1]["revision_id"], "--json",
               "--store", str(store)).json["page"]
    assert "My own margin note." in edit["payload"]["content"]
    head = cli("show", page_id, "--json", "--store", str(store)).json["page"]
    assert head["payload"]["content"].endswith("One more question.\n")


# -- properties ---------------------------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=40)
_EVENT = st.tuples(st.sampled_from(["user", "assistant", "system", "tool"]), _TEXT,
                   st.booleans())


def _events(drawn):
    out = []
    for index, (role, text, as_note) in enumerate(drawn):
        stamp = f"2026-05-14T09:{index // 60:02d}:{index % 60:02d}Z"
        if as_note:
            out.append({"type": "note", "conversation_id": "c", "content": text,
                        "timestamp": stamp})
        else:
            out.append({"type": "message", "conversation_id": "c", "role": role,
                        "content": text, "timestamp": stamp, "idempotency_key": f"k{index}"})
    return out


def _page(root):
    from pcp_cli import api

    with api.open_store(root) as opened:
        entry = opened.entries(types=("conversation",))[0]
        return opened.current(entry.page_id)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_EVENT, min_size=1, max_size=8), st.integers(min_value=0, max_value=8))
def test_spans_cover_exactly_each_shown_text_however_the_events_arrive(drawn, split):
    import tempfile

    from pcp_cli import api

    events = _events(drawn)
    with tempfile.TemporaryDirectory() as tmp:
        whole, parts = Path(tmp) / "whole", Path(tmp) / "parts"
        for root, batches in ((whole, [events]), (parts, [events[split:], events[:split]])):
            api.init_store(root, owner_id="tester").close()
            for batch in batches:
                if batch:
                    with api.open_store(root) as opened:
                        api.ingest_text(opened, jsonl(batch).encode(), path="e.jsonl")
        revision = _page(whole)
        text = revision.state.content
        spans = revision.state.facets["source_spans"]
        assert len(spans) == len(events)
        for span, event in zip(spans, events, strict=True):
            shown = event["content"].replace("\r\n", "\n").replace("\r", "\n").rstrip()
            if "start" in span:
                assert text[span["start"]:span["end"]] == shown
            else:
                assert event.get("role") == "tool" or not shown
        # arriving in two batches, in the other order, ends in the same page
        assert _page(parts).state.content == text
        assert [s["event_id"] for s in _page(parts).state.facets["source_spans"]] == \
            [s["event_id"] for s in spans]
        with api.open_store(whole) as opened:
            again = api.ingest_text(opened, jsonl(events).encode(), path="e.jsonl")
        assert again["events"]["stored"] == 0 and again["pages"]["unchanged"] == 1


def test_the_persons_decisions_survive_the_next_events(store, tmp_path):
    report = ingest(store, write(tmp_path, EVENTS[:3])).json
    page_id = report["conversations"][0]["page_id"]
    s = str(store)
    assert cli("revise", page_id, "--title", "Compactness chat", "--sensitivity", "high",
               "--tag", "math", "--store", s).code == 0
    assert cli("tombstone", page_id, "--reason", "not needed", "--store", s).code == 0
    later = {**EVENTS[0], "idempotency_key": "m7", "content": "Still there?",
             "timestamp": "2026-05-14T10:00:00Z"}
    assert ingest(store, write(tmp_path, [later], "later.jsonl")).json["pages"]["revised"] == 1
    head = cli("show", page_id, "--json", "--store", s).json["page"]
    assert head["payload"]["content"].endswith("Still there?\n")
    assert head["lifecycle_status"] == "tombstoned"  # not revived
    assert (head["title"], head["sensitivity"], head["tags"]) == (
        "Compactness chat", "high", ["math"])


def test_a_broken_head_file_stops_the_batch_before_any_event_is_stored(store, tmp_path):
    report = ingest(store, write(tmp_path, EVENTS[:3])).json
    page_id = report["conversations"][0]["page_id"]
    head_file = next((store / "pages").rglob(f"{page_id}.md"))
    head_file.write_text("<<<<<<< ours\n" + head_file.read_text() + "=======\nx\n>>>>>>> theirs\n")
    before = set(event_files(store))
    later = {**EVENTS[0], "idempotency_key": "m8", "content": "More.",
             "timestamp": "2026-05-14T10:00:00Z"}
    result = cli("ingest", str(write(tmp_path, [later], "later.jsonl")), "--store", str(store))
    assert result.code == 5 and "Traceback" not in result.stderr
    assert set(event_files(store)) == before


# -- long conversations: what pcp writes is always valid ---------------------------------------
def _conversation_lines(count: int, start: int = 0) -> str:
    return "".join(
        json.dumps({"type": "message", "conversation_id": "long",
                    "role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}",
                    "timestamp": f"2026-05-14T{9 + i // 3600:02d}:{i // 60 % 60:02d}:"
                                 f"{i % 60:02d}Z"}) + "\n"
        for i in range(start, start + count))


@pytest.mark.parametrize("count", [5_000, pytest.param(20_000, marks=pytest.mark.slow)])
def test_a_conversation_of_thousands_of_messages_makes_a_valid_store(
        store: Path, tmp_path: Path, count: int) -> None:
    """5,000 messages used to put 262 KiB of source_spans in the head file's frontmatter
    (`pcp validate` exit 5); the spans now stay in the revision."""
    events = tmp_path / "long.jsonl"
    events.write_text(_conversation_lines(count), "utf-8")
    assert cli("ingest", str(events), "--store", str(store)).code == 0
    assert cli("validate", "--store", str(store)).code == 0
    assert cli("doctor", "--store", str(store)).code == 0
    head = next((store / "pages").rglob("*.md"))
    frontmatter = head.read_text("utf-8").split("\n---\n", 1)[0]
    assert len(frontmatter) < 2_000 and "source_spans" not in frontmatter
    page_id = head.stem
    spans = cli("show", page_id, "--view", "source_spans", "--store", str(store), "--json")
    assert len(spans.json["source_spans"]["spans"]) == count
    more = tmp_path / "more.jsonl"
    more.write_text(_conversation_lines(1, start=count), "utf-8")
    assert cli("ingest", str(more), "--store", str(store)).code == 0
    spans = cli("show", page_id, "--view", "source_spans", "--store", str(store), "--json")
    assert len(spans.json["source_spans"]["spans"]) == count + 1
    shown = cli("show", page_id, "--store", str(store), "--json").json
    assert "message 0\n" in shown["page"]["payload"]["content"]
    assert f"message {count}\n" in shown["page"]["payload"]["content"]
    assert cli("validate", "--store", str(store)).code == 0


@pytest.mark.slow  # among the default run's slowest (10-26 s): in the slow set
def test_doctor_fix_mends_an_oversized_head_file_an_earlier_pcp_wrote(store: Path,
                                                                       tmp_path: Path) -> None:
    from pcp_cli.store.headfile import render_head
    from pcp_cli.store.store import Store

    events = tmp_path / "long.jsonl"
    events.write_text(_conversation_lines(5_000), "utf-8")
    assert cli("ingest", str(events), "--store", str(store)).code == 0
    head = next((store / "pages").rglob("*.md"))
    revision = Store(store).graph_heads(head.stem)[-1]
    head.write_text(render_head(revision, spans=True), "utf-8")  # as pcp wrote it before
    assert cli("validate", "--store", str(store)).code == 5
    found = cli("doctor", "--store", str(store), "--json").json["findings"]
    assert [(f["kind"], f["fixable"]) for f in found] == [("oversized_frontmatter", True)]
    assert cli("doctor", "--fix", "--store", str(store)).code == 0
    assert cli("validate", "--store", str(store)).code == 0
    assert "source_spans" not in head.read_text("utf-8").split("\n---\n", 1)[0]
    # a hand-edited oversized file is the person's: reported, never rewritten
    head.write_text(render_head(revision, spans=True).replace("message 7\n", "mine\n"), "utf-8")
    found = cli("doctor", "--fix", "--store", str(store), "--json")
    assert found.code == 8
    assert [(f["kind"], f["fixed"]) for f in found.json["findings"]] == [
        ("oversized_frontmatter", False)]
    assert "mine\n" in head.read_text("utf-8")
