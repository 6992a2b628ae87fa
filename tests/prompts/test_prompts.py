"""Prompt templates are checked against their declared placeholders when they load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prompts import PROMPT_DIR, PromptError, load_prompts


def test_shipped_prompts_load_and_render():
    prompts = load_prompts()
    assert prompts.version
    text = prompts.render("mcq", question="Which gas?", options="A. oxygen\nB. neon")
    assert "Which gas?" in text and "B. neon" in text
    assert "answerable" in prompts.render("system") or "answerable" in text


def test_a_template_missing_a_declared_placeholder_fails_at_load(tmp_path: Path):
    copy = tmp_path / "prompts"
    shutil.copytree(PROMPT_DIR, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (copy / "frq.txt").write_text("Answer this.")
    with pytest.raises(PromptError, match=r"frq.txt: placeholders \[\] differ from declared \['question'\]"):
        load_prompts(copy)
