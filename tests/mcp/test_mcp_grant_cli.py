"""`pcp grant` and `pcp mcp-config` on a real store folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pcp_cli.errors import ExitStatus
from pcp_cli.mcp.tokens import TokenRegistry, tokens_path
from tests.conftest import cli, snapshot

COMMENTED = """\
# my store: hand-written comment at the top
format: pcp-store/1
store_id: st_01M8P24MS33JARJRPFRP22AN6Q
owner_id: ada-lumen
default_namespace: user:ada-lumen  # the owner's own
# the grants follow
clients:
  old-client:  # this comment is inside the section and goes with it
    scopes: ["user:ada-lumen"]
# settings stay as they are
settings:
  note: kept
"""


@pytest.fixture
def commented(example: Path) -> Path:
    (example / "pcp.yaml").write_text(COMMENTED)
    return example


def test_grant_add_list_show_remove_keep_the_rest_of_pcp_yaml(commented: Path) -> None:
    store = ["--store", str(commented)]
    added = cli("grant", "add", "laptop", "--scope", "user:ada-lumen", "--scope", "project:*",
                "--sensitive", "--json", *store)
    assert added.code == 0, added.stderr
    assert added.json["scopes"] == ["user:ada-lumen", "project:*"]
    assert added.json["allow_sensitive"] is True and added.json["allow_write"] is False
    text = (commented / "pcp.yaml").read_text()
    for kept in ("# my store: hand-written comment at the top", "# the owner's own",
                 "# the grants follow", "# settings stay as they are", "note: kept"):
        assert kept in text, kept
    listed = cli("grant", "list", "--json", *store).json
    assert [g["client_id"] for g in listed] == ["laptop", "old-client"]
    shown = cli("grant", "show", "laptop", "--json", *store).json
    assert shown["effective"]["scopes"] == ["user:ada-lumen", "project:*"]
    assert shown["tokens"] == []
    # The store still opens and validates: the edit is a well-formed manifest.
    assert cli("doctor", *store).code == 0
    removed = cli("grant", "remove", "old-client", "--json", *store)
    assert removed.code == 0 and removed.json["removed"] is True
    assert [g["client_id"] for g in cli("grant", "list", "--json", *store).json] == ["laptop"]
    assert "# settings stay as they are" in (commented / "pcp.yaml").read_text()


@pytest.mark.parametrize(("args", "status", "words"), [
    (["grant", "add", "x"], ExitStatus.USAGE, "at least one --scope"),
    (["grant", "add", "x", "--scope", "../etc"], ExitStatus.USAGE, "not a namespace"),
    (["grant", "add", "bad id!", "--scope", "user:a"], ExitStatus.USAGE, "not valid"),
    (["grant", "show", "ghost"], ExitStatus.NOT_FOUND, "no grant"),
    (["grant", "remove", "ghost"], ExitStatus.NOT_FOUND, "no grant"),
    (["grant", "token", "ghost"], ExitStatus.NOT_FOUND, "pcp grant add ghost"),
    (["mcp-config", "--for", "emacs"], ExitStatus.USAGE, "--for"),
    (["mcp-config", "--http", "ftp://x"], ExitStatus.USAGE, "http(s) URL"),
])
def test_bad_grant_commands_fail_cleanly_and_change_nothing(
        commented: Path, args: list[str], status: int, words: str) -> None:
    before = snapshot(commented, skip_local=False)
    out = cli(*args, "--store", str(commented))
    assert out.code == status, out.stderr
    assert words in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) <= 2
    assert snapshot(commented, skip_local=False) == before


def test_a_token_is_shown_once_and_stored_only_as_a_salted_hash(commented: Path) -> None:
    store = ["--store", str(commented)]
    first = cli("grant", "token", "old-client", "--json", *store).json
    secret = first["token"]
    stored = tokens_path(commented)
    assert stored.parent == commented / ".pcp"  # local state: `pcp init` git-ignores .pcp/
    raw = stored.read_text()
    assert secret not in raw and secret.split("_")[-1] not in raw
    assert stored.stat().st_mode & 0o077 == 0
    registry = TokenRegistry(commented)
    assert registry.verify(secret) == "old-client"
    assert registry.verify(secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    second = cli("grant", "token", "old-client", *store).stdout.strip()
    assert registry.verify(secret) == "old-client" and registry.verify(second) == "old-client"
    rotated = cli("grant", "token", "old-client", "--rotate", *store).stdout.strip()
    assert registry.verify(secret) is None and registry.verify(second) is None
    assert registry.verify(rotated) == "old-client"
    shown = cli("grant", "show", "old-client", "--json", *store).json
    assert len(shown["tokens"]) == 1 and set(shown["tokens"][0]) == {"token_id", "created_at"}
    revoked = cli("grant", "revoke-tokens", "old-client", "--json", *store).json
    assert revoked["tokens_revoked"] == 1 and registry.verify(rotated) is None
    # No committed file holds a token or its hash.
    record = json.loads(raw)["tokens"][0]
    for path, data in snapshot(commented).items():
        assert record["hash"].encode() not in data, path


@pytest.mark.parametrize("target", ["claude-desktop", "cursor", "claude-code", "vscode", "json"])
def test_mcp_config_for_stdio_runs_as_pasted(commented: Path, target: str) -> None:
    out = cli("mcp-config", "old-client", "--for", target, "--json", "--store", str(commented))
    assert out.code == 0, out.stderr
    servers = out.json["config"]["servers" if target == "vscode" else "mcpServers"]
    server = servers["pcp"]
    assert Path(server["command"]).is_absolute() and server["command"] == sys.executable
    assert server["args"][:5] == ["-m", "pcp_cli", "serve", "--client-id", "old-client"]
    assert server["args"][-1] == str(commented.resolve())
    assert out.json["grant_command"] is None
    if target == "cursor":
        # Exactly as pasted, from anywhere: the command answers --help.
        ran = subprocess.run([server["command"], *server["args"][:3], "--help"],
                             capture_output=True, text=True, cwd="/", timeout=60)
        assert ran.returncode == 0 and "--client-id" in ran.stdout


def test_mcp_config_for_http_has_the_url_and_a_token_placeholder(commented: Path) -> None:
    url = "http://127.0.0.1:8765/mcp"
    out = cli("mcp-config", "old-client", "--for", "claude-code", "--http", url, "--json",
              "--store", str(commented)).json
    server = out["config"]["mcpServers"]["pcp"]
    assert server["type"] == "http" and server["url"] == url
    assert server["headers"]["Authorization"].startswith("Bearer <token from: pcp grant token")
    assert out["token_command"].startswith("pcp grant token old-client")


@pytest.mark.parametrize(("url", "allow_http"), [
    ("http://127.0.0.1:8765/mcp", False), ("http://localhost:8765/mcp", False),
    ("https://pcp.example:8765/mcp", False), ("http://[::1]:8765/mcp", True),
    ("http://192.168.1.20:8765/mcp", True),
])
def test_mcp_config_for_claude_desktop_bridges_with_mcp_remote(commented: Path, url: str,
                                                               allow_http: bool) -> None:
    """The bridge refuses plain http:// to any host but localhost and 127.0.0.1 unless told
    --allow-http; the entry says it where needed (the entry itself runs in
    tests/mcp/test_mcp_npm_clients.py)."""
    out = cli("mcp-config", "old-client", "--for", "claude-desktop", "--http", url, "--json",
              "--store", str(commented)).json
    server = out["config"]["mcpServers"]["pcp"]
    assert server["command"] == "npx"
    assert server["args"][:5] == ["-y", "mcp-remote", url, "--header",
                                  "Authorization:Bearer <token from: pcp grant token old-client>"]
    assert ("--allow-http" in server["args"]) is allow_http


def test_mcp_config_for_a_client_without_a_grant_says_how_to_add_one(commented: Path) -> None:
    out = cli("mcp-config", "newcomer", "--for", "cursor", "--store", str(commented))
    assert out.code == 0
    assert "newcomer has no grant in pcp.yaml" in out.stderr
    assert "pcp grant add newcomer --scope user:ada-lumen" in out.stderr
    assert json.loads(out.stdout)["mcpServers"]["pcp"]["args"][4] == "newcomer"


def test_mcp_config_can_make_a_configuration_that_writes(commented: Path) -> None:
    """`--allow-write` puts `--allow-write` on the server it launches; a grant that does not
    allow writing is named, with the command that lets it."""
    out = cli("mcp-config", "old-client", "--for", "claude-code", "--allow-write", "--json",
              "--store", str(commented))
    assert out.code == 0, out.stderr
    args = out.json["config"]["mcpServers"]["pcp"]["args"]
    assert "--allow-write" in args and args[-1] == str(commented.resolve())
    assert out.json["write_command"] == ("pcp grant add old-client --scope user:ada-lumen "
                                         f"--write --store {commented.resolve()}")
    human = cli("mcp-config", "old-client", "--for", "claude-code", "--allow-write",
                "--store", str(commented))
    assert "old-client's grant does not allow writing" in human.stderr
    # as pasted, with the grant made to write: the server offers the write tools
    assert cli(*out.json["write_command"].split()[1:]).code == 0
    again = cli("mcp-config", "old-client", "--allow-write", "--json", "--store",
                str(commented)).json
    assert again["write_command"] is None
    plain = cli("mcp-config", "old-client", "--json", "--store", str(commented)).json
    assert "--allow-write" not in plain["config"]["mcpServers"]["pcp"]["args"]


@pytest.mark.slow  # a real `pcp serve` process
@pytest.mark.anyio
async def test_the_configuration_that_writes_serves_the_write_tools(commented: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    assert cli("grant", "add", "old-client", "--scope", "user:ada-lumen", "--write",
               "--store", str(commented)).code == 0
    server = cli("mcp-config", "old-client", "--allow-write", "--json", "--store",
                 str(commented)).json["config"]["mcpServers"]["pcp"]
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with Client(stdio_client(params), mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
    assert "pcp_write_page" in tools
