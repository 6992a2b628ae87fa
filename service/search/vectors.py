"""Approximate nearest neighbours by cosine: an HNSW graph (usearch) over the store's positions.

The graph is derived from `embeddings.npy` and saved beside it; it takes additions and removals
without a rebuild. Scores are exact cosines of the vectors found (float32 storage).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from usearch.index import Index

GRAPH = "vectors.usearch"
CONNECTIVITY = 16          # edges per node
EXPANSION_ADD = 128
# Candidates kept while searching: at a million passages, 96 gave recall@10 0.93 and 256 gave 0.98
# for 2.3 ms p95 (reports/bench_search.json, `expansion_sweep`); query encoding costs 6-8 ms anyway.
EXPANSION_SEARCH = 256


class VectorGraph:
    def __init__(self, index: Index) -> None:
        self.index = index

    @classmethod
    def empty(cls, dimension: int) -> "VectorGraph":
        return cls(Index(ndim=dimension, metric="cos", dtype="f32", connectivity=CONNECTIVITY,
                         expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH))

    @classmethod
    def build(cls, embeddings: np.ndarray) -> "VectorGraph":
        graph = cls.empty(embeddings.shape[1])
        graph.set(np.arange(len(embeddings)), embeddings)
        return graph

    @classmethod
    def load(cls, directory: Path, view: bool = True) -> "VectorGraph | None":
        """The saved graph, memory-mapped when only read; None when there is none."""
        path = directory / GRAPH
        if not path.exists():
            return None
        index = Index.restore(str(path), view=view)
        index.expansion_search = EXPANSION_SEARCH
        return cls(index)

    def __len__(self) -> int:
        return len(self.index)

    def set(self, positions: np.ndarray | list[int], vectors: np.ndarray) -> None:
        positions = np.asarray(positions, dtype=np.uint64)
        if len(positions) == 0:
            return
        present = positions[self.index.contains(positions)] if len(self.index) else positions[:0]
        if len(present):
            self.index.remove(present)
        self.index.add(positions, np.ascontiguousarray(vectors, dtype=np.float32))

    def remove(self, positions: list[int]) -> None:
        if positions:
            self.index.remove(np.asarray(positions, dtype=np.uint64))

    def search(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, cosines), best first."""
        if len(self.index) == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        matches = self.index.search(np.asarray(vector, dtype=np.float32), min(k, len(self.index)))
        return matches.keys.astype(np.int64), 1.0 - matches.distances

    def save(self, directory: Path) -> None:
        temporary = directory / f".{GRAPH}.tmp"
        self.index.save(str(temporary))
        temporary.replace(directory / GRAPH)
