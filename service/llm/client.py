"""Structured (JSON) completions through the `openai` client, from any OpenAI-compatible endpoint."""

from __future__ import annotations

import json
from typing import Any, Protocol

import openai

from service.metrics import LLM_CALLS
from service.settings import LLMSettings


class LLMUnavailable(RuntimeError):
    """The LLM could not give a usable reply: unreachable, timed out, failed, or not JSON."""


class LLM(Protocol):
    def complete_json(self, system: str, user: str, schema: dict[str, Any], model: str | None = None) -> dict[str, Any]: ...
    def ping(self) -> bool: ...


def response_format(kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp's server constrains `json_object` with a schema and answers 500 to OpenAI's
    `json_schema` form; OpenAI takes `json_schema` (see design.md)."""
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": False}}
    return {"type": "json_object", "schema": schema}


class OpenAIChatLLM:
    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        # The client retries connection errors, 408/409/429 and 5xx with exponential back-off.
        self.client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key,
                                    timeout=settings.timeout_s, max_retries=settings.max_retries)

    def complete_json(self, system: str, user: str, schema: dict[str, Any], model: str | None = None) -> dict[str, Any]:
        try:
            parsed = self._complete_json(system, user, schema, model)
        except LLMUnavailable:
            LLM_CALLS.labels("failed").inc()
            raise
        LLM_CALLS.labels("ok").inc()
        return parsed

    def _complete_json(self, system: str, user: str, schema: dict[str, Any], model: str | None) -> dict[str, Any]:
        try:
            reply = self.client.chat.completions.create(
                model=model or self.settings.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=self.settings.temperature,
                max_tokens=self.settings.max_tokens,
                response_format=response_format(self.settings.response_format, schema),
            )
        except openai.OpenAIError as error:
            raise LLMUnavailable(f"{type(error).__name__}: {error}") from error
        content = reply.choices[0].message.content if reply.choices else None
        try:
            parsed = json.loads(content or "", strict=False)   # tolerate raw control characters in strings
        except json.JSONDecodeError:
            raise LLMUnavailable(f"reply is not JSON: {str(content)[:200]!r}") from None
        if not isinstance(parsed, dict):
            raise LLMUnavailable(f"reply is not a JSON object: {str(content)[:200]!r}")
        return parsed

    def ping(self) -> bool:
        try:
            self.client.with_options(timeout=2.0, max_retries=0).models.list()
        except openai.OpenAIError:
            return False
        return True
