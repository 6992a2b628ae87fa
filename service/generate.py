"""Stage: ask the LLM for an answer with steps (MCQ or FRQ prompt), or for the steps of a known answer.

Replies are JSON in a schema (grammar-constrained on llama.cpp, `json_schema` on OpenAI), validated
here: an MCQ reply must name one of the student's options, steps must not be empty, and nothing of
the system prompt may come back. An invalid reply is asked for once more, then the stage fails.
Validated replies are cached by question, prompt version and model.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

import regex

from prompts import PromptSet
from service.llm.cache import ReplyCache
from service.llm.client import LLM, LLMInvalidReply, OnDelta
from service.metrics import LLM_CACHE
from service.models import GeneratedAnswer

MAX_STEPS = 4
ATTEMPTS = 2   # the first reply and one retry
# Plain one-line strings: llama.cpp's grammar then keeps a small model from closing the string
# early with a stray quote or filling it with newlines (seen with SmolLM2-135M).
LINE = r'[^"\\\n]'   # any character but a quote, a backslash or a newline
STEP = {"type": "string", "pattern": rf'^[A-Z0-9]{LINE}{{9,240}}$'}   # a sentence, not stray JSON
SHORT_TEXT = {"type": "string", "pattern": f"^{LINE}{{0,300}}$"}
STEPS = {"type": "array", "items": STEP, "minItems": 1, "maxItems": MAX_STEPS}
DELIMITER = regex.compile(r"</?\s*question\s*>", regex.IGNORECASE)
LEAK_CHARS = 40   # a reply quoting this much of one system-prompt line is leaking it


def answer_schema(letters: str | None) -> dict[str, Any]:
    """Field order matters to a constrained decoder: the abstention decision comes first,
    the reasoning steps before the final answer."""
    properties: dict[str, Any] = {"abstain": {"type": "boolean"}, "abstain_reason": SHORT_TEXT, "steps": STEPS}
    if letters:
        properties["option"] = {"type": "string", "enum": list(letters)}
    else:
        properties["answer"] = {"type": "string", "pattern": f"^{LINE}{{1,300}}$"}
    return {"type": "object", "properties": properties, "required": list(properties)}


EXPLAIN_SCHEMA = {"type": "object", "properties": {"steps": {**STEPS, "minItems": 2}}, "required": ["steps"]}


@dataclass(frozen=True)
class Explanation:
    steps: tuple[str, ...]
    cached: bool = False


def clean_steps(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    steps = (str(step).strip() for step in value)
    return tuple(step for step in steps if step)[:MAX_STEPS]


def as_data(student_text: str) -> str:
    """The student's text cannot close or reopen the <question> block it is placed in."""
    return DELIMITER.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), student_text)


def listed(options: tuple[str, ...]) -> str:
    return "\n".join(f"{letter}. {as_data(option)}" for letter, option in zip(string.ascii_uppercase, options))


class Tutor:
    def __init__(self, llm: LLM, prompts: PromptSet, cache: ReplyCache | None = None, default_model: str = "") -> None:
        self.llm = llm
        self.prompts = prompts
        self.cache = cache
        self.default_model = default_model
        self.system = prompts.render("system")
        self._system_lines = [line.strip("- ").lower() for line in self.system.splitlines() if len(line) > LEAK_CHARS]

    def answer(self, question: str, options: tuple[str, ...], model: str | None = None,
               on_delta: OnDelta | None = None) -> GeneratedAnswer:
        letters = string.ascii_uppercase[:len(options)]
        if options:
            prompt = self.prompts.render("mcq", question=as_data(question), options=listed(options))
        else:
            prompt = self.prompts.render("frq", question=as_data(question))
        reply, cached = self._ask("answer", prompt, answer_schema(letters), model,
                                  lambda r: self._check_answer(r, letters), on_delta)
        if reply.get("abstain") is True:
            return GeneratedAnswer(False, "", None, (), str(reply.get("abstain_reason") or "").strip(), cached)
        steps = clean_steps(reply.get("steps"))
        if options:
            option = str(reply["option"]).strip().upper()
            # The letter is what the model chose; the text shown is the student's own option.
            return GeneratedAnswer(True, options[letters.index(option)], option, steps, cached=cached)
        return GeneratedAnswer(True, str(reply["answer"]).strip(), None, steps, cached=cached)

    def explain(self, question: str, answer: str, options: tuple[str, ...] = (), option: str | None = None,
                model: str | None = None, on_delta: OnDelta | None = None) -> Explanation:
        if options and option:
            prompt = self.prompts.render("explain_mcq", question=as_data(question), options=listed(options),
                                         answer=f"{option}. {as_data(answer)}")
        else:
            prompt = self.prompts.render("explain_frq", question=as_data(question), answer=as_data(answer))
        reply, cached = self._ask("explain", prompt, EXPLAIN_SCHEMA, model, self._check_explanation, on_delta)
        return Explanation(clean_steps(reply.get("steps")), cached)

    def _ask(self, kind: str, prompt: str, schema: dict[str, Any], model: str | None, check,
             on_delta: OnDelta | None) -> tuple[dict, bool]:
        model = model or self.default_model
        key = (kind, prompt, self.prompts.version, model)
        if self.cache is not None and (hit := self.cache.get(*key)) is not None:
            LLM_CACHE.labels("hit").inc()
            return hit, True
        LLM_CACHE.labels("miss").inc()
        for attempt in range(ATTEMPTS):
            try:
                reply = self.llm.complete_json(self.system, prompt, schema, model, on_delta)
                check(reply)
                self._check_no_leak(reply)
            except LLMInvalidReply:
                if attempt == ATTEMPTS - 1:
                    raise
                continue
            if self.cache is not None:
                self.cache.put(*key, reply)
            return reply, False
        raise AssertionError("unreachable")

    @staticmethod
    def _check_answer(reply: dict, letters: str) -> None:
        if reply.get("abstain") is True:
            return
        if not clean_steps(reply.get("steps")):
            raise LLMInvalidReply("reply has no steps")
        if letters:
            if str(reply.get("option") or "").strip().upper() not in letters:
                raise LLMInvalidReply(f"reply picked no valid option: {reply.get('option')!r}")
        elif not str(reply.get("answer") or "").strip():
            raise LLMInvalidReply("reply has an empty answer")

    @staticmethod
    def _check_explanation(reply: dict) -> None:
        if not clean_steps(reply.get("steps")):
            raise LLMInvalidReply("reply has no explanation steps")

    def _check_no_leak(self, reply: dict) -> None:
        text = " ".join(str(value) for value in reply.values()).lower()
        if any(line[:LEAK_CHARS] in text for line in self._system_lines):
            raise LLMInvalidReply("reply repeats the system prompt")


