"""What the pipeline needs from a search backend; the embedded backend implements it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np

from service.models import Passage, QARecord

Record = TypeVar("Record", covariant=True)


@dataclass(frozen=True)
class Hit(Generic[Record]):
    record: Record
    score: float


class QASearch(Protocol):
    def search(self, vector: np.ndarray, k: int) -> list[Hit[QARecord]]: ...
    def count(self) -> int: ...


class PassageSearch(Protocol):
    def search(self, text: str, k: int) -> list[Hit[Passage]]: ...
    def search_vector(self, vector: np.ndarray, k: int) -> list[Hit[Passage]]: ...
    def embeddings(self, passage_ids: list[str]) -> np.ndarray: ...
    def get(self, passage_id: str) -> Passage | None: ...
    def count(self) -> int: ...
