"""Many real processes writing one store at the same time.

Afterwards every acknowledged revision is on disk, every page's history is a chain with one
head, validate and doctor are clean, no temporary file is left, and conflicts (exit 4) left
nothing behind: the revision files on disk are exactly the acknowledged ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli

HELPERS = Path(__file__).resolve().parent / "helpers"
ROOT = HELPERS.parent.parent


def helper_env(**extra: str) -> dict[str, str]:
    """The environment for a helper process: this checkout first on the import path."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def start_writers(store: Path, pages: list[str], modes: list[str], ops: int, seed: int
                  ) -> list[subprocess.Popen]:
    return [
        subprocess.Popen(
            [sys.executable, str(HELPERS / "writer.py"), str(store), str(n), str(ops),
             str(seed + n), mode, *pages],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=helper_env(PCP_LOCK_TIMEOUT="120"),
        )
        for n, mode in enumerate(modes)
    ]


def collect(procs: list[subprocess.Popen], timeout: float) -> list[dict]:
    records = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err
        assert "Traceback" not in err, err
        records += [json.loads(line) for line in out.splitlines()]
    return records


def revision_files(store: Path) -> set[tuple[str, str]]:
    return {(p.parent.name, p.stem) for p in (store / "revisions").glob("*/*.json")}


def check_store_after(store: Path, setup: list[dict], records: list[dict]) -> None:
    errors = [r for r in records if r["op"] == "error"]
    assert not errors, errors[:5]
    acked = {(r["page_id"], r["revision_id"]) for r in records
             if r["op"] != "conflict" and r["status"] in ("created", "revised")}
    acked |= {(r["page_id"], r["revision_id"]) for r in setup}
    on_disk = revision_files(store)
    assert acked <= on_disk, f"lost: {sorted(acked - on_disk)[:5]}"
    assert on_disk == acked, f"unacknowledged revisions: {sorted(on_disk - acked)[:5]}"

    s = str(store)
    for page_id in sorted({p for p, _ in on_disk}):
        history = cli("history", page_id, "--store", s, "--json")
        assert history.code == 0, history.stderr
        data = history.json
        revisions = data["revisions"]
        assert len(data["heads"]) == 1, (page_id, data["heads"])
        # a chain: each revision's parent is the one before it
        parents = [r["parent_revision_id"] for r in revisions]
        assert parents[0] is None
        assert parents[1:] == [r["revision_id"] for r in revisions[:-1]], page_id
        assert data["heads"] == [revisions[-1]["revision_id"]]
        shown = cli("show", page_id, "--store", s, "--json").json
        assert shown["revision_id"] == revisions[-1]["revision_id"]
        head_file = next((store / "pages").rglob(f"{page_id}.md")).read_text("utf-8")
        assert f"revision_id: {revisions[-1]['revision_id']}\n" in head_file

    temps = [p for p in store.rglob("*") if ".pcp-tmp-" in p.name]
    assert not temps, temps
    validate = cli("validate", s)
    assert validate.code == 0, validate.stderr
    doctor = cli("doctor", "--store", s, "--json")
    assert doctor.code == 0 and doctor.json["clean"], doctor.stdout


def setup_pages(store: Path, count: int) -> list[dict]:
    pages = []
    for n in range(count):
        result = cli("add", f"shared page {n}", "--store", str(store), "--json")
        assert result.code == 0
        pages.append(result.json)
    return pages


@pytest.mark.slow
def test_eight_library_writers(store: Path) -> None:
    setup = setup_pages(store, 4)
    modes = ["lib", "lib-long"] * 4
    procs = start_writers(store, [p["page_id"] for p in setup], modes, ops=100, seed=1000)
    records = collect(procs, timeout=500)
    assert len([r for r in records if r["op"] != "error"]) == 800
    kinds = {r["op"] for r in records}
    assert {"add", "revise", "revise_expect"} <= kinds, kinds
    # expectations were raced: some lost (exit 4), and check_store_after shows they left nothing
    assert "conflict" in kinds, kinds
    check_store_after(store, setup, records)


@pytest.mark.slow
def test_eight_cli_writers(store: Path) -> None:
    """The same through real `pcp` processes (fewer operations: each one is an interpreter)."""
    setup = setup_pages(store, 2)
    procs = start_writers(store, [p["page_id"] for p in setup], ["cli"] * 8, ops=10, seed=2000)
    records = collect(procs, timeout=500)
    assert len(records) == 80
    check_store_after(store, setup, records)


@pytest.mark.slow  # eight real pcp processes at once
def test_hand_edit_seen_by_eight_processes_at_once_is_recorded_once(store: Path) -> None:
    page = setup_pages(store, 1)[0]
    path = next((store / "pages").rglob(f"{page['page_id']}.md"))
    path.write_text(path.read_text("utf-8").replace("shared page 0", "edited by hand"), "utf-8")
    dropped = store / "pages" / "dropped.md"
    dropped.write_text("# Dropped\n\nby hand\n", "utf-8")
    procs = [subprocess.Popen([sys.executable, "-m", "pcp_cli", "ls", "--json", "--store",
                               str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=helper_env())
             for _ in range(8)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert len(json.loads(out)) == 2, out
    history = cli("history", page["page_id"], "--store", str(store), "--json").json
    assert len(history["revisions"]) == 2, history
    assert "hand edit" in history["revisions"][-1]["note"]
    # the dropped file became exactly one page
    assert len(list((store / "revisions").iterdir())) == 3  # .gitkeep + two pages
    assert cli("doctor", "--store", str(store)).code == 0


@pytest.mark.slow  # eight real pcp processes at once
def test_same_idempotency_key_from_eight_processes_gives_one_page(store: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-m", "pcp_cli", "add", "keyed", "--json",
                               "--idempotency-key", "import:42", "--store", str(store)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=helper_env())
             for _ in range(8)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    assert len({(r["page_id"], r["revision_id"]) for r in results}) == 1
    assert sorted(r["status"] for r in results) == ["created"] + ["unchanged"] * 7
    assert len(list((store / "revisions").glob("*/*.json"))) == 1


@pytest.mark.slow
def test_doctor_fix_while_writers_write(store: Path) -> None:
    """doctor --fix running beside live writers must not roll a head file back."""
    setup = setup_pages(store, 2)
    procs = start_writers(store, [p["page_id"] for p in setup], ["lib"] * 4, ops=60, seed=3000)
    runs = 0
    while any(proc.poll() is None for proc in procs):
        result = cli("doctor", "--fix", "--store", str(store), "--json")
        assert result.code in (0, 8), result.stderr
        runs += 1
    records = collect(procs, timeout=300)
    assert runs > 1
    check_store_after(store, setup, records)
