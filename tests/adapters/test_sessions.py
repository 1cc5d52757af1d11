"""Claude Code and Codex CLI session logs through `pcp import`.

The fixtures under tests/data/sessions follow the real formats (Claude Code's
`~/.claude/projects/<project>/<session>.jsonl` records, Codex CLI's current `rollout-*.jsonl`
with `session_meta`/`response_item`/`event_msg` lines and its older bare-item rollouts).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pcp_cli.adapters import detect_format
from pcp_cli.adapters.sessions import parse_session, session_files
from pcp_cli.errors import InvalidInput
from pcp_cli.model.validate import errors_for
from tests.conftest import ROOT, cli, snapshot

DATA = ROOT / "tests" / "data" / "sessions"
CLAUDE = DATA / "claude" / "projects"
PROJECT = CLAUDE / "-home-ada-code-tidewatch"
SESSION = PROJECT / "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"
CODEX = DATA / "codex" / "sessions"
ROLLOUT = next(CODEX.rglob("rollout-2025-10-29*.jsonl"))
OLD_ROLLOUT = next(CODEX.rglob("rollout-2025-05-07*.jsonl"))


def imported(store: Path, path: Path, *extra: str):
    result = cli("import", str(path), "--store", str(store), "--json", *extra)
    assert result.code == 0, result.stderr
    return result.json


def pages(store: Path, namespace: str | None = None) -> list[dict]:
    listing = cli("ls", "--type", "conversation", "--json", "--store", str(store)).json
    return [p for p in listing if namespace is None or p["namespace"] == namespace]


def page(store: Path, page_id: str) -> dict:
    return cli("show", page_id, "--json", "--store", str(store)).json["page"]


def spans_events(store: Path, body: dict) -> list[dict]:
    return [json.loads((store / s["path"]).read_text()) for s in body["facets"]["source_spans"]]


@pytest.mark.parametrize(("path", "expected"), [
    (SESSION, "claude_code"), (PROJECT, "claude_code"), (CLAUDE, "claude_code"),
    (ROLLOUT, "codex"), (OLD_ROLLOUT, "codex"), (CODEX, "codex"),
])
def test_sessions_are_recognised_by_content(path, expected, tmp_path):
    assert detect_format(path) == expected
    renamed = tmp_path / "whatever.jsonl"  # not by name
    if path.is_file():
        shutil.copy(path, renamed)
        assert detect_format(renamed) == expected


def test_a_jsonl_of_plain_events_points_at_pcp_ingest(store, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"type": "note", "content": "x"}\n')
    with pytest.raises(InvalidInput, match="JSON Lines file of events") as raised:
        detect_format(path)
    assert "pcp ingest" in (raised.value.hint or "")
    result = cli("import", str(path), "--store", str(store))
    assert result.code == 5 and "pcp ingest" in result.stderr


def test_every_event_an_importer_builds_satisfies_the_published_schema():
    for fmt, root in (("claude_code", CLAUDE), ("codex", CODEX)):
        for file in session_files(root):
            session = parse_session(file, fmt, str(file))
            assert session.events and not session.problems
            for event in session.events:
                assert errors_for("ingest_event", event.data) == [], (file, event.data)


def test_claude_code_sessions_become_conversations_in_their_project(store):
    summary = imported(store, CLAUDE)
    assert summary["format"] == "claude_code"
    assert summary["created"] == 2 and summary["failed"] == 0
    assert summary["events"] == {"stored": 11, "unchanged": 0, "conflicts": 0}
    found = pages(store, "project:tidewatch")
    assert len(found) == 2  # the session and its sub-agent, each a conversation
    main = next(p for p in found if p["title"].startswith("Why does the tide gauge"))
    body = page(store, main["page_id"])
    text = body["payload"]["content"]
    assert "### User · 2025-05-26 07:27" in text
    assert "the mount expands in the sun" in text and "Thanks, that fixed it." in text
    # hidden reasoning, tool calls and results, meta lines and summaries: events, not text
    for hidden in ("sensor log first", "grep -c drift", "\n42\n", "Caveat:", "thermal "
                   "compensation\n"):
        assert hidden not in text
    kinds = [(e["kind"], e["data"].get("role"), e["data"].get("hidden", False))
             for e in spans_events(store, body)]
    assert ("reasoning", None, False) in kinds
    assert ("tool_call", None, False) in kinds
    assert ("message", "tool", False) in kinds
    assert ("message", "user", True) in kinds  # the isMeta caveat
    assert ("note", None, True) in kinds  # the session summary
    events = spans_events(store, body)
    call = next(e for e in events if e["kind"] == "tool_call")
    assert call["data"]["name"] == "Bash" and call["data"]["input"]["command"].startswith("grep")
    assert call["data"]["call_id"] == "toolu_01A09q90qw90lq917835lq9"
    result = next(e for e in events if e["data"].get("role") == "tool")
    assert result["data"]["call_id"] == call["data"]["call_id"]
    assert result["data"]["content"] == "42"
    # the source's own fields are kept, namespaced
    first = next(e for e in events if e["data"].get("role") == "user")
    assert first["data"]["extensions"]["claude_code:gitBranch"] == "main"
    assert first["actor"] == {"actor_type": "tool", "actor_id": "pcp-import-claude_code"}
    assert body["record"]["source_id"] == "4f35e220-c435-4cf7-b9b9-f40426042847"
    assert body["origin"] == "recorded"
    assert cli("validate", "--store", str(store)).code == 0


def test_reimport_is_idempotent(store):
    imported(store, CLAUDE)
    imported(store, CODEX)
    before = snapshot(store)
    again = imported(store, CLAUDE)
    assert again["unchanged"] == 2 and again["created"] == again["revised"] == 0
    assert again["events"]["stored"] == 0
    assert imported(store, CODEX)["events"]["stored"] == 0
    assert snapshot(store) == before


def test_one_project_folder_or_one_session_file(store):
    one = imported(store, SESSION)
    assert one["created"] == 1 and one["sessions"] == 1
    folder = imported(store, PROJECT)
    assert folder["created"] == 1 and folder["unchanged"] == 1


@pytest.mark.parametrize("fixture", [SESSION, ROLLOUT])
def test_a_session_still_being_written_is_picked_up_next_time(store, tmp_path, fixture):
    live = tmp_path / "live" / fixture.parent.name / fixture.name
    live.parent.mkdir(parents=True)
    lines = fixture.read_bytes().splitlines(keepends=True)
    if fixture == ROLLOUT:  # end on the answer itself, not on its event_msg copy
        lines = lines[:-1]
    full = b"".join(lines)
    cut = b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]  # half of the last line
    live.write_bytes(cut)
    first = imported(store, live)
    assert first["created"] == 1 and first["failed"] == 0 and first["skipped"] == 0
    warning = first["warnings"][0]
    assert "incomplete last line" in warning["reason"] and f"line {len(lines)}" in warning["item"]
    page_id = pages(store)[0]["page_id"]
    last_text = {SESSION: "Thanks, that fixed it.", ROLLOUT: "Two notes mention the crane"}
    assert last_text[fixture] not in page(store, page_id)["payload"]["content"]
    live.write_bytes(full)  # the agent finished the line
    second = imported(store, live)
    assert second["revised"] == 1 and second["events"]["stored"] == 1
    assert not second["warnings"]
    assert last_text[fixture] in page(store, page_id)["payload"]["content"]
    assert imported(store, live)["events"]["stored"] == 0


def test_a_broken_line_inside_a_session_is_skipped_and_named(store, tmp_path):
    broken = tmp_path / "broken.jsonl"
    lines = SESSION.read_text().splitlines()
    lines.insert(3, '{"type": "assistant", "message": ')
    broken.write_text("\n".join(lines) + "\n")
    summary = imported(store, broken)
    assert summary["skipped"] == 1 and summary["created"] == 1
    problem = summary["problems"][0]
    assert problem["item"] == "line 4" and problem["reason"] == "not valid JSON; skipped"
    assert problem["source"] == str(broken)


def test_codex_sessions(store):
    summary = imported(store, CODEX)
    assert summary["format"] == "codex" and summary["created"] == 2
    # event_msg lines repeat the response items for the UI: not stored twice
    assert summary["events"]["stored"] == 10
    body = page(store, pages(store, "project:harbor-notes")[0]["page_id"])
    text = body["payload"]["content"]
    assert text.startswith("### User · 2025-10-29 00:59\n\nList the notes that mention")
    assert "Two notes mention the crane" in text
    for hidden in ("environment_context", "Repository Guidelines", "Searching the notes",
                   "rg", "notes/inspection.md\\n"):
        assert hidden not in text.replace("notes/inspection.md.", "")
    events = spans_events(store, body)
    call = next(e for e in events if e["kind"] == "tool_call")
    assert call["data"]["name"] == "shell"
    assert call["data"]["input"]["command"] == ["rg", "-l", "crane", "notes"]
    output = next(e for e in events if e["data"].get("role") == "tool")
    assert output["data"]["call_id"] == call["data"]["call_id"]
    reasoning = next(e for e in events if e["kind"] == "reasoning")
    assert reasoning["data"]["content"] == "**Searching the notes for crane**"
    assert body["record"]["source_id"] == "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
    # the older rollout has no working folder: the store's namespace
    old = next(p for p in pages(store) if p["title"].startswith("What does the tide table"))
    assert old["namespace"] == "user:tester"


def test_dry_run_writes_nothing(store):
    before = snapshot(store)
    summary = imported(store, CLAUDE, "--dry-run")
    assert summary["dry_run"] is True and summary["created"] == 2
    assert summary["events"]["stored"] == 11
    assert snapshot(store) == before


def test_imported_sessions_are_searchable_in_their_project(store):
    imported(store, CLAUDE)
    found = cli("search", "thermal compensation calibrate", "--json",
                "--store", str(store)).json
    assert found["results"] and found["results"][0]["type"] == "conversation"


@pytest.mark.slow
@pytest.mark.parametrize("target", ["_write_events", "write_new", "write_atomic"])
def test_an_import_killed_at_any_write_is_finished_by_importing_again(tmp_path, target):
    import subprocess
    import sys

    from tests.test_ingest import CRASH

    def state(root: Path) -> tuple[set[str], dict[str, str]]:
        events = {p.name for p in (root / "events").rglob("ev_*.json")}
        bodies = {p.name: p.read_text().split("\n---\n", 1)[1]
                  for p in (root / "pages").rglob("pg_*.md")}
        return events, bodies

    clean = tmp_path / "clean"
    assert cli("init", str(clean), "--owner", "tester").code == 0
    imported(clean, CLAUDE)
    expected = state(clean)
    for n in range(1, 30, 3):
        root = tmp_path / f"s{n}"
        assert cli("init", str(root), "--owner", "tester").code == 0
        proc = subprocess.run([sys.executable, "-c", CRASH, target, str(n), "import",
                               str(CLAUDE), "--store", str(root)], capture_output=True,
                              text=True)
        assert cli("ls", "--store", str(root)).code == 0
        imported(root, CLAUDE)
        assert state(root) == expected
        if "finished 0" in proc.stdout:
            break


def test_a_session_file_that_did_not_change_is_not_read_again(store, tmp_path):
    tree = tmp_path / "projects"
    shutil.copytree(CLAUDE, tree)
    first = imported(store, tree)
    assert first["sessions_not_read"] == 0
    again = imported(store, tree)
    assert again["sessions_not_read"] == 2 and again["unchanged"] == 2
    assert again["events"] == {"stored": 0, "unchanged": first["events"]["stored"],
                               "conflicts": 0}
    # the file was touched: read again (and nothing new in it)
    session = next(tree.rglob(SESSION.name))
    os.utime(session, ns=(session.stat().st_atime_ns, session.stat().st_mtime_ns + 10**9))
    touched = imported(store, tree)
    assert touched["sessions_not_read"] == 1 and touched["events"]["unchanged"] > 0
    # the page changed since (the person revised it): read again, still nothing new
    page_id = next(p["page_id"] for p in pages(store) if p["title"].startswith("Why does"))
    assert cli("revise", page_id, "--title", "Drift", "--store", str(store)).code == 0
    assert imported(store, tree)["sessions_not_read"] == 1
    # the memory is local and derived: without it every file is read, and nothing changes
    before = snapshot(store)
    (store / ".pcp" / "imported-sessions.json").unlink()
    fresh = imported(store, tree)
    assert fresh["sessions_not_read"] == 0 and fresh["unchanged"] == 2
    assert snapshot(store) == before


def test_a_reimport_counts_the_events_it_did_not_read_again_as_unchanged(store, tmp_path):
    tree = tmp_path / "projects"
    shutil.copytree(PROJECT, tree / PROJECT.name)
    session = tree / PROJECT.name / SESSION.name
    (tree / PROJECT.name / "agent-d2969342.jsonl").unlink()
    first = imported(store, session)
    stored = first["events"]["stored"]
    assert stored > 0
    again = cli("import", str(session), "--store", str(store))
    assert again.code == 0, again.stderr
    assert f"events: 0 stored, {stored} unchanged" in again.stdout + again.stderr
    # and an old memory of the file, from before the count was kept, is read again to count
    memory = store / ".pcp" / "imported-sessions.json"
    data = json.loads(memory.read_text())
    for record in data.values():
        del record["events"]
    memory.write_text(json.dumps(data))
    counted = imported(store, session)
    assert counted["sessions_not_read"] == 0
    assert counted["events"] == {"stored": 0, "unchanged": stored, "conflicts": 0}
    assert imported(store, session)["events"]["unchanged"] == stored
