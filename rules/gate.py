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

    def _fired(self, family: str, text: str) -> list[Rule]:
        return [rule for rule in self.families.get(family, []) if rule.search(text)]

    def classify(self, query: str, subject: str | None = None) -> GateResult:
        text = "\n".join(WHITESPACE.sub(" ", line).strip() for line in query.strip().splitlines()).strip()
        fired: list[Rule] = []

        def note(rules: list[Rule]) -> list[Rule]:
            fired.extend(rules)
            return rules

        parsed = parse_options(text, self.families["marker"], self.families["list"])
        cues = note(self._fired("cue", parsed.stem))
        true_false = any(rule.name == "true_or_false" for rule in cues)
        is_mcq = bool(cues) or len(parsed.options) >= 2
        stem = parsed.stem if is_mcq else text
        options = parsed.options if is_mcq else ()
        if true_false and len(options) < 2:
            options = TRUE_FALSE

        math = bool(note(self._fired("math", text))) or (subject or "").lower() in {"math", "mathematics"}
        subjects = note(self._fired("subject", text)[:1])
        detected_subject = subject or (subjects[0].name if subjects else None)
        if math and not subject:
            detected_subject = "math"

        def result(intent: str, complete: bool, reason: str | None, message: str | None = None) -> GateResult:
            return GateResult(
                intent=intent, type="mcq" if is_mcq else "frq", complete=complete, reason=reason,
                message=message or (MESSAGES[reason] if reason else None), math=math,
                subject=detected_subject, stem=stem, options=tuple(options),
                rules=tuple(f"{rule.family}.{rule.name}" for rule in fired),
            )

        if note(self._fired("nonsense", text)):
            return result("not_question", False, "nonsense")
        asks = note(self._fired("question", text))
        if not asks and not is_mcq:
            note(self._fired("not_question", text))
            return result("not_question", False, "not_question")

        if is_mcq and len(options) < 2:
            return result("question", False, "mcq_missing_options")
        if not is_mcq and note(self._fired("truncated", text)):
            return result("question", False, "truncated")
        missing = note(self._fired("missing_context", stem))
        if missing:
            thing = missing[0].search(stem).group(0).split()[-1].rstrip(".").lower()
            return result("question", False, "missing_context", MESSAGES["missing_context"].format(thing=thing))
        return result("question", True, None)
