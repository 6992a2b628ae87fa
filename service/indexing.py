"""Build or update the embedded indexes from JSONL files (`tutorqa index qa|passages FILE.jsonl`).

Q&A bank, one JSON object per line:
  id (str, required), question (str, required), answer (str, required),
  options (list of str), answer_option (letter of the answer in options),
  explanation (list of steps, or one string), subject (str), source (str)
Study passages, one JSON object per line:
  passage_id or id (str, required), text (str, required), title (str; default: first sentence),
  url (str; default: the service's own /v1/passages/<id>), subject (str), source (str)

Idempotent: a record whose id exists is replaced, unchanged records are not re-encoded.
Malformed lines are reported with their line number and skipped; the good ones are indexed.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from tqdm import tqdm

from service.embedder import Embedder
from service.search.embedded import EmbeddedPassageIndex
from service.search.store import IndexMissingError, RecordStore

FIRST_SENTENCE = regex.compile(r"^(.{20,}?[.!?])(\s|$)")
TITLE_CHARS = 80


class QAIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    options: list[str] = []
    answer_option: str | None = None
    explanation: list[str] = []
    subject: str | None = None
    source: str | None = None

    @field_validator("explanation", mode="before")
    @classmethod
    def steps_from_text(cls, value: Any) -> Any:
        return [line for line in value.splitlines() if line.strip()] if isinstance(value, str) else (value or [])

    @model_validator(mode="after")
    def option_in_options(self) -> "QAIn":
        if self.answer_option is not None:
            letters = string.ascii_uppercase[:len(self.options)]
            if len(self.answer_option) != 1 or self.answer_option.upper() not in letters:
                raise ValueError(f"answer_option must be one of {list(letters)}, but got {self.answer_option!r}")
        return self


class PassageIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = Field(min_length=1, validation_alias="passage_id")
    text: str = Field(min_length=1)
    title: str | None = None
    url: str | None = None
    subject: str | None = None
    source: str | None = None

    @model_validator(mode="before")
    @classmethod
    def accept_plain_id(cls, value: Any) -> Any:
        if isinstance(value, dict) and "passage_id" not in value and "id" in value:
            return {**value, "passage_id": value["id"]}
        return value

    @model_validator(mode="after")
    def default_title(self) -> "PassageIn":
        if not self.title:
            found = FIRST_SENTENCE.match(self.text)
            title = found.group(1) if found else self.text
            self.title = title if len(title) <= TITLE_CHARS else title[:TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
        return self


@dataclass
class IndexReport:
    read: int = 0
    added: int = 0
    updated: int = 0
    rejected: list[str] = field(default_factory=list)   # "line N: reason"
    total: int = 0

    def summary(self) -> str:
        return (f"read {self.read}, added {self.added}, updated {self.updated}, "
                f"unchanged {self.read - len(self.rejected) - self.added - self.updated}, "
                f"rejected {len(self.rejected)}; index holds {self.total}")


def read_records(path: Path, model: type[BaseModel], report: IndexReport) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(tqdm(handle, desc=f"reading {path.name}", unit=" lines"), start=1):
            if not line.strip():
                continue
            report.read += 1
            try:
                yield model.model_validate(json.loads(line)).model_dump(exclude_none=True)
            except json.JSONDecodeError as error:
                report.rejected.append(f"line {number}: not JSON ({error.msg})")
            except ValidationError as error:
                reasons = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in error.errors())
                report.rejected.append(f"line {number}: {reasons}")


def _load_or_empty(directory: Path, embedder: Embedder) -> RecordStore:
    try:
        store = RecordStore.load(directory, "")
    except IndexMissingError:
        return RecordStore.empty(embedder.name, embedder.dimension)
    if store.model != embedder.name:
        raise ValueError(f"{directory} was built with {store.model!r}, not {embedder.name!r}: "
                         "remove it to rebuild with the new model")
    return store


def _upsert(path: Path, directory: Path, embedder: Embedder, model: type[BaseModel], text_field: str) -> tuple[RecordStore, IndexReport]:
    report = IndexReport()
    store = _load_or_empty(directory, embedder)
    rows = list(read_records(path, model, report))
    report.added, report.updated = store.upsert(
        rows, embed_text=lambda row: row[text_field],
        encode=lambda texts: embedder.encode(texts, show_progress=True))
    report.total = len(store.rows)
    return store, report


def index_qa(path: Path, directory: Path, embedder: Embedder) -> IndexReport:
    store, report = _upsert(path, directory, embedder, QAIn, "question")
    if report.added or report.updated or not directory.exists():
        store.save(directory)
    return report


def index_passages(path: Path, directory: Path, embedder: Embedder) -> IndexReport:
    store, report = _upsert(path, directory, embedder, PassageIn, "text")
    if report.added or report.updated or not directory.exists():
        store.save(directory)
        EmbeddedPassageIndex.build_bm25(store, directory)
    return report
