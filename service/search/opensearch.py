"""The OpenSearch backend (opensearch-py): a k-NN index for the Q&A bank, a BM25 + k-NN index for passages.

Vectors live in `knn_vector` fields (HNSW, `cosinesimil`, engine `lucene`). OpenSearch scores a
cosine match as (1 + cos) / 2; `cosine()` converts back so that thresholds mean what they mean on
the embedded backend. Passage text uses the same analysis as the embedded BM25 index (words,
lower case, Lucene's English stop words).

Every call to the cluster goes through `_cluster()`, which turns transport failures into
`SearchUnavailableError` (a clear message naming the URL) and mapping clashes into
`MappingConflictError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import ConnectionError as TransportConnectionError
from opensearchpy.exceptions import NotFoundError, RequestError, TransportError

from service.models import Passage, QARecord
from service.search.protocol import Hit, MappingConflictError, SearchUnavailableError
from service.search.store import IndexMissingError, record_hash

HNSW = {"name": "hnsw", "space_type": "cosinesimil", "engine": "lucene",
        "parameters": {"m": 16, "ef_construction": 128}}
ANALYSIS = {"analyzer": {"tutorqa_en": {"type": "custom", "tokenizer": "standard",
                                        "filter": ["lowercase", "tutorqa_stop"]}},
            "filter": {"tutorqa_stop": {"type": "stop", "stopwords": "_english_"}}}
BULK_CHUNK = 500
BULK_RETRIES = 5            # on 429 "too many requests", with exponential back-off
NO_VECTOR = {"excludes": ["embedding"]}
KNN_CANDIDATES = 100


def cosine(score: float) -> float:
    """OpenSearch's cosinesimil score (1 + cos) / 2, back to the cosine."""
    return 2.0 * score - 1.0


def mapping(dimension: int, with_text: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "id": {"type": "keyword"},
        "content_hash": {"type": "keyword"},
        "record_hash": {"type": "keyword"},
        "record": {"type": "object", "enabled": False},   # the whole record, returned, not searched
        "embedding": {"type": "knn_vector", "dimension": dimension, "method": HNSW},
    }
    settings: dict[str, Any] = {"index": {"knn": True}}
    if with_text:
        properties["text"] = {"type": "text", "analyzer": "tutorqa_en"}
        settings["analysis"] = ANALYSIS
    return {"settings": settings, "mappings": {"dynamic": "strict", "properties": properties}}


def mapping_problems(existing: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """What in an existing index's mapping clashes with the one this service writes."""
    have = existing.get("properties", {})
    problems = []
    for name, field in wanted["mappings"]["properties"].items():
        if name not in have:
            problems.append(f"field {name!r} is missing")
        elif have[name].get("type", "object") != field["type"]:
            problems.append(f"field {name!r} is {have[name].get('type', 'object')!r}, not {field['type']!r}")
    vector = have.get("embedding", {})
    want = wanted["mappings"]["properties"]["embedding"]
    if vector.get("type") == "knn_vector":
        if vector.get("dimension") != want["dimension"]:
            problems.append(f"embedding dimension is {vector.get('dimension')}, the model gives {want['dimension']}")
        space = vector.get("method", {}).get("space_type")
        if space != HNSW["space_type"]:
            problems.append(f"embedding space_type is {space!r}, not {HNSW['space_type']!r}")
    return problems


def knn_query(vector: np.ndarray, k: int) -> dict[str, Any]:
    """The lucene engine explores `k` candidates per segment: asking for at least KNN_CANDIDATES keeps
    recall up for the bank's top 5 (as the embedded graph's expansion_search does); `size` trims."""
    return {"size": k, "_source": NO_VECTOR,
            "query": {"knn": {"embedding": {"vector": [float(x) for x in vector], "k": max(k, KNN_CANDIDATES)}}}}


def bm25_query(text: str, k: int) -> dict[str, Any]:
    """An analysed `match` query: the OR of the text's terms, no query syntax."""
    return {"size": k, "_source": NO_VECTOR, "query": {"match": {"text": {"query": text}}}}


def document(row: dict[str, Any], text_field: str | None) -> dict[str, Any]:
    body = {"id": row["id"], "content_hash": row["content_hash"], "record_hash": record_hash(row), "record": row}
    if text_field:
        body["text"] = row[text_field]
    return body


def bulk_actions(index: str, rows: list[dict[str, Any]], vectors: list[np.ndarray | None],
                 text_field: str | None) -> Iterator[dict[str, Any]]:
    """`index` (whole document) where there is a new vector, `update` (vector kept) where there is none."""
    for row, vector in zip(rows, vectors):
        body = document(row, text_field)
        if vector is None:
            yield {"_op_type": "update", "_index": index, "_id": row["id"], "doc": body}
        else:
            yield {"_op_type": "index", "_index": index, "_id": row["id"],
                   "_source": {**body, "embedding": [float(x) for x in vector]}}


class _OpenSearchIndex:
    BUILD_HINT = ""
    TEXT_FIELD: str | None = None
    to_record = staticmethod(dict)

    def __init__(self, client: OpenSearch, name: str, url: str) -> None:
        self.client = client
        self.name = name
        self.url = url

    @contextlib.contextmanager
    def _cluster(self) -> Iterator[None]:
        try:
            yield
        except TransportConnectionError as error:
            raise SearchUnavailableError(f"OpenSearch at {self.url} is unreachable: {error.info or error}") from None
        except helpers.BulkIndexError as error:
            first = error.errors[0] if error.errors else {}
            raise SearchUnavailableError(f"OpenSearch rejected {len(error.errors)} documents of {self.name!r}, "
                                         f"first: {first}") from None
        except TransportError as error:
            if isinstance(error, RequestError) and "mapper" in str(error.error):
                raise MappingConflictError(f"index {self.name!r} refused a document: {error.info}") from None
            raise SearchUnavailableError(f"OpenSearch at {self.url} failed on {self.name!r}: "
                                         f"{error.status_code} {error.error}") from None

    @classmethod
    def connect(cls, url: str, name: str, timeout_s: float = 10.0):
        """A handle on the index, without asking the cluster anything yet."""
        return cls(OpenSearch(hosts=[url], timeout=timeout_s, max_retries=2, retry_on_timeout=True, http_compress=True),
                   name, url)

    @classmethod
    def load(cls, url: str, name: str, timeout_s: float = 10.0):
        """For serving: the index must exist."""
        index = cls.connect(url, name, timeout_s)
        with index._cluster():
            if not index.client.indices.exists(index=name):
                raise IndexMissingError(f"no index {name!r} at {url}: build it with `{cls.BUILD_HINT}`")
        return index

    @classmethod
    def open(cls, url: str, name: str, dimension: int, timeout_s: float = 60.0):
        """For writing: creates the index with its mapping, or checks that the existing one fits."""
        index = cls.connect(url, name, timeout_s)
        wanted = mapping(dimension, with_text=cls.TEXT_FIELD is not None)
        with index._cluster():
            if not index.client.indices.exists(index=name):
                index.client.indices.create(index=name, body=wanted)
                return index
            existing = index.client.indices.get_mapping(index=name)[name]["mappings"]
        if problems := mapping_problems(existing, wanted):
            raise MappingConflictError(f"index {name!r} at {url} does not fit: {'; '.join(problems)}. "
                                       "Delete it or choose another OPENSEARCH_INDEX_PREFIX")
        return index

    def count(self) -> int:
        with self._cluster():
            return int(self.client.count(index=self.name)["count"])

    def hashes(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        if not ids:
            return {}
        with self._cluster():
            found = self.client.mget(index=self.name, body={"ids": ids},
                                     _source_includes=["content_hash", "record_hash"])["docs"]
        return {d["_id"]: (d["_source"]["content_hash"], d["_source"]["record_hash"]) for d in found if d.get("found")}

    def upsert(self, rows: list[dict[str, Any]], vectors: list[np.ndarray | None]) -> None:
        with self._cluster():
            helpers.bulk(self.client, bulk_actions(self.name, rows, vectors, self.TEXT_FIELD), chunk_size=BULK_CHUNK,
                         max_retries=BULK_RETRIES)

    def delete(self, ids: list[str]) -> int:
        actions = ({"_op_type": "delete", "_index": self.name, "_id": record_id} for record_id in ids)
        with self._cluster():
            deleted, _ = helpers.bulk(self.client, actions, chunk_size=BULK_CHUNK, max_retries=BULK_RETRIES,
                                      raise_on_error=False, ignore_status=(404,))
        return int(deleted)

    def save(self, complete: bool = True) -> None:
        """Refresh: what was written becomes searchable (durability is the cluster's translog)."""
        with self._cluster():
            self.client.indices.refresh(index=self.name)

    def get(self, record_id: str):
        with self._cluster():
            try:
                found = self.client.get(index=self.name, id=record_id, _source_includes=["record"])
            except NotFoundError:
                return None
        return self.to_record(found["_source"]["record"])

    def _hits(self, body: dict[str, Any], score=float) -> list[Hit]:
        with self._cluster():
            hits = self.client.search(index=self.name, body=body)["hits"]["hits"]
        return [Hit(self.to_record(h["_source"]["record"]), score(h["_score"])) for h in hits]


class OpenSearchQAIndex(_OpenSearchIndex):
    BUILD_HINT = "SEARCH_BACKEND=opensearch tutorqa index qa FILE.jsonl"
    to_record = staticmethod(QARecord.from_row)

    def search(self, vector: np.ndarray, k: int) -> list[Hit]:
        return self._hits(knn_query(vector, k), cosine)


class OpenSearchPassageIndex(_OpenSearchIndex):
    BUILD_HINT = "SEARCH_BACKEND=opensearch tutorqa index passages FILE.jsonl"
    TEXT_FIELD = "text"
    to_record = staticmethod(Passage.from_row)

    def search(self, text: str, k: int) -> list[Hit]:
        return self._hits(bm25_query(text, k))

    def search_vector(self, vector: np.ndarray, k: int) -> list[Hit]:
        return self._hits(knn_query(vector, k), cosine)

    def embeddings(self, passage_ids: list[str]) -> np.ndarray:
        with self._cluster():
            found = self.client.mget(index=self.name, body={"ids": passage_ids}, _source_includes=["embedding"])["docs"]
        vectors = {d["_id"]: d["_source"]["embedding"] for d in found if d.get("found")}
        return np.asarray([vectors[pid] for pid in passage_ids], dtype=np.float32)
