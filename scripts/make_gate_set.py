"""Build the gate's labelled query sets in tests/data/ from real questions in ../shared/data.

Two sets, from different sources, so the second measures the rules on questions they were never
tuned on:
  gate_dev.jsonl       tuning set: SciQ train, MMLU dev, AQuA-RAT dev, GSM8K train
  gate_heldback.jsonl  reporting only: ARC Easy/Challenge test, OpenBookQA test, MATH test
  gate_unseen_pubmedqa.jsonl  PubMedQA questions, evaluated once after the rules were frozen

Each real item is turned into labelled variants:
  complete MCQ      stem + all options, rendered in one of seven layouts
  incomplete MCQ    a stem that needs its options (an MCQ cue, or a sentence to complete) without
                    them; or the stem with only its first option left
  FRQ              a question that stands alone: GSM8K/MATH problems, stems ending in '?' without
                    an MCQ cue
  truncated        an FRQ cut right after a word that needs a continuation ('What is the')
  missing context  a question rewritten to point at a figure, table, graph or passage it lacks
  not_question     keyword searches (templates over the source's own topics) and keyboard mash
Stems with no '?', no MCQ cue and no dangling ending are left out: without their options a human
annotator could not say whether they are complete, and a label would be a guess.

Labels: kind (mcq / frq / not_question), complete (bool; false for not_question), math (bool: the
source is a math set or an MMLU math subject), plus source, id and variant for error analysis.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
from collections.abc import Iterator
from pathlib import Path

MATH_SUBJECTS = {"abstract_algebra", "college_mathematics", "elementary_mathematics",
                 "high_school_mathematics", "high_school_statistics"}
# Labelling rule (not the gate's patterns): wording that only makes sense with options attached.
NEEDS_OPTIONS = re.compile(r"\b(which of the (following|options|choices|statements)|the following|"
                           r"(all|none|both) of the above|EXCEPT\b|which (one|statement|option)s?\b)", re.I)
INTERROGATIVE = re.compile(r"^(what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|"
                           r"calculate|compute|find|determine|explain|describe)\b", re.I)
CONTINUES = {"the", "a", "an", "of", "to", "in", "on", "for", "with", "by", "from", "and", "or", "is",
             "are", "was", "were", "that", "which", "than", "as", "into", "between", "because", "its", "their"}
MISSING_CONTEXT = [
    "Using the graph above, {q}", "According to the table, {q}", "Look at the diagram. {q}",
    "{q} Use the figure to explain.", "Based on the passage, {q}", "Refer to Figure 3. {q}",
    "In the picture shown, {q}", "From the data table below, {q}",
]
KEYWORD_TEMPLATES = {
    "dev": ["{t} notes", "{t} chapter {n} notes", "{t} study guide", "{t} lab report", "{t} flashcards",
            "{t} worksheet answers", "{t}", "{t} lecture slides pdf", "{c} {n}01 syllabus", "{c} textbook pdf"],
    "heldback": ["{t} quizlet", "{t} notes pdf", "{t} homework help", "{t}", "{c} final exam study guide",
                 "{t} review sheet", "{c} {n}0{n} lecture notes", "{t} answer key"],
}
NAVIGATION = {"dev": ["login", "student portal", "my grades", "canvas login", "reset password", "course catalog"],
              "heldback": ["sign in", "blackboard", "library hours", "class schedule spring", "tuition payment"]}
COURSES = ["biology", "chemistry", "physics", "psych", "calculus", "statistics", "economics", "history",
           "organic chemistry", "anatomy", "algebra", "geology"]
KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm", "jkl;jkl;", "hjkl"]


def render_options(stem: str, options: list[str], layout: int) -> str:
    letters = string.ascii_uppercase
    if layout == 0:
        return stem + " " + " ".join(f"{letters[i]}. {o}" for i, o in enumerate(options))
    if layout == 1:
        return stem + "\n" + "\n".join(f"{letters[i]}) {o}" for i, o in enumerate(options))
    if layout == 2:
        return stem + " " + " ".join(f"{letters[i].lower()}) {o}" for i, o in enumerate(options))
    if layout == 3:
        return stem + " " + " ".join(f"({i + 1}) {o}" for i, o in enumerate(options))
    if layout == 4:
        return stem + "\n" + "\n".join(f"{i + 1}. {o}" for i, o in enumerate(options))
    if layout == 5:
        return stem + " Options: " + "; ".join(options)
    return stem + "\n" + "\n".join(f"({letters[i]}) {o}" for i, o in enumerate(options))


def item(q: str, kind: str, complete: bool, math: bool, source: str, id_: str, variant: str) -> dict:
    return {"q": q, "kind": kind, "complete": complete, "math": math, "source": source, "id": id_, "variant": variant}


def truncate(question: str, rng: random.Random) -> str | None:
    """Cut the final sentence, when it is a question or a task, right after a word that needs a
    continuation. A cut statement would read as an MCQ stem to complete, so it is not used."""
    sentences = re.split(r"(?<=[.!?])\s+", question.strip())
    if not INTERROGATIVE.match(sentences[-1]):
        return None
    words = sentences[-1].rstrip("?").split()
    cuts = [i for i, w in enumerate(words[:-2]) if i >= 2 and w.lower() in CONTINUES]
    if not cuts:
        return None
    return " ".join([*sentences[:-1], *words[:rng.choice(cuts) + 1]])


def stem_variants(source: str, id_: str, stem: str, options: list[str], math: bool,
                  rng: random.Random) -> Iterator[dict]:
    """The variants of one MCQ: complete in some layout, and incomplete when its stem needs options."""
    stem = stem.strip()
    layout = rng.randrange(7)
    yield item(render_options(stem, options, layout), "mcq", True, math, source, id_, f"mcq_layout_{layout}")
    cue = bool(NEEDS_OPTIONS.search(stem.split("\n")[-1]))   # the question's own line, not a passage
    to_complete = stem.endswith(":") or (not stem.endswith("?") and stem.split()[-1].lower() in CONTINUES)
    needs_options = cue or (to_complete and not math)
    if to_complete and not cue and math:
        # A math statement to complete is answered by computing, options or not.
        yield item(stem, "frq", True, math, source, id_, "math_completion")
    elif needs_options:
        yield item(stem, "mcq", False, math, source, id_, "mcq_options_removed")
        if rng.random() < 0.4:
            yield item(render_options(stem, options[:1], 0), "mcq", False, math, source, id_, "mcq_one_option")
    elif stem.endswith("?") and rng.random() < 0.6:
        yield item(stem, "frq", True, math, source, id_, "frq_stem")
        cut = truncate(stem, rng) if rng.random() < 0.4 else None
        if cut:
            yield item(cut, "frq", False, math, source, id_, "frq_truncated")
    if stem.endswith("?") and len(stem) < 300 and rng.random() < 0.12:
        template = rng.choice(MISSING_CONTEXT)
        question = stem[0].lower() + stem[1:] if template.startswith(("Using", "According", "Based", "In", "From")) else stem
        kind = "mcq" if needs_options else "frq"
        text = template.format(q=question)
        if kind == "mcq":
            text = render_options(text, options, rng.randrange(7))
        yield item(text, kind, False, math, source, id_, "missing_context")


def free_response(source: str, id_: str, question: str, math: bool, rng: random.Random) -> Iterator[dict]:
    yield item(question.strip(), "frq", True, math, source, id_, "frq")
    if rng.random() < 0.3:
        cut = truncate(question.strip(), rng)
        if cut:
            yield item(cut, "frq", False, math, source, id_, "frq_truncated")


def not_questions(which: str, topics: list[str], n: int, rng: random.Random) -> Iterator[dict]:
    for i in range(n):
        template = rng.choice(KEYWORD_TEMPLATES[which])
        q = template.format(t=rng.choice(topics), c=rng.choice(COURSES), n=rng.randint(1, 9))
        yield item(q, "not_question", False, False, "keywords", f"{which}/kw/{i}", "keyword_search")
    for i, q in enumerate(NAVIGATION[which]):
        yield item(q, "not_question", False, False, "keywords", f"{which}/nav/{i}", "navigation")
    for i in range(max(10, n // 4)):
        if rng.random() < 0.5:
            q = rng.choice(KEYBOARD)[:rng.randint(4, 10)] * rng.randint(1, 2)
        else:
            q = "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(5, 14)))
        yield item(q, "not_question", False, False, "nonsense", f"{which}/mash/{i}", "nonsense")


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def aqua_options(options: list[str]) -> list[str]:
    return [re.sub(r"^[A-E]\)\s*", "", o) for o in options]


def dev_set(data: Path, rng: random.Random) -> list[dict]:
    rows: list[dict] = []
    sciq = [q for q in read_jsonl(data / "sciq" / "sciq_all.jsonl") if q["split"] in ("train", "valid")]
    for q in rng.sample(sciq, 260):
        options = [q["correct_answer"], *q["distractors"]]
        rng.shuffle(options)
        rows += stem_variants("sciq", q["id"], q["question"], options, False, rng)
    for q in (r for r in read_jsonl(data / "mmlu" / "mmlu_all.jsonl") if r["split"] == "dev"):
        rows += stem_variants("mmlu", q["id"], q["question"], q["choices"], q["subject"] in MATH_SUBJECTS, rng)
    for i, q in enumerate(read_jsonl(data / "aqua_rat" / "dev.json")[:160]):
        if i % 2 or NEEDS_OPTIONS.search(q["question"]):
            rows += stem_variants("aqua", f"aqua/dev/{i}", q["question"], aqua_options(q["options"]), True, rng)
        else:
            rows += free_response("aqua", f"aqua/dev/{i}", q["question"], True, rng)
    gsm8k = read_jsonl(data / "gsm8k" / "train.jsonl")
    for index in rng.sample(range(len(gsm8k)), 160):
        rows += free_response("gsm8k", f"gsm8k/train/{index}", gsm8k[index]["question"], True, rng)
    topics = [q["correct_answer"] for q in sciq if len(q["correct_answer"].split()) <= 3]
    rows += not_questions("dev", topics, 110, rng)
    return rows


def heldback_set(data: Path, rng: random.Random) -> list[dict]:
    rows: list[dict] = []
    arc = [("arc_easy", r) for r in read_jsonl(data / "arc" / "arc_easy_test.jsonl")] + \
          [("arc_challenge", r) for r in read_jsonl(data / "arc" / "arc_challenge_test.jsonl")]
    for i, (name, q) in enumerate(rng.sample(arc, 200)):
        stem = q["query"].removeprefix("Question:").strip()
        rows += stem_variants("arc", f"{name}/test/{i}", stem, q["choices"], False, rng)
    for i, q in enumerate(rng.sample(read_jsonl(data / "openbookqa" / "test_llmfoundry.jsonl"), 120)):
        rows += stem_variants("openbookqa", f"openbookqa/test/{i}", q["query"], q["choices"], False, rng)
    math = [q for q in read_jsonl(data / "math_hendrycks" / "math_test.jsonl") if len(q["context"]) < 400]
    for i, q in enumerate(rng.sample(math, 120)):
        rows += free_response("math", f"math/test/{i}", q["context"], True, rng)
    topics = [c for q in arc for c in q[1]["choices"] if len(c.split()) <= 2]
    rows += not_questions("heldback", topics, 70, rng)
    return rows


def unseen_set(data: Path, rng: random.Random) -> list[dict]:
    """PubMedQA questions: a domain (biomedical research) and a source never looked at while the rules
    were written; built and evaluated once, after the rules were frozen."""
    rows: list[dict] = []
    records = read_jsonl(data / "pubmedqa" / "pubmed_qa_labeled.jsonl")
    for i, record in enumerate(rng.sample(records, 300)):
        question = record["context"].split("Question:")[-1].split("\nA.")[0].strip()
        rows += stem_variants("pubmedqa", f"pubmedqa/{i}", question, ["yes", "no", "maybe"], False, rng)
    return rows


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=Path("tests/data"))
    args = parser.parse_args()
    for name, build in (("gate_dev.jsonl", dev_set), ("gate_heldback.jsonl", heldback_set),
                        ("gate_unseen_pubmedqa.jsonl", unseen_set)):
        rows = build(args.data, random.Random(2026))
        write(args.out / name, rows)
        kinds = {k: sum(r["kind"] == k for r in rows) for k in ("mcq", "frq", "not_question")}
        print(f"{name}: {len(rows)} queries, {kinds}, incomplete {sum(not r['complete'] for r in rows)}")


if __name__ == "__main__":
    main()
