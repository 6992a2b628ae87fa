"""`tutorqa index`: idempotent upserts, malformed lines reported by number, good lines kept."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from service.indexing import index_passages, index_qa
from service.search.embedded import EmbeddedPassageIndex, EmbeddedQAIndex


def write_jsonl(path: Path, lines: list) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def test_qa_index_is_idempotent_and_replaces_by_id(tmp_path, embedder):
    records = [{"id": "q1", "question": "What is the site of photosynthesis?", "answer": "chloroplast"},
               {"id": "q2", "question": "What organelle makes ATP?", "answer": "mitochondrion"}]
    source = write_jsonl(tmp_path / "qa.jsonl", records)
    directory = tmp_path / "qa"
    first = index_qa(source, directory, embedder)
    assert (first.added, first.updated, first.total) == (2, 0, 2)
    again = index_qa(source, directory, embedder)
    assert (again.added, again.updated, again.total) == (0, 0, 2)

    records[1] = {**records[1], "question": "Which organelle produces most of the cell's ATP?"}
    changed = index_qa(write_jsonl(source, records), directory, embedder)
    assert (changed.added, changed.updated, changed.total) == (0, 1, 2)
    index = EmbeddedQAIndex.load(directory)
    vector = embedder.encode(["Which organelle produces most of the cell's ATP?"])[0]
    best = index.search(vector, 1)[0]
    assert best.record.id == "q2" and best.score > 0.99


def test_malformed_lines_are_rejected_with_line_numbers_and_good_ones_kept(tmp_path, embedder):
    source = write_jsonl(tmp_path / "qa.jsonl", [
        {"id": "ok1", "question": "What is H2O?", "answer": "water"},
        "{broken json",
        {"id": "no-answer", "question": "What is NaCl?"},
        {"id": "bad-letter", "question": "Pick one", "answer": "x", "options": ["x", "y"], "answer_option": "E"},
        {"id": "ok2", "question": "What is CO2?", "answer": "carbon dioxide", "explanation": "One.\nTwo."},
    ])
    report = index_qa(source, tmp_path / "qa", embedder)
    assert report.total == 2 and report.read == 5
    assert [line.split(":")[0] for line in report.rejected] == ["line 2", "line 3", "line 4"]
    assert "answer: Field required" in report.rejected[1]
    assert "answer_option" in report.rejected[2]
    record = EmbeddedQAIndex.load(tmp_path / "qa").get("ok2")
    assert record.explanation == ("One.", "Two.")


def test_passages_get_titles_embeddings_and_bm25(tmp_path, embedder):
    source = write_jsonl(tmp_path / "passages.jsonl", [
        {"passage_id": "p1", "text": "Chloroplasts capture light energy. They hold chlorophyll."},
        {"id": "p2", "text": "Mitochondria release energy from food.", "title": "Mitochondria"},
    ])
    index_passages(source, tmp_path / "passages", embedder)
    index = EmbeddedPassageIndex.load(tmp_path / "passages")
    assert index.get("p1").title == "Chloroplasts capture light energy."
    assert index.get("p2").title == "Mitochondria"
    assert [hit.record.passage_id for hit in index.search("chlorophyll light", 5)] == ["p1"]
    stored = index.embeddings(["p2"])[0]
    assert np.allclose(stored, embedder.encode(["Mitochondria release energy from food."])[0], atol=1e-5)
