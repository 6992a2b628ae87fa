"""GrowthBook assignment: deterministic per user, balanced, explicit hashVersion 2, remote features."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest
from flask import Flask, jsonify
from werkzeug.serving import make_server

from ab_testing import Experiments
from ab_testing.assignment import FeaturesError
from service.settings import ExperimentSettings

EXPERIMENTS = {"llm-fallback", "generated-explanations", "llm-model", "reference-threshold"}


@pytest.fixture(scope="module")
def experiments() -> Experiments:
    return Experiments(ExperimentSettings().features_path)


def test_assignment_is_deterministic_per_user(experiments):
    first = experiments.assign("student-7")
    assert experiments.assign("student-7") == first
    assert {e.experiment for e in first.exposures} == EXPERIMENTS
    assert first.values["reference-threshold"] in (0.65, 0.6)
    assert first.values["llm-model"] in ("smollm2-135m-instruct", "smollm2-135m-instruct-q4")


@pytest.mark.parametrize("experiment", sorted(EXPERIMENTS))
def test_arms_are_balanced(experiments, experiment):
    arms = Counter(experiments.assign(f"user-{i}").experiments[experiment] for i in range(2000))
    assert len(arms) == 2
    assert all(abs(count - 1000) < 100 for count in arms.values())


def test_arms_of_different_experiments_are_independent(experiments):
    pairs = Counter(tuple(experiments.assign(f"user-{i}").experiments[k] for k in ("llm-fallback", "llm-model"))
                    for i in range(2000))
    assert len(pairs) == 4 and all(abs(count - 500) < 80 for count in pairs.values())


def test_without_a_user_id_every_feature_has_its_default_and_nothing_is_exposed(experiments):
    assignment = experiments.assign(None)
    assert assignment.exposures == () and assignment.experiments == {}
    assert assignment.values["llm-fallback"] is True and assignment.values["generated-explanations"] is True


def test_an_experiment_without_hash_version_2_is_refused(tmp_path: Path):
    features = {"features": {"f": {"defaultValue": 1, "rules": [{"key": "f", "variations": [1, 2]}]}}}
    path = tmp_path / "features.json"
    path.write_text(json.dumps(features))
    with pytest.raises(FeaturesError, match="hashVersion 2"):
        Experiments(path)


def test_features_from_a_growthbook_server_with_the_file_as_fallback():
    remote = {"features": {"llm-fallback": {"defaultValue": False}}}
    app = Flask("growthbook")
    app.add_url_rule("/api/features/<key>", view_func=lambda key: jsonify(remote) if key == "sdk-test" else ("", 404))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        from_server = Experiments(ExperimentSettings().features_path, f"http://127.0.0.1:{server.server_port}", "sdk-test")
        assert from_server.assign("student-1").values == {"llm-fallback": False}
    finally:
        server.shutdown()
    unreachable = Experiments(ExperimentSettings().features_path, "http://127.0.0.1:9", "sdk-down")
    assert set(unreachable.assign("student-1").experiments) == EXPERIMENTS
