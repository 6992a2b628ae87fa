"""HTTP API: /v1/answer, /v1/feedback, /v1/passages/<id>. Bad input gets a 4xx with a machine-readable code."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from functools import wraps
from typing import Any, Literal

from flask import Blueprint, Flask, Response, current_app, jsonify, request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from werkzeug.exceptions import HTTPException

from ab_testing.report import experiment_report
from service.metrics import FEEDBACK, REQUESTS
from service.models import AnswerRequest
from service.store import FEEDBACK_REASONS, NotYourAnswer, UnknownAnswer

bp = Blueprint("api", __name__, url_prefix="/v1")


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(status: int, code: str, message: str) -> tuple[Response, int]:
    return jsonify({"error": {"code": code, "message": message}}), status


class AnswerBody(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    query: str
    user_id: str | None = Field(None, min_length=1, max_length=128)   # absent: default arms, no exposure
    subject: str | None = Field(None, max_length=64)


class FeedbackBody(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    answer_id: str = Field(min_length=1, max_length=64)
    user_id: str | None = Field(None, min_length=1, max_length=128)
    rating: Literal["up", "down"]
    reason: Literal[FEEDBACK_REASONS] | None = None   # type: ignore[valid-type]
    comment: str | None = Field(None, max_length=1000)


def validated(model: type[BaseModel]) -> Callable:
    """Parse the JSON body into `model`; malformed JSON or a bad field becomes a 400 naming the field."""
    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                body = json.loads(request.get_data(as_text=True) or "null")
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                raise ApiError(400, "invalid_json", f"request body is not valid JSON: {error}") from None
            if not isinstance(body, dict):
                raise ApiError(400, "invalid_body", "request body must be a JSON object")
            try:
                parsed = model.model_validate(body)
            except ValidationError as error:
                first = error.errors()[0]
                field = ".".join(map(str, first["loc"])) or "body"
                code = f"missing_{field}" if first["type"] == "missing" else f"invalid_{field}"
                raise ApiError(400, code, f"{field}: {first['msg']}") from None
            return view(parsed, *args, **kwargs)
        return wrapper
    return decorator


def answer_request(body: AnswerBody) -> AnswerRequest:
    limit = current_app.extensions["tutorqa"]["settings"].server.max_query_chars
    query = body.query.strip()
    if not query:
        raise ApiError(400, "empty_query", "query is empty: type a question")
    if len(query) > limit:
        raise ApiError(400, "query_too_long", f"query has {len(query)} characters; the limit is {limit}")
    return AnswerRequest(query=query, user_id=body.user_id, subject=body.subject)


@bp.post("/answer")
@validated(AnswerBody)
def answer(body: AnswerBody) -> Any:
    pipeline = current_app.extensions["tutorqa"]["pipeline"]
    return jsonify(pipeline.run(answer_request(body)).to_dict())


@bp.post("/answer/stream")
@validated(AnswerBody)
def answer_stream(body: AnswerBody) -> Response:
    """Server-sent events: `gate` and `match` at once, `llm_delta` pieces of the reply as the LLM
    writes them, `references`, then `answer` (the same JSON as /v1/answer); `error` if it fails."""
    answer_for = answer_request(body)
    pipeline = current_app.extensions["tutorqa"]["pipeline"]
    logger = current_app.logger
    events: queue.Queue = queue.Queue()

    def work() -> None:
        try:
            response = pipeline.run(answer_for, emit=lambda event, data: events.put((event, data)))
            events.put(("answer", response.to_dict()))
        except Exception:
            logger.exception("streamed answer failed")
            events.put(("error", {"code": "internal_error", "message": "something went wrong on our side"}))
        finally:
            events.put(None)

    threading.Thread(target=work, daemon=True).start()

    def stream() -> Iterator[str]:
        while (item := events.get()) is not None:
            event, data = item
            yield f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"

    return Response(stream(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@bp.post("/feedback")
@validated(FeedbackBody)
def feedback(body: FeedbackBody) -> Any:
    store = current_app.extensions["tutorqa"]["pipeline"].store
    try:
        result = store.record_feedback(body.answer_id, body.user_id, body.rating, body.reason, body.comment)
    except UnknownAnswer:
        raise ApiError(404, "unknown_answer", f"no answer with answer_id {body.answer_id!r}") from None
    except NotYourAnswer:
        raise ApiError(403, "not_your_answer", "feedback must come from the user who received the answer") from None
    for experiment, variation in result.arms.items():
        FEEDBACK.labels(body.rating, experiment, variation).inc()
    return jsonify({"answer_id": result.answer_id, "rating": result.rating,
                    "stored": "created" if result.created else "updated"}), 201 if result.created else 200


@bp.get("/passages/<passage_id>")
def passage(passage_id: str) -> Any:
    references = current_app.extensions["tutorqa"]["pipeline"].references
    found = references.passages.get(passage_id) if references else None
    if found is None:
        raise ApiError(404, "unknown_passage", f"no passage with passage_id {passage_id!r}")
    return jsonify({"passage_id": found.passage_id, "title": found.title, "text": found.text, "source": found.source})


@bp.get("/experiments/<key>/report")
def report(key: str) -> Any:
    pipeline = current_app.extensions["tutorqa"]["pipeline"]
    if key not in pipeline.experiments.features:
        raise ApiError(404, "unknown_experiment", f"no experiment {key!r} in the features")
    return jsonify(experiment_report(key, pipeline.store.experiment_answers(key)))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)

    @app.after_request
    def count(response: Response) -> Response:
        rule = request.url_rule.rule if request.url_rule else "unmatched"
        REQUESTS.labels(rule, str(response.status_code)).inc()
        return response

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> Any:
        return error_response(error.status, error.code, error.message)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Any:
        code = (error.name or "error").lower().replace(" ", "_")
        return error_response(error.code or 500, code, error.description or error.name)

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> Any:
        current_app.logger.exception("unhandled error")
        return error_response(500, "internal_error", "something went wrong on our side; the error was logged")
