"""Assign a user to experiment arms with the GrowthBook SDK, evaluated locally from features.json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from growthbook import GrowthBook


@dataclass(frozen=True)
class Exposure:
    experiment: str
    variation: str
    variation_id: int
    user_id: str


@dataclass(frozen=True)
class Assignment:
    values: dict[str, Any]          # feature key -> value for this user
    experiments: dict[str, str]     # experiment key -> variation key
    exposures: tuple[Exposure, ...]


class FeaturesError(ValueError):
    """A features file the service refuses to run with."""


class Experiments:
    """Deterministic by user id. Every experiment rule must say `hashVersion: 2` explicitly:
    version 1 hashing is biased for similar ids and the SDK silently defaults to it."""

    def __init__(self, features_path: Path) -> None:
        try:
            document = json.loads(Path(features_path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise FeaturesError(f"{features_path}: {error}") from None
        self.features: dict[str, Any] = document.get("features", document)
        for key, feature in self.features.items():
            for rule in feature.get("rules", []):
                if "variations" in rule and rule.get("hashVersion") != 2:
                    raise FeaturesError(f"{features_path}: feature {key!r} runs an experiment without hashVersion 2")

    def assign(self, user_id: str) -> Assignment:
        exposures: list[Exposure] = []

        def on_experiment_viewed(experiment: Any, result: Any, user_context: Any = None) -> None:
            if result.inExperiment:
                exposures.append(Exposure(experiment.key, result.key, result.variationId, user_id))

        growthbook = GrowthBook(attributes={"id": user_id}, features=self.features,
                                on_experiment_viewed=on_experiment_viewed)
        try:
            values = {key: growthbook.eval_feature(key).value for key in self.features}
        finally:
            growthbook.destroy()
        return Assignment(values, {e.experiment: e.variation for e in exposures}, tuple(exposures))
