"""Liveness (/healthz), readiness (/readyz) and Prometheus metrics (/metrics)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify

from service.metrics import render
from service.search.protocol import SearchUnavailableError

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Any:
    return jsonify({"status": "alive"})


@bp.get("/readyz")
def readyz() -> Any:
    """503 when an index is missing or the store is down; a down LLM only marks the service degraded,
    because bank answers (without a generated explanation) still work."""
    state = current_app.extensions["tutorqa"]
    pipeline = state["pipeline"]
    probe_unreachable_indexes(state["indexes"], {"qa": pipeline.matcher and pipeline.matcher.index,
                                                 "passages": pipeline.references and pipeline.references.passages})
    checks = {**state["indexes"], "store": {"ready": pipeline.store.ping()},
              "llm": {"ready": pipeline.tutor.llm.ping()}}
    ready = all(checks[name]["ready"] for name in ("qa", "passages", "store"))
    status = "ready" if ready and checks["llm"]["ready"] else "degraded" if ready else "not_ready"
    return jsonify({"status": status, "checks": checks}), 200 if ready else 503


def probe_unreachable_indexes(indexes: dict[str, dict], handles: dict[str, Any]) -> None:
    """An index whose cluster was unreachable at start-up is asked again; once it answers, it is ready."""
    for kind, state in indexes.items():
        if state.get("retrying"):
            try:
                indexes[kind] = {"ready": True, "count": handles[kind].count()}
            except SearchUnavailableError as error:
                state["error"] = str(error)


@bp.get("/metrics")
def metrics() -> Response:
    body, content_type = render()
    return Response(body, content_type=content_type)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
