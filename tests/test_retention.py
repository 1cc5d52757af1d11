"""Retention before irreversible delete (issue #34; the Paged Context Protocol's 不可恢复删除必须
受用户权限和保留策略控制): the policy in pcp.yaml, leases, `pcp retention plan` with a reason for
everything it keeps, `pcp retention collect` of exactly that plan, `pcp delete` naming the
rules it would override, and a collection killed part way finished by `pcp doctor --fix`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.test_crash import HELPERS, helper_env

OLD = "2020-01-01T10:00:00.000Z"  # PCP_NOW for what was written long ago


def ok(*args: object) -> dict:
    result = cli(*(str(a) for a in args), "--json")
    assert result.code == 0, result.stderr
    return result.json


def files(root: Path) -> set[str]:
    """Every committed file of the store (what git would carry)."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and p.relative_to(root).parts[0] not in (".pcp", ".git")}


@pytest.fixture
def aged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A store written in 2020: a page tombstoned then, a page revised twice then (three
    revisions), a tombstoned page a live page's relation names, and a fresh tombstoned page."""
    root = tmp_path / "store"
    monkeypatch.setenv("PCP_NOW", OLD)
    assert cli("init", str(root), "--owner", "tester").code == 0
    ids = {name: ok("add", text, "--store", root)["page_id"] for name, text in (
        ("gone", "Old notes nobody needs"), ("drafts", "Draft v1"), ("source", "Source notes"),
        ("summary", "A summary page"))}
    for n in (2, 3):
        ok("revise", ids["drafts"], f"Draft v{n}", "--store", root)
    ok("tombstone", ids["gone"], "--store", root)
    ok("tombstone", ids["source"], "--store", root)
    ok("link", ids["summary"], "derived_from", ids["source"], "--store", root)
    monkeypatch.delenv("PCP_NOW")
    ids["recent"] = ok("add", "Tombstoned yesterday", "--store", root)["page_id"]
    ok("tombstone", ids["recent"], "--store", root)
    return root, ids


def test_without_a_policy_nothing_is_ever_due(aged: tuple[Path, dict[str, str]]) -> None:
    root, _ids = aged
    plan = ok("retention", "plan", "--store", root)
    assert plan["policy"]["configured"] is False
    assert plan["collect"]["page_count"] == plan["collect"]["revision_count"] == 0
    assert ok("retention", "collect", "--plan", plan["plan_id"], "--store", root)[
        "pages_removed"] == 0


def test_the_plan_says_what_goes_and_why_everything_else_stays(
        aged: tuple[Path, dict[str, str]]) -> None:
    root, ids = aged
    ok("retention", "set", "--tombstoned-pages", "90d", "--superseded-revisions", "1y",
       "--store", root)
    assert "retention:\n" in (root / "pcp.yaml").read_text()
    lease = ok("retention", "lease", "add", ids["drafts"], "--reason", "keep every draft",
               "--store", root)
    plan = ok("retention", "plan", "--store", root)
    assert [p["page_id"] for p in plan["collect"]["pages"]] == [ids["gone"]]
    assert "tombstoned_pages: 90d" in plan["collect"]["pages"][0]["why"]
    assert plan["collect"]["revisions"] == []  # the drafts are leased
    kept = {k["page_id"]: k["why"] for k in plan["kept"]}
    assert kept[ids["drafts"]].startswith(f"lease {lease['lease_id']} (keep every draft)")
    assert kept[ids["source"]].startswith("relation ")  # the summary names it
    assert plan["kept_by_policy"]["tombstoned_pages"] == 1  # tombstoned yesterday
    assert plan["next_due"] is not None
    # releasing the lease puts the drafts' two older revisions in the plan
    ok("retention", "lease", "release", lease["lease_id"], "--store", root)
    plan = ok("retention", "plan", "--store", root)
    [group] = plan["collect"]["revisions"]
    assert group["page_id"] == ids["drafts"] and len(group["revision_ids"]) == 2
    human = cli("retention", "plan", "--store", str(root))
    assert f"page {ids['source']}: relation" in human.stdout
    assert f"pcp retention collect --plan {plan['plan_id']}" in human.stderr


def planned(root: Path, ids: dict[str, str]) -> tuple[dict, set[str]]:
    """The policy of these tests set on the aged store; its plan, and the revision files the
    plan lists (the gone page's and the drafts' two oldest)."""
    ok("retention", "set", "--tombstoned-pages", "90d", "--superseded-revisions", "1y",
       "--store", root)
    plan = ok("retention", "plan", "--store", root)
    listed = {f"revisions/{ids['gone']}/{r}.json" for r in plan["collect"]["pages"][0][
        "revision_ids"]} | {f"revisions/{ids['drafts']}/{r}.json"
                            for r in plan["collect"]["revisions"][0]["revision_ids"]}
    return plan, listed


def test_collect_removes_exactly_the_plan_and_records_it(
        aged: tuple[Path, dict[str, str]]) -> None:
    root, ids = aged
    plan, listed = planned(root, ids)
    before = files(root)
    # no plan named and no terminal: nothing happens
    refused = cli("retention", "collect", "--store", str(root))
    assert refused.code == 2 and "--plan" in refused.stderr
    # a plan that is not the store's now: nothing happens (exit 4)
    stale = cli("retention", "collect", "--plan", "plan_0000000000000000", "--store", str(root))
    assert stale.code == 4 and "nothing was removed" in stale.stderr
    assert files(root) == before
    done = ok("retention", "collect", "--plan", plan["plan_id"], "--store", root)
    assert (done["pages_removed"], done["revisions_removed"]) == (1, 4)
    after = files(root)
    removed = before - after
    head = next(p for p in removed if p.startswith("pages/"))
    assert removed - {head} == listed  # the revisions listed, and the gone page's head file
    added = after - before
    assert len(added) == 1 and added.pop().startswith("events/")  # the record of it
    assert cli("validate", str(root)).code == 0  # the drafts' head lost its parent on purpose
    assert cli("doctor", "--store", str(root)).code == 0
    assert cli("show", ids["gone"], "--store", str(root)).code == 3
    assert [r["revision_id"] for r in ok("history", ids["drafts"], "--store", root)[
        "revisions"]] == [ok("show", ids["drafts"], "--store", root)["revision_id"]]
    assert cli("show", ids["source"], "--store", str(root)).code == 0  # kept: related
    audit = cli("audit", "--json", "--store", str(root)).json
    records = audit if isinstance(audit, list) else audit["records"]
    [record] = [r for r in records if r["tool"] == "retention collect" and
                r["outcome"] == "allowed"]
    assert record["actor"] == "user" and record["result_count"] == 5
    assert record["params"] == {"plan": plan["plan_id"]}
    # the same plan again is not the plan now (nothing left of it)
    assert cli("retention", "collect", "--plan", plan["plan_id"], "--store", str(root)).code == 4


@pytest.mark.parametrize("value", ["90", "three months", "0d", "1m", ""])
def test_a_bad_duration_is_refused_and_pcp_yaml_unchanged(tmp_path: Path, value: str) -> None:
    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "tester").code == 0
    before = (root / "pcp.yaml").read_bytes()
    result = cli("retention", "set", "--tombstoned-pages", value, "--store", str(root))
    assert result.code == 2 and "is not a duration" in result.stderr
    assert "Traceback" not in result.stderr
    assert (root / "pcp.yaml").read_bytes() == before


def test_a_misspelt_policy_in_pcp_yaml_names_the_file(tmp_path: Path) -> None:
    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "tester").code == 0
    manifest = root / "pcp.yaml"
    manifest.write_text(manifest.read_text() + "retention:\n  tombstoned: 30d\n")
    result = cli("retention", "plan", "--store", str(root))
    assert result.code == 5 and "pcp.yaml" in result.stderr and "tombstoned" in result.stderr


def test_delete_names_the_rules_it_would_override(aged: tuple[Path, dict[str, str]]) -> None:
    root, ids = aged
    # no policy: delete as before (a lease is always honoured)
    lease = ok("retention", "lease", "add", ids["recent"], "--store", root)["lease_id"]
    refused = cli("delete", ids["recent"], "--yes", "--store", str(root))
    assert refused.code == 2 and f"lease {lease}" in refused.stderr
    assert "--override-retention" in refused.stderr
    ok("retention", "set", "--tombstoned-pages", "90d", "--store", root)
    refused = cli("delete", ids["summary"], "--yes", "--store", str(root))
    assert refused.code == 2 and "only tombstoned pages" in refused.stderr
    assert "relation" in refused.stderr
    assert cli("show", ids["summary"], "--store", str(root)).code == 0
    # a page the policy no longer keeps goes with --yes alone
    assert ok("delete", ids["gone"], "--yes", "--store", root)["overridden"] == []
    forced = ok("delete", ids["summary"], "--yes", "--override-retention", "--store", root)
    assert any("only tombstoned pages" in rule for rule in forced["overridden"])


def test_leases_need_real_targets(tmp_path: Path) -> None:
    root = tmp_path / "store"
    assert cli("init", str(root), "--owner", "tester").code == 0
    page = ok("add", "A page", "--store", root)
    for bad in (["pg_nope"], ["rev_01NOPE0000000000000000000"]):
        result = cli("retention", "lease", "add", *bad, "--store", str(root))
        assert result.code == 3, result.stderr
    result = cli("retention", "lease", "add", page["page_id"], "--until", "soon",
                 "--store", str(root))
    assert result.code == 2
    assert not (root / "leases").exists() or not list((root / "leases").glob("*.json"))
    made = ok("retention", "lease", "add", page["revision_id"], "--until", "2001-01-01",
              "--store", root)
    [listed] = ok("retention", "lease", "list", "--store", root)
    assert listed["lease_id"] == made["lease_id"] and listed["active"] is False  # expired
    assert cli("validate", str(root)).code == 0
    assert cli("retention", "lease", "release", "ls_nope", "--store", str(root)).code == 3


def die_at(function: str, n: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(HELPERS / "die_at.py"), function, str(n), *args],
                          capture_output=True, text=True, env=helper_env())


# the plan below removes 3 files of the gone page (2 revisions, its head file) and 2 revisions
# of the drafts: a kill before each removal, and before the event itself
@pytest.mark.slow
@pytest.mark.parametrize(("function", "n"), [("write_new", 1), ("remove_file", 1),
                                             ("remove_file", 2), ("remove_file", 3),
                                             ("remove_file", 4), ("remove_file", 5)])
def test_a_collection_killed_midway_loses_nothing_it_did_not_list(
        aged: tuple[Path, dict[str, str]], function: str, n: int) -> None:
    root, ids = aged
    ok("retention", "set", "--tombstoned-pages", "90d", "--superseded-revisions", "1y",
       "--store", root)
    plan = ok("retention", "plan", "--store", root)
    before = files(root)
    proc = die_at(function, n, "retention", "collect", "--plan", plan["plan_id"],
                  "--store", str(root))
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    unlisted = {p for p in before if not (
        p.startswith(f"revisions/{ids['gone']}/") or p.startswith("pages/")
        and p.endswith(f"/{ids['gone']}.md") or any(
            p == f"revisions/{ids['drafts']}/{r}.json"
            for r in plan["collect"]["revisions"][0]["revision_ids"]))}
    assert unlisted <= files(root)  # nothing it did not list is touched
    fixed = cli("doctor", "--fix", "--store", str(root), "--json")
    assert fixed.code == 0, fixed.stdout + fixed.stderr
    after = files(root)
    if function == "write_new":  # killed before the event: nothing was started
        assert after == before
        assert ok("retention", "plan", "--store", root)["plan_id"] == plan["plan_id"]
    else:  # finished: exactly what it listed is gone, and its record is there
        assert before - after == before - unlisted
        [event] = after - before
        assert json.loads((root / event).read_text())["kind"] == "retention_collected"
    assert cli("validate", str(root)).code == 0
    assert cli("doctor", "--store", str(root)).code == 0


@pytest.mark.slow
def test_a_collection_under_every_fault_removes_all_it_listed_or_nothing(
        aged: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """The fault battery of tests/test_faults.py for `pcp retention collect`: each of its file
    operations failed (EIO, ENOSPC) or killed in turn. A refused fault exits 11 and either
    changed nothing (before its event) or says `pcp doctor --fix` finishes it; after doctor
    --fix what it listed is wholly gone or wholly there, and nothing else changed."""
    import shutil

    from tests.test_faults import OPS, faulty, trace_of

    root, ids = aged
    plan, listed = planned(root, ids)
    args = ("retention", "collect", "--plan", plan["plan_id"])
    steps = trace_of(root, tmp_path, *args)
    faults = ("EIO", "ENOSPC", "kill")
    turn = 0
    for op in OPS:
        for n in range(1, sum(1 for s, _ in steps if s == op) + 1):
            fault = faults[turn % len(faults)]
            turn += 1
            copy = tmp_path / f"c-{op}-{n}"
            shutil.copytree(root, copy)
            before = files(copy)
            done = faulty(copy, op, n, fault, *args)
            if fault == "kill":
                assert done.returncode == -signal.SIGKILL, (op, n, done.stderr)
            else:
                assert done.returncode == 11, (op, n, done.stderr)
                assert "Traceback" not in done.stderr
                if "is recorded" in done.stderr:
                    assert "`pcp doctor --fix` finishes the collection" in done.stderr
                else:
                    assert files(copy) == before, (op, n, done.stderr)
            assert cli("doctor", "--fix", "--store", str(copy)).code in (0, 8)
            assert cli("doctor", "--store", str(copy)).code == 0, (op, n)
            assert cli("validate", str(copy)).code == 0, (op, n)
            gone = before - files(copy)
            head = {p for p in gone if p.startswith("pages/")}
            assert gone - head in (set(), listed), (op, n, sorted(gone))
            assert len(head) == (1 if gone else 0), (op, n, sorted(gone))
            shutil.rmtree(copy)
    assert turn >= 8, f"only {turn} file operations were traced"


def test_a_page_kept_keeps_the_due_page_that_relates_to_it(
        aged: tuple[Path, dict[str, str]]) -> None:
    """Two tombstoned pages due, related to each other: a lease on one keeps it, and so the
    relation keeps the other (removing it would leave the kept page a dangling relation)."""
    root, ids = aged
    # "gone" relates to "source" (due too, but the summary's relation keeps it)
    ok("link", ids["gone"], "related_to", ids["source"], "--store", root)
    ok("retention", "set", "--tombstoned-pages", "90d", "--store", root)
    plan = ok("retention", "plan", "--store", root)
    assert plan["collect"]["pages"] == []
    kept = {k["page_id"]: k["why"] for k in plan["kept"]}
    assert kept[ids["source"]].startswith("relation ")
    assert kept[ids["gone"]].startswith("relation ") and ids["source"] in kept[ids["gone"]]


def test_a_lease_that_cannot_be_read_blocks_every_collection(
        aged: tuple[Path, dict[str, str]]) -> None:
    root, _ids = aged
    ok("retention", "set", "--tombstoned-pages", "90d", "--store", root)
    (root / "leases").mkdir(exist_ok=True)
    (root / "leases" / "ls_broken.json").write_text("{not json")
    plan = ok("retention", "plan", "--store", root)
    assert plan["collect"]["pages"] == [] and "ls_broken.json" in plan["blocked"]
    human = cli("retention", "plan", "--store", str(root))
    assert "nothing can be collected" in human.stdout
