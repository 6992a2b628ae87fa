"""`tutorqa eval references`: precision and recall of attached references on SciQ.

For each question with a support passage, the text to reference is the question and its correct
answer (and its explanation, where the file has one). A reference is relevant when it is the
question's own support passage or names the correct answer as a whole phrase (answers of four
characters or more). Precision = relevant references / references attached; recall = questions
with at least one relevant reference / questions; gold recall = questions whose support passage is
attached. The threshold is chosen on `valid` and reported on `test`.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from service.embedder import Embedder
from service.evaluation import cached_index, figure, save
from service.references import Candidate, ReferenceFinder, mentions

THRESHOLDS = [round(float(t), 2) for t in np.arange(0.30, 0.9001, 0.05)]
TARGET_PRECISION = 0.90
TIMED_QUESTIONS = 200


def load_questions(path: Path, splits: list[str], limit: int | None) -> dict[str, list[dict]]:
    by_split: dict[str, list[dict]] = {split: [] for split in splits}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            split = row.get("split")
            if split in by_split and row.get("support_passage_id") and (limit is None or len(by_split[split]) < limit):
                by_split[split].append(row)
    return by_split


def relevant(candidate: Candidate, row: dict) -> bool:
    answer = row["correct_answer"]
    return candidate.passage.passage_id == row["support_passage_id"] or (len(answer) >= 4 and mentions(candidate.passage.text, answer))


def curve(finder: ReferenceFinder, ranked: list[list[Candidate]], rows: list[dict]) -> list[dict[str, float]]:
    judged = [{c.passage.passage_id: relevant(c, row) for c in candidates} for candidates, row in zip(ranked, rows)]
    points = []
    for threshold in THRESHOLDS:
        attached = hits = questions_hit = gold = 0
        for candidates, row, relevance in zip(ranked, rows, judged):
            chosen = [c.passage.passage_id for c in finder.select(candidates, threshold)]
            good = [relevance[pid] for pid in chosen]
            attached += len(chosen)
            hits += sum(good)
            questions_hit += any(good)
            gold += row["support_passage_id"] in chosen
        n = max(len(rows), 1)
        points.append({"threshold": threshold, "precision": round(hits / attached, 4) if attached else None,
                       "recall": round(questions_hit / n, 4), "gold_recall": round(gold / n, 4),
                       "refs_per_question": round(attached / n, 3)})
    return points


def choose(points: list[dict[str, float]]) -> dict[str, float]:
    """The lowest threshold whose precision reaches the target (so recall is as high as it can be),
    or the best F1 when none does."""
    reaching = [p for p in points if p["precision"] is not None and p["precision"] >= TARGET_PRECISION]
    if reaching:
        return min(reaching, key=lambda p: p["threshold"])
    scored = [p for p in points if p["precision"]]
    return max(scored, key=lambda p: 2 * p["precision"] * p["recall"] / (p["precision"] + p["recall"] or 1))


def evaluate(corpus: Path, questions: Path, embedder: Embedder, cache: Path, mode: str, answer_weight: float,
             candidates: int = 20, top_k: int = 3, splits: tuple[str, ...] = ("valid", "test"),
             limit: int | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    index = cached_index(corpus, cache, embedder, "passages")
    finder = ReferenceFinder(embedder, index, candidates, top_k, url_template="{passage_id}", mode=mode,
                             answer_weight=answer_weight)
    by_split = load_questions(questions, list(splits), limit)
    curves: dict[str, list] = {}
    for split, rows in by_split.items():
        texts = [finder.reference_text(r["question"], r["correct_answer"], tuple(r.get("explanation") or ())) for r in rows]
        vectors = embedder.encode(texts, show_progress=True) if texts else np.zeros((0, 0))
        ranked = [finder.rank(r["question"], r["correct_answer"], tuple(r.get("explanation") or ()), vector=v)
                  for r, v in tqdm(list(zip(rows, vectors)), desc=f"ranking {split}")]
        curves[split] = curve(finder, ranked, rows)

    tune_split = "valid" if "valid" in curves else next(iter(curves))
    chosen = choose(curves[tune_split])["threshold"]
    report: dict[str, Any] = {
        "mode": mode, "answer_weight": answer_weight if mode == "hybrid" else None,
        "corpus": str(corpus), "questions": str(questions), "passages": index.count(),
        "chosen_threshold": chosen, "chosen_on": tune_split, "target_precision": TARGET_PRECISION,
    }
    for split, points in curves.items():
        at = next(p for p in points if p["threshold"] == chosen)
        report[split] = {**{k: at[k] for k in ("precision", "recall", "gold_recall", "refs_per_question")},
                         "n": len(by_split[split])}
    report["latency_ms"] = stage_latency(finder, by_split[tune_split][:TIMED_QUESTIONS], chosen)
    report["curves"] = curves
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def stage_latency(finder: ReferenceFinder, rows: list[dict], threshold: float) -> dict[str, float]:
    """What attaching references adds to one request: query encoding, retrieval, scoring, snippets."""
    timings = []
    for row in rows:
        start = time.perf_counter()
        finder.run(row["question"], row["correct_answer"], (), threshold)
        timings.append((time.perf_counter() - start) * 1000)
    if not timings:
        return {}
    p50, p95 = np.percentile(timings, [50, 95])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "n": len(timings)}


def plot(report: dict[str, Any], path: Path) -> None:
    fig, axis = figure(7, 4.5)
    styles = {"valid": "-", "test": "--", "train": ":"}
    for split, points in report["curves"].items():
        xs = [p["threshold"] for p in points]
        axis.plot(xs, [p["precision"] if p["precision"] is not None else np.nan for p in points],
                  styles.get(split, "-"), color="tab:blue", label=f"precision ({split})")
        axis.plot(xs, [p["recall"] for p in points], styles.get(split, "-"), color="tab:orange", label=f"recall ({split})")
    chosen = report["chosen_threshold"]
    axis.axvline(chosen, color="grey", linewidth=0.8)
    for split in report["curves"]:
        axis.plot([chosen, chosen], [report[split]["precision"], report[split]["recall"]], "o", color="black")
    axis.annotate(f"chosen {chosen} on {report['chosen_on']}", (chosen, 0.05), xytext=(5, 0), textcoords="offset points")
    axis.set(xlabel="threshold", ylabel="value", ylim=(0, 1.02),
             title=f"SciQ references, {report['mode']} mode, {report['passages']} passages")
    axis.grid(alpha=0.3)
    axis.legend(loc="lower left", fontsize=8)
    save(fig, path)


def headline(report: dict[str, Any]) -> str:
    lines = [f"mode {report['mode']}, chosen threshold {report['chosen_threshold']} (on {report['chosen_on']})"]
    for split in report["curves"]:
        lines.append(f"  {split}: " + ", ".join(f"{k} {report[split][k]}" for k in ("precision", "recall", "gold_recall", "refs_per_question", "n")))
    lines.append(f"  stage latency ms: {report['latency_ms']}; total {report['seconds']} s")
    return "\n".join(lines)
