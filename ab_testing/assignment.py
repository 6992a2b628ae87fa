"""Assign a user to experiment arms with the GrowthBook SDK, evaluated locally.

Features come from `features.json`, or from a GrowthBook server when an API host and client key are
set (cached by the SDK for `cache_ttl` seconds), with the file as the fallback when the server
cannot be reached.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from growthbook import GrowthBook, feature_repo

log = logging.getLogger(__name__)


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


def checked(features: dict[str, Any], where: str) -> dict[str, Any]:
    """Every experiment rule must say `hashVersion: 2`: version 1 hashing is biased for similar ids,
    and the SDK silently defaults to it."""
    for key, feature in features.items():
        for rule in feature.get("rules", []):
            if "variations" in rule and rule.get("hashVersion") != 2:
                raise FeaturesError(f"{where}: feature {key!r} runs an experiment without hashVersion 2")
    return features


class Experiments:
    def __init__(self, features_path: Path, api_host: str = "", client_key: str = "", cache_ttl: int = 60) -> None:
        try:
            document = json.loads(Path(features_path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise FeaturesError(f"{features_path}: {error}") from None
        self.file_features = checked(document.get("features", document), str(features_path))
        self.api_host, self.client_key, self.cache_ttl = api_host.rstrip("/"), client_key, cache_ttl
        self._server_down_until = 0.0   # after a failure, use the file for cache_ttl seconds

    @property
    def features(self) -> dict[str, Any]:
        if not (self.api_host and self.client_key) or time.monotonic() < self._server_down_until:
            return self.file_features
        try:
            payload = feature_repo.load_features(self.api_host, self.client_key, ttl=self.cache_ttl)
            if payload and payload.get("features"):
                return checked(payload["features"], f"{self.api_host} features")
            log.warning("GrowthBook server %s gave no features; using the features file", self.api_host)
        except FeaturesError:
            log.exception("refusing the GrowthBook server's features; using the file")
        except Exception:   # the SDK raises whatever its HTTP client raises
            log.warning("GrowthBook server %s unreachable; using the features file", self.api_host)
        self._server_down_until = time.monotonic() + self.cache_ttl
        return self.file_features

    def assign(self, user_id: str | None) -> Assignment:
        """Arms for a user; without a user id, every feature's default and no exposure."""
        features = self.features
        if not user_id:
            return Assignment({key: feature.get("defaultValue") for key, feature in features.items()}, {}, ())
        exposures: list[Exposure] = []

        def on_experiment_viewed(experiment: Any, result: Any, user_context: Any = None) -> None:
            if result.inExperiment:
                exposures.append(Exposure(experiment.key, result.key, result.variationId, user_id))

        growthbook = GrowthBook(attributes={"id": user_id}, features=features,
                                on_experiment_viewed=on_experiment_viewed)
        try:
            values = {key: growthbook.eval_feature(key).value for key in features}
        finally:
            growthbook.destroy()
        return Assignment(values, {e.experiment: e.variation for e in exposures}, tuple(exposures))
