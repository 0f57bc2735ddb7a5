"""The thin client: run_experiment and friends, over HTTP."""
