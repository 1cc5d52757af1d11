"""`pcp export` and `pcp profile show --format`: every format, and the §4.1 micro_prompt contract
point by point, on real stores through the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tests.conftest import ROOT, V1_SCHEMAS, cli, run_pcp

EMPTY = "No profile is available yet in this context store."
PROPOSAL_TEXT = "dark-mode dashboards"  # ks-p01 in the example store: proposed, never served
SUPERSEDED_TEXT = "Prefers Svelte + D3 with small"  # ks-003, superseded by ks-008


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((V1_SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema, format_checker=FormatChecker())


def assert_valid(name: str, obj: dict) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator(name).iter_errors(obj)]
    assert not errors, errors


def export(store, fmt: str, *extra: str) -> str:
    result = cli("export", "--format", fmt, "--store", store, *extra)
    assert result.code == 0, result.stderr
    return result.stdout


# -- micro_prompt: the contract ---------------------------------------------------------------
def test_micro_prompt_fits_the_budget_and_ends_with_the_currency_line(example):
    text = export(example, "micro_prompt")
    assert text.endswith("\n") and not text.endswith("\n\n")
    prompt = text[:-1]
    assert len(prompt) <= 1400
    assert prompt.splitlines()[-1] == "(profile as of 2026-01-15)"
    assert re.fullmatch(r"\(profile as of \d{4}-\d{2}-\d{2}\)", prompt.splitlines()[-1])


def test_micro_prompt_leads_with_identity_then_workflow_then_collaboration(example):
    prompt = export(example, "micro_prompt")
    paragraphs = prompt.strip().split("\n\n")
    assert paragraphs[0].startswith("Ada Lumen — Freelance data-visualization developer")
    assert paragraphs[1].startswith("Current focus: ")
    assert "Working style:" in paragraphs[1] and "Tools and workflow:" in paragraphs[1]
    assert paragraphs[2].startswith("How to work with Ada: ")
    assert paragraphs[3].startswith("(profile as of ")


def test_micro_prompt_uses_profile_and_affirmed_keystones_only(example):
    prompt = export(example, "micro_prompt")
    assert "Protects mornings for deep work" in prompt  # profile field
    assert "state its assumptions about the data" in prompt  # keystone ks-004
    assert PROPOSAL_TEXT not in prompt
    assert SUPERSEDED_TEXT not in prompt
    assert "Svelte 5 + D3 with TypeScript" in prompt  # ks-008, which superseded ks-003


def test_micro_prompt_newest_claim_wins_after_supersede_and_profile_change(example):
    assert cli("keystone", "add", "Ada is building Tidewatch 2, a rewrite of Tidewatch.",
               "--category", "objective", "--supersedes", "ks-002", "--store", example).code == 0
    assert cli("profile", "set", "working_style", "Works in the afternoons now.",
               "--store", example).code == 0
    prompt = export(example, "micro_prompt")
    assert "Tidewatch 2" in prompt
    assert "aiming for a public beta" not in prompt  # ks-002 is superseded
    assert "Works in the afternoons now." in prompt
    assert "Protects mornings for deep work; ships small" not in prompt
    date = prompt.strip().splitlines()[-1]
    assert date != "(profile as of 2026-01-15)"  # newer material was used


@pytest.mark.parametrize("status", ["archive", "tombstone"])
def test_micro_prompt_leaves_out_archived_and_tombstoned_keystones(example, status):
    assert cli(status, "ks-004", "--store", example).code == 0
    assert "state its assumptions" not in export(example, "micro_prompt")


def test_micro_prompt_never_includes_high_sensitivity(example):
    assert cli("keystone", "add", "Ada has a private medical condition XYZZY.", "--category",
               "constraint", "--sensitivity", "high", "--store", example).code == 0
    assert "XYZZY" not in export(example, "micro_prompt")
    assert "XYZZY" not in export(example, "markdown")
    result = cli("export", "--format", "micro_prompt", "--include-sensitive", "--store", example)
    assert result.code == 2


def test_empty_store_prints_the_fixed_sentence_and_exits_0(store):
    for fmt in ("micro_prompt",):
        result = cli("export", "--format", fmt, "--store", store)
        assert result.code == 0
        assert result.stdout == EMPTY + "\n"
    real = run_pcp("export", "--format", "micro_prompt", "--store", store)
    assert (real.code, real.stdout, real.stderr) == (0, EMPTY + "\n", "")


def test_only_proposals_is_still_an_empty_profile(store):
    assert cli("keystone", "propose", "Maybe likes tea.", "--store", store).code == 0
    assert export(store, "micro_prompt") == EMPTY + "\n"


def test_micro_prompt_is_byte_identical_every_time(example):
    first = run_pcp("export", "--format", "micro_prompt", "--store", example)
    second = run_pcp("export", "--format", "micro_prompt", "--store", example)
    third = export(example, "micro_prompt")
    assert first.code == 0
    assert first.stdout.encode() == second.stdout.encode() == third.encode()


def test_micro_prompt_path_imports_no_heavy_module(example):
    code = (
        "import io, sys\n"
        "from pcp_cli.cli.main import run\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        f"status = run(['export', '--format', 'micro_prompt', '--store', {str(example)!r}])\n"
        "sys.stdout = out\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules}\n"
        "               & {'whoosh', 'jsonschema', 'mcp', 'numpy', 'wordllama'})\n"
        "print(status, heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "0 []"


def test_profile_show_formats_match_export(example):
    for fmt in ("json", "markdown", "micro_prompt"):
        shown = cli("profile", "show", "--format", fmt, "--store", example)
        assert shown.code == 0, shown.stderr
        assert shown.stdout == export(example, fmt)
    assert cli("profile", "show", "--format", "archive", "--store", example).code == 2


# -- json, markdown, archive ------------------------------------------------------------------
def test_json_is_the_strict_profile_object(example):
    obj = json.loads(export(example, "json"))
    assert_valid("profile", obj)
    assert obj["name"] == "Ada Lumen" and "pinned" not in obj
    assert json.loads(cli("profile", "show", "--json", "--store", example).stdout) == obj


def test_json_of_an_empty_store_is_valid(store):
    assert json.loads(export(store, "json")) == {"schema_version": "1.0"}


def test_markdown_is_readable_and_excludes_proposals(example):
    text = export(example, "markdown")
    assert text.startswith("# Ada Lumen\n")
    assert "## Key facts" in text and "## Recent timeline" in text
    assert PROPOSAL_TEXT not in text and SUPERSEDED_TEXT not in text


def test_archive_shape_and_every_part_valid(example):
    data = json.loads(export(example, "archive"))
    assert list(data) == ["schema_version", "kind", "generated_at", "profile", "keystones",
                          "timeline_events", "extensions"]
    # The store the ids belong to, so an import elsewhere maps them per source.
    assert data["extensions"] == {"org.pcp-cli": {"store_id": "st_01M8P24MS33JARJRPFRP22AN6Q"}}
    assert data["schema_version"] == "1.0" and data["kind"] == "pcp.full-archive"
    assert_valid("profile", data["profile"])
    for obj in data["keystones"]:
        assert_valid("keystone", obj)
    for obj in data["timeline_events"]:
        assert_valid("timeline-event", obj)
    ids = {k["id"]: k for k in data["keystones"]}
    assert "ks-p01" not in ids  # the proposal
    assert ids["ks-003"]["status"] == "superseded"  # history is kept in the full export
    assert ids["ks-008"]["extensions"] == {"com.example.mood": {"energy": "calm",
                                                                "tags": ["focus"]}}
    assert len(data["timeline_events"]) == 6


def test_archive_sensitive_material_only_on_request(example):
    assert cli("keystone", "add", "Secret thing QWERTY.", "--sensitivity", "high",
               "--id", "ks-secret", "--store", example).code == 0
    plain = json.loads(export(example, "archive"))
    assert "ks-secret" not in {k["id"] for k in plain["keystones"]}
    full = json.loads(export(example, "archive", "--include-sensitive"))
    secret = [k for k in full["keystones"] if k["id"] == "ks-secret"]
    assert secret and secret[0]["sensitivity"] == "high"


def test_scope_limits_what_goes_in(example):
    from pcp_cli import api

    with api.open_store(example) as store:
        api.add_keystone(store, "Tidewatch targets Raspberry Pi sensors.", page_id="ks-proj",
                         namespace="project:tidewatch")
    in_project = json.loads(export(example, "archive", "--scope", "project:tidewatch"))
    assert [k["id"] for k in in_project["keystones"]] == ["ks-proj"]
    assert in_project["profile"] == {"schema_version": "1.0"}  # the profile is in user:…
    in_user = json.loads(export(example, "archive", "--scope", "user:*"))
    assert "ks-proj" not in {k["id"] for k in in_user["keystones"]}
    assert in_user["profile"]["name"] == "Ada Lumen"
    both = json.loads(export(example, "archive", "--scope", "user:*", "--scope", "project:*"))
    assert {"ks-proj", "ks-001"} <= {k["id"] for k in both["keystones"]}
    prompt = export(example, "micro_prompt", "--scope", "project:tidewatch")
    assert "Raspberry Pi" in prompt and "Ada Lumen" not in prompt


def test_out_writes_the_file_and_nothing_on_stdout(example, tmp_path):
    target = tmp_path / "ada.json"
    result = cli("export", "--format", "archive", "--out", target, "--store", example)
    assert result.code == 0 and result.stdout == ""
    assert json.loads(target.read_text("utf-8"))["kind"] == "pcp.full-archive"


def test_unknown_format_is_a_usage_error(example):
    result = cli("export", "--format", "yaml", "--store", example)
    assert result.code == 2 and "unknown format" in result.stderr


# -- AGENTS.md --------------------------------------------------------------------------------
def test_agents_md_block_is_created_then_replaced_in_place(example, tmp_path):
    target = tmp_path / "AGENTS.md"
    target.write_text("# Project rules\n\nUse tabs.\n", encoding="utf-8")
    result = cli("export", "--format", "agents-md", "--out", target, "--store", example)
    assert result.code == 0, result.stderr
    first = target.read_text("utf-8")
    assert first.startswith("# Project rules\n\nUse tabs.\n")
    assert "<!-- pcp:profile:start -->\nAda Lumen — " in first
    assert first.rstrip("\n").endswith("(profile as of 2026-01-15)\n<!-- pcp:profile:end -->")

    edited = first.replace("Use tabs.", "Use spaces.") + "\nMore rules after.\n"
    target.write_text(edited, encoding="utf-8")
    assert cli("profile", "set", "primary_focus", "Shipping Tidewatch 1.0",
               "--store", example).code == 0
    assert cli("export", "--format", "agents-md", "--out", target, "--store", example).code == 0
    second = target.read_text("utf-8")
    assert "Use spaces." in second and second.endswith("\nMore rules after.\n")
    assert "Current focus: Shipping Tidewatch 1.0" in second
    assert second.count("<!-- pcp:profile:start -->") == 1
    before, after = edited.split("<!-- pcp:profile:start -->")[0], edited.split(
        "<!-- pcp:profile:end -->")[1]
    assert second.startswith(before) and second.endswith(after)


def test_agents_md_needs_out(example):
    assert cli("export", "--format", "agents-md", "--store", example).code == 2


def test_agents_md_creates_a_claude_md(example, tmp_path):
    target = tmp_path / "CLAUDE.md"
    assert cli("export", "--format", "agents-md", "-o", target, "--store", example).code == 0
    assert target.read_text("utf-8").startswith("## About me (from pcp)\n\n<!-- pcp:profile")


# -- the light path ---------------------------------------------------------------------------
def test_fast_path_matches_the_typer_path(example):
    fast = cli("export", "--format", "micro_prompt", "--store", example)
    full = cli("export", "--store", example, "--format", "micro_prompt", "--out", "-")
    assert fast.code == full.code == 0
    assert fast.stdout == full.stdout
    scoped = cli("export", "--format=micro_prompt", "--scope", "project", "--store", example)
    assert scoped.code == 0 and scoped.stdout == EMPTY + "\n"


def test_fast_path_builds_no_typer_app_and_reports_errors(tmp_path):
    code = (
        "import io, sys\n"
        "from pcp_cli.cli.main import run\n"
        f"status = run(['export', '--format', 'micro_prompt', '--store', {str(tmp_path)!r}])\n"
        "print(status, sorted({m.split('.')[0] for m in sys.modules} & "
        "{'typer', 'click', 'pydantic', 'ulid', 'filelock'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "3 []"  # not a store: NotFound's exit status
    assert out.stderr.startswith("Error: ") and "Hint: " in out.stderr


def test_finding_hand_edits_uses_the_partial_index(example):
    from pcp_cli import api
    from pcp_cli.store.catalog import PENDING

    with api.open_store(example) as store:
        plan = store.catalog._db.execute(
            f"EXPLAIN QUERY PLAN SELECT * FROM pages WHERE {PENDING} ORDER BY path").fetchall()
    assert "pages_pending" in str([tuple(row) for row in plan])


def test_a_hand_edit_is_recorded_and_used(example):
    head = example / "pages" / "user" / "ada-lumen" / "ks-004.md"
    head.write_text(head.read_text("utf-8").replace(
        "state its assumptions about the data before analyzing it", "list its assumptions first"),
        encoding="utf-8")
    prompt = export(example, "micro_prompt")
    assert "Ada wants the AI to list its assumptions first." in prompt
    history = cli("history", "ks-004", "--json", "--store", example).json["revisions"]
    assert history[-1]["note"].startswith("hand edit recorded")
