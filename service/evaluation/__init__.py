"""Evaluation commands (`tutorqa eval ...`): each reads a labelled file and writes reports/<name>.json."""
