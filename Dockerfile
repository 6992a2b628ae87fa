# The same steps as `make run`: install (torch CPU wheel first, llama-cpp-python with portable
# flags), build the demo indexes from data/demo, run the local LLM server beside gunicorn.
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake curl make \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml Makefile README.md ./
COPY service ./service
COPY rules ./rules
COPY prompts ./prompts
COPY ab_testing ./ab_testing
COPY data ./data

# No torch wheel lies on disk here: take the CPU build from PyTorch's index (no CUDA packages).
RUN make install TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple" \
 && rm -rf /root/.cache/pip
RUN make indexes

ENV TUTORQA_BIND=0.0.0.0:8000 \
    REFERENCE_URL_TEMPLATE=http://localhost:8000/v1/passages/{passage_id} \
    HF_HUB_OFFLINE=1
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s CMD curl -fs http://127.0.0.1:8000/readyz || exit 1
CMD [".venv/bin/tutorqa", "serve", "--with-llm"]
