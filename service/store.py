"""Durable events: answers with their arms, experiment exposures, thumbs feedback.

One module, two databases: SQLite (WAL, synchronous=FULL: an acknowledged write survives a killed
process) by default, PostgreSQL when DATABASE_URL says `postgresql://`. The schema is versioned in
`schema_migrations`; each migration runs once, in order, at start-up.

`experiment_viewed` has the shape of GrowthBook's experiment-assignment data source (user_id,
timestamp, experiment_id, variation_id), one row per user and experiment, so a GrowthBook server
pointed at this database can analyse the experiments itself (README, "GrowthBook").
"""

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

FEEDBACK_REASONS = ("thorough_explanation", "needs_more_explanation", "incorrect", "irrelevant_references",
                    "incomplete_question", "other")

# Column types that differ between the two databases; the DDL below names them in braces.
TYPES = {
    "sqlite": {"json": "TEXT", "float": "REAL", "timestamp": "TEXT"},
    "postgresql": {"json": "JSONB", "float": "DOUBLE PRECISION", "timestamp": "TIMESTAMPTZ"},
}
# (version, DDL). Append; never edit a released migration.
MIGRATIONS: list[tuple[int, str]] = [
    (1, """
CREATE TABLE answers (
    answer_id   TEXT PRIMARY KEY,
    user_id     TEXT,
    query       TEXT NOT NULL,
    status      TEXT NOT NULL,
    source      TEXT,
    gate_reason TEXT,
    arms        {json} NOT NULL,
    latency_ms  {float} NOT NULL,
    created_at  {timestamp} NOT NULL
);
CREATE TABLE answer_arms (
    answer_id     TEXT NOT NULL REFERENCES answers(answer_id),
    experiment_id TEXT NOT NULL,
    variation_id  INTEGER NOT NULL,
    variation_key TEXT NOT NULL,
    PRIMARY KEY (answer_id, experiment_id)
);
CREATE INDEX answer_arms_by_experiment ON answer_arms (experiment_id);
CREATE TABLE experiment_viewed (
    user_id       TEXT NOT NULL,
    experiment_id TEXT NOT NULL,
    variation_id  INTEGER NOT NULL,
    variation_key TEXT NOT NULL,
    timestamp     {timestamp} NOT NULL,
    PRIMARY KEY (user_id, experiment_id)
);
CREATE TABLE feedback (
    answer_id  TEXT NOT NULL REFERENCES answers(answer_id),
    user_key   TEXT NOT NULL,
    rating     TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    reason     TEXT,
    comment    TEXT,
    created_at {timestamp} NOT NULL,
    updated_at {timestamp} NOT NULL,
    PRIMARY KEY (answer_id, user_key)
);
"""),
]


class UnknownAnswer(LookupError):
    pass


class NotYourAnswer(PermissionError):
    pass


@dataclass(frozen=True)
class AnswerRecord:
    answer_id: str
    user_id: str | None
    query: str
    status: str
    source: str | None
    gate_reason: str | None
    arms: dict[str, str]            # experiment key -> variation key
    latency_ms: float
    exposures: tuple[Exposure, ...]


@dataclass(frozen=True)
class FeedbackResult:
    answer_id: str
    rating: str
    created: bool   # False: an earlier rating of the same answer by the same user was replaced
    arms: dict[str, str]   # the arms the rated answer was served under


class Store(Protocol):
    def record_answer(self, record: AnswerRecord) -> None: ...
    def record_feedback(self, answer_id: str, user_id: str | None, rating: str, reason: str | None,
                        comment: str | None) -> FeedbackResult: ...
    def experiment_answers(self, experiment_id: str) -> list[dict[str, Any]]: ...
    def ping(self) -> bool: ...


def _now() -> datetime:
    return datetime.now(timezone.utc)


class SQLStore:
    """One short connection per call: safe across gunicorn workers and threads."""

    def __init__(self, url: str) -> None:
        if url.startswith("sqlite:///"):
            self.dialect = "sqlite"
            self.path = Path(url.removeprefix("sqlite:///"))
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif url.startswith(("postgresql://", "postgres://")):
            self.dialect = "postgresql"
            try:
                import psycopg
            except ImportError:
                raise ImportError("DATABASE_URL=postgresql://... needs `pip install 'psycopg[binary]'`") from None
            self._psycopg = psycopg
        else:
            raise ValueError(f"DATABASE_URL must start with sqlite:/// or postgresql://, but got {url!r}")
        self.url = url
        self.migrate()

    @contextmanager
    def _connect(self) -> Iterator[Any]:
        if self.dialect == "sqlite":
            connection = sqlite3.connect(self.path, timeout=10)
            connection.execute("PRAGMA foreign_keys=ON")
            connection.execute("PRAGMA synchronous=FULL")   # an acknowledged write survives a crash
        else:
            connection = self._psycopg.connect(self.url, connect_timeout=5)
        try:
            yield connection
            connection.commit()
        except BaseException:
            connection.rollback()
            raise
        finally:
            connection.close()

    def _sql(self, statement: str) -> str:
        return statement if self.dialect == "sqlite" else statement.replace("?", "%s")

    def _value(self, value: Any) -> Any:
        if isinstance(value, datetime) and self.dialect == "sqlite":
            return value.isoformat(timespec="milliseconds")
        return value

    def _execute(self, connection: Any, statement: str, params: tuple = ()) -> Any:
        return connection.execute(self._sql(statement), tuple(self._value(p) for p in params))

    def migrate(self) -> None:
        with self._connect() as connection:
            if self.dialect == "sqlite":
                connection.execute("PRAGMA journal_mode=WAL")
            self._execute(connection, "CREATE TABLE IF NOT EXISTS schema_migrations "
                                      "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            if self.dialect == "postgresql":
                # Two workers starting together must not both apply a migration.
                connection.execute("SELECT pg_advisory_xact_lock(7031)")
            done = {row[0] for row in self._execute(connection, "SELECT version FROM schema_migrations").fetchall()}
            for version, ddl in MIGRATIONS:
                if version in done:
                    continue
                for statement in filter(str.strip, ddl.format(**TYPES[self.dialect]).split(";")):
                    connection.execute(statement)
                self._execute(connection, "INSERT INTO schema_migrations VALUES (?, ?)",
                              (version, _now().isoformat()))

    def schema_version(self) -> int:
        with self._connect() as connection:
            return self._execute(connection, "SELECT MAX(version) FROM schema_migrations").fetchone()[0]

    def record_answer(self, record: AnswerRecord) -> None:
        now = _now()
        with self._connect() as connection:
            self._execute(connection, "INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          (record.answer_id, record.user_id, record.query, record.status, record.source,
                           record.gate_reason, json.dumps(record.arms), record.latency_ms, now))
            for exposure in record.exposures:
                self._execute(connection, "INSERT INTO answer_arms VALUES (?, ?, ?, ?)",
                              (record.answer_id, exposure.experiment, exposure.variation_id, exposure.variation))
                self._execute(connection, "INSERT INTO experiment_viewed VALUES (?, ?, ?, ?, ?) "
                                          "ON CONFLICT (user_id, experiment_id) DO NOTHING",
                              (exposure.user_id, exposure.experiment, exposure.variation_id, exposure.variation, now))

    def record_feedback(self, answer_id: str, user_id: str | None, rating: str, reason: str | None,
                        comment: str | None) -> FeedbackResult:
        now = _now()
        with self._connect() as connection:
            owner = self._execute(connection, "SELECT user_id, arms FROM answers WHERE answer_id = ?",
                                  (answer_id,)).fetchone()
            if owner is None:
                raise UnknownAnswer(answer_id)
            if owner[0] is not None and owner[0] != user_id:
                raise NotYourAnswer(answer_id)
            arms = json.loads(owner[1]) if isinstance(owner[1], str) else owner[1]
            user_key = user_id or ""
            existed = self._execute(connection, "SELECT 1 FROM feedback WHERE answer_id = ? AND user_key = ?",
                                    (answer_id, user_key)).fetchone() is not None
            self._execute(connection,
                          "INSERT INTO feedback VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (answer_id, user_key) "
                          "DO UPDATE SET rating = excluded.rating, reason = excluded.reason, "
                          "comment = excluded.comment, updated_at = excluded.updated_at",
                          (answer_id, user_key, rating, reason, comment, now, now))
        return FeedbackResult(answer_id, rating, created=not existed, arms=arms)

    def experiment_answers(self, experiment_id: str) -> list[dict[str, Any]]:
        """One row per answer exposed to the experiment, with its arm and the feedback it got."""
        query = ("SELECT a.answer_id, a.user_id, a.status, aa.variation_id, aa.variation_key, f.rating, f.reason "
                 "FROM answer_arms aa JOIN answers a ON a.answer_id = aa.answer_id "
                 "LEFT JOIN feedback f ON f.answer_id = a.answer_id WHERE aa.experiment_id = ?")
        return self._rows(query, (experiment_id,))

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of one table, for reports and tests."""
        if table not in {"answers", "answer_arms", "experiment_viewed", "feedback", "schema_migrations"}:
            raise ValueError(f"unknown table {table!r}")
        return self._rows(f"SELECT * FROM {table}")

    def _rows(self, query: str, params: tuple = ()) -> list[dict[str, Any]]:
        with self._connect() as connection:
            cursor = self._execute(connection, query, params)
            names = [column[0] for column in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

    def ping(self) -> bool:
        try:
            with self._connect() as connection:
                connection.execute("SELECT 1")
        except Exception:   # any driver error means not ready
            return False
        return True
