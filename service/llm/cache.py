"""Replies of the LLM kept by (kind, prompt, prompt version, model): a repeated question costs no call.

SQLite, one short connection per call (shared safely by gunicorn workers). The prompt is normalised
(case, spacing) so that the same question typed slightly differently hits the same entry.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import regex

SPACES = regex.compile(r"\s+")


def cache_key(kind: str, prompt: str, prompt_version: str, model: str) -> str:
    normalised = SPACES.sub(" ", prompt).strip().lower()
    return hashlib.sha256("\x1f".join((kind, normalised, prompt_version, model)).encode()).hexdigest()


class ReplyCache:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = self._connect()
        try:
            with connection:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("CREATE TABLE IF NOT EXISTS llm_replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL, "
                                   "kind TEXT NOT NULL, prompt_version TEXT NOT NULL, model TEXT NOT NULL, "
                                   "created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)")
        finally:
            connection.close()

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=5)

    def get(self, kind: str, prompt: str, prompt_version: str, model: str) -> dict[str, Any] | None:
        connection = self._connect()
        try:
            row = connection.execute("SELECT reply FROM llm_replies WHERE key = ?",
                                     (cache_key(kind, prompt, prompt_version, model),)).fetchone()
        finally:
            connection.close()
        return json.loads(row[0]) if row else None

    def put(self, kind: str, prompt: str, prompt_version: str, model: str, reply: dict[str, Any]) -> None:
        connection = self._connect()
        try:
            with connection:
                connection.execute("INSERT OR REPLACE INTO llm_replies (key, reply, kind, prompt_version, model) "
                                   "VALUES (?, ?, ?, ?, ?)", (cache_key(kind, prompt, prompt_version, model),
                                                              json.dumps(reply), kind, prompt_version, model))
        finally:
            connection.close()
