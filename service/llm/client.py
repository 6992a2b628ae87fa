"""Structured (JSON) completions through the `openai` client, from any OpenAI-compatible endpoint.

Resilience: the client's own retries (exponential back-off on connection errors, 408/409/429 and
5xx, `LLM_MAX_RETRIES`), a timeout per call, and a circuit breaker (pybreaker): after
`LLM_BREAKER_FAILURES` failed calls in a row, calls fail at once for `LLM_BREAKER_RESET_S` seconds,
so a dead endpoint costs a request microseconds, not a timeout.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

import openai
import pybreaker

from service.metrics import LLM_CALLS
from service.settings import LLMSettings


class LLMUnavailable(RuntimeError):
    """The LLM could not give a usable reply: unreachable, timed out, failed, or invalid."""


class LLMInvalidReply(LLMUnavailable):
    """The endpoint answered, but not with what was asked for (worth one more try)."""


OnDelta = Callable[[str], None]


class LLM(Protocol):
    def complete_json(self, system: str, user: str, schema: dict[str, Any], model: str | None = None,
                      on_delta: OnDelta | None = None) -> dict[str, Any]: ...
    def ping(self) -> bool: ...


def response_format(kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp's server constrains `json_object` with a schema and answers 500 to OpenAI's
    `json_schema` form; OpenAI takes `json_schema` (see design.md)."""
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": False}}
    return {"type": "json_object", "schema": schema}


def parse_json_object(content: str | None) -> dict[str, Any]:
    """The first JSON object in the reply; tolerant of raw control characters and trailing text,
    for endpoints without structured output."""
    text = (content or "").strip()
    start = text.find("{")
    try:
        parsed, _ = json.JSONDecoder(strict=False).raw_decode(text[start:] if start >= 0 else text)
    except json.JSONDecodeError:
        raise LLMInvalidReply(f"reply is not JSON: {text[:200]!r}") from None
    if not isinstance(parsed, dict):
        raise LLMInvalidReply(f"reply is not a JSON object: {text[:200]!r}")
    return parsed


class OpenAIChatLLM:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key,
                                    timeout=settings.timeout_s, max_retries=settings.max_retries)
        self.breaker = pybreaker.CircuitBreaker(fail_max=settings.breaker_failures,
                                                reset_timeout=settings.breaker_reset_s, name="llm")
        self.completion_tokens = 0   # running total, for the LLM evaluation

    def complete_json(self, system: str, user: str, schema: dict[str, Any], model: str | None = None,
                      on_delta: OnDelta | None = None) -> dict[str, Any]:
        """The reply as a JSON object; with `on_delta`, the reply is streamed and each piece of text
        is handed to it as it arrives."""
        try:
            content = self.breaker.call(self._content, system, user, schema, model, on_delta)
        except pybreaker.CircuitBreakerError:
            LLM_CALLS.labels("circuit_open").inc()
            raise LLMUnavailable("the LLM endpoint is failing; calls are paused") from None
        except openai.OpenAIError as error:
            LLM_CALLS.labels("failed").inc()
            raise LLMUnavailable(f"{type(error).__name__}: {error}") from error
        try:
            parsed = parse_json_object(content)
        except LLMInvalidReply:
            LLM_CALLS.labels("invalid").inc()
            raise
        LLM_CALLS.labels("ok").inc()
        return parsed

    def _content(self, system: str, user: str, schema: dict[str, Any], model: str | None,
                 on_delta: OnDelta | None) -> str | None:
        reply = self.client.chat.completions.create(
            model=model or self.settings.model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
            response_format=response_format(self.settings.response_format, schema),
            stream=on_delta is not None,
        )
        if on_delta is None:
            self.completion_tokens += reply.usage.completion_tokens if reply.usage else 0
            return reply.choices[0].message.content if reply.choices else None
        pieces = []
        for chunk in reply:
            piece = chunk.choices[0].delta.content if chunk.choices else None
            if piece:
                pieces.append(piece)
                on_delta(piece)
        return "".join(pieces)

    @property
    def circuit_open(self) -> bool:
        return self.breaker.current_state == pybreaker.STATE_OPEN

    def ping(self) -> bool:
        if self.circuit_open:
            return False
        try:
            self.client.with_options(timeout=2.0, max_retries=0).models.list()
        except openai.OpenAIError:
            return False
        return True
