"""The gate on its labelled development set (tests/data/gate_dev.jsonl, built by
scripts/make_gate_set.py): a regression guard for the figures the issue asks for."""

from __future__ import annotations

from pathlib import Path

from service.evaluation.gate import evaluate

DATA = Path(__file__).resolve().parents[1] / "data"


def test_development_set_meets_the_targets():
    report = evaluate(DATA / "gate_dev.jsonl")
    assert report["n"] >= 600
    assert report["blocking_accuracy"] >= 0.97
    assert report["type_accuracy"] >= 0.97
    assert report["math_recall"] >= 0.95
    assert report["not_question_precision"] >= 0.97


def test_report_lists_errors_with_the_rules_that_fired():
    report = evaluate(DATA / "gate_dev.jsonl")
    assert report["errors_total"] == len(report["errors"]) or len(report["errors"]) == 300
    assert all("rules" in error and error["wrong"] for error in report["errors"])
    assert set(report["blocking"]["labels"]) == {"answered", "blocked"}
