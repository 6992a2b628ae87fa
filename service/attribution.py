"""Stage: match each sentence of the answer and explanation to its best supporting sentence among
the attached references, and flag the sentences nothing supports."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import regex

from service.embedder import Embedder

SENTENCE_END = regex.compile(r"(?<=[.!?])\s+(?=[\p{Lu}\d(\"'])")


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text.strip()) if len(s.strip()) > 2]


@dataclass(frozen=True)
class Attribution:
    sentence: str
    passage_id: str | None
    supporting_sentence: str | None
    score: float
    supported: bool


class Attributor:
    def __init__(self, embedder: Embedder, threshold: float) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"attribution threshold must be within [0, 1], but got {threshold}")
        self.embedder = embedder
        self.threshold = threshold

    def best_supports(self, claims: list[str], passages: list[tuple[str, str]]) -> list[tuple[str | None, str | None, float]]:
        """For each claim, (passage_id, sentence, cosine) of its closest passage sentence."""
        sentences = [(pid, s) for pid, text in passages for s in split_sentences(text)]
        if not claims:
            return []
        if not sentences:
            return [(None, None, 0.0)] * len(claims)
        vectors = self.embedder.encode(claims + [s for _, s in sentences])
        scores = vectors[:len(claims)] @ vectors[len(claims):].T
        best = np.argmax(scores, axis=1)
        return [(sentences[j][0], sentences[j][1], float(scores[i, j])) for i, j in enumerate(best)]

    def run(self, answer: str, question: str, steps: list[str], passages: list[tuple[str, str]]) -> list[Attribution]:
        """The answer is judged as the statement 'question + answer' (a bare 'chloroplast' has no
        meaning to compare); the steps are judged one by one."""
        claims = [f"{question} {answer}", *steps]
        shown = [answer, *steps]
        return [Attribution(sentence, pid, support, round(score, 4), score >= self.threshold)
                for sentence, (pid, support, score) in zip(shown, self.best_supports(claims, passages))]
