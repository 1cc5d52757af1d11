"""`atomic.FileBatch` (how `pcp ingest` and the session importers publish event files) makes
every file durable before it is renamed into place, and every folder it renamed into durable
after: the file operations recorded in this process, so a break shows in the default run (the
fault-injection battery that kills real processes at each of them is in the slow set)."""

from __future__ import annotations

import json
import os
import stat
import types
from pathlib import Path

import pytest

from pcp_cli.store import atomic
from tests.conftest import cli


class RecordingOs(types.ModuleType):
    """`os` as `pcp_cli.store.atomic` sees it, recording what it makes durable and renames."""

    def __init__(self) -> None:
        super().__init__("os")
        self.steps: list[tuple[str, str]] = []
        self._paths: dict[int, str] = {}

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def open(self, path, flags, mode=0o777, *args, **kwargs):  # type: ignore[no-untyped-def]
        fd = os.open(path, flags, mode, *args, **kwargs)
        self._paths[fd] = os.fsdecode(path)
        return fd

    def close(self, fd):  # type: ignore[no-untyped-def]
        self._paths.pop(fd, None)
        return os.close(fd)

    def fsync(self, fd):  # type: ignore[no-untyped-def]
        kind = "dirfsync" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync"
        self.steps.append((kind, self._paths.get(fd, "?")))
        return os.fsync(fd)

    def replace(self, src, dst, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.steps.append(("rename", f"{os.fsdecode(src)} -> {os.fsdecode(dst)}"))
        return os.replace(src, dst, *args, **kwargs)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> RecordingOs:
    fake = RecordingOs()
    monkeypatch.setattr(atomic, "os", fake)
    return fake


def assert_durable_in_order(steps: list[tuple[str, str]], files: list[Path]) -> None:
    renames = [i for i, (op, _) in enumerate(steps) if op == "rename"]
    assert len(renames) == len(files)
    for path in files:
        [rename] = [i for i in renames if steps[i][1].endswith(f" -> {path}")]
        temp = steps[rename][1].split(" -> ")[0]
        assert ("fsync", temp) in steps[:rename], f"{path} renamed before its file was fsynced"
        synced = [i for i, step in enumerate(steps) if step == ("dirfsync", str(path.parent))]
        assert synced and max(synced) > max(renames), f"{path.parent} not fsynced after"


def test_a_file_batch_fsyncs_every_file_before_its_rename_and_each_folder_after(
        tmp_path: Path, recorded: RecordingOs) -> None:
    files = [tmp_path / "new" / "a.json", tmp_path / "new" / "b.json", tmp_path / "c.json"]
    batch = atomic.FileBatch()
    for n, path in enumerate(files):
        batch.add(path, json.dumps({"n": n}), new=True)
    batch.publish()
    assert [json.loads(p.read_text())["n"] for p in files] == [0, 1, 2]
    assert_durable_in_order(recorded.steps, files)
    # the folder the batch made is durable in its parent too
    assert ("dirfsync", str(tmp_path)) in recorded.steps


def test_ingested_events_are_durable_before_they_are_in_place(store: Path, tmp_path: Path,
                                                              recorded: RecordingOs) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps({
        "type": "message", "role": "user", "conversation_id": "c1", "content": f"message {n}",
        "timestamp": f"2024-05-01T10:0{n}:00Z"}) + "\n" for n in range(3)))
    result = cli("ingest", str(events), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    stored = sorted((store / "events").rglob("ev_*.json"))
    assert len(stored) == 3
    event_steps = [step for step in recorded.steps if "/events/" in step[1]]
    assert_durable_in_order(event_steps, stored)
