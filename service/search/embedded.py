"""The embedded backend: exact cosine over a numpy matrix and BM25 (bm25s), persisted on disk.

Exact search stays fast to about a million vectors on one core (one matrix-vector product);
beyond that the OpenSearch backend takes over.
"""

from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np

from service.models import Passage, QARecord
from service.search.protocol import Hit
from service.search.store import RecordStore

BM25_DIR = "bm25"


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=int)
    best = np.argpartition(-scores, k - 1)[:k]
    return best[np.argsort(-scores[best])]


def nearest(embeddings: np.ndarray, records: list, vector: np.ndarray, k: int) -> list[Hit]:
    """The k records whose embeddings have the highest cosine with `vector` (all are normalised)."""
    scores = embeddings @ vector
    return [Hit(records[i], float(scores[i])) for i in _top_k(scores, k)]


def tokenize(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, return_ids=False, stopwords="en", show_progress=False)


def qa_record(row: dict) -> QARecord:
    return QARecord(id=row["id"], question=row["question"], answer=row["answer"],
                    options=tuple(row.get("options") or ()), answer_option=row.get("answer_option"),
                    explanation=tuple(row.get("explanation") or ()), subject=row.get("subject"),
                    source=row.get("source"))


def passage(row: dict) -> Passage:
    return Passage(passage_id=row["id"], text=row["text"], title=row["title"], url=row.get("url"),
                   source=row.get("source"))


class EmbeddedQAIndex:
    def __init__(self, store: RecordStore) -> None:
        self.store = store
        self.records = [qa_record(row) for row in store.rows]

    @classmethod
    def load(cls, directory: Path) -> "EmbeddedQAIndex":
        return cls(RecordStore.load(directory, "tutorqa index qa FILE.jsonl"))

    def search(self, vector: np.ndarray, k: int) -> list[Hit[QARecord]]:
        return nearest(self.store.embeddings, self.records, vector, k)

    def count(self) -> int:
        return len(self.records)


class EmbeddedPassageIndex:
    def __init__(self, store: RecordStore, bm25: bm25s.BM25) -> None:
        self.store = store
        self.bm25 = bm25
        self.records = [passage(row) for row in store.rows]

    @classmethod
    def load(cls, directory: Path) -> "EmbeddedPassageIndex":
        store = RecordStore.load(directory, "tutorqa index passages FILE.jsonl")
        return cls(store, bm25s.BM25.load(directory / BM25_DIR, show_progress=False, verbosity=0))

    @staticmethod
    def build_bm25(store: RecordStore, directory: Path) -> None:
        """BM25 statistics depend on the whole corpus, so the lexical index is rebuilt on every change."""
        bm25 = bm25s.BM25()
        bm25.index(tokenize([row["text"] for row in store.rows]), show_progress=False)
        bm25.save(directory / BM25_DIR, show_progress=False)

    def search(self, text: str, k: int) -> list[Hit[Passage]]:
        if not self.records:
            return []
        documents, scores = self.bm25.retrieve(tokenize([text]), k=min(k, len(self.records)), show_progress=False)
        return [Hit(self.records[int(d)], float(s)) for d, s in zip(documents[0], scores[0]) if s > 0]

    def search_vector(self, vector: np.ndarray, k: int) -> list[Hit[Passage]]:
        return nearest(self.store.embeddings, self.records, vector, k)

    def embeddings(self, passage_ids: list[str]) -> np.ndarray:
        return self.store.embeddings[[self.store.position[pid] for pid in passage_ids]]

    def count(self) -> int:
        return len(self.records)

    def get(self, passage_id: str) -> Passage | None:
        index = self.store.position.get(passage_id)
        return None if index is None else self.records[index]
