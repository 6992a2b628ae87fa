"""`tutorqa bench search`: build embedded passage indexes of growing size and time their queries.

Corpus: synthetic but realistic passages made from real SciQ support passages. Passage i takes a
random SciQ passage, shuffles its sentences and replaces one of them with a sentence of another
random passage, so vocabulary and lengths are SciQ's while no two passages are alike.
Vectors: encoding a million passages takes hours on 2 cores, so each passage's vector is the real
SBERT embedding of its base passage plus Gaussian noise (sigma 0.025 per dimension, cosine about
0.9 to the base), normalised again.
Queries: real SciQ questions with their answers, encoded with the real model before timing; the
figures exclude query encoding.

Each size is built in this process (build time, throughput, size on disk) and then searched in a
fresh process, whose resident memory (private, and mapped index files) is what serving costs. Vector recall@10 is
measured against brute force, at the configured HNSW `expansion_search` and over a sweep of it.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import regex
from tqdm import tqdm

from service.embedder import Embedder
from service.evaluation import cached_index, figure, save
from service.search.embedded import EmbeddedPassageIndex
from service.search.store import content_hash
from service.search.vectors import EXPANSION_SEARCH

NOISE = 0.025
CHUNK = 20_000
QUERIES = 500
EXPANSION_SWEEP = (32, 64, 96, 160, 256, 400)
SENTENCE = regex.compile(r"(?<=[.!?])\s+")


def synthetic_passages(bases: list[str], n: int, seed: int = 7) -> tuple[list[dict[str, Any]], np.ndarray]:
    """n passages made from `bases`, and for each the index of the base it came from."""
    rng = random.Random(seed)
    split = [SENTENCE.split(text) for text in bases]
    rows, origin = [], np.empty(n, dtype=np.int64)
    for i in range(n):
        base = rng.randrange(len(bases))
        sentences = list(split[base])
        rng.shuffle(sentences)
        donor = split[rng.randrange(len(bases))]
        sentences[rng.randrange(len(sentences))] = donor[rng.randrange(len(donor))]
        text = " ".join(sentences)
        rows.append({"id": f"syn-{i}", "text": text, "title": text[:60], "content_hash": content_hash(text)})
        origin[i] = base
    return rows, origin


def noisy(embeddings: np.ndarray, origin: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vectors = embeddings[origin] + rng.normal(0.0, NOISE, (len(origin), embeddings.shape[1])).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def build(directory: Path, rows: list[dict], origin: np.ndarray, embeddings: np.ndarray, model: str) -> float:
    shutil.rmtree(directory, ignore_errors=True)
    index = EmbeddedPassageIndex.open(directory, model, embeddings.shape[1])
    started = time.perf_counter()
    for start in tqdm(range(0, len(rows), CHUNK), desc=f"building {len(rows):,}", unit=" chunks"):
        vectors = noisy(embeddings, origin[start:start + CHUNK], seed=start)
        index.upsert(rows[start:start + CHUNK], list(vectors))
    index.save()
    return time.perf_counter() - started


def disk_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3), "p95_ms": round(float(np.percentile(ms, 95)), 3),
            "p99_ms": round(float(np.percentile(ms, 99)), 3)}


def resident_mb() -> dict[str, float]:
    """Peak resident memory (VmHWM; not ru_maxrss, which Linux carries over from the parent) and, now,
    its private part (RssAnon) and its file-backed part (RssFile: mapped index files, shared by
    every worker process that maps them and given back under memory pressure)."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {key: round(int(status[field].split()[0]) / 1024, 1)
            for key, field in (("peak_rss_mb", "VmHWM"), ("private_mb", "RssAnon"), ("mapped_files_mb", "RssFile"))}


def timed_vector_searches(index: EmbeddedPassageIndex, vectors: np.ndarray) -> tuple[dict[str, float], list[set[int]]]:
    seconds, found = [], []
    for vector in vectors:
        started = time.perf_counter()
        hits = index.search_vector(vector, 10)
        seconds.append(time.perf_counter() - started)
        found.append({index.store.position[hit.record.passage_id] for hit in hits})
    return percentiles(seconds), found


def true_top10(embeddings: np.ndarray, vectors: np.ndarray, chunk: int = 50) -> list[set[int]]:
    truth = []
    for start in range(0, len(vectors), chunk):
        scores = embeddings @ vectors[start:start + chunk].T
        truth += [set(np.argpartition(-scores[:, column], 10)[:10].tolist()) for column in range(scores.shape[1])]
    return truth


def recall(found: list[set[int]], truth: list[set[int]]) -> float:
    return round(float(np.mean([len(f & t) / 10 for f, t in zip(found, truth)])), 4)


def query_process(directory: str, texts: list[str], vectors: np.ndarray) -> dict[str, Any]:
    """Runs in a fresh process: load, search, and report latencies, recall and peak memory."""
    started = time.perf_counter()
    index = EmbeddedPassageIndex.load(Path(directory))
    load_s = time.perf_counter() - started
    for text, vector in zip(texts[:20], vectors[:20]):   # warm the memory maps as a serving process would be
        index.search(text, 20)
        index.search_vector(vector, 10)
    bm25 = []
    for text in texts:
        started = time.perf_counter()
        index.search(text, 20)
        bm25.append(time.perf_counter() - started)
    vector_latency, found = timed_vector_searches(index, vectors)
    memory = resident_mb()   # serving ends here; brute force below reads every embedding
    truth = true_top10(np.asarray(index.store.embeddings), vectors)
    sweep = []
    for expansion in EXPANSION_SWEEP:
        index.graph.index.expansion_search = expansion
        latency, swept = timed_vector_searches(index, vectors)
        sweep.append({"expansion_search": expansion, **latency, "recall_at_10": recall(swept, truth)})
    return {"load_s": round(load_s, 3), "bm25_top20": percentiles(bm25), "vector_top10": vector_latency,
            "vector_recall_at_10": recall(found, truth), "expansion_search": EXPANSION_SEARCH,
            "expansion_sweep": sweep, **memory}


def run(corpus: Path, questions: Path, embedder: Embedder, cache: Path, work: Path, sizes: list[int]) -> dict[str, Any]:
    base_index = cached_index(corpus, cache, embedder, "passages")
    bases = [base_index.store.row(p)["text"] for p in range(base_index.count())]
    base_embeddings = np.asarray(base_index.store.embeddings)
    rng = random.Random(11)
    asked = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    asked = rng.sample([q for q in asked if q.get("split") == "test"] or asked, QUERIES)
    texts = [f"{q['question']} {q['correct_answer']}" for q in asked]
    vectors = embedder.encode([q["question"] for q in asked])
    rows, origin = synthetic_passages(bases, max(sizes))
    context = multiprocessing.get_context("spawn")
    results = []
    for size in sizes:
        directory = work / f"bench-{size}"
        seconds = build(directory, rows[:size], origin[:size], base_embeddings, embedder.name)
        with context.Pool(1) as pool:
            measured = pool.apply(query_process, (str(directory), texts, vectors))
        results.append({"documents": size, "build_s": round(seconds, 1), "build_docs_per_s": round(size / seconds),
                        "disk_mb": round(disk_bytes(directory) / 2**20, 1), **measured})
        print(json.dumps(results[-1]))
        shutil.rmtree(directory, ignore_errors=True)
    return {"corpus": str(corpus), "base_passages": len(bases), "queries": len(texts), "noise_sigma": NOISE,
            "machine_cpus": multiprocessing.cpu_count(), "sizes": results}


def plot(report: dict[str, Any], path: Path) -> None:
    sizes = [r["documents"] for r in report["sizes"]]
    fig, (latency, tradeoff) = figure(12, 4.4, ncols=2)
    for key, label in (("bm25_top20", "BM25 top 20"), ("vector_top10", "vector top 10 (HNSW)")):
        for stat, style in (("p50_ms", "--"), ("p95_ms", "-")):
            latency.plot(sizes, [r[key][stat] for r in report["sizes"]], style, marker="o", label=f"{label} {stat[:3]}")
    latency.set(xscale="log", xlabel="passages in the index", ylabel="latency (ms), query encoding excluded",
                title=f"embedded search on {report['machine_cpus']} cores")
    for size in report["sizes"]:
        sweep = size["expansion_sweep"]
        tradeoff.plot([s["p95_ms"] for s in sweep], [s["recall_at_10"] for s in sweep], marker="o",
                      label=f"{size['documents']:,} passages")
        for s in sweep:
            tradeoff.annotate(str(s["expansion_search"]), (s["p95_ms"], s["recall_at_10"]), fontsize=6,
                              xytext=(2, -8), textcoords="offset points")
    tradeoff.set(xlabel="vector top-10 p95 (ms)", ylabel="recall@10 against brute force",
                 title="HNSW expansion_search (labels): recall against latency")
    for axis in (latency, tradeoff):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    save(fig, path)


def headline(report: dict[str, Any]) -> str:
    return "\n".join(f"{r['documents']:>9,} docs: BM25 p95 {r['bm25_top20']['p95_ms']} ms, vector p95 "
                     f"{r['vector_top10']['p95_ms']} ms (recall@10 {r['vector_recall_at_10']}), build {r['build_s']} s, "
                     f"disk {r['disk_mb']} MB, RSS {r['peak_rss_mb']} MB ({r['private_mb']} MB private, "
                     f"{r['mapped_files_mb']} MB mapped files)" for r in report["sizes"])
