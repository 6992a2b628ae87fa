"""Settings: environment variables, start-up errors, and the README's table."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.settings import Settings, SettingsError, markdown_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_defaults_need_no_environment():
    settings = Settings.from_env({})
    assert settings.llm.base_url == "http://127.0.0.1:8081/v1"
    assert settings.search.reference_threshold == 0.65
    assert settings.database_url.startswith("sqlite:///")


def test_environment_overrides_and_types():
    settings = Settings.from_env({"MATCH_THRESHOLD": "0.9", "TUTORQA_WORKERS": "4", "LLM_RESPONSE_FORMAT": "json_schema"})
    assert settings.search.match_threshold == 0.9 and settings.server.workers == 4
    assert settings.llm.response_format == "json_schema"


@pytest.mark.parametrize("environ, name", [
    ({"MATCH_THRESHOLD": "1.5"}, "MATCH_THRESHOLD"),
    ({"TUTORQA_WORKERS": "many"}, "TUTORQA_WORKERS"),
    ({"LLM_RESPONSE_FORMAT": "xml"}, "LLM_RESPONSE_FORMAT"),
])
def test_impossible_values_stop_start_up_naming_the_variable(environ, name):
    with pytest.raises(SettingsError, match=name):
        Settings.from_env(environ)


def test_readme_documents_every_variable():
    assert markdown_table() in README.read_text(encoding="utf-8")
