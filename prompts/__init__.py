"""Prompt templates kept as files, checked at load time against their declared placeholders."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).parent


class PromptError(ValueError):
    """A template that does not match its declaration in manifest.toml."""


@dataclass(frozen=True)
class PromptSet:
    version: str
    templates: dict[str, Template]

    def render(self, name: str, **values: str) -> str:
        return self.templates[name].substitute(**values)


def load_prompts(directory: Path = PROMPT_DIR) -> PromptSet:
    manifest = tomllib.loads((directory / "manifest.toml").read_text(encoding="utf-8"))
    templates: dict[str, Template] = {}
    for name, spec in manifest["templates"].items():
        path = directory / spec["file"]
        template = Template(path.read_text(encoding="utf-8").strip())
        if not template.is_valid():
            raise PromptError(f"{path}: a '$' that is not a placeholder (write '$$' for a dollar sign)")
        used, declared = set(template.get_identifiers()), set(spec["placeholders"])
        if used != declared:
            raise PromptError(f"{path}: placeholders {sorted(used)} differ from declared {sorted(declared)}")
        templates[name] = template
    return PromptSet(manifest["version"], templates)
