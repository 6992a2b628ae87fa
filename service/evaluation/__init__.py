"""Evaluation commands (`tutorqa eval ...`): each reads a labelled file and writes reports/<name>.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def figure(width: float, height: float) -> tuple[Any, Any]:
    """A matplotlib figure drawn off-screen (no display on servers)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height))


def save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
