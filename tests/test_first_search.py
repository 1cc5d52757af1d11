"""The first `pcp search` on a store without an index answers from the files while the index
builds in the background, with every safeguard, and never claims a ranking it did not compute.

Real `pcp` processes on a copy of the example store, with the size threshold lowered so that
20 pages count as large. The test holds the build lock while it checks the scan's answers (so
no builder races them), then lets one build and checks that the next search is ranked."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from pcp_cli.query.first_answer import MIN_PAGES_ENV
from pcp_cli.query.index_build import BUILD_LOCK, BUILD_LOG
from tests.conftest import run_pcp

LARGE = {MIN_PAGES_ENV: "1"}


def search(root: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    out = run_pcp("search", *args, "--store", str(root), "--json", env=env or LARGE)
    assert out.code == 0, out.stderr
    return out.json


def ids(data: dict) -> set[str]:
    return {r["id"] for r in data["results"]}


@pytest.fixture
def held(example: Path):
    """The build lock held, as by a builder still at work."""
    (example / ".pcp").mkdir(exist_ok=True)
    fd = os.open(example / ".pcp" / BUILD_LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield example
    os.close(fd)


def test_the_scan_answer_is_labelled_and_unranked(held):
    data = search(held, "tidewatch")
    filters = data["filters_applied"]
    assert filters["mode"] == "scan" and filters["index"].startswith("building")
    assert filters["relevance_scores"].startswith("absent")
    assert filters["scan"]["files_read"] >= 1
    assert ids(data) >= {"tidewatch-architecture", "conv-tidewatch-mobile"}
    for r in data["results"]:
        assert "score" not in r
        ext = r["extensions"]["org.pcp-cli"]
        assert ext["match_channel"] == "scan" and ext["score"].startswith("absent")
        assert "tidewatch" in r["snippet"].lower()
    assert not (held / ".pcp/index/meta.json").exists()  # nothing built meanwhile


def test_the_scan_obeys_every_safeguard(held):
    assert "health-notes" not in ids(search(held, "doctor"))  # sensitivity high
    assert "health-notes" in ids(search(held, "doctor", "--include-sensitive"))
    assert "ks-p01" not in ids(search(held, "dashboards"))  # a proposal, never served
    assert "ks-003" not in ids(search(held, "svelte"))  # superseded
    assert "ks-003" in ids(search(held, "svelte", "--include-superseded"))
    scoped = search(held, "tidewatch", "--scope", "user:*")
    assert ids(scoped) and all(
        r["extensions"]["org.pcp-cli"]["scope"]["namespace"].startswith("user:")
        for r in scoped["results"])
    typed = search(held, "tidewatch", "--type", "keystone")["results"]
    assert typed and {r["type"] for r in typed} == {"keystone"}
    assert len(search(held, "tidewatch", "-n", "1")["results"]) == 1


def test_human_output_says_the_index_is_being_built(held):
    out = run_pcp("search", "tidewatch", "--store", str(held), env=LARGE)
    assert out.code == 0
    assert "being built in the background" in out.stderr and "not ranked" in out.stderr
    assert "tidewatch-architecture" in out.stdout


def test_a_small_store_or_a_query_with_syntax_waits_for_the_build(example):
    data = search(example, "tidewatch", env={MIN_PAGES_ENV: "1000"})
    assert data["filters_applied"]["mode"] == "text"  # built in the foreground, ranked
    assert data["filters_applied"]["relevance_scores"] == "present"


def test_the_background_build_finishes_and_the_next_search_is_ranked(example):
    data = search(example, "tidewatch")
    assert data["filters_applied"]["mode"] == "scan"
    deadline = time.monotonic() + 120
    while not (example / ".pcp/index/meta.json").exists():
        assert time.monotonic() < deadline, (example / ".pcp" / BUILD_LOG).read_text()
        time.sleep(0.2)
    fd = os.open(example / ".pcp" / BUILD_LOCK, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the builder has let go: it is done
    os.close(fd)
    assert "done in" in (example / ".pcp" / BUILD_LOG).read_text()
    ranked = search(example, "tidewatch")
    assert ranked["filters_applied"]["mode"] == "text"
    assert ranked["filters_applied"]["relevance_scores"] == "present"
    assert "tidewatch-architecture" in ids(ranked)


@pytest.mark.parametrize("args", [
    ("tidewatch",),
    ("tidewatch", "--type", "keystone", "--type", "note", "--exclude-type", "summary",
     "--include-superseded", "--include-sensitive", "--scope", "user:*", "--limit", "40"),
])
def test_the_scan_and_the_index_report_the_same_filters(example, args):
    # filters_applied of the scan answer and of the ranked answer came from two near-copies
    # of one block; for the same request they must say the same, but for what is their own.
    fd = os.open((example / ".pcp").mkdir(exist_ok=True) or example / ".pcp" / BUILD_LOCK,
                 os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # no background build: the scan answers
    try:
        scan = search(example, *args)["filters_applied"]
    finally:
        os.close(fd)
    ranked = search(example, *args, env={MIN_PAGES_ENV: "1000"})["filters_applied"]
    assert scan["mode"] == "scan" and ranked["mode"] == "text"
    own = {"mode", "index", "scan", "relevance_scores", "scope_filtering"}
    shared = {key: value for key, value in scan.items() if key not in own}
    assert {key: ranked.get(key) for key in shared} == shared
    assert len(shared) >= 11
