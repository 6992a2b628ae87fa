"""Load the rule files in `rules/patterns/` and compile every pattern once, at start-up.

Patterns are written in lower case and matched against the lower-cased query (about twice as fast
as case-insensitive matching with `regex`); a rule that needs case sets `case_sensitive = true`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import regex

PATTERN_DIR = Path(__file__).parent / "patterns"


ESCAPES = regex.compile(r"\\[pP]\{[^}]*\}|\\.|\(\?P<")


@dataclass(frozen=True)
class Rule:
    name: str
    family: str
    pattern: regex.Pattern
    why: str
    case_sensitive: bool = False

    def search(self, text: str, lowered: str | None = None) -> regex.Match | None:
        """Match `text` as written, or its lower-cased form (pass it when already computed)."""
        return self.pattern.search(text if self.case_sensitive else lowered if lowered is not None else text.lower())


class RuleFileError(ValueError):
    """A rule file that cannot be used; names the file and the line."""


def _line_of(source: str, name: str) -> int:
    for number, line in enumerate(source.splitlines(), start=1):
        if f'"{name}"' in line:
            return number
    return 0


def load_rules(path: Path) -> dict[str, list[Rule]]:
    """Rules of one file, grouped by family (the TOML array name), in file order."""
    source = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as error:
        raise RuleFileError(f"{path}: {error}") from None
    families: dict[str, list[Rule]] = {}
    for family, entries in data.items():
        for entry in entries:
            name = entry.get("name", "?")
            where = f"{path}:{_line_of(source, name)}"
            if not {"name", "pattern", "why"} <= entry.keys():
                raise RuleFileError(f"{where}: rule {name!r} needs name, pattern and why")
            case_sensitive = bool(entry.get("case_sensitive", False))
            if not case_sensitive and any(c.isupper() for c in ESCAPES.sub("", entry["pattern"])):
                raise RuleFileError(f"{where}: rule {name!r} has upper-case letters: write it in lower case "
                                    "or set case_sensitive = true")
            try:
                compiled = regex.compile(entry["pattern"])
            except regex.error as error:
                raise RuleFileError(f"{where}: rule {name!r} has a bad pattern: {error}") from None
            families.setdefault(family, []).append(Rule(name, family, compiled, entry["why"], case_sensitive))
    return families


def load_all(directory: Path = PATTERN_DIR) -> dict[str, list[Rule]]:
    """Every family of every `*.toml` file; a family name may appear in one file only."""
    merged: dict[str, list[Rule]] = {}
    for path in sorted(directory.glob("*.toml")):
        for family, rules in load_rules(path).items():
            if family in merged:
                raise RuleFileError(f"{path}: family {family!r} is already defined in another file")
            merged[family] = rules
    return merged
