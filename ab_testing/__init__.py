"""A/B experiments: GrowthBook assignment from a features JSON kept in this folder."""

from ab_testing.assignment import Assignment, Experiments, Exposure

__all__ = ["Assignment", "Experiments", "Exposure"]
