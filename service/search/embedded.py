"""The embedded backend: in-process indexes persisted in one folder each.

Records and embeddings in plain files (`store.py`), an HNSW graph over the embeddings
(`vectors.py`) and, for passages, a BM25 index (`lexical.py`). `load` opens an index for serving
(embeddings and graph memory-mapped: seconds even at a million records); `open` opens or creates
one for writing. Writes become visible to other processes at `save`.
"""

from __future__ import annotations

import fcntl
import logging
from pathlib import Path
from typing import Any

import numpy as np

from service.models import Passage, QARecord
from service.search.lexical import FOLDER as LEXICAL_FOLDER
from service.search.lexical import LexicalIndex
from service.search.protocol import Hit
from service.search.store import IndexMissingError, RecordStore
from service.search.vectors import VectorGraph

log = logging.getLogger(__name__)


class _EmbeddedIndex:
    BUILD_HINT = ""
    to_record = staticmethod(dict)
    _write_locks: dict[Path, Any] = {}   # folder -> its lock file, for the folders this process writes

    @staticmethod
    def _lock(directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        if directory.resolve() in _EmbeddedIndex._write_locks:
            return
        lock = (directory / ".write.lock").open("w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise ValueError(f"another process is writing {directory}: wait for it to finish") from None
        _EmbeddedIndex._write_locks[directory.resolve()] = lock

    def __init__(self, directory: Path, store: RecordStore, graph: VectorGraph) -> None:
        self.directory = directory
        self.store = store
        self.graph = graph

    @classmethod
    def load(cls, directory: Path):
        store = RecordStore.load(directory, cls.BUILD_HINT)
        graph = VectorGraph.load(directory)
        if graph is None or len(graph) != len(store):
            raise IndexMissingError(f"the vector graph in {directory} is missing or stale: rebuild it with `{cls.BUILD_HINT}`")
        return cls(directory, store, graph)

    @classmethod
    def open(cls, directory: Path, model: str, dimension: int):
        """For writing: the saved index (its derived parts rebuilt if missing or stale), or a new one.
        One writer process at a time: the folder's lock is held until a complete save."""
        cls._lock(directory)
        try:
            store = RecordStore.load(directory, cls.BUILD_HINT, writable=True)
        except IndexMissingError:
            return cls(directory, RecordStore.empty(model, dimension), VectorGraph.empty(dimension))
        if store.model != model:
            raise ValueError(f"{directory} was built with {store.model!r}, not {model!r}: remove it to rebuild with the new model")
        graph = VectorGraph.load(directory, view=False)
        if graph is None or len(graph) != len(store):
            log.info("building the vector graph of %s from %d embeddings", directory, len(store))
            graph = VectorGraph.build(store.embeddings)
        return cls(directory, store, graph)

    def count(self) -> int:
        return len(self.store)

    def hashes(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        return self.store.hashes(ids)

    def upsert(self, rows: list[dict[str, Any]], vectors: list[np.ndarray | None]) -> None:
        positions = self.store.put(rows, vectors)
        changed = [p for p, v in zip(positions, vectors) if v is not None]
        self.graph.set(changed, self.store.embeddings[changed])

    def delete(self, ids: list[str]) -> int:
        moved, dropped = self.store.delete(ids)
        self.graph.remove(sorted(set(moved) | set(dropped)))
        self.graph.set(moved, self.store.embeddings[moved])
        return len(dropped)

    def save(self, complete: bool = True) -> None:
        """Graph first, then the store, whose params name the record count the graph must match."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.graph.save(self.directory)
        self.store.save(self.directory, complete=complete)
        if complete and (lock := self._write_locks.pop(self.directory.resolve(), None)) is not None:
            lock.close()

    def get(self, record_id: str):
        position = self.store.position.get(record_id)
        return None if position is None else self.to_record(self.store.row(position))

    def _nearest(self, vector: np.ndarray, k: int) -> list[Hit]:
        positions, scores = self.graph.search(vector, k)
        return [Hit(self.to_record(self.store.row(p)), s) for p, s in zip(positions.tolist(), scores.tolist())]


class EmbeddedQAIndex(_EmbeddedIndex):
    BUILD_HINT = "tutorqa index qa FILE.jsonl"
    to_record = staticmethod(QARecord.from_row)

    def search(self, vector: np.ndarray, k: int) -> list[Hit[QARecord]]:
        return self._nearest(vector, k)


class EmbeddedPassageIndex(_EmbeddedIndex):
    BUILD_HINT = "tutorqa index passages FILE.jsonl"
    to_record = staticmethod(Passage.from_row)

    def __init__(self, directory: Path, store: RecordStore, graph: VectorGraph) -> None:
        super().__init__(directory, store, graph)
        self.lexical = LexicalIndex(directory / LEXICAL_FOLDER)

    @classmethod
    def load(cls, directory: Path) -> "EmbeddedPassageIndex":
        index = super().load(directory)
        if index.lexical.count() != index.count():
            raise IndexMissingError(f"the BM25 index in {directory} is missing or stale: rebuild it with `{cls.BUILD_HINT}`")
        return index

    @classmethod
    def open(cls, directory: Path, model: str, dimension: int) -> "EmbeddedPassageIndex":
        index = super().open(directory, model, dimension)
        if index.lexical.count() != index.count():
            log.info("building the BM25 index of %s from %d passages", directory, index.count())
            index.lexical.writer.delete_all_documents()
            rows = [index.store.row(p) for p in range(index.count())]
            index.lexical.put([row["id"] for row in rows], [row["text"] for row in rows])
        return index

    def upsert(self, rows: list[dict[str, Any]], vectors: list[np.ndarray | None]) -> None:
        stored = {row["id"] for row in rows if row["id"] in self.store.position}
        super().upsert(rows, vectors)
        self.lexical.put([row["id"] for row in rows], [row["text"] for row in rows], replacing=stored)

    def delete(self, ids: list[str]) -> int:
        self.lexical.delete(ids)
        return super().delete(ids)

    def save(self, complete: bool = True) -> None:
        self.lexical.commit()
        super().save(complete)

    def search(self, text: str, k: int) -> list[Hit[Passage]]:
        return [Hit(self.get(pid), score) for pid, score in self.lexical.search(text, k)]

    def search_vector(self, vector: np.ndarray, k: int) -> list[Hit[Passage]]:
        return self._nearest(vector, k)

    def embeddings(self, passage_ids: list[str]) -> np.ndarray:
        return np.asarray(self.store.embeddings[[self.store.position[pid] for pid in passage_ids]])
