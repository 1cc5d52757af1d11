"""Portable Context Protocol v1.2 (issue #34): who wrote a claim and who stands behind it
(§3.2.1), when it goes stale (§3.2.2), and which version a reader gets.

Every emitted object is checked against the schemas the project ships (`schemas/v1.2/`, and
`schemas/v1/` for a reader that asks for v1.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from pcp_cli import __version__, api
from pcp_cli.model.page import Actor
from tests.conftest import V1_SCHEMAS, V12_EXAMPLES, V12_SCHEMAS, cli
from tests.test_archive_import import new_store

EXAMPLE_V12 = V12_EXAMPLES / "full-archive.example.json"
PAST, FUTURE = "2001-01-01", "2999-12-31"


def ok(*args: object) -> object:
    result = cli(*(str(a) for a in args), "--json")
    assert result.code == 0, result.stderr
    return result.json


def schema(name: str, folder: Path = V12_SCHEMAS) -> Draft202012Validator:
    return Draft202012Validator(json.loads((folder / f"{name}.schema.json").read_text()),
                                format_checker=FormatChecker())


def errors(name: str, obj: object, folder: Path = V12_SCHEMAS) -> list[str]:
    return [e.message for e in schema(name, folder).iter_errors(obj)]


def export(root: Path, *extra: str) -> dict:
    result = cli("export", "--format", "archive", "--store", str(root), *extra)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def keystone(root: Path, page_id: str) -> dict:
    return next(k for k in export(root)["keystones"] if k["id"] == page_id)


def record(root: Path, page_id: str) -> dict:
    return ok("show", page_id, "--store", root)["page"]["record"]


# -- actors ------------------------------------------------------------------------------------
def test_a_keystone_the_person_adds_names_them_as_writer_and_affirmer(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    page = ok("keystone", "add", "Ada prefers tea.", "--store", root)["page_id"]
    obj = keystone(root, page)
    assert obj["generated_by"] == "human:tester"
    assert obj["last_confirmed_by"] == "human:tester"
    assert errors("keystone", obj) == []
    # a strict v1.1 reader refuses them: that is what --pcp-version 1.1 is for
    assert errors("keystone", obj, V1_SCHEMAS)


def test_a_proposal_is_written_by_its_proposer_and_affirmed_by_the_person(
        tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    with api.open_store(root) as store:
        page = api.propose_keystone(store, "Ada sails on Sundays.",
                                    actor=Actor("model", "claude-desktop")).page_id
    assert record(root, page)["generated_by"] == "claude-desktop/mcp"
    assert "last_confirmed_by" not in record(root, page)
    assert page not in {k["id"] for k in export(root)["keystones"]}
    ok("review", "accept", page, "--store", root)
    obj = keystone(root, page)
    assert (obj["generated_by"], obj["last_confirmed_by"]) == ("claude-desktop/mcp", "human:tester")
    assert errors("keystone", obj) == []


def test_a_machine_can_neither_publish_nor_accept_a_keystone(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    model = Actor("model", "claude-desktop")
    with api.open_store(root) as store:
        with pytest.raises(api.UsageError, match="cannot publish"):
            api.add_keystone(store, "Ada sails.", actor=model)
        page = api.propose_keystone(store, "Ada sails.", actor=model).page_id
        with pytest.raises(api.UsageError, match="cannot accept"):
            api.accept_proposal(store, page, actor=model)
        # re-affirming is no way round it: a proposal is never "confirmed" into publication
        for actor in (model, Actor("tool", "pcp-import-chatgpt"), None):
            with pytest.raises(api.UsageError, match="never publishes"):
                api.confirm_keystone(store, page, actor=actor)
        assert store.current(page).state.review_status == "proposed"
    assert api.keystone_entries(api.open_store(root)) == []


def test_a_machine_reaffirmation_refreshes_a_published_keystone_only(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    page = ok("keystone", "add", "Ada prefers tea.", "--store", root)["page_id"]
    with api.open_store(root) as store:
        api.confirm_keystone(store, page, actor=Actor("model", "claude-desktop"))
        state = store.current(page).state
    assert state.record["last_confirmed_by"] == "claude-desktop/mcp"
    assert state.record["generated_by"] == "human:tester"
    assert state.review_status == "affirmed"
    # the person's own re-affirmation puts them back as the one standing behind it
    ok("keystone", "confirm", page, "--store", root)
    assert keystone(root, page)["last_confirmed_by"] == "human:tester"
    # a proposal cannot be confirmed by the person either: accepting is how they publish
    proposal = ok("keystone", "propose", "Ada rows.", "--store", root)["page_id"]
    refused = cli("keystone", "confirm", proposal, "--store", str(root))
    assert refused.code == 2 and "never publishes" in refused.stderr
    assert "review accept" in refused.stderr


def test_pcps_own_extractor_and_importers_name_themselves(tmp_path: Path) -> None:
    from tests.adapters.adapter_builders import CLAUDE_USERS, write_folder

    root = new_store(tmp_path, "store")
    folder = write_folder(tmp_path / "claude", {
        "memories.json": [{"conversations_memory": "Ada writes in Python.",
                           "project_memories": {}}],
        "users.json": CLAUDE_USERS, "conversations.json": []})
    ok("import", folder, "--format", "claude", "--store", root)
    items = [i for i in ok("review", "list", "--store", root) if i["kind"] == "keystone"]
    assert items and {i["generated_by"] for i in items} == {"process:pcp-import-claude"}
    from pcp_cli.api.proposals import PROPOSE_ACTOR
    from pcp_cli.model.actors import actor_string

    assert actor_string(PROPOSE_ACTOR) == f"pcp/{__version__}"


# -- staleness -------------------------------------------------------------------------------
def test_stale_after_is_set_on_add_edit_and_accept(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    page = ok("keystone", "add", "Ada is on the Tidewatch project.", "--stale-after",
              "2026-09-30", "--store", root)["page_id"]
    assert keystone(root, page)["stale_after"] == "2026-09-30"
    ok("keystone", "confirm", page, "--store", root)
    before = record(root, page)
    ok("keystone", "edit", page, "--stale-after", "2027-03-31", "--store", root)
    after = record(root, page)
    assert after.pop("stale_after") == "2027-03-31"
    # editing is not re-affirming: who stands behind the claim, and since when, is unchanged
    assert before.pop("stale_after") == "2026-09-30" and after == before
    ok("keystone", "edit", page, "--stale-after", "never", "--store", root)
    assert "stale_after" not in keystone(root, page)
    proposal = ok("keystone", "propose", "Ada is in Lisbon this month.", "--stale-after",
                  "2026-08-31", "--store", root)["page_id"]
    assert ok("review", "show", proposal, "--store", root)["stale_after"] == "2026-08-31"
    ok("review", "accept", proposal, "--stale-after", "2026-09-15", "--store", root)
    obj = keystone(root, proposal)
    assert obj["stale_after"] == "2026-09-15"
    assert errors("keystone", obj) == []


@pytest.mark.parametrize("bad", ["2026-02-30", "30/09/2026", "2026-9-1", "soon", ""])
def test_a_bad_stale_after_is_refused_and_nothing_is_written(tmp_path: Path, bad: str) -> None:
    root = new_store(tmp_path, "store")
    page = ok("keystone", "add", "Ada prefers tea.", "--store", root)["page_id"]
    before = sorted(p.name for p in (root / "revisions" / page).iterdir())
    for args in (("keystone", "add", "Ada rows.", "--stale-after", bad),
                 ("keystone", "edit", page, "--stale-after", bad)):
        result = cli(*args, "--store", str(root))
        assert result.code == 2, result.stderr
        assert result.stderr.startswith("Error: stale_after") and "Traceback" not in result.stderr
    assert sorted(p.name for p in (root / "revisions" / page).iterdir()) == before
    assert len(ok("keystone", "list", "--store", root)) == 1


def test_nothing_moves_a_stale_keystone_to_superseded(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    page = ok("keystone", "add", "Ada uses Cursor.", "--stale-after", PAST,
              "--store", root)["page_id"]
    ok("index", "--store", root)
    ok("doctor", "--fix", "--store", root)
    obj = keystone(root, page)
    assert obj["status"] == "active" and obj["stale_after"] == PAST
    [row] = ok("keystone", "list", "--store", root)
    assert row["status"] == "active"
    listed = cli("keystone", "list", "--store", str(root))
    assert "active · stale" in listed.stdout


# -- versions ---------------------------------------------------------------------------------
def test_a_v11_export_is_valid_v11_and_comes_back_whole(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    page = ok("keystone", "add", "Ada is on Tidewatch.", "--stale-after", "2026-09-30",
              "--store", root)["page_id"]
    newer, older = export(root), export(root, "--pcp-version", "1.1")
    [obj] = older["keystones"]
    assert errors("keystone", obj, V1_SCHEMAS) == []
    assert obj["extensions"]["org.pcp-cli.v1.2"] == {
        "generated_by": "human:tester", "last_confirmed_by": "human:tester",
        "stale_after": "2026-09-30"}
    # pcp's own import restores them: the v1.2 export of the copy is the original's
    path = tmp_path / "v11.json"
    path.write_text(json.dumps(older))
    other = new_store(tmp_path, "other")
    ok("import", path, "--store", other)
    assert export(other)["keystones"] == [k for k in newer["keystones"] if k["id"] == page]
    # and importing it back into its own store changes nothing
    assert ok("import", path, "--store", root)["created"] == 0
    assert ok("import", path, "--store", root)["revised"] == 0


def test_an_unknown_version_is_a_usage_error(tmp_path: Path) -> None:
    root = new_store(tmp_path, "store")
    result = cli("export", "--format", "archive", "--pcp-version", "2.0", "--store", str(root))
    assert result.code == 2 and "1.2" in result.stderr and "1.1" in result.stderr
    result = cli("export", "--format", "micro_prompt", "--pcp-version", "1.1",
                 "--store", str(root))
    assert result.code == 2 and "does not apply" in result.stderr


def test_the_published_v12_example_imports_whole_unattributed_and_stale_included(
        tmp_path: Path) -> None:
    data = json.loads(EXAMPLE_V12.read_text("utf-8"))
    root = new_store(tmp_path, "store")
    ok("import", EXAMPLE_V12, "--store", root)
    exported = {k["id"]: k for k in export(root)["keystones"]}
    for given in data["keystones"]:
        ours = exported[given["id"]]  # nothing discarded: unattributed and stale ones included
        for key in ("generated_by", "last_confirmed_by", "stale_after"):
            assert ours.get(key) == given.get(key), (given["id"], key)
        assert errors("keystone", ours) == []
    assert not any("generated_by" in k for k in data["keystones"] if k["id"] in ("ks-006",
                                                                                   "ks-007"))


# -- stale labelling, not stale hiding (§4.2) and the micro_prompt (§4.1) -------------------
def stale_store(tmp_path: Path) -> tuple[Path, str, str]:
    """A stale keystone that matches better than the fresh one it competes with."""
    root = new_store(tmp_path, "store")
    stale = ok("keystone", "add", "Ada uses Cursor, Cursor every day, for frontend work.",
               "--category", "preference", "--stale-after", PAST, "--store", root)["page_id"]
    fresh = ok("keystone", "add", "Ada uses Zed for frontend work.", "--category",
               "preference", "--stale-after", FUTURE, "--store", root)["page_id"]
    return root, stale, fresh


def search(root: Path, *args: str) -> dict:
    return ok("search", *args, "--store", root)


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("mode, query", [("text", "cursor frontend"), ("auto", "cursor"),
                                         ("exact", "frontend work"), ("temporal", "*"),
                                         ("graph", "frontend")])
def test_a_stale_keystone_is_returned_labelled_in_every_mode(tmp_path: Path, mode: str,
                                                           query: str) -> None:
    from pcp_cli.model.staleness import today

    root, stale, fresh = stale_store(tmp_path)
    data = search(root, query, "--mode", mode)
    by_id = {r["id"]: r for r in data["results"]}
    assert by_id[stale]["stale"] is True
    assert "stale" not in by_id.get(fresh, {})
    assert by_id[stale]["extensions"]["org.pcp-cli"]["stale_after"] == PAST
    filters = data["filters_applied"]
    assert filters["exclude_stale"] is False and filters["stale_as_of"] == today()
    assert filters["stale_results"] == 1
    for result in data["results"]:
        assert errors("search-result", result) == []
    # nothing moved it anywhere: it is still the active keystone it was
    assert record(root, stale)["stale_after"] == PAST


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("mode", ["text", "exact", "temporal", "graph"])
def test_exclude_stale_leaves_them_out_before_ranking(tmp_path: Path, mode: str) -> None:
    root, stale, fresh = stale_store(tmp_path)
    query = {"text": "cursor frontend", "exact": "frontend work", "temporal": "*",
             "graph": "cursor frontend"}[mode]
    # limit 1 where the stale one comes first: only a filter applied before ranking (or
    # ordering) still fills the page with the fresh one
    if mode in ("text", "graph"):
        first = search(root, query, "--mode", mode, "--limit", "1")
        assert [r["id"] for r in first["results"]] == [stale]
    data = search(root, query, "--mode", mode, "--limit", "1", "--exclude-stale")
    assert [r["id"] for r in data["results"]] == [fresh]
    assert data["filters_applied"]["exclude_stale"] is True
    assert data["filters_applied"]["stale_results"] == 0


def test_the_piped_fast_path_labels_and_excludes_too(tmp_path: Path) -> None:
    root, stale, fresh = stale_store(tmp_path)
    piped = cli("search", "frontend", "--store", str(root))  # the fast path says it too
    assert f"{stale}\t" in piped.stdout and " stale\t" in piped.stdout
    piped = cli("search", "frontend", "--exclude-stale", "--store", str(root))
    assert stale not in piped.stdout and fresh in piped.stdout


def test_the_first_search_of_a_fresh_clone_labels_and_excludes_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    root, stale, fresh = stale_store(tmp_path)
    shutil.rmtree(root / ".pcp")  # a fresh clone: no catalog, no index
    monkeypatch.setenv("PCP_SCAN_FIRST_MIN_PAGES", "1")
    data = search(root, "frontend")
    assert data["filters_applied"]["mode"] == "scan"
    assert {r["id"]: r.get("stale") for r in data["results"]} == {stale: True, fresh: None}
    shutil.rmtree(root / ".pcp")
    data = search(root, "frontend", "--exclude-stale")
    assert data["filters_applied"]["mode"] == "scan"
    assert [r["id"] for r in data["results"]] == [fresh]
    assert data["filters_applied"]["exclude_stale"] is True


def test_the_micro_prompt_leaves_stale_keystones_out(tmp_path: Path) -> None:
    root, _stale, _fresh = stale_store(tmp_path)
    text = cli("export", "--format", "micro_prompt", "--store", str(root)).stdout
    assert "Zed" in text and "Cursor" not in text
    # the distilled profile does not pick the stale claim up either
    ok("profile", "distill", "--store", root)
    for fmt in ("json", "markdown"):
        assert "Cursor" not in cli("export", "--format", fmt, "--store", str(root)).stdout
    # while the archive keeps it, dated
    assert keystone(root, _stale)["stale_after"] == PAST


def test_no_affirmation_tier_is_served(tmp_path: Path) -> None:
    """§3.2.1: the tier (unattributed, machine-reaffirmed, human-affirmed) is a reader's
    inference; pcp serves the actors and never a tier, on any surface."""
    root = new_store(tmp_path, "store")
    page = ok("keystone", "add", "Ada prefers tea.", "--store", root)["page_id"]
    with api.open_store(root) as store:
        api.confirm_keystone(store, page, actor=Actor("model", "claude-desktop"))
    ok("import", EXAMPLE_V12, "--store", root)
    shown = [cli("export", "--format", "archive", "--store", str(root)).stdout,
             cli("export", "--format", "archive", "--pcp-version", "1.1", "--store",
                 str(root)).stdout,
             cli("search", "tea", "--store", str(root), "--json").stdout,
             cli("keystone", "list", "--all", "--store", str(root), "--json").stdout]
    tiers = {"unattributed", "machine-reaffirmed", "human-affirmed"}

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                assert "tier" not in key.lower(), key
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)
        else:
            assert value not in tiers, value

    for text in shown:
        walk(json.loads(text))


def test_source_and_generated_by_agree_for_what_pcp_writes(tmp_path: Path) -> None:
    """§3.2.1: where both are present they agree; a user_stated keystone carries a human
    generated_by (and what an importer, pcp propose or a model writes is not user_stated)."""
    from tests.adapters.adapter_builders import CLAUDE_USERS, write_folder

    root = new_store(tmp_path, "store")
    ok("keystone", "add", "Ada prefers tea.", "--store", root)
    ok("keystone", "propose", "Ada rows on Sundays.", "--store", root)
    with api.open_store(root) as store:
        api.propose_keystone(store, "Ada sails.", source="inferred",
                             actor=Actor("model", "claude-desktop"))
    folder = write_folder(tmp_path / "claude", {
        "memories.json": [{"conversations_memory": "Ada writes in Python.",
                           "project_memories": {}}],
        "users.json": CLAUDE_USERS, "conversations.json": []})
    ok("import", folder, "--format", "claude", "--store", root)
    pairs = set()
    for entry in ok("ls", "--include-proposed", "--type", "keystone", "--store", root):
        said = record(root, entry["page_id"])
        writer = said["generated_by"]
        pairs.add((said["source"], writer.split(":")[0] if writer.startswith(
            ("human:", "process:")) else "model"))
    assert pairs == {("user_stated", "human"), ("inferred", "model"),
                     ("imported", "process")}
