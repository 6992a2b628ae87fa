"""The gate: decide, with rules only, whether a query is a complete question the service may answer.

Every decision names the rules that fired (`family.rule`), so a wrong block can be traced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import regex

from rules.options import parse_options
from rules.patterns import PATTERN_DIR, Rule, load_all

MESSAGES = {
    "not_question": "This looks like a search for a page rather than a question. "
                    "Type the full question you want answered.",
    "nonsense": "We could not read a question in this text. Type the full question you want answered.",
    "mcq_missing_options": "This looks like a multiple-choice question, but the answer options are missing. "
                           "Add all the options (for example 'A. ... B. ... C. ... D. ...') and ask again.",
    "truncated": "The question seems to be cut off. Please type the whole question.",
    "missing_context": "The question refers to a {thing} that is not included. "
                       "Paste its contents or describe it in the question.",
}
TRUE_FALSE = ("True", "False")
WHITESPACE = regex.compile(r"[ \t\r\f\v]+")
ENDING_CHARS = 160
SENTENCE_BREAK = regex.compile(r"(?<=[.!?])\s+|\n")


@dataclass(frozen=True)
class GateResult:
    intent: str                     # "question" | "not_question"
    type: str                       # "mcq" | "frq"
    complete: bool
    reason: str | None              # why not complete, or why not a question
    message: str | None             # what the student can do about it
    math: bool
    subject: str | None
    stem: str                       # the question without its options
    options: tuple[str, ...] = ()
    rules: tuple[str, ...] = field(default=())

    @property
    def answerable(self) -> bool:
        return self.intent == "question" and self.complete


class Gate:
    """Applies the rule families of `rules/patterns/` to a query. Compiles them once, in __init__."""

    def __init__(self, pattern_dir: Path = PATTERN_DIR) -> None:
        self.families = load_all(pattern_dir)

    def _fired(self, family: str, text: str, first_only: bool = False) -> list[Rule]:
        lowered = text.lower()
        fired = []
        for rule in self.families.get(family, []):
            if rule.search(text, lowered):
                fired.append(rule)
                if first_only:
                    break
        return fired

    def classify(self, query: str, subject: str | None = None) -> GateResult:
        text = "\n".join(WHITESPACE.sub(" ", line).strip() for line in query.strip().splitlines()).strip()
        fired: list[Rule] = []

        def note(rules: list[Rule]) -> list[Rule]:
            fired.extend(rules)
            return rules

        parsed = parse_options(text, self.families["marker"], self.families["list"])
        cues = note(self._fired("cue", parsed.stem))
        math = bool(note(self._fired("math", parsed.stem))) or (subject or "").lower() in {"math", "mathematics"}
        subjects = note(self._fired("subject", text, first_only=True))
        detected_subject = subject or ("math" if math else subjects[0].name if subjects else None)

        if note(self._fired("nonsense", text)):
            return self._result("not_question", False, "nonsense", text, (), False, math, detected_subject, fired)

        options = parsed.options if cues or parsed.options else ()
        stem = parsed.stem if options or cues else text
        asks = note(self._fired("question", stem))
        if not asks and not cues and note(self._fired("not_question", text)):
            # A navigational search ('sign in', 'notes on the') is not a question that was cut off.
            return self._result("not_question", False, "not_question", text, (), False, math, detected_subject, fired)
        exempt = any(rule.name in {"term_colon_ending", "fill_in_blank"} for rule in asks)
        # Endings are matched on the last characters only: long passages need not be scanned.
        dangling = [] if exempt or len(options) >= 2 else note(self._fired("dangling", stem[-ENDING_CHARS:]))
        cut_question = bool(dangling) and bool(note(self._fired("interrogative", last_sentence(stem))))
        # A statement left to complete is an MCQ stem, except in math, where the answer is computed.
        completion_stem = bool(dangling) and not cut_question and not math
        is_mcq = bool(cues) or len(options) >= 2 or completion_stem or (len(options) == 1 and bool(dangling or asks))
        if not is_mcq:
            stem, options = text, ()
        if any(rule.name == "true_or_false" for rule in cues) and len(options) < 2:
            options = TRUE_FALSE

        def result(intent: str, complete: bool, reason: str | None, message: str | None = None) -> GateResult:
            return self._result(intent, complete, reason, stem, options, is_mcq, math, detected_subject, fired, message)

        if not (asks or is_mcq or dangling):
            return result("not_question", False, "not_question")
        if is_mcq and len(options) < 2:
            return result("question", False, "mcq_missing_options")
        if cut_question:
            return result("question", False, "truncated")
        missing = self._fired("missing_context", stem)
        if missing and not note(self._fired("context_supplied", stem)):
            note(missing)
            thing = missing[0].search(stem).group(0).split()[-1].rstrip(".").lower()
            return result("question", False, "missing_context", MESSAGES["missing_context"].format(thing=thing))
        return result("question", True, None)

    @staticmethod
    def _result(intent: str, complete: bool, reason: str | None, stem: str, options: tuple[str, ...],
                is_mcq: bool, math: bool, subject: str | None, fired: list[Rule],
                message: str | None = None) -> GateResult:
        return GateResult(
            intent=intent, type="mcq" if is_mcq else "frq", complete=complete, reason=reason,
            message=message or (MESSAGES[reason] if reason else None), math=math, subject=subject,
            stem=stem, options=tuple(options), rules=tuple(f"{rule.family}.{rule.name}" for rule in fired),
        )


def last_sentence(text: str) -> str:
    """The sentence a query ends with: what follows the last sentence break or line break."""
    return SENTENCE_BREAK.split(text.strip())[-1]
