"""What the OpenSearch backend sends, checked without a cluster: mappings, query bodies, bulk
actions, score conversion and the errors a user sees."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from service.search.opensearch import (
    OpenSearchQAIndex,
    bm25_query,
    bulk_actions,
    cosine,
    knn_query,
    mapping,
    mapping_problems,
)
from service.search.protocol import SearchUnavailableError


def test_qa_mapping_is_an_hnsw_cosine_knn_vector_on_lucene():
    body = mapping(384, with_text=False)
    assert body["settings"]["index"]["knn"] is True
    vector = body["mappings"]["properties"]["embedding"]
    assert vector["type"] == "knn_vector" and vector["dimension"] == 384
    assert vector["method"]["name"] == "hnsw"
    assert (vector["method"]["space_type"], vector["method"]["engine"]) == ("cosinesimil", "lucene")
    assert "text" not in body["mappings"]["properties"]
    assert body["mappings"]["properties"]["record"] == {"type": "object", "enabled": False}


def test_passage_mapping_adds_bm25_text_with_english_stop_words():
    body = mapping(384, with_text=True)
    assert body["mappings"]["properties"]["text"] == {"type": "text", "analyzer": "tutorqa_en"}
    analyzer = body["settings"]["analysis"]["analyzer"]["tutorqa_en"]
    assert analyzer["filter"] == ["lowercase", "tutorqa_stop"]
    assert body["settings"]["analysis"]["filter"]["tutorqa_stop"]["stopwords"] == "_english_"


def test_an_existing_index_built_for_another_model_is_reported():
    wanted = mapping(384, with_text=True)
    existing = {"properties": {**wanted["mappings"]["properties"],
                               "embedding": {"type": "knn_vector", "dimension": 768,
                                             "method": {"space_type": "l2"}}}}
    problems = mapping_problems(existing, wanted)
    assert "embedding dimension is 768, the model gives 384" in problems
    assert "embedding space_type is 'l2', not 'cosinesimil'" in problems
    del existing["properties"]["text"]
    assert "field 'text' is missing" in mapping_problems(existing, wanted)
    assert mapping_problems(wanted["mappings"], wanted) == []


def test_scores_are_converted_back_to_cosines():
    assert cosine(1.0) == 1.0 and cosine(0.5) == 0.0 and cosine(0.9) == pytest.approx(0.8)


def test_query_bodies_leave_the_vector_out_of_the_reply():
    knn = knn_query(np.array([0.5, -0.5], dtype=np.float32), 10)
    assert knn["query"] == {"knn": {"embedding": {"vector": [0.5, -0.5], "k": 100}}} and knn["size"] == 10
    text = bm25_query('C++: "energy"', 20)
    assert text["query"] == {"match": {"text": {"query": 'C++: "energy"'}}} and text["size"] == 20
    assert knn["_source"] == text["_source"] == {"excludes": ["embedding"]}


def test_bulk_indexes_with_a_vector_and_updates_without_one():
    rows = [{"id": "p1", "text": "Water boils.", "title": "Water", "content_hash": "h1"},
            {"id": "p2", "text": "Ice melts.", "title": "Ice", "content_hash": "h2"}]
    new, kept = bulk_actions("tutorqa-passages", rows, [np.array([1.0, 0.0]), None], text_field="text")
    assert (new["_op_type"], new["_id"], new["_index"]) == ("index", "p1", "tutorqa-passages")
    assert new["_source"]["embedding"] == [1.0, 0.0] and new["_source"]["text"] == "Water boils."
    assert new["_source"]["record"] == rows[0] and new["_source"]["record_hash"]
    assert (kept["_op_type"], kept["_id"]) == ("update", "p2") and "embedding" not in kept["doc"]


def test_an_unreachable_cluster_is_a_clear_error():
    with pytest.raises(SearchUnavailableError, match=r"OpenSearch at http://127.0.0.1:9 is unreachable"):
        OpenSearchQAIndex.load("http://127.0.0.1:9", "tutorqa-qa", timeout_s=2)


def test_indexing_into_an_unreachable_cluster_exits_with_the_reason(tmp_path):
    source = tmp_path / "qa.jsonl"
    source.write_text('{"id": "q1", "question": "What is H2O?", "answer": "water"}\n')
    done = subprocess.run([sys.executable, "-m", "service.cli", "index", "qa", str(source)], capture_output=True,
                          text=True, timeout=120,
                          env={"SEARCH_BACKEND": "opensearch", "OPENSEARCH_URL": "http://127.0.0.1:9",
                               "TUTORQA_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2
    assert "error: OpenSearch at http://127.0.0.1:9 is unreachable" in done.stderr
