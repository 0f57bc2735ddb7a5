"""Microsoft Agent Framework's own spans (the `agent-framework_native` capture's trace exports).

Its spans are the GenAI conventions plus its own bookkeeping (`trajectory/mappers/agent_framework.py`):
the base URL as `server.address`, a tool's duration, and an `invoke_agent` span restating its run.
"""

from __future__ import annotations

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import agent_framework

CAPTURE = "agent-framework_native"


def test_the_frameworks_bookkeeping_is_read_and_the_run_is_the_conversation() -> None:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id="agent-framework-weather-1")
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    assert agent_framework.NAME in document["extra"]["emitters"]
    # The base URL, a tool's duration, the agent span's restatement of its run: read, none unmapped.
    assert document["extra"]["unmapped_attributes"] == []
    assert document["agent"]["name"] == "weather_agent"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                         "agent"]
    # The agent span's provider is the framework's name: the calls' provider is the model's.
    assert {s["extra"]["provider"] for s in document["steps"] if s.get("llm_call_count") == 1} == {"openai"}
    # The timed-out call: flagged, its content what the model was shown (the next call's input), then retried.
    failed = document["steps"][2]["observation"]["results"][0]
    assert failed["content"] == "Error: Function failed." and failed["extra"]["is_error"] is True
    assert document["steps"][3]["observation"]["results"][0]["content"] == "sunny, 21°C"
