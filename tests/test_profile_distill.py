"""`pcp profile distill`: deterministic, provenance `derive`, pinned fields untouched."""

from __future__ import annotations

from tests.conftest import cli


def distill(store, *extra):
    result = cli("profile", "distill", "--json", "--store", store, *extra)
    assert result.code == 0, result.stderr
    return result.json


def test_distill_from_keystones_records_derive_provenance(store):
    for args in (("Ada Lumen is a freelance data-visualization developer.", "identity"),
                 ("Ada is building Tidewatch, an ocean-sensor dashboard.", "objective"),
                 ("Wants the AI to state its assumptions before analyzing data.", "rule"),
                 ("Maybe likes tea.", "preference")):
        assert cli("keystone", "add", args[0], "--category", args[1], "--store", store).code == 0
    assert cli("keystone", "propose", "Secretly loves jazz.", "--category", "identity",
               "--store", store).code == 0
    result = distill(store)
    assert result["status"] == "created" and result["page_id"] == "profile"
    assert {"name", "profession", "primary_focus", "how_interacts_with_ai"} <= set(
        result["changed"])
    page = cli("show", "profile", "--json", "--store", store).json["page"]
    step = page["provenance"][0]
    assert step["operation"] == "derive"
    assert sorted(step["input_revision_ids"]) == result["input_revision_ids"]
    assert len(result["input_revision_ids"]) >= 3
    obj = cli("profile", "show", "--json", "--store", store).json
    assert obj["name"] == "Ada Lumen"
    assert obj["primary_focus"].startswith("Building Tidewatch")
    assert "jazz" not in str(obj)  # proposals are not distilled
    again = distill(store)
    assert again["status"] == "unchanged" and again["revision_id"] == result["revision_id"]


def test_distill_never_overwrites_a_field_set_by_hand(example):
    assert cli("profile", "set", "primary_focus", "Writing a book", "--store",
               example).code == 0
    result = distill(example)
    assert "primary_focus" not in result["changed"]
    obj = cli("profile", "show", "--json", "--store", example).json
    assert obj["primary_focus"] == "Writing a book"
    assert cli("keystone", "add", "Ada is launching Tidewatch 2.", "--category", "objective",
               "--store", example).code == 0
    distill(example)
    assert cli("profile", "show", "--json", "--store", example).json["primary_focus"] == (
        "Writing a book")


def test_dry_run_writes_nothing(example):
    before = cli("show", "profile", "--json", "--store", example).json["revision_id"]
    result = distill(example, "--dry-run")
    assert result["status"] in ("would_revise", "unchanged")
    assert cli("show", "profile", "--json", "--store", example).json["revision_id"] == before


def test_distill_is_deterministic_across_stores(tmp_path):
    outputs = []
    for name in ("a", "b"):
        root = tmp_path / name
        assert cli("init", root, "--owner", "tester").code == 0
        for text, cat in (("Bo is a baker in Lyon.", "identity"),
                          ("Prefers concise answers with examples.", "preference"),
                          ("Works only mornings.", "constraint")):
            assert cli("keystone", "add", text, "--category", cat, "--store", root).code == 0
        distill(root)
        obj = cli("profile", "show", "--json", "--store", root).json
        obj.pop("generated_at")
        outputs.append(obj)
    assert outputs[0] == outputs[1]
    assert outputs[0]["name"] == "Bo" and outputs[0]["profession"] == "Baker in Lyon"


def test_distill_on_an_empty_store_writes_nothing(store):
    result = distill(store)
    assert result == {"page_id": None, "revision_id": None, "status": "unchanged",
                      "changed": [], "input_revision_ids": []}
    assert cli("export", "--format", "micro_prompt", "--store", store).stdout == (
        "No profile is available yet in this context store.\n")


def test_human_output(store):
    """Each of the three outcomes, each on a store where it is the only right one."""
    def human():
        result = cli("profile", "distill", "--store", store)
        assert result.code == 0, result.stderr
        return result.stdout.splitlines()[0]

    assert cli("keystone", "add", "My name is Bo.", "--category", "identity",
               "--store", store).code == 0
    assert human() == "created profile: name changed, from 1 keystone revision(s)"
    assert human() == "unchanged profile: nothing changed, from 1 keystone revision(s)"
    assert cli("keystone", "add", "Bo is building a bakery app.", "--category", "objective",
               "--store", store).code == 0
    assert human() == "revised profile: primary_focus changed, from 2 keystone revision(s)"
