"""Add or update an index from a JSONL file (`tutorqa index qa|passages FILE.jsonl`).

Q&A bank, one JSON object per line:
  id (str, required), question (str, required), answer (str, required),
  options (list of str), answer_option (letter of the answer in options),
  explanation (list of steps, or one string), subject (str), source (str)
Study passages, one JSON object per line:
  passage_id or id (str, required), text (str, required), title (str; default: first sentence),
  url (str; default: the service's own /v1/passages/<id>), subject (str), source (str)

Records stream through in chunks: unchanged records are skipped, records whose text is unchanged
keep their embedding, the rest are encoded in batches. Idempotent (an id is replaced, never
duplicated) and resumable: the index is saved every `checkpoint_s` seconds, so a re-run after an
interruption encodes only what was not saved. Malformed lines are reported with their line number
and skipped; the good ones are indexed.
"""

from __future__ import annotations

import json
import string
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from tqdm import tqdm

from service.embedder import Embedder
from service.search.embedded import EmbeddedPassageIndex, EmbeddedQAIndex
from service.search.protocol import WritableIndex
from service.search.store import content_hash, record_hash

FIRST_SENTENCE = regex.compile(r"^(.{20,}?[.!?])(\s|$)")
TITLE_CHARS = 80
CHUNK = 4096          # records per encoding call: long enough for length-sorted batches to pay off
RECORD_ID = r"^[^\t\r\n]+$"


class QAIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = Field(min_length=1, pattern=RECORD_ID)
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
    id: str = Field(min_length=1, pattern=RECORD_ID, validation_alias="passage_id")
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
    encoded: int = 0
    rejected: list[str] = field(default_factory=list)   # "line N: reason"
    total: int = 0
    seconds: float = 0.0
    encode_seconds: float = 0.0

    def summary(self) -> str:
        unchanged = self.read - len(self.rejected) - self.added - self.updated
        rate = f"{self.encoded / self.encode_seconds:.0f} texts/s" if self.encode_seconds else "none encoded"
        return (f"read {self.read}, added {self.added}, updated {self.updated}, unchanged {unchanged}, "
                f"rejected {len(self.rejected)}; index holds {self.total}. {self.seconds:.1f} s, "
                f"{self.read / max(self.seconds, 1e-9):.0f} records/s; encoded {self.encoded} ({rate})")


def chunks(rows: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def read_records(path: Path, model: type[BaseModel], report: IndexReport, progress: bool = True) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        lines = tqdm(handle, desc=f"indexing {path.name}", unit=" records", total=count_lines(path), disable=not progress)
        for number, line in enumerate(lines, start=1):
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


def _index_chunk(rows: list[dict[str, Any]], index: WritableIndex, embedder: Embedder, text_field: str,
                 report: IndexReport) -> None:
    latest = {row["id"]: {**row, "content_hash": content_hash(row[text_field])} for row in rows}   # last line of an id wins
    stored = index.hashes(list(latest))
    fresh = [row for row_id, row in latest.items() if stored.get(row_id) != (row["content_hash"], record_hash(row))]
    to_encode = [row for row in fresh if row["id"] not in stored or stored[row["id"]][0] != row["content_hash"]]
    encoded = {}
    if to_encode:
        started = time.perf_counter()
        encoded = dict(zip((row["id"] for row in to_encode), embedder.encode([row[text_field] for row in to_encode])))
        report.encode_seconds += time.perf_counter() - started
    index.upsert(fresh, [encoded.get(row["id"]) for row in fresh])
    report.encoded += len(encoded)
    new = sum(row["id"] not in stored for row in fresh)
    report.added += new
    report.updated += len(fresh) - new


def index_file(path: Path, index: WritableIndex, embedder: Embedder, kind: str, checkpoint_s: float = 120.0,
               progress: bool = True) -> IndexReport:
    """Stream `path` into `index` (kind "qa" or "passages"); saves at checkpoints and at the end."""
    model, text_field = (QAIn, "question") if kind == "qa" else (PassageIn, "text")
    report = IndexReport()
    started = last_save = time.perf_counter()
    for chunk in chunks(read_records(path, model, report, progress), CHUNK):
        _index_chunk(chunk, index, embedder, text_field, report)
        if time.perf_counter() - last_save >= checkpoint_s:
            index.save(complete=False)
            last_save = time.perf_counter()
    index.save()
    report.total = index.count()
    report.seconds = time.perf_counter() - started
    return report


def index_qa(path: Path, directory: Path, embedder: Embedder, **options: Any) -> IndexReport:
    """Into the embedded Q&A index in `directory`."""
    return index_file(path, EmbeddedQAIndex.open(directory, embedder.name, embedder.dimension), embedder, "qa", **options)


def index_passages(path: Path, directory: Path, embedder: Embedder, **options: Any) -> IndexReport:
    """Into the embedded passage index in `directory`."""
    return index_file(path, EmbeddedPassageIndex.open(directory, embedder.name, embedder.dimension), embedder,
                      "passages", **options)
