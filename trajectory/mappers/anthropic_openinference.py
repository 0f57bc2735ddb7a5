"""The Anthropic Python SDK's calls as OpenInference's anthropic instrumentation records them.

`openinference-instrumentation-anthropic` records a call's request parameters, all but the model, system prompt,
messages, tools, output format and extra headers, as `llm.invocation_parameters` (read by the OpenInference mapper
into the call's `extra["request"]`). A reasoning request sets two of them:

- `thinking`: extended thinking, `{"type": "enabled", "budget_tokens": …}` (or `"adaptive"`): that the model thinks
  and how many tokens it may spend so, no effort level; kept in the request as recorded;
- `output_config`: `{"effort": "low" | "medium" | "high" | …}`, how much effort the model puts into its answer,
  thinking included (the SDK's model capabilities call it "Effort (reasoning_effort)"): the call's
  `reasoning_effort`, as OpenAI's `reasoning_effort` is.

The thinking itself needs nothing here: each `thinking` block is a `reasoning` content of its message (its
`signature` beside it), and its token count `llm.token_count.completion_details.reasoning`
(`usage.output_tokens_details.thinking_tokens`), part of the completion tokens.

Seen in a real capture: tests/captures/anthropic-sdk_openinference_thinking.
"""

from __future__ import annotations

from evalkit.trajectory.operations import LlmCall

SCOPE = "openinference.instrumentation.anthropic"


def read_request(call: LlmCall) -> None:
    """What the call's recorded request parameters say that ATIF has a field of its own for: the effort."""
    effort = reasoning_effort(call.extra.get("request"))
    if effort is not None and call.reasoning_effort is None:
        call.reasoning_effort = effort


def reasoning_effort(parameters: object) -> str | None:
    """The effort a Messages request's parameters set (`output_config.effort`), None where they set none."""
    config = parameters.get("output_config") if isinstance(parameters, dict) else None
    effort = config.get("effort") if isinstance(config, dict) else None
    return effort if isinstance(effort, str) and effort else None
