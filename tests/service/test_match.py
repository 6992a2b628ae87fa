"""Bank matching: the same question found in other words, an unrelated one not matched."""

from __future__ import annotations

import json
from pathlib import Path

from service.evaluation.match import evaluate
from service.match import normalise_option, option_letter

ROOT = Path(__file__).resolve().parents[2]


def test_option_letters_follow_the_students_options():
    assert normalise_option("The chloroplasts.") == normalise_option("chloroplast")
    assert option_letter("the chloroplast", ("mitochondrion", "chloroplast", "nucleus")) == "B"
    assert option_letter("chloroplast", ("mitochondrion", "nucleus")) is None


def test_match_evaluation_on_the_demo_bank(tmp_path, embedder):
    queries = [
        {"query": "which organelle, specific to plant cells, is responsible for photosynthesis", "expect": "sciq/train/1592"},
        {"query": "WHERE IN THE CELL DOES PHOTOSYNTHESIS OCCUR", "expect": "sciq/train/639"},
        {"query": "Who wrote the novel Pride and Prejudice?", "expect": None},
        {"query": "What is the capital city of Mongolia?", "expect": None},
    ]
    path = tmp_path / "match.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in queries))
    report = evaluate(path, ROOT / "data" / "demo" / "qa.jsonl", embedder, tmp_path, threshold=0.8)
    assert (report["n"], report["paraphrases"], report["unrelated"]) == (4, 2, 2)
    assert report["top1_accuracy"] == 1.0 and report["false_match_rate"] == 0.0
    assert report["curve"][0]["threshold"] == 0.5 and report["bank_size"] == 400
