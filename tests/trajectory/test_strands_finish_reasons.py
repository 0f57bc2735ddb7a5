"""Strands' finish reasons under both of its conventions (`trajectory/mappers/otel_genai.py`).

By default Strands writes each answer as a `gen_ai.choice` event with its `finish_reason`; under
`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` it writes a `gen_ai.client.inference.operation.details`
event whose `gen_ai.output.messages` each carry their `finish_reason`, and no `gen_ai.response.finish_reasons`. A
step shows the same reasons either way: the model's stop reason, as the fake LLM answered (`tool_use` for an answer
with tool calls, `end_turn` otherwise).
"""

from __future__ import annotations

import pytest
from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from tests.captures import corpus


def _finish_reasons(name: str) -> list[list[str] | None]:
    capture = corpus.load(name)
    document = trajectory_from_spans(capture_spans(name), session_id=capture.session_id).document()
    return [(step.get("extra") or {}).get("finish_reasons") for step in corpus.llm_steps(document)]


@pytest.mark.parametrize("name", ["strands_native", "strands_native_anthropic-thinking"])
def test_each_step_s_finish_reason_is_the_model_s_under_either_convention(name: str) -> None:
    stopped = [["tool_use"] if entry["response"]["tool_calls"] else ["end_turn"]
               for entry in corpus.load(name).llm_log]
    assert _finish_reasons(name) == stopped
    assert _finish_reasons(f"{name}_latest-semconv") == stopped
