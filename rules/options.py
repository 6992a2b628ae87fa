"""Split an MCQ into its stem and options, whatever the layout (rules in patterns/options.toml)."""

from __future__ import annotations

from dataclasses import dataclass

from rules.patterns import Rule


SINGLE_OPTION_CHARS = 100   # longer text after a lone "A." is a sentence, not an option


@dataclass(frozen=True)
class ParsedOptions:
    stem: str
    options: tuple[str, ...]
    layout: str | None  # name of the marker rule that found them


def _label_index(label: str) -> int:
    return int(label) - 1 if label.isdigit() else ord(label.upper()) - ord("A")


def _longest_run(matches: list) -> list:
    """Longest sequence of markers labelled A, B, C... (or 1, 2, 3...) in text order, one case."""
    best: list = []
    for start, first in enumerate(matches):
        if _label_index(first.group("label")) != 0:
            continue
        run = [first]
        for candidate in matches[start + 1:]:
            label = candidate.group("label")
            same_case = label.isupper() == first.group("label").isupper()
            if same_case and _label_index(label) == len(run):
                run.append(candidate)
        if len(run) > len(best):
            best = run
    return best


def parse_options(text: str, markers: list[Rule], lists: list[Rule]) -> ParsedOptions:
    for rule in markers:
        run = _longest_run(list(rule.pattern.finditer(text)))
        if len(run) < 2:
            continue
        ends = [m.start() for m in run[1:]] + [len(text)]
        options = tuple(text[m.end():end].strip(" \t\n;,") for m, end in zip(run, ends))
        if all(options):
            return ParsedOptions(text[:run[0].start()].strip(), options, rule.name)
    for rule in lists:
        found = rule.search(text)
        if found:
            options = tuple(o.strip() for o in found.group("list").split(";") if o.strip())
            return ParsedOptions(text[:found.start()].strip(), options, rule.name)
    # A single short option at the end still counts: it tells the gate an MCQ lost its other options.
    for rule in markers:
        single = [m for m in rule.pattern.finditer(text) if _label_index(m.group("label")) == 0]
        option = text[single[-1].end():].strip() if single else ""
        if single and single[-1].start() > 0 and len(option) <= SINGLE_OPTION_CHARS and "?" not in option:
            return ParsedOptions(text[:single[-1].start()].strip(), (option,), rule.name)
    return ParsedOptions(text.strip(), (), None)
