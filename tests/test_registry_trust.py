"""Whose registry is read, and which commands it may start (issue #31): only the person's own
registry (`~/.pcp/sources.json`, or the file `PCP_REGISTRY` names), never a `./.pcp/sources.json`
of the current folder; and a stdio source runs only once the person approved its command, its
arguments and its environment, as they are now."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli, run_pcp


def registry_file() -> Path:
    return Path(os.environ["HOME"]) / ".pcp" / "sources.json"


def leaves_a_mark(mark: Path) -> dict[str, Any]:
    """An entry whose command, once started, writes `mark` (then fails as an MCP server)."""
    return {"id": "notes-sidecar", "name": "Notes sidecar", "transport": "stdio",
            "command": sys.executable,
            "args": ["-c", f"open({str(mark)!r}, 'w').close()"], "added_by": "app"}


def write_registry(path: Path, *entries: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pcp_registry_version": "1.0", "sources": list(entries)}),
                    "utf-8")


def store_id(store: Path) -> str:
    import yaml

    return str(yaml.safe_load((store / "pcp.yaml").read_text("utf-8"))["store_id"])


def test_a_registry_in_the_working_folder_is_never_read(store: Path, tmp_path: Path) -> None:
    """A cloned repository's `.pcp/sources.json` neither starts its commands nor claims to be
    this store."""
    mark = tmp_path / "ran"
    clone = tmp_path / "cloned-repo"
    write_registry(clone / ".pcp" / "sources.json", leaves_a_mark(mark), {
        "id": "evil-twin", "name": "Your store (really)", "transport": "http",
        "url": "http://127.0.0.1:9/mcp",
        "extensions": {"org.pcp-cli": {"store_id": store_id(store)}}})
    asked = cli("search", "tide", "--sources", "all", "--json", "--store", str(store),
                cwd=clone)
    assert asked.code == 0, asked.stderr
    assert not mark.exists()
    assert [g["source"]["id"] for g in asked.json["sources"]] == ["this-store"]
    listed = cli("sources", "--json", cwd=clone)
    assert listed.json["sources"] == []
    assert [f["path"] for f in listed.json["files"]] == [str(registry_file())]
    named = cli("search", "tide", "--sources", "notes-sidecar", "--store", str(store),
                cwd=clone)
    assert named.code == 2 and "no registered source 'notes-sidecar'" in named.stderr


def test_the_registry_the_person_names_is_read_instead(store: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "mine" / "sources.json"
    write_registry(elsewhere, {"id": "yap", "name": "Yap", "transport": "http",
                               "url": "http://127.0.0.1:9/mcp"})
    write_registry(registry_file(), {"id": "other", "name": "Other", "transport": "http",
                                     "url": "http://127.0.0.1:9/mcp"})
    monkeypatch.setenv("PCP_REGISTRY", str(elsewhere))
    listed = cli("sources", "--json")
    assert [s["id"] for s in listed.json["sources"]] == ["yap"]
    assert listed.json["files"][0]["path"] == str(elsewhere)


def test_a_stdio_source_runs_only_once_the_person_approved_its_command(
        store: Path, tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    entry = leaves_a_mark(mark)
    write_registry(registry_file(), entry)  # as another app registers itself

    refused = cli("search", "tide", "--sources", "all", "--store", str(store))
    assert refused.code == 0, refused.stderr
    assert not mark.exists()
    # the refusal says what would run and the command that approves it
    assert "source notes-sidecar (Notes sidecar) not approved" in refused.stderr
    assert sys.executable in refused.stderr
    assert "pcp sources approve notes-sidecar" in refused.stderr
    group = cli("search", "tide", "--sources", "all", "--json",
                "--store", str(store)).json["sources"][1]
    assert group["status"] == "not_approved" and not mark.exists()
    shown = cli("sources", "--json").json["sources"][0]
    assert shown["approval"] == "not_approved"
    assert "not run until you approve them: notes-sidecar" in cli("sources").stderr

    approved = cli("sources", "approve", "notes-sidecar", "--json")
    assert approved.code == 0, approved.stderr
    assert approved.json["command"] == sys.executable and approved.json["args"] == entry["args"]
    assert cli("sources", "--json").json["sources"][0]["approval"] == "approved"
    cli("search", "tide", "--sources", "all", "--store", str(store))
    assert mark.exists()  # started (it then fails as a source: that is its own group)

    # the same id with another command (or argument, or environment) is a new request
    other = tmp_path / "ran-again"
    for changed in ({**leaves_a_mark(other)},
                    {**entry, "env": {"LD_PRELOAD": str(tmp_path / "evil.so")}}):
        write_registry(registry_file(), changed)
        again = cli("search", "tide", "--sources", "all", "--store", str(store))
        assert "its command changed since you approved it" in again.stderr
        assert cli("sources", "--json").json["sources"][0]["approval"] == "changed"
    assert not other.exists()


def test_approving_needs_a_registered_stdio_source(store: Path) -> None:
    write_registry(registry_file(), {"id": "yap", "name": "Yap", "transport": "http",
                                     "url": "http://127.0.0.1:9/mcp"})
    unknown = cli("sources", "approve", "nosuch")
    assert unknown.code == 3 and "has no source 'nosuch'" in unknown.stderr
    http = cli("sources", "approve", "yap")
    assert http.code == 2 and "nothing to approve" in http.stderr
    assert not (registry_file().parent / "approved-sources.json").exists()


def test_register_approves_the_command_it_writes(store: Path) -> None:
    assert cli("register", "--store", str(store)).code == 0
    [shown] = cli("sources", "--json", cwd=store).json["sources"]
    assert shown["approval"] == "approved" and shown["this_store"] is True
    approvals = registry_file().parent / "approved-sources.json"
    assert approvals.stat().st_mode & 0o777 == 0o600


def test_a_source_that_answers_with_noise_is_one_line_on_stderr(store: Path) -> None:
    """A source that writes lines that are not MCP messages is one failed group and one line on
    stderr, not a traceback per line it wrote (issue #31: the asyncio noise)."""
    write_registry(registry_file(), {
        "id": "chatty", "name": "Chatty", "transport": "stdio", "command": sys.executable,
        "args": ["-c", "print('y\\n' * 3000, end='')"]})
    assert cli("sources", "approve", "chatty").code == 0
    # a real process: what reaches its stderr is what a person sees on the terminal
    asked = run_pcp("search", "tide", "--sources", "chatty", "--store", str(store))
    assert asked.code == 0
    lines = asked.stderr.strip().splitlines()
    assert [line for line in lines if "chatty" in line.lower()] == lines[-1:]
    assert lines[-1].startswith("source chatty (Chatty) failed: ")
    # how many of the 3,000 lines the client reads before it sees the source end depends on
    # the machine; that they are counted into one line does not
    assert re.search(r"the MCP client logged [\d,]+ problems? with it", lines[-1]), lines[-1]
    assert "Traceback" not in asked.stderr and len(lines) <= 3


def test_a_source_that_floods_its_stderr_is_kept_to_its_last_words(store: Path) -> None:
    """A source writing without end on stderr costs neither disk nor memory: only the tail is
    kept, and its last line is still in the error (issue #31: source stderr was unbounded)."""
    from pcp_cli.mcp.fanout import StderrTail

    with StderrTail() as tail:
        for _ in range(64):
            tail.file.write("noise " * 5_000 + "\n")
        tail.file.write("fatal: out of kelp\n")
        said = tail.text()
    assert said.endswith("fatal: out of kelp\n") and len(said.encode()) <= StderrTail.LIMIT
    flood = ("import sys\nfor _ in range(400): sys.stderr.write('noise ' * 10_000 + '\\n')\n"
             "sys.stderr.write('fatal: out of kelp\\n'); sys.exit(3)\n")
    write_registry(registry_file(), {
        "id": "flood", "name": "Flood", "transport": "stdio", "command": sys.executable,
        "args": ["-c", flood]})
    assert cli("sources", "approve", "flood").code == 0
    asked = run_pcp("search", "tide", "--sources", "flood", "--store", str(store), "--json")
    assert asked.code == 0, asked.stderr
    group = next(g for g in asked.json["sources"] if g["source"]["id"] == "flood")
    assert group["status"] == "failed" and "its last words: fatal: out of kelp" in group["error"]
