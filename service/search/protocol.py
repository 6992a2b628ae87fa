"""What the pipeline and the indexer need from a search backend (embedded or OpenSearch).

Scores of vector searches are cosines in [-1, 1] on every backend, so that MATCH_THRESHOLD and
REFERENCE_THRESHOLD mean the same wherever the index lives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from service.models import Passage, QARecord

Record = TypeVar("Record", covariant=True)


class SearchUnavailableError(RuntimeError):
    """A search cluster cannot be reached or failed the request."""


class MappingConflictError(ValueError):
    """An index exists with a mapping this service cannot use."""


@dataclass(frozen=True)
class Hit(Generic[Record]):
    record: Record
    score: float


class WritableIndex(Protocol):
    def hashes(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """(content hash, record hash) of the stored ids: unchanged records are skipped, unchanged text is not re-encoded."""
    def upsert(self, rows: list[dict[str, Any]], vectors: list[np.ndarray | None]) -> None:
        """Add or replace by id; a None vector keeps the stored one."""
    def delete(self, ids: list[str]) -> int: ...
    def save(self, complete: bool = True) -> None:
        """Make the writes so far durable and visible; complete=False marks a checkpoint of an unfinished run."""
    def count(self) -> int: ...


class QASearch(Protocol):
    def search(self, vector: np.ndarray, k: int) -> list[Hit[QARecord]]: ...
    def count(self) -> int: ...


class PassageSearch(Protocol):
    def search(self, text: str, k: int) -> list[Hit[Passage]]: ...
    def search_vector(self, vector: np.ndarray, k: int) -> list[Hit[Passage]]: ...
    def embeddings(self, passage_ids: list[str]) -> np.ndarray: ...
    def get(self, passage_id: str) -> Passage | None: ...
    def count(self) -> int: ...
