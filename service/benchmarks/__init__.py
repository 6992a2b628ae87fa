"""Speed benchmarks (`tutorqa bench ...`): each writes reports/bench_<name>.json and a plot."""
