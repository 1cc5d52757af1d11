"""The store's own JSON and YAML writers give exactly the bytes the json module and PyYAML give.

`file_json` (revision, relation and event files) and `frontmatter.dump_mapping` (head files)
write the common cases themselves, for speed, and leave everything else to the library; a file
must not change by one byte because of which path wrote it, or every store written before would
show spurious diffs and hand edits. Property tests compare both with the library on tricky
values, and an import compares the files it wrote with what the libraries write for them.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pcp_cli.model.page import file_json
from pcp_cli.store import frontmatter
from tests.conftest import cli

# Strings that sit on the edges of JSON escaping and of YAML's plain and quoted styles.
EDGES = ["", " ", "yes", "No", "on", "OFF", "y", "n", "true", "null", "~", "=", "<<", "!", "&",
         "*", "2024-01-01", "2024-01-01T10:00:00.000Z", "2024-1-1", "12:30", "1e3", "1.0e+3",
         "0x1F", "0o17", "010", ".inf", "-.nan", "1_000", "+1", "-1", "-x", "- x", "?", "?x",
         "? x", ":x", "x:", "a: b", "a:b", "a #b", "a#b", "#a", "---", "--- x", "...", "...x",
         "..", "'q'", "Ada's", '"d"', "a\\b", "[x]", "x]", "{a}", "a,b", ",a", "%x", "@x", "`x",
         "|", ">", "x  y", " x", "x ", "\tx", "x\ty", "a\nb", "a\n", "\u2028", "\x85", "\ufeff",
         "\u00a0x", "x\u00a0", "é ü 中文", "🙂", "\x00", "\x1b[31m", "\ud7ff", "\ue000", "\ufffd",
         "sha256:" + "ab" * 32, "word " * 25, "w" * 120, "pg_01JD", "rev_01JDX"]
characters = st.characters(blacklist_categories=("Cs",))
text = st.one_of(st.sampled_from(EDGES), st.text(characters, max_size=30),
                 st.lists(st.sampled_from(EDGES), max_size=4).map(" ".join),
                 st.text(st.sampled_from(" abc:#-'\"?.,[]{}\t\n01é中"), max_size=20))
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(), text)


def values(keys: st.SearchStrategy[str]) -> st.SearchStrategy[object]:
    return st.recursive(scalars, lambda children: st.one_of(
        st.lists(children, max_size=4), st.tuples(children, children),
        st.dictionaries(keys, children, max_size=4)), max_leaves=16)


def _stdlib_json(data: object) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2) + "\n"


@settings(max_examples=600, deadline=None)
@given(values(text))
def test_file_json_writes_what_json_dumps_writes(data: object) -> None:
    assert file_json(data) == _stdlib_json(data)


def test_file_json_leaves_unusual_values_to_json() -> None:
    class Name(str):
        pass

    nested: list[object] = []
    deep: list[object] = nested
    for _ in range(200):
        deep.append([])
        deep = deep[0]  # type: ignore[assignment]
    for data in ({1: "a", 2: "b"}, {True: 1, False: 2}, {Name("k"): Name("v")},
                 [float("nan"), float("inf"), -float("inf")], nested, {"a": 2**100}):
        assert file_json(data) == _stdlib_json(data)
    for bad in ({1: "a", "b": 2, None: 3}, {"a": {1, 2}}, {"a": object()}):
        try:
            _stdlib_json(bad)
        except TypeError as exc:
            try:
                file_json(bad)
            except TypeError as ours:
                assert str(ours) == str(exc)
            else:
                raise AssertionError(f"{bad!r} was written")


def _pyyaml(data: dict[str, object], dumper: type) -> str:
    ordered = {key: frontmatter._sorted_nested(value) for key, value in data.items()}
    return yaml.dump(ordered, Dumper=dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100)


yaml_keys = st.one_of(st.sampled_from(["page_id", "title", "tags", "record", "extensions",
                                       "org.pcp-cli.frontmatter", "a" * 90]), text)
mappings = st.dictionaries(yaml_keys, values(yaml_keys), max_size=6)


@settings(max_examples=800, deadline=None)
@given(mappings)
def test_dump_mapping_writes_what_pyyaml_writes(data: dict[str, object]) -> None:
    """What the head file writer has always written (PyYAML with libyaml's emitter when it is
    installed, as pip installs it); and where the fast path wrote an entry, PyYAML's own
    emitter (a machine without libyaml) writes the same."""
    ours = frontmatter.dump_mapping(data)
    assert ours == _pyyaml(data, frontmatter._yaml()[2])
    for key, value in data.items():
        try:
            frontmatter._entry(key, frontmatter._sorted_nested(value), "", [])
        except frontmatter._Unusual:
            continue
        assert frontmatter.dump_mapping({key: value}) == _pyyaml({key: value}, yaml.SafeDumper)


def test_the_fast_path_takes_what_head_files_hold() -> None:
    """Ordinary frontmatter never needs PyYAML (or the speed-up would be lost silently)."""
    data = {"page_id": "pg_01JD", "revision_id": "rev_01JDX", "type": "note",
            "title": "Ada's notes: the tide, again #3", "namespace": "user:ada",
            "sensitivity": "low", "tags": ["tide", "yes", "2024"],
            "record": {"observed_at": "2024-09-07T08:00:00.000Z", "count": 3, "ok": True,
                       "aliases": [], "none": None, "nested": {"k": "v"}},
            "extensions": {"org.pcp-cli.frontmatter": {"date": "2024-01-01", "mood": "- ok"}},
            "created_at": "2024-09-07T08:00:00.000Z",
            "content_hash": "sha256:" + "ab" * 32}
    out: list[str] = []
    for key, value in data.items():
        frontmatter._entry(key, frontmatter._sorted_nested(value), "", out)
    assert "".join(out) == _pyyaml(data, frontmatter._yaml()[2])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(text, st.one_of(st.none(), st.booleans(), st.integers(), text,
                                       st.lists(text, max_size=3)), max_size=5))
def test_dumped_frontmatter_loads_back(data: dict[str, object]) -> None:
    """The store's own (strict) loader reads back what the writer wrote."""
    assert frontmatter.load_mapping(frontmatter.dump_mapping(data), "p.md") == data


def quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def test_an_import_writes_the_bytes_the_libraries_write(store: Path, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for n, title in enumerate(["Plain", "yes", "Ada's: tide #1", "2024-01-01", "中文 🙂",
                               "word " * 30, "- list", "tab\there"]):
        (folder / f"n{n}.md").write_text(
            f"---\ntitle: {quoted(title)}\ntags: [tide, 'no']\nmood: {quoted(title)}\n"
            f"when: 2024-01-0{n + 1}\n---\n# {title}\n\nBody {n} \"quoted\" \\ é\n", "utf-8")
    result = cli("import", str(folder), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    assert result.json["created"] == 8, result.json["problems"]
    revision_files = sorted((store / "revisions").rglob("*.json"))
    assert len(revision_files) == 8
    for path in revision_files:
        raw = path.read_text("utf-8")
        assert raw == _stdlib_json(json.loads(raw)), path
    heads = sorted((store / "pages").rglob("pg_*.md"))
    assert len(heads) == 8
    for path in heads:
        raw = path.read_text("utf-8")
        head = frontmatter.split(raw, str(path))
        block = raw[4:raw.index("\n---\n", 3) + 1]
        assert block == _pyyaml(head.frontmatter, frontmatter._yaml()[2]), path


@given(st.text(characters, max_size=60))
def test_page_ids_for_keys_are_what_they_always_were(key: str) -> None:
    import base64
    import hashlib

    from pcp_cli.store.store import page_id_for_key

    digest = hashlib.sha256(key.encode("utf-8")).digest()
    assert page_id_for_key(key) == "pg_" + base64.b32encode(digest).decode("ascii")[:26]
