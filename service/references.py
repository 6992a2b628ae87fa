"""Stage: study passages that let a student check the answer.

Lexical candidates (BM25, top `candidates`), re-ranked by cosine between the question+answer+
explanation embedding and passage embeddings computed at index time; the best `top_k` at or
above the threshold are kept (the published design: top 20, top 3 at 0.65).
"""

from __future__ import annotations

import numpy as np

from service.embedder import Embedder
from service.models import Passage, Reference
from service.search.protocol import PassageSearch

SNIPPET_CHARS = 240


def snippet(text: str, answer: str) -> str:
    """The part of the passage around the answer's first mention, else its beginning."""
    if len(text) <= SNIPPET_CHARS:
        return text
    at = text.lower().find(answer.lower()) if len(answer) >= 4 else -1
    start = 0 if at < SNIPPET_CHARS // 2 else text.rfind(" ", 0, at - SNIPPET_CHARS // 3) + 1
    piece = text[start:start + SNIPPET_CHARS].rsplit(" ", 1)[0]
    return ("…" if start else "") + piece + "…"


class ReferenceFinder:
    def __init__(self, embedder: Embedder, passages: PassageSearch, candidates: int, top_k: int,
                 passage_url: str) -> None:
        if candidates <= 0:
            raise ValueError(f"candidates must be > 0, but got {candidates}")
        self.embedder = embedder
        self.passages = passages
        self.candidates = candidates
        self.top_k = top_k
        self.passage_url = passage_url   # format string with {passage_id}

    def run(self, question: str, answer: str, steps: tuple[str, ...], threshold: float) -> list[Reference]:
        text = " ".join([question, answer, *steps])
        hits = self.passages.search(text, self.candidates)
        if not hits:
            return []
        query = self.embedder.encode([text])[0]
        scores = self.passages.embeddings([hit.record.passage_id for hit in hits]) @ query
        ranked = sorted(zip(scores.tolist(), (hit.record for hit in hits)), key=lambda pair: -pair[0])
        return [self._reference(passage, score, answer) for score, passage in ranked[:self.top_k] if score >= threshold]

    def _reference(self, passage: Passage, score: float, answer: str) -> Reference:
        return Reference(passage_id=passage.passage_id, title=passage.title,
                         url=passage.url or self.passage_url.format(passage_id=passage.passage_id),
                         snippet=snippet(passage.text, answer), score=round(float(np.float32(score)), 4))
