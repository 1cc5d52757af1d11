"""`pcp_get_profile` over a real `pcp serve` keeps its rendering while the profile material
is unchanged, and never serves it stale: a keystone added, made sensitive, edited by hand in
place, or a profile field set while the server runs is in the very next answer; a write to any
other page leaves the answer as it was. Every answer equals the CLI's own export."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.mcp.test_mcp_serve import ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def mcp_session(mcp_inprocess_session):
    """What the tools answer, not the process: the server in-process (tests/mcp/conftest.py)."""
    return mcp_inprocess_session


GRANT = ("user:ada-lumen", "project:tidewatch")  # claude-desktop's scopes in mcp_store


def exported(store: Path) -> str:
    args = ["export", "--format", "micro_prompt", "--store", str(store)]
    for scope in GRANT:
        args += ["--scope", scope]
    out = cli(*args)
    assert out.code == 0, out.stderr
    return out.stdout.rstrip("\n")


async def profile(client) -> str:
    return (await ok(client, "pcp_get_profile", {"format": "micro_prompt"}))["text"]


def run(*args: str) -> None:
    out = cli(*args)
    assert out.code == 0, out.stderr


async def test_profile_follows_every_change_of_its_material(mcp_session, mcp_store):
    store = str(mcp_store)
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        first = await profile(client)
        assert first == await profile(client) == exported(mcp_store)
        run("add", "A note about tide tables, not profile material", "--store", store)
        assert await profile(client) == first
        run("keystone", "add", "Keeps every chart colour-blind safe.", "--category", "rule",
            "--importance", "1", "--id", "ks-colour", "--store", store)
        added = await profile(client)
        assert "colour-blind safe" in added and added == exported(mcp_store)
        run("revise", "ks-colour", "--sensitivity", "high", "--store", store)
        assert await profile(client) == first
        run("revise", "ks-colour", "--sensitivity", "low", "--store", store)
        assert "colour-blind safe" in await profile(client)
        # an edit saved in place, size and mtime kept, then recorded by the CLI: the next
        # answer is the recorded revision (a read-only server renders recorded revisions)
        head = mcp_store / "pages" / "user" / "ada-lumen" / "ks-colour.md"
        st = head.stat()
        data = head.read_bytes()
        head.write_bytes(data.replace(b"colour-blind safe", b"colour-blind SAFE"))
        os.utime(head, ns=(st.st_atime_ns, st.st_mtime_ns))
        await profile(client)  # the edit is seen, not yet recorded
        recorded = exported(mcp_store)  # records the edit
        assert "colour-blind SAFE" in recorded
        assert await profile(client) == recorded
        run("profile", "set", "name", "Ada L. Lumen", "--store", store)
        named = await profile(client)
        assert named.startswith("Ada L. Lumen") and named == exported(mcp_store)


async def test_json_answers_are_copies(mcp_session):
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        first = await ok(client, "pcp_get_profile", {"format": "json"})
        again = await ok(client, "pcp_get_profile", {"format": "json"})
        assert first == again and first.get("name")


async def test_timeline_follows_every_change_of_its_events(mcp_session, mcp_store):
    store = str(mcp_store)

    async def events(**arguments) -> dict[str, str]:
        data = await ok(client, "pcp_get_timeline", {"limit": 100, **arguments})
        return {e["id"]: e["summary"] for e in data["events"]}

    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        first = await events()
        assert "tl-001" in first and first == await events()
        run("add", "A note, not a timeline event", "--store", store)
        assert await events() == first
        run("revise", "tl-001", "Left the PhD program for data work (revised)", "--store", store)
        assert (await events())["tl-001"] == "Left the PhD program for data work (revised)"
        assert list(await events(query="revised")) == ["tl-001"]
        run("timeline", "add", "2030-01", "A future milestone", "--id", "tl-new", "--store", store)
        assert "tl-new" in await events(**{"from": "2029"})
        run("tombstone", "tl-new", "--store", store)
        assert "tl-new" not in await events()


async def test_first_profile_on_a_fresh_clone_builds_no_catalog(mcp_session, mcp_store):
    """The first call of a session on a fresh clone (no `.pcp/`) answers from the profile
    material's head files: the same answer as once the catalog exists, without building it."""
    import shutil

    shutil.rmtree(mcp_store / ".pcp", ignore_errors=True)
    catalog = mcp_store / ".pcp" / "catalog.sqlite"
    async with mcp_session(["--client-id", "claude-desktop"]) as client:
        fresh = {fmt: await ok(client, "pcp_get_profile", {"format": fmt})
                 for fmt in ("micro_prompt", "json", "markdown")}
        assert not catalog.exists()
        run("ls", "--store", str(mcp_store))  # builds the catalog
        assert catalog.exists()
        assert fresh["micro_prompt"]["text"] == exported(mcp_store)
        for fmt, answer in fresh.items():
            assert await ok(client, "pcp_get_profile", {"format": fmt}) == answer
