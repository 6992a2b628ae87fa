"""Records and their embeddings kept as plain files in one index folder (never pickle).

Layout: `records.jsonl` (one record per line), `embeddings.npy` (float32, same order),
`params.json` (model name, dimension, count). Upserts replace a record with the same id.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

RECORDS, EMBEDDINGS, PARAMS = "records.jsonl", "embeddings.npy", "params.json"


def content_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


class IndexMissingError(FileNotFoundError):
    """The index folder has not been built; says which command builds it."""


class RecordStore:
    """An id-keyed table of JSON records with one embedding per record."""

    def __init__(self, rows: list[dict[str, Any]], embeddings: np.ndarray, model: str) -> None:
        self.rows = rows
        self.embeddings = embeddings
        self.model = model
        self.position = {row["id"]: i for i, row in enumerate(rows)}

    @classmethod
    def empty(cls, model: str, dimension: int) -> "RecordStore":
        return cls([], np.zeros((0, dimension), dtype=np.float32), model)

    @classmethod
    def load(cls, directory: Path, build_hint: str) -> "RecordStore":
        if not (directory / PARAMS).exists():
            raise IndexMissingError(f"no index in {directory}: build it with `{build_hint}`")
        params = json.loads((directory / PARAMS).read_text(encoding="utf-8"))
        with (directory / RECORDS).open(encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle]
        embeddings = np.load(directory / EMBEDDINGS)
        if len(rows) != len(embeddings):
            raise ValueError(f"{directory}: {len(rows)} records but {len(embeddings)} embeddings")
        return cls(rows, embeddings, params["model"])

    def save(self, directory: Path) -> None:
        """Write to a temporary folder entry by entry, then rename: a reader never sees half an index."""
        directory.mkdir(parents=True, exist_ok=True)
        for name, write in ((RECORDS, self._write_rows), (EMBEDDINGS, self._write_embeddings)):
            temporary = directory / f".{name}.tmp"
            write(temporary)
            os.replace(temporary, directory / name)
        params = {"model": self.model, "dimension": int(self.embeddings.shape[1]), "count": len(self.rows)}
        (directory / PARAMS).write_text(json.dumps(params, indent=2), encoding="utf-8")

    def _write_rows(self, path: Path) -> None:
        with path.open("w", encoding="utf-8") as handle:
            for row in self.rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    def _write_embeddings(self, path: Path) -> None:
        with path.open("wb") as handle:
            np.save(handle, self.embeddings)

    def upsert(self, rows: Iterable[dict[str, Any]], embed_text: Callable[[dict], str],
               encode: Callable[[list[str]], np.ndarray]) -> tuple[int, int]:
        """Add new ids, replace changed ones, re-encode only changed text. Returns (added, updated)."""
        changed: dict[str, dict[str, Any]] = {}
        for row in rows:
            row = {**row, "content_hash": content_hash(embed_text(row))}
            index = self.position.get(row["id"])
            if index is None or self.rows[index] != row:
                changed[row["id"]] = row
        to_encode = [row for row_id, row in changed.items() if row_id not in self.position
                     or self.rows[self.position[row_id]]["content_hash"] != row["content_hash"]]
        vectors = dict(zip([r["id"] for r in to_encode], encode([embed_text(r) for r in to_encode]))) if to_encode else {}
        added = [row for row_id, row in changed.items() if row_id not in self.position]
        for row_id, row in changed.items():
            if row_id in self.position:
                self.rows[self.position[row_id]] = row
                if row_id in vectors:
                    self.embeddings[self.position[row_id]] = vectors[row_id]
        for row in added:
            self.position[row["id"]] = len(self.rows)
            self.rows.append(row)
        if added:
            self.embeddings = np.vstack([self.embeddings, np.stack([vectors[r["id"]] for r in added])]).astype(np.float32)
        return len(added), len(changed) - len(added)
