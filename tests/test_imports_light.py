"""`pcp --help`, `pcp --version` and `pcp ls` must not load the heavy libraries."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("whoosh", "jsonschema", "mcp", "numpy", "wordllama")
# and pcp's own extractor (pcp_cli.extract): ~100 ms of pattern compiling, for `pcp propose` only

PROBE = f"""
import json, sys
from pcp_cli.cli.main import run
import io, contextlib
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    code = run(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r}
               or m.startswith("pcp_cli.extract"))
print(json.dumps({{"code": int(code), "heavy": heavy, "out": out.getvalue(),
                  "modules": sorted(sys.modules)}}))
"""


def probe(*args: str, cwd: Path | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["ls", "--help"]])
def test_light_commands_do_not_import_heavy_modules(args: list[str]) -> None:
    data = probe(*args)
    assert data["code"] == 0
    assert data["heavy"] == []
    # nor the renderers (~25 ms: distill's patterns, micro_prompt), which a help text never uses
    assert "pcp_cli.render" not in data["modules"]


def test_version_prints_the_version() -> None:
    from pcp_cli import __version__

    assert probe("--version")["out"] == f"pcp {__version__}\n"


def test_ls_does_not_import_heavy_modules(example: Path) -> None:
    data = probe("ls", "--json", "--store", str(example))
    assert data["code"] == 0
    assert json.loads(data["out"])  # the example store lists pages
    assert data["heavy"] == []


@pytest.mark.parametrize("args", [["ls", "--limit", "3"], ["show", "ks-001"], ["status"],
                                  ["stats"], ["timeline", "list"], ["history", "ks-001"]])
def test_read_commands_load_no_pydantic_nor_asyncio(example: Path, args: list[str]) -> None:
    """A read command's whole floor: typer 0.29 validated every option through a pydantic
    TypeAdapter (~95 ms of CPU per command, pyproject caps typer below it); asyncio comes
    only with whoosh's query modules or the MCP server. None of them, nor the heavy ones."""
    data = probe(*args, "--store", str(example))
    assert data["code"] == 0, data
    loaded = {m.split(".")[0] for m in data["modules"]}
    assert loaded & {"pydantic", "pydantic_core", "asyncio", *HEAVY} == set()
    if args[0] == "status":  # it reads the index folder's meta.json: no analysis patterns
        assert "pcp_cli.index.text" not in data["modules"]


def test_probe_can_see_a_heavy_import(store: Path) -> None:
    """The probe is not blind: `pcp validate` does load jsonschema."""
    data = probe("validate", str(store))
    assert "jsonschema" in data["heavy"]


@pytest.mark.parametrize("args", [["--version"], ["--traceback", "--version"],
                                  ["--store", "nowhere", "--version"]])
def test_version_loads_no_front_end_library(args: list[str]) -> None:
    """`pcp --version` prints before typer, click, pydantic or rich is imported (it is run to
    check an install, and building the typer app cost ~150 ms of CPU for one line)."""
    from pcp_cli import __version__

    code = ("import json, sys, io, contextlib\n"
            "from pcp_cli.cli.main import run\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    code = run(sys.argv[1:])\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('typer', 'click', 'pydantic', 'rich', 'yaml', 'sqlite3') or m == 'pcp_cli.api')\n"
            "print(json.dumps({'code': code, 'out': out.getvalue(), 'loaded': loaded}))\n")
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=60)
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data == {"code": 0, "out": f"pcp {__version__}\n", "loaded": []}


def test_a_tantivy_search_of_plain_words_imports_no_whoosh(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tantivy engine takes a query of plain words without whoosh's parser: whoosh's
    query, index and reading modules (and asyncio, which whoosh's `cached_property` pulls in)
    were ~60 ms of every whole-process `pcp search`; only the Porter stemmer is loaded. Nor
    multiprocessing (a rebuild's workers) or the CLI framework."""
    pytest.importorskip("tantivy")
    from tests.conftest import cli

    monkeypatch.setenv("PCP_INDEX_ENGINE", "tantivy")
    assert cli("add", "a garden note", "--store", str(store)).code == 0
    assert cli("search", "garden", "--store", str(store), "--json").code == 0  # builds it
    data = probe("search", "Garden notes", "--store", str(store), "--json")
    assert data["code"] == 0 and json.loads(data["out"])["count"] == 1
    loaded = set(data["modules"])
    assert loaded & {"whoosh.query", "whoosh.qparser", "whoosh.index", "whoosh.reading",
                     "asyncio", "multiprocessing", "typer", "click", "pydantic"} == set()
    assert {m for m in loaded if m.startswith("whoosh")} <= {
        "whoosh", "whoosh.lang", "whoosh.lang.porter2"}
    assert data["heavy"] == ["whoosh", "whoosh.lang", "whoosh.lang.porter2"]
    # a query the parser must read still gets it, and finds the same page
    data = probe("search", "garden AND note", "--store", str(store), "--json")
    assert json.loads(data["out"])["count"] == 1 and "whoosh.qparser" in data["modules"]


def test_a_search_of_an_unchanged_store_does_not_import_yaml(store: Path) -> None:
    """pcp.yaml's parse is remembered under .pcp/ (by its bytes' hash), and nothing else on the
    way to an answer parses YAML when no file changed: yaml's import is ~12 ms a search."""
    from tests.conftest import cli

    assert cli("add", "a garden note", "--store", str(store)).code == 0
    assert cli("search", "garden", "--store", str(store), "--json").code == 0
    code = ("import json, sys, io, contextlib\n"
            "from pcp_cli.cli.main import run\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    code = run(sys.argv[1:])\n"
            "print(json.dumps({'code': code, 'yaml': 'yaml' in sys.modules,\n"
            "                  'count': json.loads(out.getvalue())['count']}))\n")
    proc = subprocess.run([sys.executable, "-c", code, "search", "garden", "--store",
                           str(store), "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data == {"code": 0, "yaml": False, "count": 1}
