"""Helpers shared by the tests: a scripted OpenAI-compatible server and example queries."""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.serving import make_server

PHOTOSYNTHESIS_MCQ = ("Which of the following organelles is the site of photosynthesis? "
                      "A. mitochondrion B. chloroplast C. nucleus D. ribosome")


class ScriptedLLM:
    """An OpenAI-compatible chat server that answers from a queue of scripted replies.

    A reply is a dict (sent as the JSON content of the message), a string (sent as content as is),
    or an int (sent as that HTTP error status). An empty queue answers 500.
    """

    def __init__(self) -> None:
        self.replies: deque[Any] = deque()
        self.requests: list[dict[str, Any]] = []
        app = Flask("scripted-llm")
        app.add_url_rule("/v1/models", view_func=lambda: jsonify({"object": "list", "data": [{"id": "scripted"}]}))
        app.add_url_rule("/v1/chat/completions", view_func=self._chat, methods=["POST"])
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def script(self, *replies: Any) -> None:
        self.replies.extend(replies)

    def reset(self) -> None:
        self.replies.clear()
        self.requests.clear()

    def _chat(self) -> Any:
        self.requests.append(request.get_json())
        reply = self.replies.popleft() if self.replies else 500
        if isinstance(reply, int):
            return jsonify({"error": {"message": "scripted failure"}}), reply
        content = reply if isinstance(reply, str) else json.dumps(reply)
        if self.requests[-1].get("stream"):
            return Response(self._chunks(content), mimetype="text/event-stream")
        return jsonify({
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })

    @staticmethod
    def _chunks(content: str):
        """The reply in OpenAI's streaming form, a few characters per chunk."""
        for start in range(0, len(content), 8):
            chunk = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
                     "choices": [{"index": 0, "delta": {"content": content[start:start + 8]}, "finish_reason": None}]}
            yield f"data: {json.dumps(chunk)}\n\n"
        yield "data: [DONE]\n\n"
