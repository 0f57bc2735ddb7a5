"""Run the capitals dataset with the offline agent, score it, print the scorecard.

    python run.py            # a whole experiment (2 repetitions)
    python run.py --dry-run  # one case, no experiment: what did evalkit make of the session?
"""

from __future__ import annotations

import sys

from agent import answer

import evalkit


@evalkit.evaluator
def mentions_expected(answer: str | None, expected: str | None) -> bool:
    """A Python evaluator: runs here, its results go to the service."""
    return bool(answer and expected and expected.lower() in answer.lower())


if __name__ == "__main__":
    result = evalkit.run_experiment(
        dataset="capitals",           # the folder cases/capitals, synced first
        agent="quickstart@demo",
        task=answer,
        evaluators=[mentions_expected],
        repetitions=2,
        dry_run="--dry-run" in sys.argv,
    )
    for run in result.runs:
        print(run.case_id, run.repetition, run.status, run.trajectory_status, run.session_id)
