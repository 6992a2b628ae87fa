"""Prometheus metrics. Under gunicorn, PROMETHEUS_MULTIPROC_DIR makes every worker write to shared
files and /metrics aggregates them (prometheus-client multiprocess mode)."""

from __future__ import annotations

import os

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess

REQUESTS = Counter("tutorqa_http_requests_total", "HTTP requests, by route and status code", ["route", "code"])
ANSWERS = Counter("tutorqa_answers_total", "Answers served, by status and source", ["status", "source"])
ANSWERS_BY_ARM = Counter("tutorqa_answers_by_arm_total", "Answers served, by experiment arm and status",
                         ["experiment", "variation", "status"])
GATE_BLOCKS = Counter("tutorqa_gate_blocks_total", "Questions the gate blocked, by reason", ["reason"])
LLM_CALLS = Counter("tutorqa_llm_calls_total", "LLM calls, by outcome (ok, invalid, failed, circuit_open)", ["outcome"])
LLM_CACHE = Counter("tutorqa_llm_cache_total", "LLM reply cache lookups, by result (hit, miss)", ["result"])
STAGE_SECONDS = Histogram("tutorqa_stage_seconds", "Time spent per pipeline stage", ["stage"],
                          buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
DEGRADED = Counter("tutorqa_degraded_total", "Requests where a stage failed and was skipped", ["stage"])
FEEDBACK = Counter("tutorqa_feedback_total", "Feedback received, by rating and experiment arm",
                   ["rating", "experiment", "variation"])


def render() -> tuple[bytes, str]:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    from prometheus_client import REGISTRY
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
