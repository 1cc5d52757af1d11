import os

import pytest

from tests.render.render_personas import GOLDEN


@pytest.fixture
def golden():
    """Compare text with tests/render/golden/<name>; PCP_UPDATE_GOLDEN=1 rewrites the file."""

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if os.environ.get("PCP_UPDATE_GOLDEN") == "1":
            path.write_text(text, encoding="utf-8", newline="\n")
        assert text == path.read_text(encoding="utf-8"), f"differs from golden {name}"

    return check
