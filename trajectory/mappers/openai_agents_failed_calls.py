"""openai-agents' model calls that raised, under OpenInference: a step showing the failure where it happened.

openai-agents records a model call's input, answer and usage on its `response` span only once the model answered
(`OpenAIResponsesModel.get_response`: `span_data.input` and `.response` are set after the fetch returns). A request
that raised (the provider's HTTP 500 with the client's retries off, a refused connection) leaves the span its error
alone (`SpanError("Error getting response", {"error": str(exc)})`), which OpenInference's processor writes as the LLM
span's ERROR status and message, beside `llm.system` and nothing of a call. Read as the OpenInference LLM spans with
no messages, token counts or cost are (`openinference.is_preprocessing`: LlamaIndex's step preparing a call), it made
no step: the failure showed only as the stop of the agent run it ended, as that run's error ("Error in agent run"),
nothing saying that the model call failed, nor which.

So it is a call the model answered nothing to (`LlmCall.answered`): a step where it happened, its error the span's
(`extra.error`: the SDK's message with the provider's status code and message in it), no tokens, and no LLM call
counted (the provider billed nothing; the session list counts none, `prepares_call`). The run's stop adds no step of
its own: its last step shows the failure that ended it (`build._run_error_step`).

Seen in a real capture: tests/captures/openai-agents_openinference_model-error (openai-agents 0.25, OpenInference's
openai-agents processor 2.6.0, the turn's second call answered HTTP 500).
"""

from __future__ import annotations

from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import STATUS_ERROR

SCOPE = "openinference.instrumentation.openai_agents"


def is_failed_call(reader: SpanReader) -> bool:
    """An openai-agents LLM span that failed before the model answered (called only for one recording no call)."""
    return reader.span.scope_name == SCOPE and reader.span.status_code == STATUS_ERROR


def failed_call(reader: SpanReader, emitter: str) -> LlmCall:
    call = LlmCall(span=reader.span, emitter=emitter, answered=False)
    call.provider = reader.text("llm.provider", "llm.system")
    call.error = span_error(reader)
    return call
