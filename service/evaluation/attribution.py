"""`tutorqa eval attribution`: sentence attribution on SciFact (claims vs. abstract sentences).

- top-sentence rationale rate: for a claim with labelled evidence in a cited abstract, how often the
  abstract sentence the attributor picks is one of the labelled rationale sentences;
- supported flag: for each (claim, cited abstract), `supported` = best sentence cosine ≥ threshold,
  compared with the SUPPORT label (precision, recall, F1).
The threshold is chosen on `train` (best F1) and reported on `dev` and on the labelled `test`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from service.attribution import Attributor
from service.embedder import Embedder

THRESHOLDS = [round(float(t), 3) for t in np.arange(0.30, 0.9001, 0.025)]
SPLIT_FILES = {"train": "claims_train.jsonl", "dev": "claims_dev.jsonl", "test": "claims_test_labeled_multivers.jsonl"}


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def pairs(claims: list[dict], corpus: dict[int, list[str]]) -> list[dict]:
    """One row per (claim, cited abstract) with its rationale sentences and SUPPORT label."""
    rows = []
    for claim in claims:
        for doc_id in claim.get("cited_doc_ids", []):
            if doc_id not in corpus:
                continue
            evidence = claim.get("evidence", {}).get(str(doc_id), [])
            rows.append({"claim": claim["claim"], "sentences": corpus[doc_id],
                         "rationale": {i for e in evidence for i in e["sentences"]},
                         "supported": any(e["label"] == "SUPPORT" for e in evidence)})
    return rows


def score_rows(rows: list[dict], embedder: Embedder) -> list[tuple[int, float]]:
    """(index of the best sentence, its cosine) per row, in batches of one encode per split."""
    claims = embedder.encode([r["claim"] for r in rows], show_progress=True)
    flat = [s for r in rows for s in r["sentences"]]
    vectors = embedder.encode(flat, show_progress=True)
    results, start = [], 0
    for row, claim in zip(rows, claims):
        block = vectors[start:start + len(row["sentences"])] @ claim
        start += len(row["sentences"])
        best = int(np.argmax(block))
        results.append((best, float(block[best])))
    return results


def flag_figures(rows: list[dict], scored: list[tuple[int, float]], threshold: float) -> dict[str, float]:
    predicted = [score >= threshold for _, score in scored]
    truth = [r["supported"] for r in rows]
    tp = sum(p and t for p, t in zip(predicted, truth))
    precision = tp / max(sum(predicted), 1)
    recall = tp / max(sum(truth), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"threshold": threshold, "precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def evaluate(data: Path, embedder: Embedder) -> dict[str, Any]:
    corpus = {doc["doc_id"]: doc["abstract"] for doc in read_jsonl(data / "corpus.jsonl")}
    report: dict[str, Any] = {}
    scored_by_split = {}
    for split, name in SPLIT_FILES.items():
        rows = pairs(read_jsonl(data / name), corpus)
        scored_by_split[split] = (rows, score_rows(rows, embedder))
    train_rows, train_scored = scored_by_split["train"]
    chosen = max((flag_figures(train_rows, train_scored, t) for t in THRESHOLDS), key=lambda f: f["f1"])["threshold"]
    report["chosen_threshold"] = chosen
    report["chosen_on"] = "train"
    for split, (rows, scored) in scored_by_split.items():
        with_rationale = [(r, s) for r, s in zip(rows, scored) if r["rationale"]]
        top_rate = sum(best in r["rationale"] for r, (best, _) in with_rationale) / max(len(with_rationale), 1)
        report[split] = {"pairs": len(rows), "top_sentence_rationale_rate": round(top_rate, 4),
                         "pairs_with_rationale": len(with_rationale),
                         "supported_flag": flag_figures(rows, scored, chosen)}
    return report


def headline(report: dict[str, Any]) -> str:
    lines = [f"threshold {report['chosen_threshold']} (chosen on {report['chosen_on']})"]
    for split in SPLIT_FILES:
        r = report[split]
        lines.append(f"  {split}: top-sentence rationale rate {r['top_sentence_rationale_rate']} "
                     f"(n={r['pairs_with_rationale']}); supported flag {r['supported_flag']}")
    return "\n".join(lines)
