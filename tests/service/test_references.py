"""References: what a student sees, and the evaluation that tunes them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from service.app import create_app
from service.evaluation.attribution import evaluate as evaluate_attribution
from service.evaluation.references import evaluate as evaluate_references
from service.models import Passage
from service.references import Candidate, ReferenceFinder, highlights, mentions
from tests.conftest import make_settings
from tests.support import PHOTOSYNTHESIS_MCQ

ROOT = Path(__file__).resolve().parents[2]


def test_references_carry_links_snippets_highlights_and_attribution(client, llm):
    llm.script({"steps": ["Photosynthesis happens in the chloroplast of plant cells.",
                          "Mitochondria release energy instead."]})
    body = client.post("/v1/answer", json={"query": PHOTOSYNTHESIS_MCQ, "user_id": "s1"}).get_json()
    reference = body["references"][0]
    start, end = reference["highlights"][0]
    assert reference["snippet"][start:end].lower() in {"photosynthesis", "chloroplast", "chloroplasts", "organelle",
                                                       "organelles", "site", "plant", "cell", "cells"}
    assert reference["url"] == f"http://127.0.0.1:8000/v1/passages/{reference['passage_id']}"
    assert body["references_skipped"] is None
    sentences = [a["sentence"] for a in body["attribution"]]
    assert sentences[0] == "chloroplast" and len(sentences) == 3
    first = body["attribution"][0]
    assert first["supported"] and first["passage_id"] in {r["passage_id"] for r in body["references"]}
    assert "chloroplast" in first["supporting_sentence"].lower()


def test_math_answers_say_why_there_are_no_references(client, llm):
    llm.script({"abstain": False, "abstain_reason": "", "steps": ["Four boxes of 12 eggs is 48 eggs."], "answer": "48"})
    body = client.post("/v1/answer", json={"query": "A box holds 12 eggs. How many eggs are in 4 boxes?",
                                           "user_id": "s1"}).get_json()
    assert body["references"] == [] and body["references_skipped"] == "math"


def test_whole_phrase_mentions_and_highlights():
    assert mentions("Photosynthesis occurs in the chloroplast.", "chloroplast")
    assert not mentions("Chloroplasts hold chlorophyll.", "chloroplast")
    assert highlights("The Chloroplast is green", {"chloroplast"}) == [[4, 15]]


def test_near_duplicate_passages_are_attached_once():
    vector = np.ones(4, dtype=np.float32) / 2
    twin = [Candidate(Passage(pid, "text", "t"), 0.9, True, 1.2, vector) for pid in ("a", "b")]
    other = Candidate(Passage("c", "other", "t"), 0.8, True, 1.1, np.array([1, 0, 0, 0], dtype=np.float32))
    finder = ReferenceFinder(embedder=None, passages=None, candidates=20, top_k=3, url_template="{passage_id}")
    assert [c.passage.passage_id for c in finder.select([*twin, other], 0.65)] == ["a", "c"]
    published = ReferenceFinder(None, None, 20, 3, "{passage_id}", mode="published")
    assert [c.passage.passage_id for c in published.select([*twin, other], 0.65)] == ["a", "b", "c"]


def test_reference_evaluation_reports_curves_and_beats_the_published_design(tmp_path, embedder):
    common = dict(corpus=ROOT / "data" / "demo" / "passages.jsonl",
                  questions=ROOT / "tests" / "data" / "sciq_demo_questions.jsonl",
                  embedder=embedder, cache=tmp_path, splits=("train",), limit=80)
    hybrid = evaluate_references(mode="hybrid", answer_weight=0.3, **common)
    published = evaluate_references(mode="published", answer_weight=0.0, **common)
    assert hybrid["train"]["n"] == 80 and hybrid["chosen_on"] == "train"
    assert [p["threshold"] for p in hybrid["curves"]["train"]][:2] == [0.3, 0.35]
    at = {r["mode"]: next(p for p in r["curves"]["train"] if p["threshold"] == 0.65) for r in (hybrid, published)}
    assert at["hybrid"]["recall"] >= at["published"]["recall"]
    assert at["hybrid"]["precision"] >= 0.85
    assert hybrid["latency_ms"]["p50"] > 0


def test_attribution_evaluation_on_a_scifact_shaped_folder(tmp_path, embedder):
    corpus = [{"doc_id": 1, "title": "t", "abstract": ["Aspirin lowers fever in adults.", "It was sunny."]},
              {"doc_id": 2, "title": "t", "abstract": ["Vitamin C does not cure colds.", "Mice were used."]}]
    claims = [{"id": 1, "claim": "Aspirin reduces fever.", "evidence": {"1": [{"sentences": [0], "label": "SUPPORT"}]},
               "cited_doc_ids": [1]},
              {"id": 2, "claim": "Vitamin C cures the common cold.",
               "evidence": {"2": [{"sentences": [0], "label": "CONTRADICT"}]}, "cited_doc_ids": [2]}]
    for name, rows in (("corpus.jsonl", corpus), ("claims_train.jsonl", claims), ("claims_dev.jsonl", claims),
                       ("claims_test_labeled_multivers.jsonl", claims)):
        (tmp_path / name).write_text("\n".join(json.dumps(r) for r in rows))
    report = evaluate_attribution(tmp_path, embedder)
    assert report["dev"]["top_sentence_rationale_rate"] == 1.0
    assert report["dev"]["pairs"] == 2 and 0.3 <= report["chosen_threshold"] <= 0.9


def test_reference_url_template_is_configurable(demo_data_dir, tmp_path, llm):
    settings = make_settings(demo_data_dir, tmp_path, llm.base_url,
                             REFERENCE_URL_TEMPLATE="https://learn.example.org/p/{passage_id}?from=tutor")
    client = create_app(settings).test_client()
    llm.script({"steps": ["Chloroplasts capture light for photosynthesis.", "They are in plant cells."]})
    body = client.post("/v1/answer", json={"query": PHOTOSYNTHESIS_MCQ, "user_id": "s1"}).get_json()
    assert body["references"]
    assert all(r["url"] == f"https://learn.example.org/p/{r['passage_id']}?from=tutor" for r in body["references"])
