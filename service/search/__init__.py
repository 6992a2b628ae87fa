"""Search backends: the Q&A bank by meaning, study passages by words."""
