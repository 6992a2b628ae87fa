"""Per-arm figures of one experiment, with intervals: what the platform decides from.

Input: one row per answer served under the experiment (`answer_id`, `user_id`, `status`,
`variation_id`, `variation_key`, `rating`, `reason`), as `Store.experiment_answers` returns them.
Coverage = answered / answers; thumbs-up rate = up / rated answers, each with a Wilson 95% interval
(scipy). Each arm is compared with the control (variation 0): the difference with Newcombe's
hybrid-score interval and the p-value of a two-proportion test (chi-square without continuity
correction, the same as the pooled z-test).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from math import sqrt
from pathlib import Path
from typing import Any

from scipy.stats import binomtest, chi2_contingency

CONFIDENCE = 0.95


def wilson(successes: int, n: int) -> list[float] | None:
    if n == 0:
        return None
    interval = binomtest(successes, n).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return [round(float(interval.low), 4), round(float(interval.high), 4)]


def proportion(successes: int, n: int) -> dict[str, Any]:
    return {"rate": round(successes / n, 4) if n else None, "ci95": wilson(successes, n), "n": n}


def compare(control: tuple[int, int], treatment: tuple[int, int]) -> dict[str, Any] | None:
    """Treatment minus control: difference, Newcombe 95% interval, two-sided p-value."""
    (k1, n1), (k2, n2) = control, treatment
    if not n1 or not n2:
        return None
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson(k1, n1), wilson(k2, n2)
    difference = p2 - p1
    low = difference - sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = difference + sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    if min(sum(col) for col in zip(*table)) == 0:
        p_value = 1.0   # every answer in both arms had the same outcome: no evidence of a difference
    else:
        p_value = float(chi2_contingency(table, correction=False)[1])
    return {"difference": round(difference, 4), "ci95": [round(low, 4), round(high, 4)], "p_value": round(p_value, 6)}


def experiment_report(experiment: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    arms: dict[int, dict[str, Any]] = {}
    users: dict[int, set] = defaultdict(set)
    for row in rows:
        arm = arms.setdefault(row["variation_id"], {"variation": row["variation_key"], "answers": 0, "answered": 0,
                                                    "up": 0, "down": 0, "reasons": Counter()})
        arm["answers"] += 1
        arm["answered"] += row["status"] == "answered"
        if row["rating"] in ("up", "down"):
            arm[row["rating"]] += 1
            if row["reason"]:
                arm["reasons"][row["reason"]] += 1
        if row["user_id"]:
            users[row["variation_id"]].add(row["user_id"])

    report_arms = []
    for variation_id in sorted(arms):
        arm = arms[variation_id]
        rated = arm["up"] + arm["down"]
        report_arms.append({
            "variation_id": variation_id, "variation": arm["variation"], "users": len(users[variation_id]),
            "answers": arm["answers"], "coverage": proportion(arm["answered"], arm["answers"]),
            "feedback": rated, "thumbs_up": proportion(arm["up"], rated), "reasons": dict(arm["reasons"]),
        })
    comparisons = []
    if report_arms and report_arms[0]["variation_id"] == 0:
        control = report_arms[0]
        for arm in report_arms[1:]:
            comparisons.append({
                "variation": arm["variation"], "against": control["variation"],
                "coverage": compare((arms[0]["answered"], arms[0]["answers"]),
                                    (arms[arm["variation_id"]]["answered"], arms[arm["variation_id"]]["answers"])),
                "thumbs_up": compare((arms[0]["up"], control["feedback"]),
                                     (arms[arm["variation_id"]]["up"], arm["feedback"])),
            })
    return {"experiment": experiment, "confidence": CONFIDENCE, "arms": report_arms, "comparisons": comparisons}


def plot_report(report: dict[str, Any], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    names = [arm["variation"] for arm in report["arms"]]
    for axis, metric, title in ((axes[0], "coverage", "coverage (answered / answers)"),
                                (axes[1], "thumbs_up", "thumbs-up rate (up / rated)")):
        rates = [arm[metric]["rate"] or 0 for arm in report["arms"]]
        errors = [[r - (arm[metric]["ci95"] or [r, r])[0] for r, arm in zip(rates, report["arms"])],
                  [(arm[metric]["ci95"] or [r, r])[1] - r for r, arm in zip(rates, report["arms"])]]
        axis.bar(names, rates, yerr=errors, capsize=6, color=["tab:grey", "tab:blue", "tab:green"][:len(names)])
        axis.set(title=title, ylim=(0, 1))
        for x, arm in enumerate(report["arms"]):
            axis.annotate(f"n={arm[metric]['n']}", (x, 0.02), ha="center", fontsize=8, color="white")
    figure.suptitle(f"experiment {report['experiment']} (Wilson 95% intervals)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
