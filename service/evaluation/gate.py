"""`tutorqa eval gate FILE.jsonl`: the gate against labelled queries.

Input lines: {"q": str, "kind": "mcq"|"frq"|"not_question", "complete": bool, "math": bool}
(extra fields such as source and variant are used to break the figures down).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

from rules.gate import Gate

MAX_ERRORS_LISTED = 300


def per_label(expected: list[str], predicted: list[str]) -> dict[str, Any]:
    labels = sorted(set(expected) | set(predicted))
    precision, recall, f1, support = precision_recall_fscore_support(
        expected, predicted, labels=labels, zero_division=0)
    matrix = confusion_matrix(expected, predicted, labels=labels) if labels else np.zeros((0, 0), dtype=int)
    return {
        "accuracy": round(sum(e == p for e, p in zip(expected, predicted)) / max(len(expected), 1), 4),
        "labels": {label: {"precision": round(float(p), 4), "recall": round(float(r), 4), "f1": round(float(f), 4),
                           "support": int(s)} for label, p, r, f, s in zip(labels, precision, recall, f1, support)},
        "confusion": {"labels": labels, "rows_expected_columns_predicted": matrix.tolist()},
    }


def figure(table: dict[str, Any], label: str, name: str) -> float | None:
    """A per-label figure, or None when the file has no query of that label to measure it on."""
    row = table["labels"].get(label)
    return row[name] if row and row["support"] else None


def evaluate(path: Path, gate: Gate | None = None) -> dict[str, Any]:
    gate = gate or Gate()
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    results, microseconds = [], []
    for row in rows:
        started = time.perf_counter()
        results.append(gate.classify(row["q"]))
        microseconds.append((time.perf_counter() - started) * 1e6)
    timing = {f"p{q}": round(float(v), 1) for q, v in zip((50, 95, 99), np.percentile(microseconds, [50, 95, 99]))}

    columns: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    errors, by_source = [], defaultdict(lambda: [0, 0])
    for row, result in zip(rows, results):
        is_question = row["kind"] != "not_question"
        expected_blocked = not (is_question and row["complete"])
        checks = {
            "intent": ("question" if is_question else "not_question", result.intent),
            "blocking": ("blocked" if expected_blocked else "answered", "answered" if result.answerable else "blocked"),
            "math": (str(row["math"]).lower(), str(result.math).lower()),
        }
        if is_question:
            checks["type"] = (row["kind"], result.type)
        for name, (expected, predicted) in checks.items():
            columns[name][0].append(expected)
            columns[name][1].append(predicted)
        source = by_source[row.get("source", "?")]
        source[0] += checks["blocking"][0] == checks["blocking"][1]
        source[1] += 1
        wrong = [name for name, (expected, predicted) in checks.items() if expected != predicted]
        if wrong:
            errors.append({"q": row["q"], "wrong": wrong, "expected": {k: row[k] for k in ("kind", "complete", "math")},
                           "got": {"intent": result.intent, "type": result.type, "complete": result.complete,
                                   "reason": result.reason, "math": result.math},
                           "rules": list(result.rules), "variant": row.get("variant"), "source": row.get("source")})

    report = {name: per_label(*columns[name]) for name in ("intent", "type", "blocking", "math")}
    return {
        "file": str(path),
        "n": len(rows),
        "blocking_accuracy": report["blocking"]["accuracy"],
        "type_accuracy": report["type"]["accuracy"],
        "math_recall": figure(report["math"], "true", "recall"),
        "not_question_precision": figure(report["intent"], "not_question", "precision"),
        "microseconds_per_query": timing,
        "blocking_accuracy_by_source": {s: round(ok / n, 4) for s, (ok, n) in sorted(by_source.items())},
        **report,
        "errors_total": len(errors),
        "errors": errors[:MAX_ERRORS_LISTED],
    }


def headline(report: dict[str, Any]) -> str:
    keys = ("n", "blocking_accuracy", "type_accuracy", "math_recall", "not_question_precision", "microseconds_per_query")
    lines = [f"{key:>24}: {report[key]}" for key in keys]
    lines += [f"{'blocking, ' + source:>24}: {value}" for source, value in report["blocking_accuracy_by_source"].items()]
    return "\n".join(lines)
