"""`pcp edit` and `pcp add` in an editor: a script stands in for $EDITOR."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from pcp_cli.cli.editor import editor_command
from tests.conftest import cli, snapshot
from tests.terminal import run_in_terminal

EDITOR = r'''
import json, pathlib, sys
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
path = pathlib.Path(sys.argv[2])
runs = pathlib.Path(sys.argv[1] + ".runs")
n = int(runs.read_text()) if runs.exists() else 0
runs.write_text(str(n + 1))
step = plan[min(n, len(plan) - 1)]
text = path.read_text()
pathlib.Path(sys.argv[1] + f".seen{n}").write_text(text)
if step["do"] == "replace":
    text = text.replace(step["old"], step["new"])
elif step["do"] == "write":
    text = step["text"]
path.write_text(text)
sys.exit(step.get("exit", 0))
'''


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """editor([steps]) sets $EDITOR to a script that applies one step per run."""
    script = tmp_path / "editor.py"
    script.write_text(EDITOR, "utf-8")
    monkeypatch.delenv("VISUAL", raising=False)

    def make(*steps: dict) -> Path:
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps(list(steps)), "utf-8")
        for old in tmp_path.glob("plan.json.*"):
            old.unlink()
        monkeypatch.setenv("EDITOR", f"{sys.executable} {script} {plan}")
        return plan

    return make


def add(store: Path, text: str) -> str:
    return cli("add", text, "--store", str(store), "--json").json["page_id"]


def test_edit_records_the_change_as_a_hand_edit_revision(store: Path, editor) -> None:  # type: ignore[no-untyped-def]
    page = add(store, "Tidewatch architecture\n\nThree services.")
    plan = editor({"do": "replace", "old": "Three services.", "new": "Four services."})
    result = cli("edit", page[:12], "--store", str(store))
    assert result.code == 0, result.stderr
    assert result.stdout.startswith(f"revised {page} (rev_")
    seen = Path(f"{plan}.seen0").read_text("utf-8")
    assert seen.startswith("---\n") and f"page_id: {page}" in seen  # the head file, frontmatter
    shown = cli("show", page, "--json", "--store", str(store)).json["page"]
    assert shown["payload"]["content"].strip().endswith("Four services.")
    history = cli("history", page, "--json", "--store", str(store)).json["revisions"]
    assert len(history) == 2
    assert history[-1]["operation"] == "revise"
    assert history[-1]["note"].startswith("hand edit recorded from pages/")  # as a hand edit
    assert not list((store / ".pcp" / "edits").glob("*.md"))  # the draft is gone


def test_an_edit_that_changes_nothing_says_unchanged(store: Path, editor) -> None:  # type: ignore[no-untyped-def]
    page = add(store, "Unchanged page")
    editor({"do": "nothing"})
    before = snapshot(store)
    result = cli("edit", page, "--store", str(store))
    assert result.code == 0 and result.stdout.startswith(f"unchanged {page}")
    assert snapshot(store) == before


def test_broken_frontmatter_is_reported_with_file_and_line_and_can_be_fixed_in_the_editor(
        store: Path, editor) -> None:  # type: ignore[no-untyped-def]
    page = add(store, "Tidewatch architecture\n\nThree services.")
    editor({"do": "replace", "old": "type: note", "new": "type: [unclosed"},
           {"do": "replace", "old": "type: [unclosed", "new": "type: note"},
           {"do": "nothing"})
    # The second run fixes it; the person answers "y" to "reopen the editor?"
    result = cli("edit", page, "--store", str(store), input="y\n")
    assert result.code == 0, result.stderr
    assert "Reopen the editor" in result.stderr
    line = [ln for ln in result.stderr.splitlines() if ln.startswith("Error:")][0]
    assert f"pages/user/tester/{page}.md:" in line and "invalid YAML" in line
    assert result.stdout.startswith("unchanged")  # fixed back to what it was


def test_a_broken_edit_that_is_not_fixed_changes_nothing_and_is_kept_for_next_time(
        store: Path, editor) -> None:  # type: ignore[no-untyped-def]
    page = add(store, "Tidewatch architecture\n\nThree services.")
    editor({"do": "write", "text": "---\npage_id: " + page + "\ntitle: [oops\n---\nMy typing\n"})
    before = snapshot(store)
    result = cli("edit", page, "--store", str(store), input="n\n")
    assert result.code == 5, result.stderr
    # the file and line (YAML places an unclosed list where it expected the `]`)
    assert re.search(rf"pages/user/tester/{page}\.md:[34]: invalid YAML", result.stderr)
    assert "nothing was recorded" in result.stderr
    assert snapshot(store) == before  # the head file was never touched
    draft = store / ".pcp" / "edits" / f"{page}.md"
    assert "My typing" in draft.read_text("utf-8")
    # next time the editor opens on what was typed, and fixing it records it
    plan = editor({"do": "replace", "old": "title: [oops\n", "new": "title: Fixed\n"})
    again = cli("edit", page, "--store", str(store))
    assert again.code == 0, again.stderr
    assert "Resuming" in again.stderr
    assert "My typing" in Path(f"{plan}.seen0").read_text("utf-8")
    shown = cli("show", page, "--json", "--store", str(store)).json["page"]
    assert shown["title"] == "Fixed" and shown["payload"]["content"].strip() == "My typing"


def test_a_failing_editor_records_nothing(store: Path, editor) -> None:  # type: ignore[no-untyped-def]
    page = add(store, "A page")
    editor({"do": "replace", "old": "A page", "new": "Changed", "exit": 1})
    before = snapshot(store)
    result = cli("edit", page, "--store", str(store))
    assert result.code == 2 and "exited with status 1" in result.stderr
    assert snapshot(store) == before


def test_editor_is_visual_then_editor_then_vi(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    assert editor_command() == "vi"
    monkeypatch.setenv("EDITOR", "nano")
    assert editor_command() == "nano"
    monkeypatch.setenv("VISUAL", "code --wait")
    assert editor_command() == "code --wait"


def test_add_without_text_on_a_terminal_opens_the_editor_on_an_empty_page(
        store: Path, editor) -> None:  # type: ignore[no-untyped-def]
    plan = editor({"do": "write", "text": "Written in the editor\n\nBody.\n"})
    result = run_in_terminal("add", "--store", str(store), env={"PCP_PAGER": "cat"})
    assert result.code == 0, result.stderr
    assert Path(f"{plan}.seen0").read_text("utf-8") == ""  # an empty page, like git commit
    listed = cli("ls", "--json", "--store", str(store)).json
    assert [p["title"] for p in listed] == ["Written in the editor"]
    # saved empty: nothing is added
    editor({"do": "write", "text": "  \n"})
    empty = run_in_terminal("add", "--store", str(store), env={"PCP_PAGER": "cat"})
    assert empty.code == 2 and "nothing was added" in empty.stderr
    assert len(cli("ls", "--json", "--store", str(store)).json) == 1
    # not a terminal: still a usage error, no editor
    assert cli("add", "--store", str(store)).code == 2
