"""`pcp register`, `pcp unregister`, `pcp sources`: the PCP device registry file
(`~/.pcp/sources.json`), checked against the published registry schema, and never disturbing
what others wrote in it."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import V1_SCHEMAS, cli

SCHEMA = json.loads((V1_SCHEMAS / "registry.schema.json").read_text("utf-8"))

# As a person or another app might leave it: other entries, keys no schema knows (the
# published example's `_note`, an entry's `x-installed`), an extension of the file itself.
HAND_WRITTEN = """{
    "pcp_registry_version": "1.0",
    "_note": "mine, by hand",
    "sources": [
        {"id": "memorandai", "name": "Memorandai", "kind": "knowledge-studio",
         "transport": "stdio", "command": "node", "args": ["/opt/memorandai/bridge.js"],
         "env": {"MEMORANDAI_MCP_CLIENT_ID": "registry"}, "added_by": "user",
         "x-installed": "2026-01-02", "extensions": {"com.example.colour": "teal"}},
        {"id": "yap", "name": "Yap", "transport": "http", "url": "http://localhost:8787/mcp",
         "headers": {"Authorization": "Bearer yk_secret"}, "added_by": "user"}
    ],
    "extensions": {"com.example.synced": true}
}
"""


def registry_file() -> Path:
    return Path(os.environ["HOME"]) / ".pcp" / "sources.json"


def schema_errors(data: Any) -> list[str]:
    return [e.message for e in Draft202012Validator(SCHEMA).iter_errors(data)]


def test_register_writes_a_first_party_entry_valid_against_the_schema(store: Path) -> None:
    assert not registry_file().exists()
    out = cli("register", "--store", str(store), "--json")
    assert out.code == 0, out.stderr
    data = json.loads(registry_file().read_text("utf-8"))
    assert schema_errors(data) == []
    [entry] = data["sources"]
    assert entry == out.json["entry"] and out.json["replaced"] is False
    assert entry["id"] == "pcp-store" and entry["added_by"] == "app"
    assert entry["transport"] == "stdio" and entry["kind"] == "context-store"
    # launched exactly as `pcp mcp-config` launches `pcp serve`
    config = cli("mcp-config", "registry", "--store", str(store), "--json").json
    assert shlex.join([entry["command"], *entry["args"]]) == config["command"]
    assert entry["extensions"]["org.pcp-cli"]["store"] == str(store.resolve())
    assert "registry has no grant" in cli("register", "--store", str(store)).stderr
    assert registry_file().stat().st_mode & 0o077 == 0  # it may hold tokens: the person's alone

    http = cli("register", "--transport", "http", "--name", "Ada over HTTP", "--client",
               "laptop", "--store", str(store), "--json")
    assert http.code == 0, http.stderr
    data = json.loads(registry_file().read_text("utf-8"))
    assert schema_errors(data) == []
    [entry] = data["sources"]  # the same store: its entry replaced, not a second one
    assert http.json["replaced"] is True
    assert entry["url"] == "http://127.0.0.1:8765/mcp" and entry["name"] == "Ada over HTTP"
    assert "pcp grant token laptop" in entry["headers"]["Authorization"]
    assert "command" not in entry
    # what the person put in their entry survives registering again: the token, their keys
    entry["headers"]["Authorization"] = "Bearer pcp_t_real"
    entry["extensions"]["com.example.mine"] = {"colour": "teal"}
    registry_file().write_text(json.dumps(data), "utf-8")
    assert cli("register", "--transport", "http", "--client", "laptop", "--store",
               str(store)).code == 0
    [entry] = json.loads(registry_file().read_text("utf-8"))["sources"]
    assert entry["headers"] == {"Authorization": "Bearer pcp_t_real"}
    assert entry["extensions"]["com.example.mine"] == {"colour": "teal"}
    assert entry["name"] == "pcp: store"  # what pcp writes is pcp's: back to its default


def test_register_and_unregister_keep_everything_else_in_a_hand_written_file(
        store: Path, tmp_path: Path) -> None:
    path = registry_file()
    path.parent.mkdir(parents=True)
    path.write_text(HAND_WRITTEN, "utf-8")
    path.chmod(0o640)
    original = json.loads(HAND_WRITTEN)

    assert cli("register", "--store", str(store)).code == 0
    other = tmp_path / "other"
    assert cli("init", str(other), "--owner", "bob").code == 0
    assert cli("register", "--id", "bob", "--store", str(other)).code == 0
    data = json.loads(path.read_text("utf-8"))
    assert list(data) == list(original)  # top-level keys, in their order
    assert {k: v for k, v in data.items() if k != "sources"} == \
        {k: v for k, v in original.items() if k != "sources"}
    assert data["sources"][:2] == original["sources"]
    assert [s["id"] for s in data["sources"]] == ["memorandai", "yap", "pcp-store", "bob"]
    assert schema_errors({"pcp_registry_version": "1.0", "sources": data["sources"][2:]}) == []
    assert path.stat().st_mode & 0o777 == 0o640  # its permissions kept

    listed = cli("sources", "--json", cwd=store)
    assert listed.code == 0, listed.stderr
    shown = {s["id"]: s for s in listed.json["sources"]}
    assert list(shown) == ["memorandai", "yap", "pcp-store", "bob"]
    assert shown["pcp-store"]["this_store"] and not shown["bob"]["this_store"]
    assert shown["yap"]["headers"] == ["Authorization"]  # names only, never the token
    assert "yk_secret" not in listed.stdout

    gone = cli("unregister", "--store", str(store), "--json")
    assert gone.code == 0 and gone.json["removed"] == ["pcp-store"]
    assert cli("unregister", "--store", str(other)).code == 0
    assert json.loads(path.read_text("utf-8")) == original
    again = cli("unregister", "--store", str(store))
    assert again.code == 3 and "has no entry for this store" in again.stderr
    assert not list(path.parent.glob("*.tmp*"))  # written by rename, nothing left behind


def test_an_id_another_source_holds_is_refused_and_nothing_is_written(store: Path) -> None:
    path = registry_file()
    path.parent.mkdir(parents=True)
    path.write_text(HAND_WRITTEN, "utf-8")
    taken = cli("register", "--id", "yap", "--store", str(store))
    assert taken.code == 2 and "already has a source with the id 'yap'" in taken.stderr
    assert path.read_text("utf-8") == HAND_WRITTEN


@pytest.mark.parametrize("content, says", [
    ('{"pcp_registry_version": "1.0",\n "sources": [\n  {"id": "x",}\n ]\n}\n',
     "sources.json:3: is not valid JSON"),
    ('[{"id": "x"}]\n', "sources.json: is not a PCP device registry"),
    ('{"sources": {"id": "x"}}\n', "`sources` must be a list"),
    ('{"pcp_registry_version": "2.0", "sources": []}\n', "pcp_registry_version '2.0'"),
])
def test_a_malformed_registry_is_a_clear_error_naming_the_file_and_nothing_is_written(
        store: Path, content: str, says: str) -> None:
    path = registry_file()
    path.parent.mkdir(parents=True)
    path.write_text(content, "utf-8")
    for command in (("register",), ("unregister",), ("sources",),
                    ("search", "x", "--sources", "all")):
        result = cli(*command, "--store", str(store)) if command[0] != "sources" else \
            cli(*command)
        assert result.code == 5, (command, result.stderr)
        assert says in result.stderr and str(path) in result.stderr
        assert "--traceback" not in result.stderr
        assert path.read_text("utf-8") == content
    error = cli("register", "--json", "--store", str(store)).error_json["error"]
    assert error["path"] == str(path)


def test_sources_lists_the_registry_and_names_bad_entries(store: Path) -> None:
    path = registry_file()
    path.parent.mkdir(parents=True)
    data = json.loads(HAND_WRITTEN)
    data["sources"] += [{"id": "half", "name": "No command", "transport": "stdio"},
                        {"name": "no id", "transport": "stdio", "command": "x"}]
    path.write_text(json.dumps(data), "utf-8")
    listed = cli("sources", "--json")
    assert listed.code == 0, listed.stderr
    shown = {s["id"]: s for s in listed.json["sources"]}
    assert list(shown) == ["memorandai", "yap"]
    assert shown["yap"]["url"].endswith("8787/mcp") and shown["yap"]["file"] == str(path)
    assert shown["yap"]["headers"] == ["Authorization"]  # names, never the token
    problems = listed.json["problems"]
    assert any("'half': a stdio source needs a command" in p for p in problems)
    assert any("an entry without an id" in p for p in problems)
    human = cli("sources")
    assert "memorandai" in human.stdout and "needs a command" in human.stderr
    assert "yk_secret" not in human.stdout + human.stderr


def test_no_registry_and_no_sources_selected(store: Path) -> None:
    empty = cli("sources", "--json")
    assert empty.code == 0 and empty.json["sources"] == []
    assert not registry_file().exists()  # reading never creates it
    alone = cli("search", "x", "--sources", "all", "--store", str(store))
    assert alone.code == 0 and "No other registered source to ask" in alone.stderr
    assert cli("search", "x", "--sources", "all", "--json", "--store",
               str(store)).json["sources"][0]["source"]["id"] == "this-store"
    unknown = cli("search", "x", "--sources", "nosuch", "--store", str(store))
    assert unknown.code == 2 and "no registered source 'nosuch'" in unknown.stderr
    bad = cli("register", "--transport", "carrier-pigeon", "--store", str(store))
    assert bad.code == 2 and not registry_file().exists()


@pytest.mark.slow
def test_stores_registering_at_the_same_time_all_end_up_in_the_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    roots = [tmp_path / f"store{n}" for n in range(4)]
    for root in roots:
        assert cli("init", str(root), "--owner", root.name).code == 0
    env = {**os.environ}
    env.pop("PCP_STORE", None)
    procs = [subprocess.Popen([sys.executable, "-m", "pcp_cli", "register", "--store",
                               str(root)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for root in roots]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    data = json.loads(registry_file().read_text("utf-8"))
    assert sorted(s["id"] for s in data["sources"]) == [f"pcp-store{n}" for n in range(4)]
    assert schema_errors(data) == []


def test_the_registry_lock_keeps_a_registration_that_waited_for_it(tmp_path: Path) -> None:
    """Deterministic: one `pcp register` is paused inside the lock, after it read the file;
    a second one, started then, must wait for the lock (it says so) rather than write in
    between, so both entries end up in the file. Without the lock the second one writes
    in between and the first, resumed, writes over it: every time."""
    import subprocess
    import sys

    helper = Path(__file__).parent / "helpers" / "registry_writer.py"
    first, second = tmp_path / "first", tmp_path / "second"
    for root in (first, second):
        assert cli("init", str(root), "--owner", root.name).code == 0
    env = {k: v for k, v in os.environ.items() if k != "PCP_STORE"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    paused = subprocess.Popen([sys.executable, str(helper), "pause", str(first)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    waiting = None
    try:
        assert paused.stdout is not None and paused.stdin is not None
        assert paused.stdout.readline() == "inside\n"  # it holds the lock, file read
        waiting = subprocess.Popen([sys.executable, str(helper), "watch", str(second)],
                                   env=env, stdout=subprocess.PIPE, text=True)
        assert waiting.stdout is not None
        # "waiting" once it met the held lock; "" if it ran to its end without meeting it
        said = waiting.stdout.readline()
        paused.stdin.write("go\n")
        paused.stdin.flush()
        assert paused.wait(timeout=120) == 0
        assert waiting.wait(timeout=120) == 0
    finally:
        for proc in (paused, waiting):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert said == "waiting\n"
    data = json.loads(registry_file().read_text("utf-8"))
    assert sorted(s["id"] for s in data["sources"]) == ["pcp-first", "pcp-second"]
