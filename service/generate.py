"""Stage: ask the LLM for an answer with steps (MCQ or FRQ prompt), or for the steps of a known answer."""

from __future__ import annotations

import string
from typing import Any

from prompts import PromptSet
from service.llm.client import LLM, LLMUnavailable
from service.models import GeneratedAnswer

MAX_STEPS = 4
# Plain one-line strings: llama.cpp's grammar then keeps a small model from closing the string
# early with a stray quote or filling it with newlines (seen with SmolLM2-135M).
LINE = r'[^"\\\n]'   # any character but a quote, a backslash or a newline
STEP = {"type": "string", "pattern": rf'^[A-Z0-9]{LINE}{{9,240}}$'}   # a sentence, not stray JSON
SHORT_TEXT = {"type": "string", "pattern": f"^{LINE}{{0,300}}$"}
STEPS = {"type": "array", "items": STEP, "minItems": 1, "maxItems": MAX_STEPS}


def answer_schema(letters: str | None) -> dict[str, Any]:
    """Field order matters to a constrained decoder: the abstention decision comes first,
    the reasoning steps before the final answer."""
    properties: dict[str, Any] = {"answerable": {"type": "boolean"}, "reason": SHORT_TEXT, "steps": STEPS}
    if letters:
        properties["option"] = {"type": "string", "enum": list(letters)}
    else:
        properties["answer"] = {"type": "string", "pattern": f"^{LINE}{{1,300}}$"}
    return {"type": "object", "properties": properties, "required": list(properties)}


EXPLAIN_SCHEMA = {"type": "object", "properties": {"steps": {**STEPS, "minItems": 2}}, "required": ["steps"]}


def clean_steps(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    steps = (str(step).strip() for step in value)
    return tuple(step for step in steps if step)[:MAX_STEPS]


class Tutor:
    def __init__(self, llm: LLM, prompts: PromptSet) -> None:
        self.llm = llm
        self.prompts = prompts

    def answer(self, question: str, options: tuple[str, ...], model: str | None = None) -> GeneratedAnswer:
        letters = string.ascii_uppercase[:len(options)]
        if options:
            listed = "\n".join(f"{letter}. {option}" for letter, option in zip(letters, options))
            prompt = self.prompts.render("mcq", question=question, options=listed)
        else:
            prompt = self.prompts.render("frq", question=question)
        reply = self.llm.complete_json(self.prompts.render("system"), prompt, answer_schema(letters), model)
        if reply.get("answerable") is False:
            return GeneratedAnswer(False, "", None, (), str(reply.get("reason") or "").strip())
        steps = clean_steps(reply.get("steps"))
        if options:
            option = str(reply.get("option") or "").strip().upper()
            if option not in letters:
                raise LLMUnavailable(f"reply picked no valid option: {option!r}")
            # The letter is what the model chose; the text shown is the student's own option.
            return GeneratedAnswer(True, options[letters.index(option)], option, steps)
        answer = str(reply.get("answer") or "").strip()
        if not answer:
            raise LLMUnavailable("reply has an empty answer")
        return GeneratedAnswer(True, answer, None, steps)

    def explain(self, question: str, answer: str, model: str | None = None) -> tuple[str, ...]:
        prompt = self.prompts.render("explain", question=question, answer=answer)
        reply = self.llm.complete_json(self.prompts.render("system"), prompt, EXPLAIN_SCHEMA, model)
        steps = clean_steps(reply.get("steps"))
        if not steps:
            raise LLMUnavailable("reply has no explanation steps")
        return steps
