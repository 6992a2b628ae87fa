"""Records and their embeddings kept as plain files in one index folder (never pickle).

Layout: `records.jsonl` (one record per line; memory-mapped when serving), `keys.tsv` (id and hashes
per line, read at load so that the records themselves are parsed only when a search returns them), `embeddings.npy` (float32,
same order), `params.json` (model, dimension, count). Records are replaced by id; a deleted record's
place is taken by the last one, so positions stay dense.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

RECORDS, KEYS, EMBEDDINGS, PARAMS = "records.jsonl", "keys.tsv", "embeddings.npy", "params.json"


def content_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def record_json(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True)


def record_hash(row: dict[str, Any]) -> str:
    return content_hash(record_json(row))


class IndexMissingError(FileNotFoundError):
    """The index folder has not been built (or its build was interrupted); says which command builds it."""


def read_lines(path: Path) -> list[str]:
    """Lines split on "\n" only: str.splitlines() would also split inside JSON strings at U+2028 and kin."""
    with path.open(encoding="utf-8", newline="") as handle:
        text = handle.read()
    return text.split("\n")[:-1] if text else []


class MappedLines:
    """The lines of a file, memory-mapped: a million records cost their line offsets, not a million
    Python strings, and a line is decoded when a search returns it."""

    SCAN = 64 * 1024 * 1024

    def __init__(self, path: Path) -> None:
        with path.open("rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if path.stat().st_size else b""
        ends = [start + np.flatnonzero(np.frombuffer(self._map[start:start + self.SCAN], dtype=np.uint8) == 10)
                for start in range(0, len(self._map), self.SCAN)]
        self._ends = np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64)
        self._starts = np.concatenate(([0], self._ends[:-1] + 1)) if len(self._ends) else self._ends

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, position: int) -> str:
        return self._map[self._starts[position]:self._ends[position]].decode("utf-8")


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Write beside the target, then rename: a reader never sees half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    write(temporary)
    os.replace(temporary, path)


class RecordStore:
    """An id-keyed table of JSON records with one embedding per record."""

    def __init__(self, lines: list[str] | MappedLines, keys: list[tuple[str, str, str]] | None, embeddings: np.ndarray,
                 model: str, ids: list[str] | None = None) -> None:
        self.lines = lines                       # record JSON, decoded on access
        self.keys = keys                         # (id, content hash, record hash); None when loaded read-only
        self._embeddings = embeddings            # may hold spare rows beyond len(self)
        self.model = model
        self.position = {record_id: i for i, record_id in enumerate(ids if keys is None else (k[0] for k in keys))}

    @classmethod
    def empty(cls, model: str, dimension: int) -> "RecordStore":
        return cls([], [], np.zeros((0, dimension), dtype=np.float32), model)

    @classmethod
    def load(cls, directory: Path, build_hint: str, writable: bool = False) -> "RecordStore":
        """Read-only loads map the embeddings from disk instead of reading them and refuse an unfinished
        index; writable loads take it, to resume the run."""
        if not (directory / PARAMS).exists():
            raise IndexMissingError(f"no index in {directory}: build it with `{build_hint}`")
        params = json.loads((directory / PARAMS).read_text(encoding="utf-8"))
        if not writable and not params.get("complete", True):
            raise IndexMissingError(f"indexing into {directory} was interrupted: finish it with `{build_hint}`")
        if writable:
            lines = read_lines(directory / RECORDS)
            if (directory / KEYS).exists():
                keys = [tuple(line.split("\t")) for line in read_lines(directory / KEYS)]
            else:   # written before keys.tsv existed: derive them once from the records
                keys = [(row["id"], row["content_hash"], record_hash(row)) for row in map(json.loads, lines)]
            store = cls(lines, keys, np.load(directory / EMBEDDINGS), params["model"])
        else:
            if not (directory / KEYS).exists():
                raise IndexMissingError(f"{directory} was written by an older version: upgrade it with `{build_hint}`")
            ids = [line.split("\t", 1)[0] for line in read_lines(directory / KEYS)]
            store = cls(MappedLines(directory / RECORDS), None, np.load(directory / EMBEDDINGS, mmap_mode="r"),
                        params["model"], ids)
        if not len(store.lines) == len(store.position) == len(store.embeddings) == params["count"]:
            raise ValueError(f"{directory}: {len(store.lines)} records, {len(store.position)} keys and "
                             f"{len(store.embeddings)} embeddings (params say {params['count']}): "
                             f"rebuild it with `{build_hint}`")
        return store

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def embeddings(self) -> np.ndarray:
        return self._embeddings[:len(self.lines)]

    @property
    def dimension(self) -> int:
        return int(self._embeddings.shape[1])

    def row(self, position: int) -> dict[str, Any]:
        return json.loads(self.lines[position])

    def _check_writable(self) -> None:
        if self.keys is None:
            raise RuntimeError("this index was loaded read-only, for serving: open it for writing")

    def hashes(self, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """(content hash, record hash) of the ids that are stored."""
        self._check_writable()
        return {i: self.keys[p][1:] for i in ids if (p := self.position.get(i)) is not None}

    def put(self, rows: list[dict[str, Any]], vectors: list[np.ndarray | None]) -> list[int]:
        """Add or replace rows (each with `id` and `content_hash`); a None vector keeps the stored one.
        Returns the positions written."""
        self._check_writable()
        self._reserve(len(self) + len(rows))
        positions = []
        for row, vector in zip(rows, vectors):
            line = record_json(row)
            key = (row["id"], row["content_hash"], content_hash(line))
            position = self.position.get(row["id"])
            if position is None:
                if vector is None:
                    raise ValueError(f"record {row['id']!r} is new and needs a vector")
                position = self.position[row["id"]] = len(self.lines)
                self.lines.append(line)
                self.keys.append(key)
            else:
                self.lines[position], self.keys[position] = line, key
            if vector is not None:
                self._embeddings[position] = vector
            positions.append(position)
        return positions

    def delete(self, ids: Iterable[str]) -> tuple[list[int], list[int]]:
        """Remove ids; the last record moves into each freed place.
        Returns (positions that now hold another record, positions no longer used)."""
        self._check_writable()
        moved, dropped = set(), []
        for record_id in ids:
            position = self.position.pop(record_id, None)
            if position is None:
                continue
            last = len(self.lines) - 1
            if position != last:
                self.lines[position], self.keys[position] = self.lines[last], self.keys[last]
                self._embeddings[position] = self._embeddings[last]
                self.position[self.keys[position][0]] = position
                moved.add(position)
            moved.discard(last)
            dropped.append(last)
            self.lines.pop()
            self.keys.pop()
        return sorted(moved), dropped

    def _reserve(self, size: int) -> None:
        """Grow the embedding buffer geometrically: adding a chunk must not copy the whole matrix."""
        if size <= len(self._embeddings) and self._embeddings.flags.writeable:
            return
        grown = np.zeros((max(size, 2 * len(self._embeddings), 1024), self.dimension), dtype=np.float32)
        grown[:len(self)] = self.embeddings
        self._embeddings = grown

    def save(self, directory: Path, complete: bool = True) -> None:
        """Records, keys and embeddings first, params last: params name a consistent set."""
        self._check_writable()
        directory.mkdir(parents=True, exist_ok=True)
        write_atomically(directory / RECORDS, lambda path: path.write_text(
            "".join(line + "\n" for line in self.lines), encoding="utf-8"))
        write_atomically(directory / KEYS, lambda path: path.write_text(
            "".join("\t".join(key) + "\n" for key in self.keys), encoding="utf-8"))
        write_atomically(directory / EMBEDDINGS, self._write_embeddings)
        params = {"model": self.model, "dimension": self.dimension, "count": len(self), "complete": complete}
        write_atomically(directory / PARAMS, lambda path: path.write_text(json.dumps(params, indent=2), encoding="utf-8"))

    def _write_embeddings(self, path: Path) -> None:
        with path.open("wb") as handle:
            np.save(handle, np.ascontiguousarray(self.embeddings))
