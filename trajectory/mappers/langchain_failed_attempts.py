"""LangChain's chat model calls that raised, under OpenInference: the provider's HTTP status, and each attempt a later
call answered listed on that call's step, not a step of its own.

A chat model with fallbacks (`ChatOpenAI(model="gpt-4o", max_retries=0).with_fallbacks([ChatOpenAI(model=
"gpt-4o-mini", max_retries=0)])`, LangChain's documented fallbacks: a `RunnableWithFallbacks` trying each runnable in
turn until one does not raise), as `create_agent`'s model, is recorded by OpenInference's LangChain tracer as a CHAIN
span `RunnableWithFallbacks` under the agent's `model` node, holding one LLM span per model it tried: the one that
raised (the provider's HTTP 500 or 429) ERROR, with its input, the exception event, no token counts and an empty
answer (an assistant message with no content: `output.value` is the LLMResult langchain-core makes of the error,
`_generate_response_from_error`, its message's `response_metadata` the provider's `status_code`, headers and error
body); then the LLM span of the model that answered, with nothing of the failure before it. Read as calls, each
failure was an empty, unpriced, error-flagged step of the model that failed, counted as an LLM call, before the
answer's step.

So a failed call's step or attempt names the provider's HTTP status (`extra.http_status_code`, as LiteLLM's), and a
failed call followed under the same parent span by one that answered is an attempt at that call's request
(`failed_attempts.list_before_answers`, LiteLLM's rule and pydantic-ai's shape): listed on the answer's step as
`extra.failed_attempts`, no step or LLM call of its own. The session list counts it as none by the same rule
(trajectory/session_list.py, `unanswered`: a request span with no usage and no cost that a later sibling of the same
instrumentation answers with usage). A failure no answer follows (every model failed: the agent's run raised) stays
a step of its own, showing the error where it happened, of no LLM call and priced nothing; the attempts before it
listed on it (`failed_attempts.mark_unanswered`: `ModelRetryMiddleware` out of retries, its own "Model call failed
after 3 attempts…" message then an agent step of no model, from the next request's history: tests/captures/
langgraph_openinference_model-retry-exhausted).

LangChain v1's `ModelRetryMiddleware` (`create_agent(..., middleware=[ModelRetryMiddleware(max_retries=2)])`: its
`wrap_model_call` calls the model handler again after an exception) records its attempts the same way, one LLM span
each side by side under the agent's `model` node (no span of the middleware's own), the one that raised ERROR with
the same empty answer, then the retry's: the same rule lists each failure on the retry's step.

Seen in real captures: tests/captures/langgraph_openinference_fallback (LangChain 1.5.2, langchain-openai 1.8.1,
OpenInference's LangChain instrumentation 0.1.80; gpt-4o failing once a turn with HTTP 500, then, streamed, 429) and
tests/captures/langgraph_openinference_model-retry (the same versions, `ModelRetryMiddleware`: gpt-4o failing with
HTTP 500 on a turn's first request, then, streamed, 429 on the request after a tool result, each retried).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.failed_attempts import list_before_answers
from evalkit.trajectory.mappers.langchain import serialized_kwargs, serialized_messages
from evalkit.trajectory.mappers.langgraph_openinference import OPENINFERENCE_SCOPE
from evalkit.trajectory.mappers.reader import dig
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span


def read_failure(call: LlmCall, output_value: Any) -> None:
    """A failed call's provider HTTP status, from the empty answer its serialised output holds."""
    if call.error is None or not isinstance(output_value, str) or '"status_code"' not in output_value:
        return
    serialized = serialized_messages(output_value, "generations")
    kwargs = serialized_kwargs(serialized[0]) if isinstance(serialized, list) and serialized else None
    status = dig(kwargs, "response_metadata", "status_code")
    if type(status) is int:
        call.extra["http_status_code"] = status


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each LangChain call that answered given the failed calls made before it under its parent span (a
    `RunnableWithFallbacks`', or the agent's `model` node's under `ModelRetryMiddleware`), each of those marked a
    failed attempt (no step)."""
    list_before_answers(call for call in calls if call.span.scope_name == OPENINFERENCE_SCOPE)
