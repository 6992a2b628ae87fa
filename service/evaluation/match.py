"""`tutorqa eval match FILE.jsonl`: does the bank match the same question, and only that?

Lines: {"query": str, "expect": qa_id or null}. Top-1 accuracy = paraphrases whose best bank entry is
the expected one at or above the threshold; false-match rate = unrelated queries whose best entry
reaches the threshold. Figures at the configured MATCH_THRESHOLD, and the curve of both against the
threshold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from service.embedder import Embedder
from service.evaluation import figure, save
from service.evaluation.references import cache_key
from service.indexing import index_qa
from service.search.embedded import EmbeddedQAIndex

THRESHOLDS = [round(float(t), 2) for t in np.arange(0.50, 0.991, 0.01)]
MAX_FALSE_MATCH = 0.02


def bank_index(bank: Path, cache: Path, embedder: Embedder) -> EmbeddedQAIndex:
    directory = cache / f"bank-{cache_key(bank, embedder)}"
    if not (directory / "params.json").exists():
        index_qa(bank, directory, embedder)
    return EmbeddedQAIndex.load(directory)


def figures(rows: list[dict], best: list[tuple[str, float]], threshold: float) -> dict[str, float | None]:
    paraphrases = [(r, b) for r, b in zip(rows, best) if r["expect"]]
    unrelated = [(r, b) for r, b in zip(rows, best) if not r["expect"]]
    hits = sum(qa_id == r["expect"] and score >= threshold for r, (qa_id, score) in paraphrases)
    false = sum(score >= threshold for _, (_, score) in unrelated)
    return {"threshold": threshold,
            "top1_accuracy": round(hits / len(paraphrases), 4) if paraphrases else None,
            "false_match_rate": round(false / len(unrelated), 4) if unrelated else None}


def evaluate(path: Path, bank: Path, embedder: Embedder, cache: Path, threshold: float) -> dict[str, Any]:
    index = bank_index(bank, cache, embedder)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    vectors = embedder.encode([r["query"] for r in rows], show_progress=True)
    best = [(hit.record.id, hit.score) for hit in (index.search(v, 1)[0] for v in vectors)]
    curve = [figures(rows, best, t) for t in THRESHOLDS]
    allowed = [p for p in curve if p["false_match_rate"] is not None and p["false_match_rate"] <= MAX_FALSE_MATCH]
    best_here = max(allowed, key=lambda p: (p["top1_accuracy"] or 0, -p["threshold"]))["threshold"] if allowed else None
    errors = [{"query": r["query"], "expect": r["expect"], "got": qa_id, "score": round(score, 4)}
              for r, (qa_id, score) in zip(rows, best)
              if (r["expect"] and (qa_id != r["expect"] or score < threshold)) or (not r["expect"] and score >= threshold)]
    return {
        **figures(rows, best, threshold),
        "n": len(rows),
        "paraphrases": sum(bool(r["expect"]) for r in rows),
        "unrelated": sum(not r["expect"] for r in rows),
        "bank_size": index.count(),
        "file": str(path),
        "best_threshold_on_this_file": best_here,
        "max_false_match_rate": MAX_FALSE_MATCH,
        "curve": curve,
        "errors": errors[:200],
    }


def plot(report: dict[str, Any], path: Path) -> None:
    xs = [p["threshold"] for p in report["curve"]]
    fig, axis = figure(7, 4.2)
    axis.plot(xs, [p["top1_accuracy"] for p in report["curve"]], label="top-1 accuracy (paraphrases)")
    axis.plot(xs, [p["false_match_rate"] for p in report["curve"]], label="false-match rate (unrelated)")
    axis.axvline(report["threshold"], color="grey", linewidth=0.8)
    axis.annotate(f"MATCH_THRESHOLD {report['threshold']}", (report["threshold"], 0.5), xytext=(5, 0),
                  textcoords="offset points")
    axis.set(xlabel="threshold", ylabel="rate", ylim=(0, 1.02),
             title=f"bank matching, {report['bank_size']} bank questions, {Path(report['file']).name}")
    axis.grid(alpha=0.3)
    axis.legend(loc="center left", fontsize=8)
    save(fig, path)


def headline(report: dict[str, Any]) -> str:
    keys = ("n", "threshold", "top1_accuracy", "false_match_rate", "best_threshold_on_this_file", "bank_size")
    return "\n".join(f"{key:>28}: {report[key]}" for key in keys)
