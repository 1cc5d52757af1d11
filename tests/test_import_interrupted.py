"""A real `pcp import` process killed mid-import leaves no partial page; the next run resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pcp_cli.store.store import Store, page_id_for_key
from tests.adapters.adapter_builders import gpt_conversation, gpt_message
from tests.conftest import ROOT, cli

CONVERSATIONS = 300


def big_export(path: Path) -> list[str]:
    filler = "The tide gauge reads high again. " * 150
    conversations = [
        gpt_conversation(
            f"conv-{n:04d}",
            [
                ("u", None, gpt_message("u", "user", f"Question {n}: {filler}")),
                ("a", "u", gpt_message("a", "assistant", f"Answer {n}: {filler}")),
            ],
            current="a",
            title=f"Chat {n}",
        )
        for n in range(CONVERSATIONS)
    ]
    path.write_text(json.dumps(conversations), "utf-8")
    return [f"chatgpt:conversation:conv-{n:04d}" for n in range(CONVERSATIONS)]


def revision_folders(store: Path) -> int:
    return sum(1 for p in (store / "revisions").iterdir() if p.is_dir())


@pytest.mark.slow
def test_killed_import_leaves_whole_pages_and_resumes(store: Path, tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    keys = big_export(export)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pcp_cli", "import", str(export), "--store", str(store), "--json"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 60
    while revision_folders(store) < 40 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the import finished before it could be killed"
    written = revision_folders(store)
    assert 40 <= written < CONVERSATIONS

    # Whatever is visible is whole: every head file parses and names a published revision.
    # (Pages are published in batches, revision files first: the kill may have left a batch's
    # revisions without their head files, which the next run or `pcp doctor --fix` finishes.)
    with Store.open(store) as opened:
        opened.catalog.refresh("full")
        entries = opened.catalog.entries()
        assert all(entry.problem is None for entry in entries)
        for entry in entries:
            assert entry.page_id and entry.revision_id
            assert entry.revision_id in opened.revision_ids(entry.page_id)

    result = cli("import", str(export), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    summary = result.json
    assert summary["failed"] == 0
    assert summary["created"] + summary["unchanged"] == CONVERSATIONS
    assert summary["unchanged"] == len(entries)  # a page with its head file is whole
    assert summary["revised"] == 0

    # Every conversation is now a page with exactly one revision and its head file.
    with Store.open(store) as opened:
        opened.catalog.refresh("full")
        assert len(opened.catalog.entries("problem IS NULL")) == CONVERSATIONS
        for key in keys:
            assert len(opened.revision_ids(page_id_for_key(key))) == 1
    doctor = cli("doctor", "--fix", "--store", str(store), "--json")
    assert doctor.code == 0, doctor.stderr

    again = cli("import", str(export), "--store", str(store), "--json")
    assert again.json["unchanged"] == CONVERSATIONS
