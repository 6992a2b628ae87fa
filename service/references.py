"""Stage: study passages that let a student check the answer.

`published` mode is the design this service started from: BM25 top 20, re-ranked by cosine between
the question+answer+explanation embedding and passage embeddings computed at index time, top 3 at or
above the threshold. `hybrid` mode (default, measured in README) takes candidates from BM25 and from
the vector index, adds lexical evidence (the answer named as a whole phrase in the passage) to the
cosine, and drops near-duplicate passages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import regex

from service.embedder import Embedder
from service.models import Passage, Reference
from service.search.analysis import ENGLISH_STOP_WORDS
from service.search.protocol import PassageSearch

SNIPPET_CHARS = 240
WORD = regex.compile(r"\w[\w'-]*")
STOPWORDS = frozenset(ENGLISH_STOP_WORDS) | {"what", "which", "following", "does", "called", "why", "how", "many",
                                            "from", "has", "have", "its", "can", "do", "i", "you", "we"}
Mode = Literal["hybrid", "published"]


@dataclass(frozen=True)
class Candidate:
    passage: Passage
    cosine: float
    names_answer: bool
    score: float
    embedding: np.ndarray


def whole_phrase(phrase: str) -> regex.Pattern | None:
    """A pattern that finds the phrase as whole words (case-insensitive); None for an empty phrase."""
    phrase = phrase.strip()
    return regex.compile(rf"(?<!\w){regex.escape(phrase)}(?!\w)", regex.IGNORECASE) if phrase else None


def mentions(text: str, phrase: str) -> bool:
    pattern = whole_phrase(phrase)
    return pattern is not None and pattern.search(text) is not None


def snippet(text: str, answer: str) -> str:
    """The part of the passage around the answer's first mention, else its beginning."""
    if len(text) <= SNIPPET_CHARS:
        return text
    at = text.lower().find(answer.lower()) if len(answer) >= 4 else -1
    start = 0 if at < SNIPPET_CHARS // 2 else text.rfind(" ", 0, at - SNIPPET_CHARS // 3) + 1
    piece = text[start:start + SNIPPET_CHARS].rsplit(" ", 1)[0]
    return ("…" if start else "") + piece + "…"


def highlights(text: str, terms: set[str]) -> list[list[int]]:
    """[start, end) offsets of the words of `text` that are among `terms` (lower-case)."""
    return [[m.start(), m.end()] for m in WORD.finditer(text) if m.group(0).lower() in terms]


class ReferenceFinder:
    def __init__(self, embedder: Embedder, passages: PassageSearch, candidates: int, top_k: int,
                 url_template: str, mode: Mode = "hybrid", answer_weight: float = 0.30,
                 duplicate_cosine: float = 0.95) -> None:
        if candidates <= 0:
            raise ValueError(f"candidates must be > 0, but got {candidates}")
        if mode not in ("hybrid", "published"):
            raise ValueError(f"mode must be 'hybrid' or 'published', but got {mode!r}")
        self.embedder = embedder
        self.passages = passages
        self.candidates = candidates
        self.top_k = top_k
        self.url_template = url_template   # format string with {passage_id}
        self.mode = mode
        self.answer_weight = answer_weight
        self.duplicate_cosine = duplicate_cosine

    @staticmethod
    def reference_text(question: str, answer: str, steps: tuple[str, ...]) -> str:
        return " ".join([question, answer, *steps])

    def rank(self, question: str, answer: str, steps: tuple[str, ...] = (),
             vector: np.ndarray | None = None) -> list[Candidate]:
        """Every candidate passage with its score, best first. `vector` is the embedding of
        reference_text(...) when the caller already has it (batch evaluation)."""
        text = self.reference_text(question, answer, steps)
        if vector is None:
            vector = self.embedder.encode([text])[0]
        pool = {hit.record.passage_id: hit.record for hit in self.passages.search(text, self.candidates)}
        if self.mode == "hybrid":
            pool.update((hit.record.passage_id, hit.record) for hit in self.passages.search_vector(vector, self.candidates))
        if not pool:
            return []
        ids = list(pool)
        embeddings = self.passages.embeddings(ids)
        cosines = embeddings @ vector
        answer_pattern = whole_phrase(answer) if self.mode == "hybrid" and len(answer.strip()) >= 2 else None
        ranked = []
        for passage_id, embedding, cosine in zip(ids, embeddings, cosines.tolist()):
            passage = pool[passage_id]
            names_answer = answer_pattern is not None and answer_pattern.search(passage.text) is not None
            ranked.append(Candidate(passage, cosine, names_answer, cosine + self.answer_weight * names_answer, embedding))
        return sorted(ranked, key=lambda c: -c.score)

    def select(self, ranked: list[Candidate], threshold: float) -> list[Candidate]:
        chosen: list[Candidate] = []
        for candidate in ranked:
            if len(chosen) == self.top_k or candidate.score < threshold:
                break
            if self.mode == "hybrid" and any(float(candidate.embedding @ c.embedding) >= self.duplicate_cosine for c in chosen):
                continue   # the same text twice teaches the student nothing new
            chosen.append(candidate)
        return chosen

    def run(self, question: str, answer: str, steps: tuple[str, ...], threshold: float) -> list[Reference]:
        terms = {w.lower() for w in WORD.findall(f"{question} {answer}")} - STOPWORDS
        return [self._reference(c, answer, terms) for c in self.select(self.rank(question, answer, steps), threshold)]

    def _reference(self, candidate: Candidate, answer: str, terms: set[str]) -> Reference:
        passage = candidate.passage
        text = snippet(passage.text, answer)
        return Reference(passage_id=passage.passage_id, title=passage.title,
                         url=passage.url or self.url_template.format(passage_id=passage.passage_id),
                         snippet=text, highlights=highlights(text, terms), score=round(candidate.score, 4))
