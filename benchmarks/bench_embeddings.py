"""Embedding 100,000 queries with the default query embedder (compass/embeddings.py: WordLlama's 256-d vectors, then
the fitted PCA to d = 50), on 2 cores. The queries are the embedded real labels' prompts (data/route_labels.parquet,
mean ~285 characters, up to 3,300), repeated to 100,000 distinct texts by a numbered suffix. The baseline, measured
in the same run, is the TF-IDF/LSA embedder (the former default, kept as the fallback) on the same queries. Both
fitted on the first 5,000 queries.

Target: WordLlama under 60 s wall for 100,000 queries (issue 46 item 1), model load included.

    .venv/bin/python benchmarks/bench_embeddings.py
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.embeddings import fit_embedder, wordllama_model  # noqa: E402

N_QUERIES = 100_000
TARGET_SECONDS = 60.0


def timed(fn) -> tuple[float, float]:
    """Wall and CPU seconds (CPU of this process's threads: the tokenizer runs in Rust threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> int:
    texts = pd.read_parquet(ROOT / "data" / "route_labels.parquet")["query_text"]
    # distinct queries (the embedder keeps vectors of texts it has seen): each prompt with a numbered suffix
    queries = pd.Series([f"{texts.iloc[i % len(texts)]} (#{i})" for i in range(N_QUERIES)])
    load, _ = timed(wordllama_model)
    wordllama = fit_embedder(texts=queries.iloc[:5000], d=50, method="wordllama")
    tfidf = fit_embedder(texts=queries.iloc[:5000], d=50, method="tfidf")
    wall, cpu = timed(lambda: wordllama.transform(texts=queries))
    base_wall, base_cpu = timed(lambda: tfidf.transform(texts=queries))
    total = load + wall
    print(f"WordLlama model load:                      {load:6.2f} s")
    print(f"WordLlama + PCA, {N_QUERIES:,} queries:         {wall:6.2f} s wall, {cpu:6.2f} s CPU "
          f"({N_QUERIES / wall:,.0f} queries/s)")
    print(f"TF-IDF/LSA (baseline), {N_QUERIES:,} queries:   {base_wall:6.2f} s wall, {base_cpu:6.2f} s CPU "
          f"(WordLlama {wall / base_wall:.1f}x)")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ok = total < TARGET_SECONDS
    print(f"target: load + 100,000 queries < {TARGET_SECONDS:g} s: {total:.1f} s {'OK' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
