"""Which backend holds an index: the one place that reads SEARCH_BACKEND."""

from __future__ import annotations

from typing import Literal

from service.search.embedded import EmbeddedPassageIndex, EmbeddedQAIndex
from service.search.opensearch import OpenSearchPassageIndex, OpenSearchQAIndex
from service.settings import SearchSettings

Kind = Literal["qa", "passages"]
EMBEDDED = {"qa": EmbeddedQAIndex, "passages": EmbeddedPassageIndex}
OPENSEARCH = {"qa": OpenSearchQAIndex, "passages": OpenSearchPassageIndex}


def load_index(search: SearchSettings, kind: Kind):
    """The index to serve from; raises IndexMissingError (or SearchUnavailableError for a cluster)."""
    if search.backend == "opensearch":
        return OPENSEARCH[kind].load(search.opensearch_url, search.opensearch_index(kind), search.opensearch_timeout_s)
    return EMBEDDED[kind].load(search.index_dir(kind))


def connect_index(search: SearchSettings, kind: Kind):
    """A handle on the cluster's index without checking that it answers (OpenSearch only)."""
    return OPENSEARCH[kind].connect(search.opensearch_url, search.opensearch_index(kind), search.opensearch_timeout_s)


def open_index(search: SearchSettings, kind: Kind, model: str, dimension: int):
    """The index to write into, created when missing."""
    if search.backend == "opensearch":
        return OPENSEARCH[kind].open(search.opensearch_url, search.opensearch_index(kind), dimension,
                                     max(search.opensearch_timeout_s, 60.0))
    return EMBEDDED[kind].open(search.index_dir(kind), model, dimension)


def describe(search: SearchSettings, kind: Kind) -> str:
    if search.backend == "opensearch":
        return f"{search.opensearch_url} index {search.opensearch_index(kind)}"
    return str(search.index_dir(kind))
