"""Evaluation commands (`tutorqa eval ...`): each reads a labelled file and writes reports/<name>.json."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal


def figure(width: float, height: float, ncols: int = 1) -> tuple[Any, Any]:
    """A matplotlib figure drawn off-screen (no display on servers); `ncols` axes side by side."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(ncols=ncols, figsize=(width, height))


def save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def cached_index(source: Path, cache: Path, embedder: Any, kind: Literal["qa", "passages"]) -> Any:
    """`source` indexed once into a cache folder named by its path, size, date and the model."""
    from service.indexing import index_passages, index_qa
    from service.search.embedded import EmbeddedPassageIndex, EmbeddedQAIndex
    from service.search.store import IndexMissingError

    stat = source.stat()
    key = hashlib.sha1(f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{embedder.name}".encode()).hexdigest()[:12]
    directory = cache / f"{'bank' if kind == 'qa' else 'passages'}-{key}"
    index_class, build = (EmbeddedQAIndex, index_qa) if kind == "qa" else (EmbeddedPassageIndex, index_passages)
    try:
        return index_class.load(directory)
    except IndexMissingError:
        build(source, directory, embedder)
        return index_class.load(directory)
