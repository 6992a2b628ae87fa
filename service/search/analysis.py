"""Text analysis shared by every BM25 index and by the highlighting of references."""

# Lucene's English stop words: OpenSearch's `_english_` list, so both backends drop the same words.
ENGLISH_STOP_WORDS = ("a an and are as at be but by for if in into is it no not of on or such that the their then "
                      "there these they this to was will with").split()
