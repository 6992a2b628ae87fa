"""Flask app factory: builds the pipeline and its backends once and keeps them on the app.

gunicorn runs `service.app:create_app()`; nothing heavy happens at import time.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask

from ab_testing import Experiments
from prompts import load_prompts
from rules.gate import Gate
from service import api, health
from service.attribution import Attributor
from service.embedder import embedder_from
from service.generate import Tutor
from service.llm.cache import ReplyCache
from service.llm.client import LLM, OpenAIChatLLM
from service.match import BankMatcher
from service.pipeline import Pipeline
from service.references import ReferenceFinder
from service.search.backends import Kind, connect_index, load_index
from service.search.protocol import SearchUnavailableError
from service.search.store import IndexMissingError
from service.settings import SearchSettings, Settings
from service.store import SQLStore, Store

log = logging.getLogger(__name__)


def serving_index(search: SearchSettings, kind: Kind, indexes: dict[str, dict]) -> Any:
    """The index to serve `kind` from, its start-up state recorded in `indexes`. A missing index is
    None (the stage is skipped); an unreachable cluster still gives a handle, so that requests keep
    trying it and /readyz probes it again."""
    try:
        index = load_index(search, kind)
    except IndexMissingError as error:
        log.warning("%s", error)
        indexes[kind] = {"ready": False, "error": str(error)}
        return None
    except SearchUnavailableError as error:
        log.warning("%s: requests will keep trying it", error)
        indexes[kind] = {"ready": False, "error": str(error), "retrying": True}
        return connect_index(search, kind)
    indexes[kind] = {"ready": True, "count": index.count()}
    return index


def build_pipeline(settings: Settings, llm: LLM | None = None, store: Store | None = None) -> tuple[Pipeline, dict]:
    """The pipeline and a readiness report of its indexes. Only this function and the CLI choose backends."""
    search = settings.search
    embedder = embedder_from(search)
    embedder.warm_up()
    indexes: dict[str, dict] = {}
    qa_index = serving_index(search, "qa", indexes)
    passage_index = serving_index(search, "passages", indexes)
    matcher = BankMatcher(embedder, qa_index, search.match_threshold) if qa_index is not None else None
    references = (ReferenceFinder(embedder, passage_index, search.reference_candidates, search.reference_top_k,
                                  url_template=search.reference_url_template, mode=search.reference_mode,
                                  answer_weight=search.reference_answer_weight)
                  if passage_index is not None else None)
    pipeline = Pipeline(
        gate=Gate(),
        experiments=Experiments(settings.experiments.features_path, settings.experiments.api_host,
                                settings.experiments.client_key, settings.experiments.cache_ttl_s),
        tutor=Tutor(llm or OpenAIChatLLM(settings.llm), load_prompts(),
                    cache=ReplyCache(search.data_dir / "llm_cache.sqlite3") if settings.llm.cache else None,
                    default_model=settings.llm.model),
        store=store or SQLStore(settings.database_url),
        matcher=matcher,
        references=references,
        attributor=Attributor(embedder, search.attribution_threshold),
        reference_threshold=search.reference_threshold,
    )
    return pipeline, indexes


def prepare_storage(settings: Settings) -> None:
    """Create or migrate the answer store and the reply cache (gunicorn runs this before its workers)."""
    SQLStore(settings.database_url)
    if settings.llm.cache:
        ReplyCache(settings.search.data_dir / "llm_cache.sqlite3")


def create_app(settings: Settings | None = None, llm: LLM | None = None, store: Store | None = None) -> Flask:
    settings = settings or Settings.from_env()
    logging.basicConfig(level=settings.server.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = 64 * 1024   # a request body far beyond any question is refused with 413
    pipeline, indexes = build_pipeline(settings, llm, store)
    app.extensions["tutorqa"] = {"settings": settings, "pipeline": pipeline, "indexes": indexes}
    api.init_app(app)
    health.init_app(app)
    return app
