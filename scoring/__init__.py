"""Agents, datasets, experiments, runs, leases, evaluators, scorecards and comparisons."""
