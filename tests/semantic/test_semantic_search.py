"""Search by meaning through the CLI, on real store folders: modes, scores, channels, passages,
the vector index kept current by every kind of change, and the safeguards on the vector path."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, cli, run_pcp, snapshot

pytest.importorskip("wordllama", reason="the semantic extra is not installed")

EXT = "org.pcp-cli"
PORTO = "Moved to Porto in the spring of 2024, into a flat near the river."
QUESTION = "which city did she move to"


def search(store: Path, query: str, *args: str) -> dict:
    result = cli("search", query, "--store", store, "--json", *args)
    assert result.code == 0, result.stderr
    return result.json


def ids(data: dict) -> list[str]:
    return [r["id"] for r in data["results"]]


def add(store: Path, text: str, *args: str) -> str:
    result = cli("add", text, "--store", store, "--json", *args)
    assert result.code == 0, result.stderr
    return result.json["page_id"]


def index(store: Path, *args: str) -> dict:
    result = cli("index", "--store", store, "--json", *args)
    assert result.code == 0, result.stderr
    return result.json


# -- modes ------------------------------------------------------------------------------------
FACTS = (
    "Allergic to peanuts and tree nuts; carries an epinephrine pen.",
    "Builds interfaces with Svelte and Tailwind; finds React verbose.",
    "Took up the piano again last winter and practises Chopin nocturnes.",
    "Works on a 14-inch ThinkPad running Fedora with the GNOME desktop.",
)


def test_semantic_finds_a_paraphrase_that_text_cannot(store):
    for fact in FACTS:
        add(store, fact)
    porto = add(store, PORTO)
    assert ids(search(store, "relocated city", "--mode", "text")) == []
    data = search(store, "which city did she relocate to", "--mode", "semantic")
    assert ids(data)[0] == porto
    top = data["results"][0]
    assert top["extensions"][EXT]["match_channel"] == "semantic"
    assert 0 <= top["score"] <= 1
    filters = data["filters_applied"]
    assert filters["mode"] == "semantic"
    assert filters["semantic_model"] == "wordllama-l2_supercat-256"
    assert filters["mode_requested"] == "semantic"


def test_hybrid_fuses_both_channels_with_scores_in_0_1(example):
    data = search(example, "Svelte framework she prefers", "--mode", "hybrid")
    assert data["filters_applied"]["mode"] == "hybrid"
    assert "reciprocal rank fusion" in data["filters_applied"]["fusion"]
    assert ids(data)[0] == "ks-008"  # first in both channels
    assert data["results"][0]["score"] == 1.0
    assert data["results"][0]["extensions"][EXT]["match_channel"] == "both"
    channels = {r["extensions"][EXT]["match_channel"] for r in data["results"]}
    assert channels <= {"text", "semantic", "both"}
    assert "semantic" in channels  # pages no word of the query matched are there too
    assert all(0 <= r["score"] <= 1 for r in data["results"])
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)


def test_auto_fuses_meaning_in_only_when_a_questions_words_match_weakly(example):
    # no page says "frontend" or "framework": the best text match holds a third of the words
    asked = search(example, "which frontend framework does she like", "--mode", "auto")
    assert asked["filters_applied"]["mode"] == "hybrid"
    assert asked["filters_applied"]["mode_requested"] == "auto"
    assert asked["filters_applied"]["mode_reason"] == (
        "a question, the best match holds 33% of its words: words and meaning fused")
    assert "ks-008" in ids(asked)[:3]
    # a question whose words the pages hold is ranked by them, as text mode ranks it
    worded = search(example, "where does she live now", "--mode", "auto")
    assert worded["filters_applied"]["mode"] == "text"
    assert ids(worded) == ids(search(example, "where does she live now", "--mode", "text"))
    keywords = search(example, "tidewatch dashboards", "--mode", "auto")
    assert keywords["filters_applied"]["mode"] == "text"
    assert search(example, "type:keystone svelte", "--mode", "auto")[
        "filters_applied"]["mode"] == "text"
    # the CLI's default stays text; a question is hybrid only when asked for or under auto
    assert search(example, "which frontend framework does she like")[
        "filters_applied"]["mode"] == "text"


def test_text_mode_is_todays_search(example):
    plain = search(example, "svelte", "--mode", "text")
    assert plain["filters_applied"]["mode"] == "text"
    assert {r["extensions"][EXT]["match_channel"] for r in plain["results"]} == {"text"}
    assert ids(plain) == ids(search(example, "svelte"))


def test_unknown_mode_is_a_usage_error(example):
    before = snapshot(example)
    result = cli("search", "tide", "--mode", "vibes", "--store", example)
    assert result.code == 2
    assert "unknown mode 'vibes'" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(example) == before


def test_min_score_and_limit_hold_for_semantic(example):
    data = search(example, QUESTION, "--mode", "semantic", "--limit", "3")
    assert data["count"] == 3
    floor = search(example, QUESTION, "--mode", "semantic", "--min-score", "0.2")
    assert all(r["score"] >= 0.2 for r in floor["results"])


# -- passages ---------------------------------------------------------------------------------
def test_a_long_page_hit_points_at_its_passage(store):
    filler = "\n\n".join(
        f"Paragraph {i} is about the quarterly accounting of the shipping office, invoices, "
        f"ledgers and receipts for warehouse number {i}." * 3 for i in range(40))
    target = ("Her grandmother taught her to bake sourdough bread with rye flour and a "
              "starter kept in the fridge.")
    body = filler + "\n\n" + target + "\n\n" + filler
    page = add(store, body, "--type", "document", "--title", "Office archive")
    add(store, "Bought a new bicycle helmet and lights for the winter commute.")
    data = search(store, "who showed her how to make loaves", "--mode", "semantic")
    top = data["results"][0]
    assert top["id"] == page
    span = top["extensions"][EXT]["source_spans"][0]
    text = (store / top["extensions"][EXT]["path"]).read_text("utf-8")
    head_body = text[text.find("\n---\n", 3) + 5:]
    passage = head_body[span["start"]:span["end"]]
    assert target in passage
    assert len(passage) < 2000  # a passage, not the page
    # the snippet is cut from that passage (whitespace collapsed, "…" marking cuts)
    assert top["snippet"].strip("…") in " ".join(passage.split())
    assert "grandmother" in top["snippet"]


# -- kept current ------------------------------------------------------------------------------
def test_index_reports_and_rebuilds_text_and_vectors(example):
    first = index(example)
    assert first["rebuilt"] and first["vectors"]["rebuilt"]
    assert first["vectors"]["documents"] == first["documents"]
    assert first["vectors"]["model"] == "wordllama-l2_supercat-256"
    again = index(example)
    assert not again["rebuilt"] and not again["vectors"]["rebuilt"]
    assert again["vectors"]["embedded"] == 0
    rebuilt = index(example, "--rebuild")
    assert rebuilt["rebuilt"] and rebuilt["vectors"]["rebuilt"]
    assert rebuilt["vectors"]["reason"] == "asked for"
    human = cli("index", "--store", example)
    assert "semantic vectors are up to date" in human.stdout
    assert (example / ".pcp" / "vectors" / "current.json").exists()


def test_every_kind_of_change_re_embeds_only_what_changed(example):
    index(example)
    # a pcp write
    porto = add(example, PORTO, "--namespace", "user:ada-lumen")
    step = index(example)["vectors"]
    assert (step["embedded"], step["fields_only"], step["removed"]) == (1, 0, 0)
    assert ids(search(example, QUESTION, "--mode", "semantic"))[0] == porto
    # a hand edit of the head file: the text changed, only it is embedded again
    head = next(example.glob(f"pages/**/{porto}.md"))
    head.write_text(head.read_text("utf-8").replace(
        PORTO, "Keeps three beehives on the roof and sells the honey."), encoding="utf-8")
    step = index(example)["vectors"]
    assert (step["embedded"], step["removed"]) == (1, 0)
    assert ids(search(example, "beehives and honey", "--mode", "semantic"))[0] == porto
    # a lifecycle change alone: fields rewritten, nothing embedded
    assert cli("archive", porto, "--store", example).code == 0
    step = index(example)["vectors"]
    assert (step["embedded"], step["fields_only"]) == (0, 1)
    assert porto not in ids(search(example, "beehives and honey", "--mode", "semantic",
                                   "--limit", "25"))
    assert porto in ids(search(example, "beehives and honey", "--mode", "semantic",
                               "--include-superseded"))
    # a deleted file (as after a git pull that removed it)
    head = next(example.glob(f"pages/**/{porto}.md"))
    head.unlink()
    step = index(example)["vectors"]
    assert step["removed"] == 1 and step["embedded"] == 0
    assert porto not in ids(search(example, "beehives and honey", "--mode", "semantic",
                                   "--include-superseded", "--limit", "25"))


def test_a_search_catches_up_without_pcp_index(example):
    search(example, QUESTION, "--mode", "semantic")  # builds the vectors
    porto = add(example, PORTO, "--namespace", "user:ada-lumen")
    assert ids(search(example, QUESTION, "--mode", "hybrid"))[0] == porto


def test_vectors_are_rebuilt_when_deleted_or_made_by_another_model(example):
    index(example)
    vectors = example / ".pcp" / "vectors"
    gen = json.loads((vectors / "current.json").read_text())["gen"]
    db = sqlite3.connect(vectors / f"rows-{gen}.sqlite")
    db.execute("UPDATE meta SET value=? WHERE key='model'", (json.dumps("another-model"),))
    db.commit()
    db.close()
    step = index(example)["vectors"]
    assert step["rebuilt"] and "another model" in step["reason"]
    for path in vectors.iterdir():
        path.unlink()
    assert ids(search(example, "svelte", "--mode", "semantic"))
    assert index(example)["vectors"]["embedded"] == 0


def test_vectors_stay_out_of_the_committed_files(store):
    add(store, PORTO)
    before = snapshot(store)
    index(store)
    search(store, QUESTION, "--mode", "hybrid")
    assert snapshot(store) == before  # only .pcp/ changed
    assert (store / ".pcp" / "vectors" / "current.json").exists()
    assert ".pcp/" in (store / ".gitignore").read_text().split()


# -- safeguards on the vector path --------------------------------------------------------------
@pytest.fixture
def canaries(example: Path) -> dict[str, str]:
    """Pages that say exactly what the question asks, each of which must never be returned."""
    made = {
        "allowed": add(example, PORTO, "--namespace", "user:ada-lumen"),
        "high": add(example, PORTO + " (private)", "--namespace", "user:ada-lumen",
                    "--sensitivity", "high"),
        "other_scope": add(example, PORTO + " (vault)", "--namespace", "vault:secrets"),
        "archived": add(example, PORTO + " (old)", "--namespace", "user:ada-lumen"),
        "tombstoned": add(example, PORTO + " (withdrawn)", "--namespace", "user:ada-lumen"),
    }
    proposed = cli("keystone", "propose", "Lives in Porto near the river.", "--store", example,
                   "--json")
    assert proposed.code == 0, proposed.stderr
    made["proposal"] = proposed.json["page_id"]
    assert cli("archive", made["archived"], "--store", example).code == 0
    assert cli("tombstone", made["tombstoned"], "--store", example).code == 0
    return made


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_canaries_never_surface_through_the_vector_path(example, canaries, mode):
    # limit 25 is more than every page the scope admits: the semantic channel returns all of
    # them, so anything the filter let through would show here
    data = search(example, QUESTION, "--mode", mode, "--scope", "user:ada-lumen",
                  "--limit", "25")
    found = ids(data)
    assert found[0] == canaries["allowed"]
    forbidden = {canaries[k] for k in ("high", "other_scope", "archived", "tombstoned",
                                       "proposal")}
    assert not forbidden & set(found)
    assert all(r["extensions"][EXT]["scope"]["namespace"] == "user:ada-lumen"
               for r in data["results"])
    # each safeguard lifted on its own admits exactly its canary
    sensitive = ids(search(example, QUESTION, "--mode", mode, "--scope", "user:ada-lumen",
                           "--include-sensitive", "--limit", "25"))
    assert canaries["high"] in sensitive and canaries["other_scope"] not in sensitive
    old = ids(search(example, QUESTION, "--mode", mode, "--include-superseded", "--limit", "25"))
    assert canaries["archived"] in old
    assert canaries["tombstoned"] not in old and canaries["proposal"] not in old
    assert canaries["high"] not in old
    everywhere = ids(search(example, QUESTION, "--mode", mode, "--limit", "25"))
    assert canaries["other_scope"] in everywhere


def test_types_filter_applies_before_ranking(example, canaries):
    data = search(example, QUESTION, "--mode", "semantic", "--type", "timeline_event",
                  "--limit", "25")
    assert data["results"] and {r["type"] for r in data["results"]} == {"timeline_event"}


# -- without the extra ---------------------------------------------------------------------------
WITHOUT_EXTRA = """
import sys
sys.modules["wordllama"] = None  # as if the semantic extra were not installed
from pcp_cli.cli.main import run
raise SystemExit(run(sys.argv[1:]))
"""


def run_without_extra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_without_the_extra_semantic_modes_say_how_to_install_it(example, mode):
    before = snapshot(example)
    proc = run_without_extra("search", QUESTION, "--mode", mode, "--store", example)
    assert proc.returncode == 2
    assert "pip install 'pcp-cli[semantic]'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""  # no quiet keyword answer
    as_json = run_without_extra("search", QUESTION, "--mode", mode, "--store", example, "--json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stderr)["error"]["code"] == "semantic_unavailable"
    assert snapshot(example) == before


def test_without_the_extra_everything_else_works_as_today(example):
    proc = run_without_extra("search", QUESTION, "--mode", "auto", "--store", example, "--json")
    assert proc.returncode == 0, proc.stderr
    filters = json.loads(proc.stdout)["filters_applied"]
    assert filters["mode"] == "text"
    weak = run_without_extra("search", "which frontend framework does she like", "--mode",
                             "auto", "--store", example, "--json")
    assert json.loads(weak.stdout)["filters_applied"]["mode_reason"] == (
        "a question, the best match holds 33% of its words; the semantic extra is not "
        "installed")
    indexed = run_without_extra("index", "--store", example, "--json")
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["vectors"]["installed"] is False
    assert not (example / ".pcp" / "vectors").exists()


def test_keyword_search_loads_no_model(example):
    code = ("import io, sys, contextlib\nfrom pcp_cli.cli.main import run\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    status = run(['search', 'tidewatch', '--store', {str(example)!r}])\n"
            "print(status, sorted({m.split('.')[0] for m in sys.modules} & "
            "{'numpy', 'wordllama'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == "0 []"


# -- no network, ever ----------------------------------------------------------------------------
NO_NETWORK = """
import socket, sys, json
def refuse(*args, **kwargs):
    raise OSError("network access attempted")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.socket.sendto = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from pcp_cli.semantic.embedder import load_embedder
model = load_embedder()
vectors = model.embed(["Moved to Porto in 2024", "where does she live now", ""])
import numpy as np
norms = np.linalg.norm(vectors, axis=1).round(4).tolist()
from pcp_cli.cli.main import run
status = run(["search", "where does she live now", "--mode", "semantic", "--store", sys.argv[1],
              "--json"])
print(json.dumps({"shape": list(vectors.shape), "norms": norms, "status": int(status)}))
"""


def test_the_model_loads_and_embeds_with_the_network_unreachable(example):
    proc = subprocess.run([sys.executable, "-c", NO_NETWORK, str(example)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["shape"] == [3, 256]
    assert report["norms"][:2] == [1.0, 1.0]
    assert report["status"] == 0


def test_whole_process_hybrid_search(example):
    result = run_pcp("search", QUESTION, "--mode", "hybrid", "--store", example, "--json")
    assert result.code == 0, result.stderr
    assert result.json["filters_applied"]["mode"] == "hybrid"


def test_replaced_passages_are_compacted_without_changing_answers(store, monkeypatch):
    from pcp_cli.query import vector_sync

    monkeypatch.setattr(vector_sync, "COMPACT_MIN_ROWS", 1)
    keep = add(store, "Builds interfaces with Svelte and Tailwind; finds React verbose.")
    page = add(store, PORTO)
    index(store)
    vectors = store / ".pcp" / "vectors"
    gen = json.loads((vectors / "current.json").read_text())["gen"]
    for i in range(3):
        revised = cli("revise", page, f"Moved to Porto, flat number {i}, near the river.",
                      "--store", store)
        assert revised.code == 0, revised.stderr
        index(store)
    assert json.loads((vectors / "current.json").read_text())["gen"] > gen
    assert sorted(p.name for p in vectors.glob("matrix-*")) == [
        f"matrix-{json.loads((vectors / 'current.json').read_text())['gen']}.f32"]
    assert index(store)["vectors"]["chunks"] == 2
    assert ids(search(store, QUESTION, "--mode", "semantic")) == [page, keep]
    assert (vectors / "matrix-{}.f32".format(
        json.loads((vectors / "current.json").read_text())["gen"])).stat().st_size == 2 * 256 * 4


# -- every filter before vector scoring -------------------------------------------------------
def crowd(store: Path, n: int = 150) -> tuple[set[str], set[str], set[str]]:
    """`n` near-identical pages, then three that are a little less like the question, kept
    apart by a tag, an origin and a relation: (tagged, imported, linked) page ids."""
    from pcp_cli import api

    with api.open_store(store) as s:
        for i in range(n):
            api.add_page(s, f"Watering schedule for the tomato greenhouse, bed {i}.")
        few = [api.add_page(s, f"Watering schedule for the tomato greenhouse, bed {100 + i}; "
                                "also the hose fittings and the gate latch need oil.",
                            tags=("rare",) if i < 2 else (),
                            origin="imported" if i >= 1 else "user_stated").page_id
               for i in range(3)]
        api.link_pages(s, few[0], "depends_on", few[2])
    return set(few[:2]), set(few[1:]), {few[0], few[2]}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_a_filter_admitting_few_pages_among_many_alike_returns_them_all(store, mode):
    tagged, imported, linked = crowd(store)
    question = "watering schedule tomato greenhouse"
    for args, want in ((("--tag", "RARE"), tagged), (("--origin", "imported"), imported),
                       (("--relation-type", "depends_on"), linked)):
        data = search(store, question, "--mode", mode, "--limit", "25", *args)
        assert set(ids(data)) == want, args
        assert data["filters_applied"]["semantic_filtering"] == "before_ranking"
    both = search(store, question, "--mode", mode, "--tag", "rare", "--origin", "imported")
    assert set(ids(both)) == tagged & imported


def test_an_unclassified_page_is_found_by_meaning_for_the_person_only(store):
    from pcp_cli.mcp.audit import AuditLog
    from pcp_cli.mcp.grants import Grant
    from pcp_cli.mcp.session import ToolSession
    from pcp_cli.mcp.store_backend import StoreBackend

    dropped = store / "pages" / "kelp.md"  # a file dropped in by hand: never classified
    dropped.write_text("# Kelp notes\n\nKelp grows fast in cold water.\n", "utf-8")
    for mode in ("semantic", "hybrid"):
        data = search(store, "seaweed growing in the cold sea", "--mode", mode)
        [found] = [r for r in data["results"] if "sensitivity" not in r]
        assert found["extensions"][EXT]["sensitivity"] == "unclassified"
    reader = Grant("reader", "model", ("*",), False, False, "pcp.yaml")
    session = ToolSession(StoreBackend(store), reader, AuditLog(store))
    for mode in ("semantic", "hybrid"):
        asked = session.call("pcp_search", {"query": "seaweed growing in the cold sea",
                                            "mode": mode}).data
        assert asked["count"] == 0, mode  # an AI client sees it only as a high page


def test_an_edit_leaves_the_filter_snapshot_and_a_new_process_still_sees_it(example):
    index(example)
    [snapshot_file] = (example / ".pcp" / "vectors").glob("fields-*.npz")
    saved = snapshot_file.read_bytes()
    porto = add(example, PORTO, "--namespace", "user:ada-lumen")
    assert ids(search(example, QUESTION, "--mode", "semantic"))[0] == porto
    assert cli("revise", porto, "--sensitivity", "high", "--store", example).code == 0
    assert index(example)["vectors"]["fields_only"] == 1
    assert snapshot_file.read_bytes() == saved  # the edit is the delta, not a rewrite
    # a new process starts from the old snapshot and applies the newer rows on top of it
    for args in ((), ("--include-sensitive",)):
        proc = run_pcp("search", QUESTION, "--mode", "semantic", "--limit", "25", "--json",
                       "--store", example, *args)
        assert proc.code == 0, proc.stderr
        assert (porto in ids(json.loads(proc.stdout))) == bool(args)


def test_index_no_vectors_builds_the_text_index_only(example):
    indexed = cli("index", "--no-vectors", "--store", str(example), "--json")
    assert indexed.code == 0, indexed.stderr
    assert indexed.json["vectors"] == {"installed": True, "skipped": True}
    assert indexed.json["documents"] > 0
    assert not (example / ".pcp" / "vectors").exists()
    said = cli("index", "--no-vectors", "--store", str(example))
    assert "Semantic vectors: left as they were (--no-vectors)." in said.stdout
    found = cli("search", QUESTION, "--mode", "semantic", "--store", str(example), "--json")
    assert found.code == 0, found.stderr  # the semantic search embeds what is missing
    assert (example / ".pcp" / "vectors").exists()
