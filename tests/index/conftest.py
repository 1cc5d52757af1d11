from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pcp_cli.index import IndexDoc, SearchIndex


def doc(page_id: str, body: str = "", **kw: object) -> IndexDoc:
    fields: dict[str, object] = {
        "path": f"pages/{kw.get('namespace', 'personal')}/{page_id}.md".replace(":", "/"),
        "page_id": page_id,
        "revision_id": f"rev_{page_id}_1",
        "title": f"Page {page_id}",
        "body": body,
        "type": "note",
        "namespace": "personal",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    fields.update(kw)
    return IndexDoc(**fields)  # type: ignore[arg-type]


CORPUS = [
    doc("run", "She runs every morning before work.", title="Morning routine", tags=("Health",)),
    doc("cook", "Cooking pasta with garlic and olive oil.", title="Pasta", tags=("food",)),
    doc("zh", "物竞天择，即适者生存。这是进化论的核心。", title="进化论"),
    doc("ja", "子供のころ、よくしりとりをして遊びました。", title="ことば遊び"),
    doc("ko", "저는 서울에서 프로그래머로 일하고 있습니다.", title="자기소개"),
    doc(
        "ks",
        "Prefer concise answers with code first.",
        type="keystone",
        title="Answer style",
        origin="user_stated",
        tags=("style", "writing"),
    ),
    doc("phr", "the quick brown fox jumps over the lazy dog", title="Fox"),
    doc("phr2", "the brown quick fox and a dog that is lazy", title="Fox again"),
]


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / ".pcp" / "index"


@pytest.fixture
def ix(index_dir: Path) -> Iterator[SearchIndex]:
    index = SearchIndex.open_or_create(index_dir)
    index.rebuild(CORPUS)
    yield index
    index.close()


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.page_id for h in hits]
