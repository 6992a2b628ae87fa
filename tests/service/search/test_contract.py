"""One contract for every search backend: what the indexer and the pipeline rely on.

The embedded backend always runs. The OpenSearch run needs a cluster: set OPENSEARCH_URL (each run
uses fresh indexes named tutorqa-test-<random>-*, deleted afterwards); without it, it is skipped.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from service.search.backends import load_index, open_index
from service.search.store import content_hash
from service.settings import SearchSettings

QUESTIONS = {"q1": "What is the site of photosynthesis in plant cells?",
             "q2": "Which organelle produces most of the cell's ATP?",
             "q3": "What is the boiling point of water at sea level?"}
PASSAGES = {"p1": "Chloroplasts capture light energy. They hold chlorophyll, a green pigment.",
            "p2": "Mitochondria release energy from food in cellular respiration.",
            "p3": "Water boils at 100 degrees Celsius at sea level."}


@pytest.fixture(params=["embedded", "opensearch"])
def search(request: pytest.FixtureRequest, tmp_path) -> Iterator[SearchSettings]:
    if request.param == "embedded":
        yield SearchSettings(TUTORQA_DATA_DIR=tmp_path)
        return
    url = os.environ.get("OPENSEARCH_URL")
    if not url:
        pytest.skip("the OpenSearch contract run needs a cluster: set OPENSEARCH_URL")
    settings = SearchSettings(TUTORQA_DATA_DIR=tmp_path, SEARCH_BACKEND="opensearch", OPENSEARCH_URL=url,
                              OPENSEARCH_INDEX_PREFIX=f"tutorqa-test-{uuid.uuid4().hex[:8]}")
    yield settings
    from service.search.opensearch import OpenSearchQAIndex
    OpenSearchQAIndex.connect(url, "unused").client.indices.delete(index=f"{settings.opensearch_index_prefix}-*",
                                                                  ignore_unavailable=True)


def qa_rows(questions: dict[str, str]) -> list[dict]:
    return [{"id": i, "question": q, "answer": f"answer to {i}", "content_hash": content_hash(q)} for i, q in questions.items()]


def passage_rows(passages: dict[str, str]) -> list[dict]:
    return [{"id": i, "text": t, "title": t[:20], "content_hash": content_hash(t)} for i, t in passages.items()]


def written(search: SearchSettings, kind: str, rows: list[dict], embedder, field: str):
    index = open_index(search, kind, embedder.name, embedder.dimension)
    index.upsert(rows, list(embedder.encode([row[field] for row in rows])))
    index.save()
    return index


def test_vector_search_finds_the_question_with_its_true_cosine(search, embedder):
    written(search, "qa", qa_rows(QUESTIONS), embedder, "question")
    index = load_index(search, "qa")
    query = embedder.encode(["Where does photosynthesis take place in a plant cell?"])[0]
    hits = index.search(query, 3)
    assert index.count() == 3
    assert hits[0].record.id == "q1" and hits[0].record.answer == "answer to q1"
    expected = float(embedder.encode([QUESTIONS["q1"]])[0] @ query)
    assert hits[0].score == pytest.approx(expected, abs=2e-3)   # a cosine on every backend, not (1 + cos) / 2
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_same_id_replaces_and_delete_removes(search, embedder):
    index = written(search, "qa", qa_rows(QUESTIONS), embedder, "question")
    changed = qa_rows({"q3": "At what temperature does water freeze?"})
    index.upsert(changed, list(embedder.encode([changed[0]["question"]])))
    assert index.delete(["q2", "never-indexed"]) == 1
    index.save()
    served = load_index(search, "qa")
    assert served.count() == 2
    best = served.search(embedder.encode(["freezing point of water"])[0], 3)
    assert best[0].record.id == "q3" and best[0].record.question.startswith("At what temperature")
    assert "q2" not in {hit.record.id for hit in best}
    assert index.hashes(["q3", "q2"]) == {"q3": (changed[0]["content_hash"], index.hashes(["q3"])["q3"][1])}


def test_an_update_without_a_vector_keeps_the_stored_one(search, embedder):
    index = written(search, "qa", qa_rows(QUESTIONS), embedder, "question")
    relabelled = {**qa_rows(QUESTIONS)[0], "answer": "the chloroplast"}
    index.upsert([relabelled], [None])
    index.save()
    hit = load_index(search, "qa").search(embedder.encode([QUESTIONS["q1"]])[0], 1)[0]
    assert hit.record.answer == "the chloroplast" and hit.score > 0.99


def test_passages_by_words_by_vector_and_by_id(search, embedder):
    written(search, "passages", passage_rows(PASSAGES), embedder, "text")
    index = load_index(search, "passages")
    assert [hit.record.passage_id for hit in index.search("green pigment chlorophyll", 5)][0] == "p1"
    assert index.search("the of and", 5) == []                 # stop words alone match nothing
    assert index.search('C++: "energy" AND (food) -water', 5)   # no query syntax: punctuation is just text
    by_vector = index.search_vector(embedder.encode(["How do cells get energy from food?"])[0], 1)
    assert by_vector[0].record.passage_id == "p2"
    stored = index.embeddings(["p3", "p1"])
    assert np.allclose(stored, embedder.encode([PASSAGES["p3"], PASSAGES["p1"]]), atol=1e-4)
    assert index.get("p3").text == PASSAGES["p3"] and index.get("missing") is None
