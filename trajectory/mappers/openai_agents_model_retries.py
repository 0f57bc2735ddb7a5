"""openai-agents' model requests its runner made again after they failed, under OpenInference: each failed attempt
listed on the step of the call that answered after it, not a step of its own.

openai-agents (0.12 on) retries a failed model request itself when the app opts in (`ModelSettings(retry=
ModelRetrySettings(max_retries=…, policy=retry_policies.…))`: `run_internal/model_retry.py`'s
`get_response_with_retry` / `stream_response_with_retry` call the model's `get_response` / `stream_response` again,
the same request to the same model, after a backoff). Each attempt opens a `response` span of its own, so
OpenInference's processor writes, under the turn's CHAIN span, the failed attempt's LLM span (ERROR, its message the
provider's, e.g. "Error getting response: {'error': 'Error code: 500 - …'}", nothing of a call:
`openai_agents_failed_calls.py`) and then the retry's, with the call's input, answer and usage and nothing saying a
request failed before it. Read as calls, each failure was a step of its own before the answer's, with no model, no
tokens and its error; one answering a streamed turn's question even came before that question's user step (the
failure records no input to place it by).

So a failed openai-agents call followed under the same parent span by one that answered is an attempt at that call's
request (`failed_attempts.list_before_answers`, the rule LangChain's fallbacks and LiteLLM's Router share): listed on
the answer's step as `extra.failed_attempts`, counted as an error there, no step or LLM call of its own. The attempt's
model is the answering call's: the runner re-sends the request it failed to the model it failed on (a turn asks one
model; openai-agents has no fallback to another), and the failed span records no model of its own. The provider's HTTP
status is left in the error's message, where the SDK wrote it (`Error code: 500`). A failure no answer follows (the
retries ran out, or none was allowed: the run raised) stays a step of its own where it happened, of no LLM call
(`failed_attempts.mark_unanswered`), the attempts before it listed on it. The session list
already counts such a span as no call (an OpenInference LLM span with no messages, tokens or cost: `prepares_call`).

Seen in a real capture: tests/captures/openai-agents_openinference_model-retry (openai-agents 0.25, OpenInference's
openai-agents processor 2.6.0; HTTP 500 in a `Runner.run` turn and HTTP 429 in a `Runner.run_streamed` one, each
retried by the runner and answered).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.trajectory.mappers import openai_agents_failed_calls
from evalkit.trajectory.mappers.failed_attempts import list_before_answers
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each openai-agents call that answered given the failed attempts its runner made at its request before it, each
    of those marked a failed attempt (no step), with the model the request was made to."""
    calls = [call for call in calls if call.span.scope_name == openai_agents_failed_calls.SCOPE]
    list_before_answers(calls)
    for call in calls:
        for attempt in call.extra.get("failed_attempts") or ():
            if attempt.get("model") is None:
                attempt["model"] = call.request_model or call.model
