"""Build the bank-matching evaluation sets, and the full Q&A bank they are matched against.

  var/eval/full_bank.jsonl     SciQ (all splits) + MMLU (dev+test) + GSM8K (train+test) in the
                               `tutorqa index qa` schema, ids as in the source files
  tests/data/match_dev.jsonl   tuning: paraphrases of SciQ train/valid and MMLU dev questions, and
                               unrelated questions from AQuA-RAT dev and PubMedQA
  tests/data/match_test.jsonl  reporting: paraphrases of SciQ test and MMLU test questions, and
                               unrelated questions from ARC and OpenBookQA (never used to choose)

Paraphrases are rule-based rewrites (two per query, chosen at random): dropping "which of the
following", synonym swaps, case and punctuation changes, a student's lead-in, moving a leading
clause to the end. Lines: {"query": str, "expect": qa_id or null, "rewrites": [...]}; an unrelated
question from a multiple-choice source also carries its "options" and right "answer", as a student
would send them: a bank entry giving that answer is the same question asked elsewhere, not a false match.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

SYNONYMS = {
    "organism": "living thing", "organisms": "living things", "occurs": "happens", "occur": "happen",
    "called": "known as", "largest": "biggest", "smallest": "tiniest", "type": "kind", "types": "kinds",
    "produce": "make", "produces": "makes", "cause": "lead to", "causes": "leads to", "process": "mechanism",
    "substance": "material", "energy": "power", "located": "found", "contains": "has", "consists": "is made up",
    "determine": "figure out", "increase": "rise", "decrease": "drop", "important": "key", "primary": "main",
    "rapidly": "quickly", "approximately": "about", "purchase": "buy", "total": "overall",
}
LEAD_INS = ["can you tell me", "quick question:", "help please -", "i need to know", "hey tutor,"]


def drop_which_following(q: str, rng: random.Random) -> str:
    return re.sub(r"\bwhich of the following( is| are)?\b", lambda m: "what" + (m.group(1) or ""), q, flags=re.I)


def swap_synonyms(q: str, rng: random.Random) -> str:
    words = q.split()
    candidates = [i for i, w in enumerate(words) if w.lower().strip("?,.") in SYNONYMS]
    for i in rng.sample(candidates, min(2, len(candidates))):
        core = words[i].lower().strip("?,.")
        words[i] = words[i].lower().replace(core, SYNONYMS[core])
    return " ".join(words)


def case_and_punctuation(q: str, rng: random.Random) -> str:
    q = q.lower() if rng.random() < 0.5 else q.upper()
    return re.sub(r"[?.!,;:]", "", q).strip()


def lead_in(q: str, rng: random.Random) -> str:
    return f"{rng.choice(LEAD_INS)} {q[0].lower()}{q[1:]}"


def move_leading_clause(q: str, rng: random.Random) -> str:
    match = re.match(r"^(In|During|For|When|After|Before|Within|Among)\b([^,]{3,60}),\s*(.+)$", q)
    if not match:
        return q
    rest = match.group(3).rstrip("?")
    return f"{rest[0].upper()}{rest[1:]} {match.group(1).lower()}{match.group(2)}?"


REWRITES = {f.__name__: f for f in (drop_which_following, swap_synonyms, case_and_punctuation, lead_in,
                                    move_leading_clause)}


def paraphrase(q: str, rng: random.Random) -> tuple[str, list[str]]:
    names = rng.sample(sorted(REWRITES), 2)
    # case and punctuation last, so the other rules still see the original wording
    names.sort(key=lambda n: n == "case_and_punctuation")
    for name in names:
        q = REWRITES[name](q, rng)
    return q, names


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def full_bank(data: Path) -> list[dict]:
    rows = []
    for r in read_jsonl(data / "sciq" / "sciq_all.jsonl"):
        rows.append({"id": r["id"], "question": r["question"], "answer": r["correct_answer"],
                     "subject": "science", "source": "sciq"})
    for r in read_jsonl(data / "mmlu" / "mmlu_all.jsonl"):
        rows.append({"id": r["id"], "question": r["question"], "answer": r["choices"][r["answer_index"]],
                     "options": r["choices"], "answer_option": r["answer"], "subject": r["subject"], "source": "mmlu"})
    for split in ("train", "test"):
        for i, r in enumerate(read_jsonl(data / "gsm8k" / f"{split}.jsonl")):
            rows.append({"id": f"gsm8k/{split}/{i}", "question": r["question"],
                         "answer": r["answer"].split("####")[-1].strip(), "subject": "math", "source": "gsm8k"})
    return rows


def paraphrased(rows: list[dict], n: int, rng: random.Random) -> list[dict]:
    out = []
    for r in rng.sample(rows, n):
        query, rewrites = paraphrase(r["question"], rng)
        out.append({"query": query, "expect": r["id"], "rewrites": rewrites})
    return out


def unrelated(questions: list[dict], n: int, rng: random.Random) -> list[dict]:
    """Questions from outside the bank, with their options and right answer where the source has them."""
    return [{"query": q["query"], "expect": None, "rewrites": [],
             **({"options": q["options"], "answer": q["answer"]} if q.get("options") else {})}
            for q in rng.sample(questions, n)]


def with_choices(query: str, choices: list[str], gold: int) -> dict:
    return {"query": query, "options": choices, "answer": choices[gold]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    args = parser.parse_args()
    rng = random.Random(5)
    bank = full_bank(args.data)
    # Questions that appear more than once in the bank have no single right id: leave them out.
    counts: dict[str, int] = {}
    for r in bank:
        counts[r["question"].strip().lower()] = counts.get(r["question"].strip().lower(), 0) + 1
    unique = [r for r in bank if counts[r["question"].strip().lower()] == 1 and len(r["question"]) < 400]

    def pick(source: str, splits: tuple[str, ...]) -> list[dict]:
        return [r for r in unique if r["source"] == source and r["id"].split("/")[-2] in splits]

    aqua = []
    for r in read_jsonl(args.data / "aqua_rat" / "dev.json"):
        options = [option.split(")", 1)[1] for option in r["options"]]
        aqua.append(with_choices(r["question"], options, "ABCDE".index(r["correct"])))
    pubmed = [{"query": r["context"].split("Question:")[-1].split("\nA.")[0].strip()}
              for r in read_jsonl(args.data / "pubmedqa" / "pubmed_qa_labeled.jsonl")]
    arc = [with_choices(r["query"].removeprefix("Question:").strip(), r["choices"], r["gold"])
           for name in ("arc_easy_test.jsonl", "arc_challenge_test.jsonl") for r in read_jsonl(args.data / "arc" / name)]
    obqa = [with_choices(r["query"], r["choices"], r["gold"])
            for r in read_jsonl(args.data / "openbookqa" / "test_llmfoundry.jsonl")]

    dev = (paraphrased(pick("sciq", ("train", "valid")), 300, rng) + paraphrased(pick("mmlu", ("dev",)), 150, rng)
           + unrelated(aqua, 150, rng) + unrelated(pubmed, 150, rng))
    test = (paraphrased(pick("sciq", ("test",)), 300, rng) + paraphrased(pick("mmlu", ("test",)), 150, rng)
            + unrelated(arc, 200, rng) + unrelated(obqa, 100, rng))
    Path("var/eval").mkdir(parents=True, exist_ok=True)
    for path, rows in ((Path("var/eval/full_bank.jsonl"), bank), (Path("tests/data/match_dev.jsonl"), dev),
                       (Path("tests/data/match_test.jsonl"), test)):
        with path.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{path}: {len(rows)} lines")


if __name__ == "__main__":
    main()
