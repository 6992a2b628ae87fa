"""`tutorqa eval llm`: the configured LLM on a development set, through the service's own prompts,
schema and validation (no cache).

Items: SciQ valid and MMLU dev MCQs with their options, GSM8K train FRQs (complete), and the
incomplete questions of the gate's development set, sent straight to the LLM as if the gate had
let them through (the model's own safeguard is what is measured).
"""

from __future__ import annotations

import json
import random
import string
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from service.generate import Tutor
from service.llm.client import LLMUnavailable


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def development_items(data: Path, gate_set: Path, per_group: int, seed: int = 11) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items = []
    sciq = [r for r in read_jsonl(data / "sciq" / "sciq_all.jsonl") if r["split"] == "valid"]
    for r in rng.sample(sciq, per_group):
        options = [r["correct_answer"], *r["distractors"]]
        rng.shuffle(options)
        items.append({"group": "sciq_mcq", "question": r["question"], "options": options,
                      "correct": string.ascii_uppercase[options.index(r["correct_answer"])], "complete": True})
    mmlu = [r for r in read_jsonl(data / "mmlu" / "mmlu_all.jsonl") if r["split"] == "dev"]
    for r in rng.sample(mmlu, per_group):
        items.append({"group": "mmlu_mcq", "question": r["question"], "options": r["choices"],
                      "correct": r["answer"], "complete": True})
    gsm8k = read_jsonl(data / "gsm8k" / "train.jsonl")
    for r in rng.sample(gsm8k, per_group):
        items.append({"group": "gsm8k_frq", "question": r["question"], "options": [], "correct": None, "complete": True})
    incomplete = [r for r in read_jsonl(gate_set) if not r["complete"] and r["kind"] != "not_question"]
    for r in rng.sample(incomplete, per_group):
        items.append({"group": f"incomplete_{r['variant']}", "question": r["q"], "options": [], "correct": None,
                      "complete": False})
    return items


def evaluate(tutor: Tutor, items: list[dict[str, Any]]) -> dict[str, Any]:
    results, latencies = [], []
    tokens_before = getattr(tutor.llm, "completion_tokens", 0)
    for item in tqdm(items, desc="asking the LLM"):
        started = time.perf_counter()
        try:
            reply = tutor.answer(item["question"], tuple(item["options"]))
            outcome = {"parsed": True, "abstained": not reply.answerable, "option": reply.option}
        except LLMUnavailable as error:
            outcome = {"parsed": False, "abstained": False, "option": None, "error": str(error)[:200]}
        latencies.append((time.perf_counter() - started) * 1000)
        results.append({**item, **outcome})
    tokens = getattr(tutor.llm, "completion_tokens", 0) - tokens_before

    mcq = [r for r in results if r["options"]]
    mcq_answered = [r for r in mcq if r["parsed"] and not r["abstained"]]
    complete = [r for r in results if r["complete"]]
    incomplete = [r for r in results if not r["complete"]]

    def rate(part: list, whole: list) -> float | None:
        return round(len(part) / len(whole), 4) if whole else None

    p50, p95 = np.percentile(latencies, [50, 95]) if latencies else (0, 0)
    by_group: dict[str, dict[str, Any]] = {}
    for name in sorted({r["group"] for r in results}):
        members = [r for r in results if r["group"] == name]
        by_group[name] = {"n": len(members), "abstained": rate([r for r in members if r["abstained"]], members),
                          "parsed": rate([r for r in members if r["parsed"]], members)}
    return {
        "n": len(results),
        "parse_rate": rate([r for r in results if r["parsed"]], results),
        "mcq_accuracy": rate([r for r in mcq if r["option"] == r["correct"]], mcq),
        "mcq_accuracy_when_answered": rate([r for r in mcq_answered if r["option"] == r["correct"]], mcq_answered),
        "valid_option_rate": rate([r for r in mcq_answered if r["option"] in string.ascii_uppercase[:len(r["options"])]],
                                  mcq_answered),
        "abstain_rate_incomplete": rate([r for r in incomplete if r["abstained"]], incomplete),
        "abstain_rate_complete": rate([r for r in complete if r["abstained"]], complete),
        "latency_p50_ms": round(float(p50), 1),
        "latency_p95_ms": round(float(p95), 1),
        "completion_tokens_per_answer": round(tokens / len(results), 1) if results and tokens else None,
        "chance_mcq_accuracy": round(float(np.mean([1 / len(r["options"]) for r in mcq])), 4) if mcq else None,
        "groups": by_group,
        "items": [{k: r[k] for k in ("group", "question", "complete", "correct", "option", "parsed", "abstained")}
                  for r in results],
    }


def headline(report: dict[str, Any]) -> str:
    keys = ("n", "parse_rate", "mcq_accuracy", "mcq_accuracy_when_answered", "chance_mcq_accuracy", "valid_option_rate",
            "abstain_rate_incomplete", "abstain_rate_complete", "latency_p50_ms", "latency_p95_ms",
            "completion_tokens_per_answer")
    return "\n".join(f"{key:>28}: {report[key]}" for key in keys)
