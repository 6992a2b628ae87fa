"""Stage: find the same question in the internal Q&A bank by meaning."""

from __future__ import annotations

import string

import regex

from service.embedder import Embedder
from service.models import BankMatch, QARecord
from service.search.protocol import Hit, QASearch

CANDIDATES = 5
ARTICLES = regex.compile(r"^(the|a|an)\s+")
NOT_WORD = regex.compile(r"[^\p{L}\p{N}]+")


def normalise_option(text: str) -> str:
    """'The chloroplasts.' and 'chloroplast' compare equal."""
    text = ARTICLES.sub("", NOT_WORD.sub(" ", text.lower()).strip())
    return " ".join(word[:-1] if word.endswith("s") and len(word) > 3 else word for word in text.split())


def option_letter(answer: str, options: tuple[str, ...]) -> str | None:
    """The letter of the student's option that says the bank's answer, if exactly one does."""
    wanted = normalise_option(answer)
    letters = [string.ascii_uppercase[i] for i, option in enumerate(options) if normalise_option(option) == wanted]
    return letters[0] if len(letters) == 1 else None


class BankMatcher:
    def __init__(self, embedder: Embedder, index: QASearch, threshold: float) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"match threshold must be within [0, 1], but got {threshold}")
        self.embedder = embedder
        self.index = index
        self.threshold = threshold

    def run(self, stem: str, options: tuple[str, ...]) -> BankMatch | None:
        vector = self.embedder.encode([stem])[0]
        return choose(self.index.search(vector, CANDIDATES), options, self.threshold)


def choose(hits: list[Hit[QARecord]], options: tuple[str, ...], threshold: float) -> BankMatch | None:
    """Best bank entry at or above the threshold. For an MCQ the bank's answer must be one of the
    student's options: the same stem with other options is a different question."""
    for hit in hits:
        if hit.score < threshold:
            break
        record = hit.record
        letter = option_letter(record.answer, options) if options else None
        if options and letter is None:
            continue
        return BankMatch(qa_id=record.id, score=round(hit.score, 4), answer=record.answer,
                         option=letter, explanation=record.explanation)
    return None
