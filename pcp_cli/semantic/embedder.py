"""The embedder: text in, unit-length float32 vectors out, behind one small interface.

`Embedder` is all the rest of pcp knows; `load_embedder()` returns the default one. Replacing the
model means another class with the same four members and a new `name` (the vector index stores
the name and rebuilds itself when it changes).

The default is WordLlama's `l2_supercat` static embedding model (MIT), 256 dimensions, whose
weights and tokenizer ship inside the `wordllama` wheel. It is loaded from the package folder
with downloads disabled, so it needs no network, ever; bench/RESULTS.md has the measurements
that chose it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pcp_cli.errors import SemanticUnavailable

if TYPE_CHECKING:
    import numpy as np


class Embedder(Protocol):
    name: str  # names the model and its settings; stored with the vectors
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A (len(texts), dim) float32 matrix of L2-normalised rows (a zero row for a text
        with no known token)."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """One (dim,) float32 unit vector for a search query."""
        ...


class WordLlamaEmbedder:
    """WordLlama `l2_supercat` at 256 dimensions, loaded offline from its own wheel."""

    name = "wordllama-l2_supercat-256"
    dim = 256
    BATCH = 32

    def __init__(self) -> None:
        try:
            import numpy  # noqa: F401 - part of the extra; fail here with the hint
            import wordllama
            from wordllama import WordLlama
        except ImportError as exc:
            raise SemanticUnavailable(
                f"semantic search needs the 'semantic' extra, which is not installed "
                f"({exc.name or exc})", hint=_hint()) from exc
        folder = Path(wordllama.__file__).parent
        try:
            # The loader looks for the tokenizer under cache_dir and would otherwise go to the
            # network: point it at the package folder, where the wheel put both files.
            self._model = WordLlama.load(config="l2_supercat", cache_dir=folder, dim=self.dim,
                                         disable_download=True)
        except Exception as exc:  # noqa: BLE001 - any failure to load is the same answer
            raise SemanticUnavailable(
                f"the semantic model could not be loaded from {folder}: {exc}",
                hint="reinstall the extra: pip install --force-reinstall "
                     "'pcp-cli[semantic]'") from exc

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # The tokenizer pads a batch to its longest text: batches of similar lengths make the
        # same vectors 2-3x faster (bench/RESULTS.md).
        order = np.argsort([len(t) for t in texts], kind="stable")
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        vectors[order] = self._model.embed([texts[i] for i in order], norm=False,
                                           batch_size=self.BATCH)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def _hint() -> str:
    from pcp_cli.semantic import INSTALL_HINT

    return INSTALL_HINT


_LOADED: dict[str, Embedder] = {}
_LOCK = threading.Lock()


def load_embedder() -> Embedder:
    """The default embedder, loaded once per process (about 0.4 s the first time)."""
    with _LOCK:
        model = _LOADED.get("default")
        if model is None:
            model = _LOADED["default"] = WordLlamaEmbedder()
        return model
