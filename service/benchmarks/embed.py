"""`tutorqa bench embed`: passage-encoding throughput, the bottleneck of indexing, and what each
speed-up costs in similarity.

Variants: the torch and ONNX backends, ONNX with several batch sizes, batches taken in file order
instead of sorted by length (what `tutorqa index` gets by encoding 4,096 records per call: the
library sorts each call by length), the int8-quantised ONNX model, and two worker processes.
Drift: for 2,000 random pairs of texts, the largest change of their cosine against the torch
reference (a threshold such as MATCH_THRESHOLD moves by that much at most).
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from service.embedder import SentenceTransformerEmbedder
from service.evaluation import figure, save

PAIRS = 2000
VARIANTS: list[dict[str, Any]] = [
    {"name": "torch, batch 64", "backend": "torch", "batch": 64},
    {"name": "onnx, batch 8", "backend": "onnx", "batch": 8},
    {"name": "onnx, batch 16", "backend": "onnx", "batch": 16},
    {"name": "onnx, batch 32", "backend": "onnx", "batch": 32},
    {"name": "onnx, batch 64", "backend": "onnx", "batch": 64},
    {"name": "onnx, batch 128", "backend": "onnx", "batch": 128},
    {"name": "onnx, batch 64, file order", "backend": "onnx", "batch": 64, "unsorted": True},
    {"name": "onnx-int8, batch 16", "backend": "onnx-int8", "batch": 16},
    {"name": "onnx, batch 16, 2 processes", "backend": "onnx", "batch": 16, "processes": 2},
]


def encode(variant: dict[str, Any], texts: list[str], cache: Path) -> tuple[np.ndarray, float]:
    if variant.get("processes"):
        return encode_in_processes(variant, texts, cache)
    embedder = SentenceTransformerEmbedder(backend=variant["backend"], cache_dir=cache, batch_size=variant["batch"])
    embedder.warm_up()
    embedder.encode(texts[:32])   # first-call set-up is not throughput
    started = time.perf_counter()
    if variant.get("unsorted"):
        vectors = np.concatenate([embedder.encode(texts[i:i + variant["batch"]])
                                  for i in range(0, len(texts), variant["batch"])])
    else:
        vectors = embedder.encode(texts)
    return np.asarray(vectors, dtype=np.float32), time.perf_counter() - started


_worker: SentenceTransformerEmbedder | None = None


def _start_worker(backend: str, cache: Path, batch: int) -> None:
    global _worker
    _worker = SentenceTransformerEmbedder(backend=backend, cache_dir=cache, batch_size=batch)
    _worker.encode(["warm up"])


def _encode_share(texts: list[str]) -> np.ndarray:
    return _worker.encode(texts)


def encode_in_processes(variant: dict[str, Any], texts: list[str], cache: Path) -> tuple[np.ndarray, float]:
    """Each process loads its own model (an ONNX session cannot be pickled) and encodes a share."""
    processes = variant["processes"]
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
                             initargs=(variant["backend"], cache, variant["batch"])) as pool:
        list(pool.map(_encode_share, [texts[:32]] * processes))
        started = time.perf_counter()
        vectors = np.concatenate(list(pool.map(_encode_share, [list(share) for share in np.array_split(texts, processes)])))
        return vectors, time.perf_counter() - started


def run(corpus: Path, cache: Path, n: int) -> dict[str, Any]:
    lines = corpus.read_text(encoding="utf-8").splitlines()
    rng = random.Random(3)
    texts = [json.loads(line)["text"] for line in rng.sample(lines, min(n, len(lines)))]
    pairs = np.array([rng.sample(range(len(texts)), 2) for _ in range(PAIRS)])
    results, reference = [], None
    for variant in VARIANTS:
        vectors, seconds = encode(variant, texts, cache)
        if reference is None:
            reference = vectors
        similarity = np.einsum("ij,ij->i", vectors[pairs[:, 0]], vectors[pairs[:, 1]])
        reference_similarity = np.einsum("ij,ij->i", reference[pairs[:, 0]], reference[pairs[:, 1]])
        drift = np.abs(similarity - reference_similarity)
        results.append({"variant": variant["name"], "texts_per_s": round(len(texts) / seconds, 1),
                        "seconds": round(seconds, 2),
                        "min_cosine_to_torch": round(float(np.einsum("ij,ij->i", vectors, reference).min()), 5),
                        "pair_similarity_drift_max": round(float(drift.max()), 5),
                        "pair_similarity_drift_p99": round(float(np.percentile(drift, 99)), 5)})
        print(json.dumps(results[-1]))
    lengths = [len(text) for text in texts]
    return {"corpus": str(corpus), "texts": len(texts), "mean_chars": round(float(np.mean(lengths))),
            "model": "all-MiniLM-L6-v2", "variants": results}


def plot(report: dict[str, Any], path: Path) -> None:
    names = [r["variant"] for r in report["variants"]]
    fig, axis = figure(7, 4.2)
    axis.barh(names, [r["texts_per_s"] for r in report["variants"]])
    axis.invert_yaxis()
    axis.set(xlabel="passages encoded per second", title=f"{report['texts']} SciQ passages, {report['model']}")
    axis.grid(alpha=0.3, axis="x")
    save(fig, path)


def headline(report: dict[str, Any]) -> str:
    return "\n".join(f"{r['variant']:>32}: {r['texts_per_s']:>7} texts/s, similarity drift max "
                     f"{r['pair_similarity_drift_max']}" for r in report["variants"])
