# Two commands: `make run` (set up, build the demo indexes, start the LLM server and the service)
# and `make test` (set up, run the tests). Re-runs skip what already exists.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA_DIR ?= var
BIND ?= 127.0.0.1:8000
# torch first: from a CPU wheel; without it sentence-transformers pulls several GB of CUDA packages.
TORCH_SPEC ?= torch==2.13.0
TORCH_PIP_ARGS ?=
# llama-cpp-python built for any x86-64 with AVX2: the default native build dies with
# "Illegal instruction" on these virtual machines. pip's wheel cache ignores CMAKE_ARGS, so the
# wheel is built without the cache into a folder named after the flags, and installed from there.
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_WHEELS := .wheels/llama-cpp-python-$(LLAMA_VERSION)-portable-avx2
INSTALLED := $(VENV)/.installed
QA_INDEX := $(DATA_DIR)/indexes/qa/vectors.usearch
PASSAGE_INDEX := $(DATA_DIR)/indexes/passages/vectors.usearch
EXAMPLE := Which of the following organelles is the site of photosynthesis? A. mitochondrion B. chloroplast C. nucleus D. ribosome

.PHONY: install indexes run stop test test-fast

install: $(INSTALLED)

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip wheel
	$(BIN)/pip install --quiet $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel --no-cache-dir --no-deps \
	    "llama-cpp-python==$(LLAMA_VERSION)" -w $(LLAMA_WHEELS)
	$(BIN)/pip install --quiet --find-links $(LLAMA_WHEELS) $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(BIN)/pip install --quiet --find-links $(LLAMA_WHEELS) -e ".[llm,test,eval,postgres]"
	touch $@

$(QA_INDEX): data/demo/qa.jsonl $(INSTALLED)
	TUTORQA_DATA_DIR=$(DATA_DIR) $(BIN)/tutorqa index qa $<
	touch $@

$(PASSAGE_INDEX): data/demo/passages.jsonl $(INSTALLED)
	TUTORQA_DATA_DIR=$(DATA_DIR) $(BIN)/tutorqa index passages $<
	touch $@

indexes: $(QA_INDEX) $(PASSAGE_INDEX)

run: install indexes
	@mkdir -p $(DATA_DIR)/log
	@if curl -fs http://$(BIND)/healthz >/dev/null 2>&1; then echo "already running on http://$(BIND)"; else \
	  TUTORQA_DATA_DIR=$(DATA_DIR) TUTORQA_BIND=$(BIND) nohup $(BIN)/tutorqa serve --with-llm \
	    >$(DATA_DIR)/log/service.log 2>&1 & echo $$! >$(DATA_DIR)/service.pid; \
	  echo "starting the LLM server and the service (log: $(DATA_DIR)/log/service.log)"; fi
	@for i in $$(seq 240); do curl -fs http://$(BIND)/readyz >/dev/null 2>&1 && break; sleep 1; done; \
	  curl -fs http://$(BIND)/readyz >/dev/null || { echo "the service did not become ready:"; tail -n 30 $(DATA_DIR)/log/service.log; exit 1; }
	@echo "ready on http://$(BIND) (stop it with: make stop). Try:"
	@echo "curl -s http://$(BIND)/v1/answer -H 'Content-Type: application/json' -d '{\"user_id\": \"student-1\", \"query\": \"$(EXAMPLE)\"}'"

stop:
	@if [ -f $(DATA_DIR)/service.pid ]; then kill $$(cat $(DATA_DIR)/service.pid) 2>/dev/null || true; rm -f $(DATA_DIR)/service.pid; echo stopped; fi

test: install
	$(BIN)/python -m pytest

test-fast: install
	$(BIN)/python -m pytest -m "not slow"
