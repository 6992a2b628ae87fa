"""Shared fixtures: demo indexes built once with the real SBERT model, a scripted OpenAI-compatible
HTTP server for deterministic LLM replies, and a fresh app with a temporary database per test."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from service.app import create_app
from service.embedder import SentenceTransformerEmbedder
from service.indexing import index_passages, index_qa
from service.settings import LLMSettings, SearchSettings, Settings, StorageSettings
from tests.support import ScriptedLLM

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> SentenceTransformerEmbedder:
    model = SentenceTransformerEmbedder(cache_dir=tmp_path_factory.mktemp("models"))
    model.warm_up()
    return model


@pytest.fixture(scope="session")
def demo_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder) -> Path:
    """Indexes of the committed demo sample, built once per test session."""
    data_dir = tmp_path_factory.mktemp("demo-data")
    search = SearchSettings(TUTORQA_DATA_DIR=data_dir)
    index_qa(DEMO / "qa.jsonl", search.index_dir("qa"), embedder)
    index_passages(DEMO / "passages.jsonl", search.index_dir("passages"), embedder)
    return data_dir


@pytest.fixture(scope="session")
def scripted_llm_server() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM()
    yield server
    server.server.shutdown()


@pytest.fixture
def llm(scripted_llm_server: ScriptedLLM) -> ScriptedLLM:
    scripted_llm_server.reset()
    return scripted_llm_server


def make_settings(data_dir: Path, tmp_path: Path, llm_url: str, cache: bool = False, **search: Any) -> Settings:
    """Settings for a test app; the LLM reply cache is off unless a test is about it."""
    return Settings.from_env(
        {},
        search=SearchSettings(TUTORQA_DATA_DIR=data_dir, **search),
        llm=LLMSettings(OPENAI_BASE_URL=llm_url, LLM_TIMEOUT_S=5, LLM_MAX_RETRIES=0, LLM_CACHE=cache),
        storage=StorageSettings(DATABASE_URL=f"sqlite:///{tmp_path / 'events.sqlite3'}"),
    )


@pytest.fixture
def app(demo_data_dir: Path, tmp_path: Path, llm: ScriptedLLM) -> Flask:
    return create_app(make_settings(demo_data_dir, tmp_path, llm.base_url))


@pytest.fixture
def client(app: Flask):
    return app.test_client()


@pytest.fixture
def copy_of_demo_indexes(demo_data_dir: Path, tmp_path: Path) -> Path:
    """A private copy a test may change or break."""
    target = tmp_path / "data"
    shutil.copytree(demo_data_dir, target)
    return target
