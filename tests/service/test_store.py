"""The store on SQLite and, where TEST_DATABASE_URL points at one, on PostgreSQL (CI starts one)."""

from __future__ import annotations

import os
import sqlite3

import pytest

from ab_testing import Exposure
from service.app import prepare_storage
from service.settings import LLMSettings, SearchSettings, Settings
from service.store import AnswerRecord, NotYourAnswer, SQLStore, UnknownAnswer

POSTGRES_URL = os.environ.get("TEST_DATABASE_URL", "")


def fresh_postgres(url: str) -> None:
    import psycopg
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("DROP SCHEMA public CASCADE")
        connection.execute("CREATE SCHEMA public")


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.sqlite3'}"
    if not POSTGRES_URL:
        pytest.skip("PostgreSQL store tests need TEST_DATABASE_URL (.ci/run starts a server and sets it)")
    fresh_postgres(POSTGRES_URL)
    return POSTGRES_URL


def answer(answer_id: str, user_id: str | None = "u1", status: str = "answered", **arms: tuple[int, str]) -> AnswerRecord:
    exposures = tuple(Exposure(key, variation, variation_id, user_id) for key, (variation_id, variation) in arms.items()) \
        if user_id else ()
    return AnswerRecord(answer_id=answer_id, user_id=user_id, query="q?", status=status, source="bank",
                        gate_reason=None, arms={k: v for k, (_, v) in arms.items()}, latency_ms=12.5,
                        exposures=exposures)


def test_migrations_run_once(database_url):
    store = SQLStore(database_url)
    assert store.schema_version() == 1
    again = SQLStore(database_url)
    assert [row["version"] for row in again.rows("schema_migrations")] == [1]


def test_exposures_once_per_user_and_experiment_arms_per_answer(database_url):
    store = SQLStore(database_url)
    store.record_answer(answer("a1", **{"llm-fallback": (1, "bank-then-llm")}))
    store.record_answer(answer("a2", **{"llm-fallback": (1, "bank-then-llm")}))
    viewed = store.rows("experiment_viewed")
    assert [(r["user_id"], r["experiment_id"], r["variation_id"]) for r in viewed] == [("u1", "llm-fallback", 1)]
    assert {r["answer_id"] for r in store.rows("answer_arms")} == {"a1", "a2"}
    assert store.rows("answers")[0]["latency_ms"] == 12.5


def test_feedback_is_idempotent_per_user_and_answer(database_url):
    store = SQLStore(database_url)
    store.record_answer(answer("a1", **{"llm-fallback": (0, "bank-only")}))
    first = store.record_feedback("a1", "u1", "up", "thorough_explanation", None)
    second = store.record_feedback("a1", "u1", "down", "incorrect", "wrong option")
    assert first.created and not second.created and second.arms == {"llm-fallback": "bank-only"}
    rows = store.rows("feedback")
    assert [(r["rating"], r["reason"], r["comment"]) for r in rows] == [("down", "incorrect", "wrong option")]
    with pytest.raises(UnknownAnswer):
        store.record_feedback("missing", "u1", "up", None, None)
    with pytest.raises(NotYourAnswer):
        store.record_feedback("a1", "u2", "up", None, None)


def test_anonymous_answers_take_feedback_without_a_user(database_url):
    store = SQLStore(database_url)
    store.record_answer(answer("a1", user_id=None))
    assert store.record_feedback("a1", None, "up", None, None).created
    assert store.rows("experiment_viewed") == []


def test_experiment_answers_join_arms_and_ratings(database_url):
    store = SQLStore(database_url)
    store.record_answer(answer("a1", **{"exp": (0, "control")}))
    store.record_answer(answer("a2", status="unavailable", **{"exp": (1, "treatment")}))
    store.record_feedback("a1", "u1", "up", None, None)
    rows = sorted(store.experiment_answers("exp"), key=lambda r: r["answer_id"])
    assert [(r["answer_id"], r["variation_key"], r["status"], r["rating"]) for r in rows] == [
        ("a1", "control", "answered", "up"), ("a2", "treatment", "unavailable", None)]


def test_a_bad_url_is_refused():
    with pytest.raises(ValueError, match="DATABASE_URL"):
        SQLStore("mysql://nope")


def test_storage_is_prepared_once_before_workers_start(tmp_path):
    """gunicorn's master runs this, so that workers never race to create the SQLite files."""
    prepare_storage(Settings.from_env({}, search=SearchSettings(TUTORQA_DATA_DIR=tmp_path),
                                      llm=LLMSettings(LLM_CACHE=True)))
    for name in ("tutorqa.sqlite3", "llm_cache.sqlite3"):
        connection = sqlite3.connect(tmp_path / name)
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        connection.close()
