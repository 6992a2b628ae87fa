"""`tutorqa eval match FILE.jsonl`: does the bank match the same question, and only that?

Lines: {"query": str, "expect": qa_id or null, "options": [...], "answer": str}; options and answer are
optional. Each query goes through the service's own choice (`service.match.choose`: best entry at or
above the threshold whose answer is one of the query's options, if it has any). Top-1 accuracy =
paraphrases matched to the expected entry; false-match rate = unrelated queries matched to an entry
that gives another answer than theirs; `any_match_rate_unrelated` also counts matches that give the
query's own right answer (the same question, asked in another data set). Figures at the configured MATCH_THRESHOLD, and the curve of both against the
threshold. `best_threshold_on_this_file` is the highest threshold with the best accuracy among those
whose false-match rate is at most 2%: run on the development set, it is how MATCH_THRESHOLD is chosen.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from service.embedder import Embedder
from service.evaluation import cached_index, figure, save
from service.match import CANDIDATES, choose, normalise_option

THRESHOLDS = [round(float(t), 2) for t in np.arange(0.50, 0.991, 0.01)]
MAX_FALSE_MATCH = 0.02


def outcome(row: dict, hits: list, threshold: float) -> str:
    """What the matcher does with one line: hit / miss (paraphrase), wrong / same / none (unrelated)."""
    match = choose(hits, tuple(row.get("options") or ()), threshold)
    if row["expect"]:
        return "hit" if match is not None and match.qa_id == row["expect"] else "miss"
    if match is None:
        return "none"
    same = row.get("answer") is not None and normalise_option(match.answer) == normalise_option(row["answer"])
    return "same" if same else "wrong"


def figures(rows: list[dict], hits: list[list], threshold: float) -> dict[str, float | None]:
    outcomes = [outcome(row, found, threshold) for row, found in zip(rows, hits)]
    paraphrases = sum(bool(r["expect"]) for r in rows)
    unrelated = len(rows) - paraphrases
    rate = lambda *kinds: round(sum(o in kinds for o in outcomes) / unrelated, 4) if unrelated else None
    return {"threshold": threshold,
            "top1_accuracy": round(outcomes.count("hit") / paraphrases, 4) if paraphrases else None,
            "false_match_rate": rate("wrong"),
            "any_match_rate_unrelated": rate("wrong", "same")}


def evaluate(path: Path, bank: Path, embedder: Embedder, cache: Path, threshold: float) -> dict[str, Any]:
    index = cached_index(bank, cache, embedder, "qa")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    vectors = embedder.encode([r["query"] for r in rows], show_progress=True)
    hits = [index.search(vector, CANDIDATES) for vector in vectors]
    curve = [figures(rows, hits, t) for t in THRESHOLDS]
    allowed = [p for p in curve if p["false_match_rate"] is not None and p["false_match_rate"] <= MAX_FALSE_MATCH]
    best_here = max(allowed, key=lambda p: (p["top1_accuracy"] or 0, p["threshold"]))["threshold"] if allowed else None
    errors = []
    for row, found in zip(rows, hits):
        kind = outcome(row, found, threshold)
        if kind in ("miss", "wrong", "same"):
            top = found[0] if found else None
            errors.append({"outcome": kind, "query": row["query"], "expect": row["expect"], "answer": row.get("answer"),
                           "got": top.record.id if top else None, "got_answer": top.record.answer if top else None,
                           "score": round(top.score, 4) if top else None})
    return {
        **figures(rows, hits, threshold),
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
    axis.plot(xs, [p["false_match_rate"] for p in report["curve"]], label="false-match rate (unrelated, another answer)")
    axis.plot(xs, [p["any_match_rate_unrelated"] for p in report["curve"]], linestyle=":",
              label="any match (unrelated)")
    axis.axvline(report["threshold"], color="grey", linewidth=0.8)
    axis.annotate(f"MATCH_THRESHOLD {report['threshold']}", (report["threshold"], 0.5), xytext=(5, 0),
                  textcoords="offset points")
    axis.set(xlabel="threshold", ylabel="rate", ylim=(0, 1.02),
             title=f"bank matching, {report['bank_size']} bank questions, {Path(report['file']).name}")
    axis.grid(alpha=0.3)
    axis.legend(loc="center left", fontsize=8)
    save(fig, path)


def headline(report: dict[str, Any]) -> str:
    keys = ("n", "threshold", "top1_accuracy", "false_match_rate", "any_match_rate_unrelated",
            "best_threshold_on_this_file", "bank_size")
    return "\n".join(f"{key:>28}: {report[key]}" for key in keys)
