"""A whole index build in progress, seen and replaced by other pcp processes.

Real processes: the first search on a "big" store (the threshold lowered so that the example
store counts) starts the background builder; the test freezes it with SIGSTOP as soon as it
holds the build lock, so that what other commands see of a build in progress does not depend
on how fast the machine is, and lets it go (SIGCONT) or kills it (SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pcp_cli.index import ENGINE_ENV
from pcp_cli.query.first_answer import MIN_PAGES_ENV
from pcp_cli.query.index_build import BUILD_LOCK, BUILD_LOG, BUILD_STATE
from tests.conftest import run_pcp

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                 reason="reads a process's pending signals from /proc")]
LARGE = {MIN_PAGES_ENV: "1"}


def wait_for(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def state(root: Path) -> dict | None:
    try:
        return json.loads((root / ".pcp" / BUILD_STATE).read_text())
    except (OSError, ValueError):
        return None


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def pending(pid: int, signum: int) -> bool:
    """Whether `signum` waits to be delivered to `pid` (a stopped process keeps it so)."""
    fields = dict(line.split(":\t", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
    mask = int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)
    return bool(mask & (1 << (signum - 1)))


def frozen_builder(root: Path) -> int:
    """Start the background build with a first search, and stop it (SIGSTOP) once it holds
    the build lock and has said so: its pid."""
    # whoosh's build (tantivy, the default where installed, is what the switch test switches to)
    out = run_pcp("search", "tidewatch", "--store", str(root), "--json",
                  env={**LARGE, ENGINE_ENV: "whoosh"})
    assert out.code == 0, out.stderr
    assert out.json["filters_applied"]["mode"] == "scan"
    pid = wait_for(lambda: (state(root) or {}).get("pid"), "the builder's state file")
    os.kill(pid, signal.SIGSTOP)
    # Stopped inside its catalog phase, the builder may hold the catalog's write transaction,
    # and a command that records what it finds would wait 30 s for it: let it run a few
    # milliseconds at a time until it says it builds the index.
    while (state(root) or {}).get("phase") != "index":
        assert alive(pid), "the build ended before its index phase"
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.002)
        os.kill(pid, signal.SIGSTOP)
    return pid


def status(root: Path) -> dict:
    out = run_pcp("status", "--store", str(root), "--json")
    assert out.code == 0, out.stderr
    return out.json["search_engine"]


def generations(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".pcp/index").iterdir() if p.name.startswith("g-"))


def test_status_says_a_build_is_running_since_when_and_how_far(example):
    pid = frozen_builder(example)
    try:
        build = status(example)["build"]
        assert build["running"] is True and build["pid"] == pid
        assert build["engine"] == "whoosh" and build["phase"] in ("catalog", "index")
        assert build["started_at"].endswith("Z") and "documents_done" in build
        human = run_pcp("status", "--store", str(example))
        assert human.code == 0 and f"Running: the whoosh index build of pid {pid}" \
            in human.stdout
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for(lambda: not alive(pid), "the build to finish")
    assert status(example)["build"] is None
    assert not (example / ".pcp" / BUILD_STATE).exists()  # a finished build leaves no state


def test_an_engine_switch_stops_and_replaces_the_build_in_progress(example):
    pytest.importorskip("tantivy")
    pid = frozen_builder(example)
    switch = subprocess.Popen(
        [sys.executable, "-m", "pcp_cli", "index", "--engine", "tantivy", "--store",
         str(example), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **LARGE})
    try:
        wait_for(lambda: pending(pid, signal.SIGTERM), "the switch to signal the builder")
    finally:
        os.kill(pid, signal.SIGCONT)  # it handles the SIGTERM now
    out, err = switch.communicate(timeout=300)
    assert switch.returncode == 0, err
    report = json.loads(out)
    assert report["engine"] == "tantivy" and report["rebuilt"] is True
    assert report["replaced_build"]["pid"] == pid
    assert report["replaced_build"]["engine"] == "whoosh"
    assert not alive(pid)
    assert "stopped (SIGTERM)" in (example / ".pcp" / BUILD_LOG).read_text()
    # Nothing of the stopped build is left: one generation, tantivy's, and no state file.
    meta = json.loads((example / ".pcp/index/meta.json").read_text())
    assert meta["engine"] == "tantivy" and generations(example) == [meta["generation"]]
    assert not (example / ".pcp" / BUILD_STATE).exists()
    assert status(example)["build"] is None
    ranked = run_pcp("search", "tidewatch", "--store", str(example), "--json", env=LARGE)
    assert ranked.code == 0 and ranked.json["filters_applied"]["mode"] == "text"


def test_a_switch_to_the_engine_being_built_is_refused_naming_the_build(example):
    pid = frozen_builder(example)
    try:
        out = run_pcp("index", "--engine", "whoosh", "--store", str(example), "--json")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert out.code == 7, out.stderr
    assert f"pid {pid}" in json.loads(out.stderr)["error"]["message"]
    wait_for(lambda: not alive(pid), "the build to finish")


def test_a_killed_builder_leaves_a_state_the_next_search_and_index_recover_from(example):
    pid = frozen_builder(example)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(pid), "the builder to die")
    assert state(example) is not None  # its state file stays behind ...
    assert status(example)["build"] is None  # ... but the lock went with it: no build runs
    # The next search starts a new build (the lock is free) and answers meanwhile.
    out = run_pcp("search", "tidewatch", "--store", str(example), "--json", env=LARGE)
    assert out.code == 0, out.stderr
    if out.json["filters_applied"]["mode"] == "scan":  # the killed one had no index yet
        wait_for(lambda: (example / ".pcp/index/meta.json").exists()
                 and status(example)["build"] is None, "the new build")
    index = run_pcp("index", "--store", str(example), "--json")
    assert index.code == 0, index.stderr
    meta = json.loads((example / ".pcp/index/meta.json").read_text())
    assert generations(example) == [meta["generation"]]
    ranked = run_pcp("search", "tidewatch", "--store", str(example), "--json", env=LARGE)
    assert ranked.json["filters_applied"]["mode"] == "text"
    assert "tidewatch-architecture" in {r["id"] for r in ranked.json["results"]}
    assert (example / ".pcp" / BUILD_LOCK).exists()
