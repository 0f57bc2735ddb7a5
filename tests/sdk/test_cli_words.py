"""The service's and the SDK's advice, said on the command line with commands (evalkit/cli/http.py)."""

from __future__ import annotations

import pytest

from evalkit.cli.http import cli_words


@pytest.mark.parametrize(("said", "on_the_command_line"), [
    ("experiment 2 is not fully scored; finish it with `evalkit evaluate 2` or "
     "`evaluate_experiment(experiment_id=2)` (or pass allow_incomplete=true)",
     "experiment 2 is not fully scored; finish it with `evalkit evaluate 2` (or pass --allow-incomplete)"),
    ("finish them with `run_experiment(..., resume=3)` or `evalkit run … --resume 3`, or score what is there with "
     "\"partial\": true (`evaluate_experiment(experiment_id=3, partial=True)`). Failed",
     "finish them with `evalkit run … --resume 3`, or score what is there with `evalkit evaluate 3 --partial`. Failed"),
    ("finish them with run_experiment(..., resume=3) (or `evalkit run … --resume 3`), or score what is there "
     "with evaluate_experiment(experiment_id=3, partial=True) (`evalkit evaluate 3 --partial`)",
     "finish them with `evalkit run … --resume 3`, or score what is there with `evalkit evaluate 3 --partial`"),
    ("experiment 4 is not fully scored; finish it with `evalkit evaluate 4 --evaluator evals:exact` or "
     "`evaluate_experiment(experiment_id=4, evaluators=[exact])` (or pass allow_incomplete=true)",
     "experiment 4 is not fully scored; finish it with `evalkit evaluate 4 --evaluator evals:exact` (or pass "
     "--allow-incomplete)"),
    ("or score what is there with \"partial\": true (`evalkit evaluate 5 --partial --evaluator evals:exact` or "
     "`evaluate_experiment(experiment_id=5, evaluators=[exact], partial=True)`). Failed",
     "or score what is there with `evalkit evaluate 5 --partial --evaluator evals:exact`. Failed"),
    ("The runs are recorded; finish scoring with `evalkit evaluate 6 --rescore --evaluator MODULE:exact` or "
     "`evaluate_experiment(experiment_id=6, evaluators=[exact], rescore=True)`",
     "The runs are recorded; finish scoring with `evalkit evaluate 6 --rescore --evaluator MODULE:exact`"),
    ("take over now with `evalkit run … --resume 3 --take-over` or `run_experiment(..., resume=3, take_over=True)`;",
     "take over now with `evalkit run … --resume 3 --take-over`;"),
    ("take over now: `evalkit run … --resume 3 --take-over` or run_experiment(..., resume=3, take_over=True); "
     "otherwise wait", "take over now: `evalkit run … --resume 3 --take-over`; otherwise wait"),
    ("unarchive it with `PATCH /api/agents/bot@x` {\"archived\": false}",
     "unarchive it with `evalkit agents set bot@x --unarchive`"),
    ("compare what ran with allow_incomplete=true (`--allow-incomplete`)",
     "compare what ran with `--allow-incomplete`"),
    ("resume it with run_experiment(..., resume=4)", "resume it with `evalkit run DATASET --agent AGENT --resume 4`"),
    ("experiment 9 does not exist or is not visible to this token; list yours with `GET /api/experiments`",
     "experiment 9 does not exist or is not visible to this token; list them with `evalkit experiments list`"),
    ("say which workspace the agent belongs to: {\"name\": ..., \"workspace\": ...}",
     "write the agent as name@workspace, e.g. support-bot@acme (`evalkit workspaces list` lists yours)"),
    ("agent 'bot' must be written name@workspace (or pass workspace=...)",
     "agent 'bot' must be written name@workspace"),
    ("asks for evaluator 'x', which is not a workspace evaluator, a built-in type or a declared Python evaluator "
     "(run_experiment(evaluators=[...]))", "asks for evaluator 'x', which is not a workspace evaluator, a built-in "
     "type or a declared Python evaluator (`--evaluator module:name`)"),
    ("exact: 3 paired case(s), at least 6 needed; with fewer, no regression can be significant: add cases to the "
     "dataset, compare experiments over the same case ids, or lower min_pairs to gate on fewer",
     "exact: 3 paired case(s), at least 6 needed; with fewer, no regression can be significant: add cases to the "
     "dataset, compare experiments over the same case ids, or lower `--min-pairs` to gate on fewer"),
    ("exact: 2 candidate run(s) unscored or with an evaluator error; re-score the candidate, or set allow_incomplete",
     "exact: 2 candidate run(s) unscored or with an evaluator error; re-score the candidate, or pass "
     "`--allow-incomplete`"),
    ("agent bot@acme has no session 's1': no span carrying that session id has arrived. Spans name their session "
     "in `session.id`; list known sessions with `evalkit sessions list bot@acme`, or ask again with ?wait=SECONDS",
     "agent bot@acme has no session 's1': no span carrying that session id has arrived. Spans name their session "
     "in `session.id`; list known sessions with `evalkit sessions list bot@acme`, or wait for it: "
     "`evalkit trajectory get bot@acme SESSION --wait SECONDS`"),
])
def test_advice_is_said_with_commands(said: str, on_the_command_line: str) -> None:
    assert cli_words(said) == on_the_command_line


def test_the_sdks_progress_lines_under_evalkit_run_name_this_commands_resume() -> None:
    """Before: Ctrl-C of `evalkit run` (or the service going away) printed the SDK's progress lines as they are,
    "resume it with run_experiment(..., resume=9) or `evalkit run ... --resume 9`" and "add --take-over
    (take_over=True)": no CliError, so cli_words never saw them."""
    import argparse
    import io

    from evalkit.cli.run import CliProgress, resume_command

    args = argparse.Namespace(dataset="capitals", agent="bot@acme", task="agent:answer", concurrency=2, timeout=None,
                              retries=0, max_cost_usd=None, max_tokens=None, trajectory_wait_seconds=None,
                              url="http://127.0.0.1:8000", evaluator=["evals:exact"])
    shown = io.StringIO()
    progress = CliProgress(shown, resume_command(args))
    progress.write("experiment 9 did not finish; resume it with run_experiment(..., resume=9) or "
                   "`evalkit run … --resume 9`\n")
    progress.write("the lease of experiment 9 was not given back (unreachable); it runs out at 12:00:00 UTC. "
                   "Resuming from this machine takes it over at once; from another one before then, add --take-over "
                   "(take_over=True)\n")
    assert shown.getvalue().splitlines() == [
        "experiment 9 did not finish; resume it with `evalkit run capitals --agent bot@acme --task agent:answer "
        "--concurrency 2 --url http://127.0.0.1:8000 --evaluator evals:exact --resume 9`",
        "the lease of experiment 9 was not given back (unreachable); it runs out at 12:00:00 UTC. Resuming from this "
        "machine takes it over at once; from another one before then, add --take-over"]
    assert not progress.isatty()
