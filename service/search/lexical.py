"""BM25 over passage text with tantivy: on-disk segments that take additions and deletions by id
without a rebuild.

Text is split on non-alphanumerics, lower-cased, and English stop words (Lucene's list) are dropped, both at index
and query time. A query is the OR of its terms (no query syntax: a student's "+" or ":" is text).
"""

from __future__ import annotations

from pathlib import Path

import tantivy

from service.search.analysis import ENGLISH_STOP_WORDS

FOLDER = "lexical"
ANALYZER = "tutorqa_en"
WRITER_HEAP = 256 * 1024 * 1024


def analyzer() -> tantivy.TextAnalyzer:
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.custom_stopword(ENGLISH_STOP_WORDS))
            .build())


def schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", tokenizer_name=ANALYZER, index_option="freq")
    return builder.build()


class LexicalIndex:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.schema = schema()
        self.analyzer = analyzer()
        self.index = tantivy.Index(self.schema, path=str(directory), reuse=True)
        self.index.register_tokenizer(ANALYZER, self.analyzer)
        self._writer: tantivy.IndexWriter | None = None

    @property
    def writer(self) -> tantivy.IndexWriter:
        if self._writer is None:   # only indexing opens one: it holds the folder's write lock
            self._writer = self.index.writer(WRITER_HEAP)
        return self._writer

    def put(self, ids: list[str], texts: list[str], replacing: set[str] | frozenset[str] = frozenset()) -> None:
        """Add documents; those whose id is in `replacing` first lose their previous version."""
        for record_id, text in zip(ids, texts):
            if record_id in replacing:
                self.writer.delete_documents_by_term("id", record_id)
            self.writer.add_document(tantivy.Document(id=record_id, text=text))

    def delete(self, ids: list[str]) -> None:
        for record_id in ids:
            self.writer.delete_documents_by_term("id", record_id)

    def commit(self) -> None:
        if self._writer is not None:
            self._writer.commit()
            self._writer.wait_merging_threads()
            self._writer = None
        self.index.reload()

    def count(self) -> int:
        return self.index.searcher().num_docs

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """(id, BM25 score) of the k best passages sharing a term with `text`."""
        terms = list(dict.fromkeys(self.analyzer.analyze(text)))
        if not terms or k <= 0:
            return []
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "text", term)) for term in terms])
        searcher = self.index.searcher()
        hits = searcher.search(query, k, count=False).hits
        return [(searcher.doc(address)["id"][0], float(score)) for score, address in hits]
