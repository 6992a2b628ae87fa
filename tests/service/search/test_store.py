"""The embedded record store: what is saved is what a serving process reads back."""

from __future__ import annotations

import numpy as np
import pytest

from service.search.store import RecordStore, content_hash

ROWS = [{"id": "p1", "text": "A line\u2028separator and ünïcode stay inside the record", "title": "p1"},
        {"id": "p2", "text": "Second record", "title": "p2"}]


def saved_store(directory):
    store = RecordStore.empty("model", 2)
    store.put([{**row, "content_hash": content_hash(row["text"])} for row in ROWS],
              [np.array([1.0, 0.0]), np.array([0.0, 1.0])])
    store.save(directory)
    return store


def test_a_read_only_load_maps_the_records_and_reads_them_back_exactly(tmp_path):
    saved = saved_store(tmp_path)
    served = RecordStore.load(tmp_path, "build it")
    assert len(served) == 2 and served.position == {"p1": 0, "p2": 1}
    assert [served.row(i) for i in range(2)] == [saved.row(i) for i in range(2)]
    assert served.row(0)["text"] == ROWS[0]["text"]
    assert np.array_equal(served.embeddings, saved.embeddings)


def test_a_read_only_store_refuses_writes(tmp_path):
    saved_store(tmp_path)
    served = RecordStore.load(tmp_path, "build it")
    with pytest.raises(RuntimeError, match="read-only"):
        served.delete(["p1"])
    assert RecordStore.load(tmp_path, "build it", writable=True).delete(["p1"]) == ([0], [1])
