"""The embedding backends: the quantised one stays close to the full-precision model."""

from __future__ import annotations

import numpy as np
import pytest

from service.embedder import SentenceTransformerEmbedder

TEXTS = ["Chloroplasts are the site of photosynthesis in plant cells.",
         "Where does photosynthesis take place?",
         "Water boils at 100 degrees Celsius at sea level."]


def test_an_unknown_backend_is_refused_at_construction():
    with pytest.raises(ValueError, match="backend must be 'onnx', 'onnx-int8' or 'torch'"):
        SentenceTransformerEmbedder(backend="tensorrt")


@pytest.mark.slow
def test_int8_embeddings_keep_similarities_and_their_order(tmp_path, embedder):
    quantised = SentenceTransformerEmbedder(backend="onnx-int8", cache_dir=tmp_path)
    full, small = embedder.encode(TEXTS), quantised.encode(TEXTS)
    assert np.allclose(np.linalg.norm(small, axis=1), 1.0, atol=1e-5)
    assert (np.einsum("ij,ij->i", full, small) > 0.97).all()
    full_similarity, small_similarity = full @ full.T, small @ small.T
    assert np.abs(full_similarity - small_similarity).max() < 0.05
    assert small_similarity[0, 1] > small_similarity[0, 2]   # the related question stays the closer one
    assert (tmp_path / "model-all-MiniLM-L6-v2-onnx" / "onnx" / "model_quint8_avx2.onnx").exists()
