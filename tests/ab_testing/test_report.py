"""The experiment report recovers known per-arm rates from simulated traffic."""

from __future__ import annotations

import random

from ab_testing import Experiments
from ab_testing.report import compare, experiment_report, wilson
from service.settings import ExperimentSettings
from service.store import AnswerRecord, SQLStore

TRUE_COVERAGE = {"bank-only": 0.60, "bank-then-llm": 0.90}
TRUE_THUMBS_UP = {"bank-only": 0.55, "bank-then-llm": 0.70}


def test_simulated_experiment_is_recovered_within_its_intervals(tmp_path):
    """Synthetic users assigned by GrowthBook; outcomes drawn with known probabilities per arm;
    everything stored through the SQLite store and read back by the report."""
    rng = random.Random(7)
    experiments = Experiments(ExperimentSettings().features_path)
    store = SQLStore(f"sqlite:///{tmp_path / 'sim.sqlite3'}")
    for i in range(1500):
        user = f"sim-user-{i}"
        assignment = experiments.assign(user)
        arm = assignment.experiments["llm-fallback"]
        answered = rng.random() < TRUE_COVERAGE[arm]
        exposures = tuple(e for e in assignment.exposures if e.experiment == "llm-fallback")
        store.record_answer(AnswerRecord(f"a{i}", user, "q?", "answered" if answered else "unavailable", "bank", None,
                                         {"llm-fallback": arm}, 10.0, exposures))
        if answered and rng.random() < 0.8:   # not every student rates
            rating = "up" if rng.random() < TRUE_THUMBS_UP[arm] else "down"
            store.record_feedback(f"a{i}", user, rating, "other" if rating == "down" else None, None)

    report = experiment_report("llm-fallback", store.experiment_answers("llm-fallback"))
    arms = {arm["variation"]: arm for arm in report["arms"]}
    assert set(arms) == set(TRUE_COVERAGE)
    assert sum(arm["users"] for arm in arms.values()) == 1500
    for name, arm in arms.items():
        low, high = arm["coverage"]["ci95"]
        assert low <= TRUE_COVERAGE[name] <= high
        low, high = arm["thumbs_up"]["ci95"]
        assert low <= TRUE_THUMBS_UP[name] <= high
        assert arm["reasons"].get("other", 0) == arm["feedback"] - round(arm["thumbs_up"]["rate"] * arm["feedback"])
    comparison = report["comparisons"][0]
    assert comparison["against"] == "bank-only"
    low, high = comparison["thumbs_up"]["ci95"]
    assert low <= TRUE_THUMBS_UP["bank-then-llm"] - TRUE_THUMBS_UP["bank-only"] <= high
    assert comparison["thumbs_up"]["p_value"] < 0.001
    assert comparison["coverage"]["difference"] > 0.2


def test_wilson_and_newcombe_on_textbook_figures():
    # Newcombe (1998), Statistics in Medicine 17:873, example (a): 56/70 vs 48/80,
    # difference 0.2, method 10 (hybrid score) 95% interval 0.0524 to 0.3339; Wilson 56/70 0.6918 to 0.8770.
    assert wilson(56, 70) == [0.6918, 0.877]
    result = compare((48, 80), (56, 70))
    assert result["difference"] == 0.2 and result["ci95"] == [0.0524, 0.3339]
    assert 0.005 < result["p_value"] < 0.01
    assert wilson(0, 0) is None and compare((0, 0), (1, 2)) is None
