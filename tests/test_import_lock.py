"""Two writers on one store, as real processes: an import that takes the store lock back after
every batch cannot shut another writer out, and an import the lock stops part way says what it
imported and that running it again finishes the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli, holding_the_lock, run_pcp

HELPERS = Path(__file__).parent / "helpers"


def vault(folder: Path, count: int) -> Path:
    folder.mkdir()
    for n in range(count):
        (folder / f"note-{n:02d}.md").write_text(f"# Note {n}\n\nThe tide gauge {n} reads high.\n")
    return folder


def test_a_writer_gets_its_turn_beside_an_import_that_takes_the_lock_back(
        store: Path, tmp_path: Path) -> None:
    """The other process lets the lock go and takes it again at once, forever (an import
    between its batches): the second import still gets the lock, and imports everything."""
    folder = vault(tmp_path / "vault", 3)
    churn = subprocess.Popen([sys.executable, str(HELPERS / "lock_turns.py"), "churn",
                              str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert churn.stdout is not None and churn.stdout.readline().strip() == "held"
        result = run_pcp("import", str(folder), "--store", str(store), "--json",
                         env={"PCP_LOCK_TIMEOUT": "20"})
    finally:
        assert churn.stdin is not None
        churn.stdin.close()
        churn.wait(timeout=60)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["created"] == 3


def test_an_import_stopped_by_the_lock_says_what_it_imported_and_the_rerun_finishes(
        store: Path, tmp_path: Path) -> None:
    folder = vault(tmp_path / "vault", 5)
    env = {**os.environ, "PCP_LOCK_TIMEOUT": "1"}
    importer = subprocess.Popen([sys.executable, str(HELPERS / "lock_turns.py"), "pause",
                                 "import", str(folder), "--store", str(store)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
    assert importer.stdout is not None and importer.stdin is not None
    assert importer.stdout.readline().strip() == "released"  # one page in, lock let go
    with holding_the_lock(store):
        importer.stdin.write("go\n")
        importer.stdin.flush()
        out, err = importer.communicate(timeout=120)
    assert importer.returncode == 6, err
    assert "Traceback" not in err
    assert "this import stopped part way: 1 page(s) created, 0 revised and 0 unchanged are " \
        "in the store" in err
    assert "run the same import again to finish it" in err
    assert len(cli("ls", "--store", str(store), "--json").json) == 1

    again = cli("import", str(folder), "--store", str(store), "--json")
    assert again.code == 0, again.stderr
    assert (again.json["created"], again.json["unchanged"]) == (4, 1)


def test_a_writer_that_waits_for_the_lock_says_so_and_when_it_stops(store: Path) -> None:
    """What the import's progress bar shows on a terminal (waiting, then importing again)."""
    import pytest

    from pcp_cli.errors import StoreLocked
    from pcp_cli.store.lock import writer_lock

    lock = store / ".pcp" / "lock"
    calls: list[bool] = []
    with writer_lock(lock, waiting=calls.append):
        pass
    assert calls == []  # nobody held it: nothing to say
    with holding_the_lock(store), pytest.raises(StoreLocked), \
            writer_lock(lock, timeout=0.2, waiting=calls.append):
        pass
    assert calls == [True, False]
