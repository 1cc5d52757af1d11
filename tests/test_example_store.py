"""The bundled example store is valid, and what it renders conforms to the published v1.2 schemas
(and, as a v1.1 reader gets it, to the v1.1 ones)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from pcp_cli.render.portable import portable_object
from pcp_cli.render.versions import as_version
from pcp_cli.store.store import Store
from tests.conftest import (
    EXAMPLE,
    ROOT,
    SHARED_V1,
    SHARED_V12,
    V1_EXAMPLES,
    V1_SCHEMAS,
    V12_EXAMPLES,
    V12_SCHEMAS,
    cli,
)


def v1(name: str, folder: Path = V1_SCHEMAS) -> Draft202012Validator:
    schema = json.loads((folder / f"{name}.schema.json").read_text())
    return Draft202012Validator(schema, format_checker=FormatChecker())


def test_the_example_store_validates(example: Path) -> None:
    result = cli("validate", str(example))
    assert result.code == 0, result.stderr
    assert "valid" in result.stdout


def test_every_portable_object_of_the_example_validates_against_v1(example: Path) -> None:
    store = Store.open(example)
    checked = {"keystone": 0, "timeline_event": 0, "profile": 0}
    for page_dir in sorted((example / "revisions").iterdir()):
        if not page_dir.is_dir():
            continue
        for revision in store.revisions(page_dir.name):
            portable = portable_object(revision)
            if portable is None:
                continue
            obj, schema = portable
            errors = [e.message for e in v1(schema, V12_SCHEMAS).iter_errors(obj)]
            assert not errors, (page_dir.name, revision.revision_id, errors)
            older = as_version(obj, schema, "1.1")  # what a reader asking for v1.1 gets
            errors = [e.message for e in v1(schema).iter_errors(older)]
            assert not errors, (page_dir.name, revision.revision_id, errors)
            checked[revision.state.type] += 1
    assert checked["keystone"] >= 9 and checked["timeline_event"] == 6
    assert checked["profile"] >= 1


def test_the_example_has_what_the_format_promises(example: Path) -> None:
    store = Store.open(example)
    store.refresh()
    entries = store.entries(review=None, statuses=None)
    types = {e.type for e in entries}
    assert {"profile", "keystone", "timeline_event", "note", "conversation"} <= types
    assert len({e.namespace for e in entries}) >= 2
    superseded = store.current("ks-003")
    assert superseded.state.lifecycle_status == "superseded"
    assert store.current("ks-008").state.record["supersedes"] == "ks-003"
    assert any(r.relation_type == "supersedes" for r in store.relations("ks-003"))
    assert store.current("ks-008").state.extensions["com.example.mood"]["energy"] == "calm"


@pytest.mark.parametrize("ours, published", [
    (V1_SCHEMAS, SHARED_V1 / "schemas"), (V1_EXAMPLES, SHARED_V1 / "examples"),
    (V12_SCHEMAS, SHARED_V12 / "schemas"), (V12_EXAMPLES, SHARED_V12 / "examples")])
def test_our_v1_copies_are_the_published_ones_unchanged(ours: Path, published: Path) -> None:
    if not published.is_dir():
        pytest.skip(f"no published originals beside the project ({published} is absent)")
    copies = sorted(ours.glob("*.*"))
    assert copies, ours
    for path in copies:
        assert path.read_bytes() == (published / path.name).read_bytes(), path.name


def test_store_schemas_are_generated_from_the_vocabularies(tmp_path: Path) -> None:
    # Generated into a temporary folder: regenerating the committed files in place would let
    # the test pass on its second run whatever the first found.
    committed = {p.name: p.read_bytes() for p in (ROOT / "pcp_cli/model/schemas").glob("*.json")}
    subprocess.run([sys.executable, str(ROOT / "tools" / "build_schemas.py"), str(tmp_path)],
                   check=True)
    regenerated = {p.name: p.read_bytes() for p in tmp_path.glob("*.json")}
    assert regenerated == committed, "run tools/build_schemas.py and commit the result"
    # and it wrote nothing into the package
    assert committed == {p.name: p.read_bytes()
                         for p in (ROOT / "pcp_cli/model/schemas").glob("*.json")}


@pytest.mark.parametrize("name", ["revision", "frontmatter", "relation", "event", "manifest"])
def test_store_schemas_are_valid_json_schema(name: str) -> None:
    from pcp_cli.model.validate import schema

    Draft202012Validator.check_schema(schema(name))


def test_example_is_not_polluted_by_local_state() -> None:
    tracked = subprocess.run(["git", "ls-files", "store_layout/example"], cwd=ROOT,
                             capture_output=True, text=True).stdout.split()
    assert tracked, "the example store must be committed"
    assert not any("/.pcp/" in path for path in tracked)
    assert EXAMPLE.joinpath("pcp.yaml").is_file()


def test_the_example_head_files_are_what_pcp_writes_today(example: Path) -> None:
    """Serialization is deterministic and the committed example is in step with the format."""
    from pcp_cli.store.headfile import render_head

    store = Store.open(example)
    store.refresh()
    for entry in store.entries(review=None, statuses=None):
        assert entry.page_id
        expected = render_head(store.current(entry.page_id))
        assert (example / entry.path).read_text(encoding="utf-8") == expected, entry.path
