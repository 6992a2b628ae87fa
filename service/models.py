"""Plain dataclasses passed between the pipeline's stages and returned by the API."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("answered", "blocked", "abstained", "not_a_question", "unavailable")


@dataclass(frozen=True)
class AnswerRequest:
    query: str
    user_id: str | None = None      # None: default arms, no exposure recorded
    subject: str | None = None


@dataclass(frozen=True)
class QARecord:
    """One entry of the Q&A bank (schema of `tutorqa index qa`)."""
    id: str
    question: str
    answer: str
    options: tuple[str, ...] = ()
    answer_option: str | None = None
    explanation: tuple[str, ...] = ()
    subject: str | None = None
    source: str | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "QARecord":
        return cls(id=row["id"], question=row["question"], answer=row["answer"],
                   options=tuple(row.get("options") or ()), answer_option=row.get("answer_option"),
                   explanation=tuple(row.get("explanation") or ()), subject=row.get("subject"),
                   source=row.get("source"))


@dataclass(frozen=True)
class Passage:
    """One study passage (schema of `tutorqa index passages`)."""
    passage_id: str
    text: str
    title: str
    url: str | None = None
    source: str | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "Passage":
        return cls(passage_id=row["id"], text=row["text"], title=row["title"], url=row.get("url"),
                   source=row.get("source"))


@dataclass(frozen=True)
class BankMatch:
    qa_id: str
    score: float
    answer: str
    option: str | None          # the student's option letter the bank answer corresponds to
    explanation: tuple[str, ...]


@dataclass(frozen=True)
class GeneratedAnswer:
    answerable: bool
    answer: str
    option: str | None
    steps: tuple[str, ...]
    reason: str = ""            # why the model abstained
    cached: bool = False        # served from the reply cache, no LLM call


@dataclass(frozen=True)
class Reference:
    passage_id: str
    title: str
    url: str
    snippet: str
    highlights: list[list[int]]   # [start, end) offsets in snippet of words shared with the question or answer
    score: float


@dataclass
class AnswerResponse:
    answer_id: str
    status: str
    gate: dict[str, Any]
    message: str | None = None
    answer: dict[str, Any] | None = None
    explanation: dict[str, Any] | None = None
    source: str | None = None
    match: dict[str, Any] | None = None
    references: list[dict[str, Any]] = field(default_factory=list)
    references_skipped: str | None = None   # why there are none: "math", "unavailable"
    attribution: list[dict[str, Any]] = field(default_factory=list)   # answer/explanation sentence -> support
    experiments: dict[str, str] = field(default_factory=dict)
    llm: dict[str, Any] | None = None   # prompt_version, model and cached, when the LLM was asked
    degraded: list[str] = field(default_factory=list)   # stages that failed and were skipped

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
