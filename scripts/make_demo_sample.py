"""Build the demo sample committed in data/demo/ from ../shared/data (train/dev splits only).

Run once by a maintainer; a fresh clone uses the committed output. Deterministic (fixed seed).
Writes the Q&A bank (`qa.jsonl`) and the study passages (`passages.jsonl`) in the schemas that
`tutorqa index qa` and `tutorqa index passages` document.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

# Topics the README's examples touch, so the demo answers them from the bank with references.
DEMO_TOPICS = re.compile(r"photosynth|chloroplast|mitochondri|organelle|ribosome|nucleus", re.I)
GSM8K_CALCULATOR = re.compile(r"<<[^>]*>>")
LETTERS = "ABCDEFGH"


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def sciq_records(data: Path, n_questions: int, rng: random.Random) -> tuple[list[dict], list[dict]]:
    passages = {p["passage_id"]: p for p in read_jsonl(data / "sciq" / "passages.jsonl")}
    train = [q for q in read_jsonl(data / "sciq" / "sciq_all.jsonl")
             if q["split"] == "train" and q["support_passage_id"]]
    on_topic = [q for q in train if DEMO_TOPICS.search(q["question"] + " " + q["correct_answer"])]
    rest = [q for q in train if q not in on_topic]
    chosen = on_topic[:60] + rng.sample(rest, n_questions - min(60, len(on_topic)))
    qa, used = [], {}
    for q in chosen:
        options = [q["correct_answer"], *q["distractors"]]
        rng.shuffle(options)
        qa.append({
            "id": q["id"],
            "question": q["question"],
            "answer": q["correct_answer"],
            "options": options,
            "answer_option": LETTERS[options.index(q["correct_answer"])],
            "subject": "science",
            "source": "sciq",
        })
        used[q["support_passage_id"]] = passages[q["support_passage_id"]]
    passage_rows = [{"passage_id": pid, "text": p["text"], "source": "sciq"} for pid, p in used.items()]
    return qa, passage_rows


def mmlu_records(data: Path, n: int, rng: random.Random) -> list[dict]:
    dev = [r for r in read_jsonl(data / "mmlu" / "mmlu_all.jsonl") if r["split"] == "dev"]
    return [{
        "id": r["id"],
        "question": r["question"],
        "answer": r["choices"][r["answer_index"]],
        "options": r["choices"],
        "answer_option": r["answer"],
        "subject": r["subject"],
        "source": "mmlu",
    } for r in rng.sample(dev, n)]


def gsm8k_records(data: Path, n: int, rng: random.Random) -> list[dict]:
    train = read_jsonl(data / "gsm8k" / "train.jsonl")
    rows = []
    for index in sorted(rng.sample(range(len(train)), n)):
        solution, final = train[index]["answer"].split("####")
        steps = [GSM8K_CALCULATOR.sub("", line).strip() for line in solution.strip().splitlines()]
        rows.append({
            "id": f"gsm8k/train/{index}",
            "question": train[index]["question"],
            "answer": final.strip(),
            "explanation": [s for s in steps if s],
            "subject": "math",
            "source": "gsm8k",
        })
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=Path("data/demo"))
    parser.add_argument("--sciq", type=int, default=300)
    parser.add_argument("--mmlu", type=int, default=60)
    parser.add_argument("--gsm8k", type=int, default=40)
    args = parser.parse_args()
    rng = random.Random(13)
    sciq_qa, passages = sciq_records(args.data, args.sciq, rng)
    qa = sciq_qa + mmlu_records(args.data, args.mmlu, rng) + gsm8k_records(args.data, args.gsm8k, rng)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "qa.jsonl", qa)
    write_jsonl(args.out / "passages.jsonl", passages)
    print(f"wrote {len(qa)} Q&A records and {len(passages)} passages to {args.out}")


if __name__ == "__main__":
    main()
