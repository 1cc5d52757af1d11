"""Sizes every page can be stored at: a note too big to be a page is skipped, never read (the
watcher that imports it stays small too: bench/RESULTS.md), and so is a conversation. The limit
is a page's 16 MiB less its frontmatter's 256 KiB: 16,515,072 bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.adapter_builders import gpt_branching, write_folder
from tests.conftest import cli


def imp(store: Path, source: Path) -> dict:
    result = cli("import", str(source), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    return result.json


def test_a_note_over_the_size_limit_is_skipped_unread_and_the_rest_imported(
        store: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    big = vault / "huge.md"
    with big.open("wb") as handle:  # 100 MB, sparse: the test costs no disk or memory
        handle.truncate(100 * 1024 * 1024)
    (vault / "kelp.md").write_text("# Kelp\n")
    summary = imp(store, vault)
    assert (summary["created"], summary["skipped"]) == (1, 1)
    [problem] = summary["problems"]
    assert problem["item"] == "huge.md"
    assert problem["reason"] == (
        "over the 16,515,072-byte limit for a note (104,857,600 bytes; a page's file "
        "holds at most 16 MiB); skipped: split it into smaller notes to import it")
    assert cli("doctor", "--store", str(store)).code == 0  # no page the store cannot read


def test_an_item_too_large_for_one_page_is_skipped(store: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's own check (whatever the importer), at a small limit: the fast twin of
    the real-size test below."""
    from pcp_cli.adapters import writer

    monkeypatch.setattr(writer, "MAX_BODY_BYTES", 2_000)
    huge = gpt_branching()
    huge["id"] = huge["conversation_id"] = "conv-huge"
    huge["mapping"]["u2"]["message"]["content"]["parts"] = ["x" * 2_001]
    export = write_folder(tmp_path / "c", {"conversations.json": [huge, gpt_branching()]})
    summary = imp(store, export)
    assert (summary["created"], summary["skipped"]) == (1, 1)
    assert summary["problems"][0]["reason"].startswith("too large for one page")


@pytest.mark.slow  # 16 MB of JSON to parse: ~3 s, 10 s on a loaded machine
def test_a_conversation_too_large_for_one_page_is_skipped(store: Path, tmp_path: Path) -> None:
    huge = gpt_branching()
    huge["id"] = huge["conversation_id"] = "conv-huge"
    huge["mapping"]["u2"]["message"]["content"]["parts"] = ["x" * 16_515_073]  # the limit, and one
    export = write_folder(tmp_path / "c", {"conversations.json": [huge, gpt_branching()]})
    summary = imp(store, export)
    assert (summary["created"], summary["skipped"]) == (1, 1)
    assert "too large for one page" in summary["problems"][0]["reason"]
    assert cli("doctor", "--store", str(store)).code == 0
