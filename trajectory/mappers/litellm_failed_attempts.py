"""LiteLLM's failed requests that a later call answered: attempts listed on the answer's step, not steps of their own.

A `Router` with fallbacks (`Router(model_list=…, fallbacks=[{"gpt-4o": ["gpt-4o-mini"]}])`) whose first model fails
(the provider's HTTP 500 or 429) makes the request again to the fallback; with `num_retries` it makes it again to the
same model. LiteLLM's OpenTelemetry callback (1.110) records each request it sent as a `litellm_request` span of its
own, beside the others under the app's span: the one that failed ERROR, with its input, no output, no usage and no
cost (`litellm.py`), the one that answered with no mark of the failure before it (a fallback's `hidden_params` names
`x-litellm-attempted-fallbacks`, a streamed one's does not). Read as calls, each failure was an empty, unpriced,
error-flagged step of the model that failed, counted as an LLM call, before the answer's step.

So a failed LiteLLM request that billed nothing, followed under the same parent span by a LiteLLM call that answered
(with usage), is an attempt at that call's request: listed on its step as `extra.failed_attempts`, in the order made
(`failed_attempts.failed_attempt`'s shape, as pydantic-ai's; with the provider's HTTP status), and no step or LLM call
of its own. The session list counts it as none by the same rule (trajectory/session_list.py, `unanswered`: a request
span with no usage and no cost that a later sibling of the same instrumentation answers with usage). A failure no
answer follows under its parent (every model of the fallbacks failed: the app's turn raised) stays a step of its own,
showing the error where it happened, of no LLM call and priced nothing, the attempts before it listed on it
(`failed_attempts.mark_unanswered`).

Seen in a real capture: tests/captures/litellm_native_router-fallback (LiteLLM 1.110.2, a Router over gpt-4o and
gpt-4o-mini, gpt-4o failing once per turn with HTTP 500, then, streamed, 429).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.trajectory.mappers import litellm
from evalkit.trajectory.mappers.failed_attempts import list_before_answers
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each LiteLLM call that answered given the failed requests made before it under its parent span, each of those
    marked a failed attempt (no step): the rule LangChain's fallbacks share (`failed_attempts.list_before_answers`)."""
    list_before_answers(call for call in calls if call.emitter == litellm.NAME)
