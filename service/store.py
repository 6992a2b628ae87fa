"""Durable events: answers served, experiment exposures, thumbs feedback (SQLite by default)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from ab_testing import Exposure
from service.models import AnswerResponse

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    answer_id   TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    query       TEXT NOT NULL,
    status      TEXT NOT NULL,
    source      TEXT,
    experiments TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS exposures (
    answer_id    TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    experiment   TEXT NOT NULL,
    variation    TEXT NOT NULL,
    variation_id INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (answer_id, experiment)
);
CREATE TABLE IF NOT EXISTS feedback (
    answer_id  TEXT NOT NULL REFERENCES answers(answer_id),
    user_id    TEXT NOT NULL,
    rating     TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    reason     TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (answer_id, user_id)
);
"""


class UnknownAnswer(LookupError):
    pass


class NotYourAnswer(PermissionError):
    pass


@dataclass(frozen=True)
class FeedbackResult:
    answer_id: str
    rating: str
    created: bool   # False: an earlier rating of the same answer by the same user was replaced


class Store(Protocol):
    def record_answer(self, response: AnswerResponse, user_id: str, query: str,
                      exposures: tuple[Exposure, ...]) -> None: ...
    def record_feedback(self, answer_id: str, user_id: str, rating: str, reason: str | None) -> FeedbackResult: ...
    def ping(self) -> bool: ...


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class SQLiteStore:
    """One short connection per call: safe across gunicorn workers and threads; WAL lets readers
    proceed while one writer commits."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(SCHEMA)

    @classmethod
    def from_url(cls, url: str) -> "SQLiteStore":
        if not url.startswith("sqlite:///"):
            raise ValueError(f"DATABASE_URL must start with sqlite:///, but got {url!r}")
        return cls(Path(url.removeprefix("sqlite:///")))

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self.path, timeout=10)
        try:
            with connection:   # commits, or rolls back on an exception
                yield connection
        finally:
            connection.close()

    def record_answer(self, response: AnswerResponse, user_id: str, query: str,
                      exposures: tuple[Exposure, ...]) -> None:
        now = _now()
        with self._connect() as connection:
            connection.execute(
                "INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?)",
                (response.answer_id, user_id, query, response.status, response.source,
                 json.dumps(response.experiments), now))
            connection.executemany(
                "INSERT INTO exposures VALUES (?, ?, ?, ?, ?, ?)",
                [(response.answer_id, e.user_id, e.experiment, e.variation, e.variation_id, now) for e in exposures])

    def record_feedback(self, answer_id: str, user_id: str, rating: str, reason: str | None) -> FeedbackResult:
        now = _now()
        with self._connect() as connection:
            owner = connection.execute("SELECT user_id FROM answers WHERE answer_id = ?", (answer_id,)).fetchone()
            if owner is None:
                raise UnknownAnswer(answer_id)
            if owner[0] != user_id:
                raise NotYourAnswer(answer_id)
            existed = connection.execute("SELECT 1 FROM feedback WHERE answer_id = ? AND user_id = ?",
                                         (answer_id, user_id)).fetchone() is not None
            connection.execute(
                "INSERT INTO feedback VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (answer_id, user_id) "
                "DO UPDATE SET rating = excluded.rating, reason = excluded.reason, updated_at = excluded.updated_at",
                (answer_id, user_id, rating, reason, now, now))
        return FeedbackResult(answer_id, rating, created=not existed)

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of one table, for reports and tests."""
        if table not in {"answers", "exposures", "feedback"}:
            raise ValueError(f"unknown table {table!r}")
        with self._connect() as connection:
            connection.row_factory = sqlite3.Row
            return [dict(row) for row in connection.execute(f"SELECT * FROM {table}")]

    def ping(self) -> bool:
        try:
            with self._connect() as connection:
                connection.execute("SELECT 1")
        except sqlite3.Error:
            return False
        return True
