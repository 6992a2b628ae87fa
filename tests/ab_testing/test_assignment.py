"""GrowthBook assignment: deterministic per user, balanced, explicit hashVersion 2."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ab_testing import Experiments
from ab_testing.assignment import FeaturesError
from service.settings import ExperimentSettings


@pytest.fixture(scope="module")
def experiments() -> Experiments:
    return Experiments(ExperimentSettings().features_path)


def test_assignment_is_deterministic_per_user(experiments):
    first = experiments.assign("student-7")
    assert experiments.assign("student-7") == first
    assert first.exposures[0].experiment == "reference-threshold"
    assert first.values["reference-threshold"] in (0.65, 0.6)


def test_arms_are_balanced(experiments):
    arms = Counter(experiments.assign(f"user-{i}").experiments["reference-threshold"] for i in range(2000))
    assert set(arms) == {"control", "lower"}
    assert abs(arms["control"] - 1000) < 100


def test_an_experiment_without_hash_version_2_is_refused(tmp_path: Path):
    features = {"features": {"f": {"defaultValue": 1, "rules": [{"key": "f", "variations": [1, 2]}]}}}
    path = tmp_path / "features.json"
    path.write_text(json.dumps(features))
    with pytest.raises(FeaturesError, match="hashVersion 2"):
        Experiments(path)
