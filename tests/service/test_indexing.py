"""`tutorqa index`: idempotent upserts, malformed lines reported by number, good lines kept, resumable runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from service import indexing
from service.cli import main
from service.indexing import index_passages, index_qa
from service.search.embedded import EmbeddedPassageIndex, EmbeddedQAIndex
from service.search.store import IndexMissingError


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


class InterruptedRun(Exception):
    pass


class EmbedderThatStops:
    """The real model, stopped (like a Ctrl-C) at its `stop_at`-th call."""

    def __init__(self, model, stop_at: int) -> None:
        self.model, self.stop_at, self.calls = model, stop_at, 0
        self.name, self.dimension = model.name, model.dimension

    def encode(self, texts, show_progress=False):
        self.calls += 1
        if self.calls == self.stop_at:
            raise InterruptedRun
        return self.model.encode(texts)


def test_an_interrupted_run_resumes_from_its_last_checkpoint(tmp_path, embedder, monkeypatch):
    monkeypatch.setattr(indexing, "CHUNK", 2)
    source = write_jsonl(tmp_path / "qa.jsonl", [{"id": f"q{i}", "question": f"What is element number {i}?",
                                                  "answer": str(i)} for i in range(6)])
    with pytest.raises(InterruptedRun):
        index_qa(source, tmp_path / "qa", EmbedderThatStops(embedder, stop_at=3), checkpoint_s=0)
    with pytest.raises(IndexMissingError, match="interrupted"):
        EmbeddedQAIndex.load(tmp_path / "qa")            # a half-built index is never served
    resumed = index_qa(source, tmp_path / "qa", embedder)
    assert (resumed.encoded, resumed.added, resumed.total) == (2, 2, 6)
    assert EmbeddedQAIndex.load(tmp_path / "qa").count() == 6


def test_derived_search_structures_are_rebuilt_by_the_index_command(tmp_path, embedder):
    source = write_jsonl(tmp_path / "passages.jsonl", [{"id": "p1", "text": "Water boils at 100 degrees."},
                                                       {"id": "p2", "text": "Ice melts at 0 degrees."}])
    index_passages(source, tmp_path / "passages", embedder)
    (tmp_path / "passages" / "vectors.usearch").unlink()
    with pytest.raises(IndexMissingError, match="tutorqa index passages"):
        EmbeddedPassageIndex.load(tmp_path / "passages")
    again = index_passages(source, tmp_path / "passages", embedder)
    assert again.encoded == 0
    assert EmbeddedPassageIndex.load(tmp_path / "passages").search("ice", 2)[0].record.passage_id == "p2"


def test_ids_that_would_break_the_key_file_are_rejected(tmp_path, embedder):
    source = write_jsonl(tmp_path / "qa.jsonl", [{"id": "a\tb", "question": "What is H2O?", "answer": "water"},
                                                 {"id": "ok", "question": "What is H2O?", "answer": "water"}])
    report = index_qa(source, tmp_path / "qa", embedder)
    assert report.total == 1 and report.rejected[0].startswith("line 1: id:")


def test_tutorqa_delete_removes_records_by_id(tmp_path, embedder, monkeypatch, capsys):
    data = tmp_path / "data"
    shutil.copytree(embedder.cache_dir, data / "models")   # the ONNX export, not made again
    source = write_jsonl(tmp_path / "qa.jsonl", [{"id": "q1", "question": "What is H2O?", "answer": "water"},
                                                 {"id": "q2", "question": "What is NaCl?", "answer": "salt"}])
    index_qa(source, data / "indexes" / "qa", embedder)
    monkeypatch.setenv("TUTORQA_DATA_DIR", str(data))
    assert main(["delete", "qa", "q1", "never-indexed"]) == 0
    assert "qa: deleted 1 of 2 ids; index holds 1" in capsys.readouterr().out
    index = EmbeddedQAIndex.load(data / "indexes" / "qa")
    assert index.get("q1") is None and index.get("q2").answer == "salt"
    assert main(["delete", "qa"]) == 2
    assert "name the ids to delete" in capsys.readouterr().err


def test_a_second_writer_is_refused_while_the_first_runs(tmp_path):
    script = ("import sys, time; from pathlib import Path; from service.search.embedded import EmbeddedQAIndex; "
              "EmbeddedQAIndex.open(Path(sys.argv[1]), 'model', 4); print('open', flush=True); time.sleep(30)")
    first = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "qa")], stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "open"
        with pytest.raises(ValueError, match="another process is writing"):
            EmbeddedQAIndex.open(tmp_path / "qa", "model", 4)
    finally:
        first.kill()
        first.wait()
