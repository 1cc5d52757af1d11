"""Undo for real: a decision on a proposal can be taken back (`pcp review undo`, `pcp review
withdraw ID`, the console's undo), as a new revision, the history kept."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import cli


def _propose(store: Path, text: str, page_id: str, *extra: str) -> None:
    result = cli("keystone", "propose", text, "--category", "preference", "--id", page_id,
                 *extra, "--store", store)
    assert result.code == 0, result.stderr


def _show(store: Path, page_id: str) -> dict:
    return cli("show", page_id, "--json", "--store", store).json["page"]


def _queue(store: Path) -> list[str]:
    return [i["page_id"] for i in cli("review", "--json", "--store", store).json]


def test_undo_takes_back_the_last_acceptance(store: Path, monkeypatch) -> None:
    _propose(store, "Likes short answers.", "ks-short")
    _propose(store, "Likes tea.", "ks-tea")
    monkeypatch.setenv("PCP_NOW", "2026-03-01T12:00:00.000Z")
    assert cli("review", "accept", "ks-tea", "--store", store).code == 0
    monkeypatch.setenv("PCP_NOW", "2026-03-01T12:05:00.000Z")
    assert cli("review", "accept", "ks-short", "--store", store).code == 0
    monkeypatch.delenv("PCP_NOW")
    assert "Likes short answers" in cli("export", "--format", "micro_prompt",
                                        "--store", store).stdout
    undone = cli("review", "undo", "--json", "--store", store)
    assert undone.code == 0, undone.stderr
    assert undone.json["page_id"] == "ks-short" and undone.json["withdrawn"] == "accepted"
    page = _show(store, "ks-short")
    assert page["review_status"] == "proposed" and "affirmed_at" not in page["record"]
    assert page["instruction_policy"] == "data_only"
    assert _queue(store) == ["ks-short"]
    assert "Likes short answers" not in cli("export", "--format", "micro_prompt",
                                            "--store", store).stdout
    history = cli("history", "ks-short", "--json", "--store", store).json
    assert len(history) == 3  # proposed, accepted, taken back: the history kept
    # the next undo takes back the decision before it
    assert cli("review", "undo", "--json", "--store", store).json["page_id"] == "ks-tea"
    assert sorted(_queue(store)) == ["ks-short", "ks-tea"]


def test_a_rejection_is_reconsidered_and_an_edit_undone(store: Path) -> None:
    _propose(store, "Likes tea.", "ks-tea")
    assert cli("review", "reject", "ks-tea", "--reason", "no", "--store", store).code == 0
    again = cli("review", "reject", "ks-tea", "--store", store)
    assert again.code == 2 and "pcp review withdraw ks-tea" in again.stderr
    result = cli("review", "withdraw", "ks-tea", "--store", store)
    assert result.code == 0, result.stderr
    assert "took back the rejection of ks-tea" in result.stdout
    page = _show(store, "ks-tea")
    assert page["review_status"] == "proposed"
    assert "rejected_at" not in page["record"] and "rejection_reason" not in page["record"]


def test_withdrawing_an_accepted_replacement_restores_the_old_keystone(store: Path) -> None:
    assert cli("keystone", "add", "Lives in Porto.", "--category", "identity", "--id",
               "ks-porto", "--store", store).code == 0
    _propose(store, "Lives in Lisbon.", "ks-lisbon", "--supersedes", "ks-porto")
    assert cli("review", "accept", "ks-lisbon", "--store", store).code == 0
    assert _show(store, "ks-porto")["lifecycle_status"] == "superseded"
    result = cli("review", "withdraw", "ks-lisbon", "--json", "--store", store)
    assert result.code == 0, result.stderr
    assert result.json["restored"] == ["ks-porto"]
    porto = _show(store, "ks-porto")
    assert porto["lifecycle_status"] == "active" and "superseded_by" not in porto["record"]
    prompt = cli("export", "--format", "micro_prompt", "--store", store).stdout
    assert "Porto" in prompt and "Lisbon" not in prompt
    assert cli("doctor", "--store", store).code == 0  # the relation file stays, as history
    assert cli("review", "accept", "ks-lisbon", "--store", store).code == 0  # and again
    assert _show(store, "ks-porto")["lifecycle_status"] == "superseded"


def test_nothing_to_take_back_fails_well(store: Path) -> None:
    result = cli("review", "undo", "--store", store)
    assert result.code == 2 and "no review decision to take back" in result.stderr
    assert cli("keystone", "add", "Hand-written.", "--id", "ks-hand", "--store", store).code == 0
    result = cli("review", "withdraw", "ks-hand", "--store", store)
    assert result.code == 2 and "never a proposal" in result.stderr
    _propose(store, "Likes tea.", "ks-tea")
    result = cli("review", "withdraw", "ks-tea", "--store", store)
    assert result.code == 2 and "awaits review" in result.stderr
    assert cli("review", "withdraw", "nope", "--store", store).code == 3


def test_accept_with_edited_category_sensitivity_and_date(store: Path) -> None:
    from pcp_cli import api

    _propose(store, "Likes tea.", "ks-tea")
    with api.open_store(store) as opened:
        api.accept_proposal(opened, "ks-tea", content="Likes green tea.", category="rule",
                            sensitivity="high")
    page = _show(store, "ks-tea")
    assert page["record"]["category"] == "rule" and page["sensitivity"] == "high"
    assert page["payload"]["content"] == "Likes green tea.\n"
    assert page["instruction_policy"] == "advisory" and page["integrity"] == "edited"
    _propose(store, "Likes coffee.", "ks-coffee")
    with api.open_store(store) as opened:
        import pytest

        from pcp_cli.errors import UsageError

        for bad in ({"category": "job"}, {"sensitivity": "secret"}, {"date": "2024"}):
            with pytest.raises(UsageError):
                api.accept_proposal(opened, "ks-coffee", **bad)
    assert _show(store, "ks-coffee")["review_status"] == "proposed"


def test_the_last_decisions_are_read_among_many_affirmed_pages(store: Path, monkeypatch) -> None:
    """`review_decisions` reads only the rows whose record says a decision (in SQL): among
    hundreds of keystones affirmed otherwise it finds the same decisions, in the same order,
    as reading every affirmed or rejected row."""
    from pcp_cli import api

    monkeypatch.setenv("PCP_NOW", "2026-01-01T09:00:00.000Z")
    _propose(store, "Likes long walks.", "ks-walks")
    assert cli("review", "accept", "ks-walks", "--store", store).code == 0
    _propose(store, "Likes loud music.", "ks-loud")
    assert cli("review", "reject", "ks-loud", "--store", store).code == 0
    monkeypatch.setenv("PCP_NOW", "2026-02-01T09:00:00.000Z")
    with api.open_store(store) as opened, opened.batch():
        for number in range(300):
            api.add_keystone(opened, f"Fact number {number}.", category="other")
        api.add_keystone(opened, "Has a note about affirmed_at.", category="other",
                         page_id="ks-said")
    monkeypatch.setenv("PCP_NOW", "2026-03-01T09:00:00.000Z")
    _propose(store, "Likes tea.", "ks-tea")
    assert cli("review", "accept", "ks-tea", "--store", store).code == 0
    with api.open_store(store) as opened:
        every = opened.entries(types=("keystone",), review=("affirmed", "rejected"),
                               statuses=("active", "superseded", "archived"))
        assert len(every) > 300
        decided = [e.page_id for e in sorted(
            (e for e in every if "affirmed_at" in e.record or "rejected_at" in e.record),
            key=lambda e: (e.record.get("affirmed_at") or e.record["rejected_at"], e.page_id),
            reverse=True)]
        found = api.review_decisions(opened, limit=None)
        assert [d["page_id"] for d in found] == decided == ["ks-tea", "ks-walks", "ks-loud"]
        assert api.review_decisions(opened, limit=2) == found[:2]
