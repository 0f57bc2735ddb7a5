"""Strands Agents' tool definitions, read from its own spans (`trajectory/mappers/strands.py`), over its captures.

Strands names an agent's tools on its `invoke_agent` span (`gen_ai.agent.tools`) and records each tool's spec on
every `execute_tool` span (`gen_ai.tool.description`, `gen_ai.tool.json_schema`), so an agent's (or a Swarm's or
Graph's node agent's) definitions are those of the tools its run executed. The agent span defines them all only
under the `gen_ai_tool_definitions` opt-in (`gen_ai.tool.definitions`, `inputSchema` wrapped as `{"json": …}`),
which no capture used. What the model was sent is the fake LLM's log: each request's `tools`, in its API's shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import Span
from tests.captures import corpus

# Each capture's trajectories in document order (the agent, then its subagents): the agent's name and the tools
# its run executed (an `execute_tool` span each), as the fake LLM's scripted replies called them.
RAN: dict[str, list[tuple[str, list[str]]]] = {
    "strands_native": [("weather-agent", ["get_weather"])],
    "strands_native_latest-semconv": [("weather-agent", ["get_weather"])],
    "strands_native_anthropic-prompt-cache": [("weather-agent", ["get_weather"])],
    "strands_native_anthropic-prompt-cache-1.53": [("weather-agent", ["get_forecast"])],
    # The weather specialist was offered `handoff_to_agent` too and never called it; turn two's triage answered.
    "strands_native_swarm": [("swarm", []), ("triage", ["handoff_to_agent"]),
                             ("weather_specialist", ["get_weather", "get_forecast"]), ("triage", [])],
    # Turn two's node runs called no tool: their tool calls are turn one's, re-sent (the graph keeps their messages).
    "strands_native_graph": [("graph", []), ("researcher", ["lookup_city"]),
                             ("weather_specialist", ["get_weather", "get_forecast"]), ("researcher", []),
                             ("weather_specialist", [])],
}
SWARM = "strands_native_swarm"
SWARM_SESSION = "strands-swarm-trip-1"


def _trajectories(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield document
    for subagent in document.get("subagent_trajectories") or ():
        yield from _trajectories(subagent)


def _system_prompt(request: dict[str, Any]) -> str | None:
    """A request's system prompt: OpenAI's system message, or Anthropic's `system` (text or text blocks)."""
    system = request.get("system")
    if system is None:
        system = next((m["content"] for m in request.get("messages", []) if m.get("role") == "system"), None)
    if isinstance(system, list):
        return "".join(block.get("text", "") for block in system)
    return system


def _as_openai(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool as a request sent it (OpenAI's function tool, or Anthropic's, its `cache_control` the provider's)."""
    if tool.get("type") == "function":
        return tool
    return {"type": "function", "function": {
        "name": tool["name"], "description": tool["description"], "parameters": tool["input_schema"]}}


def _sent(capture: str, system_prompt: str) -> dict[str, dict[str, Any]]:
    """The tools the requests under this system prompt (one agent's) sent its model, by name."""
    sent: dict[str, dict[str, Any]] = {}
    for entry in corpus.load(capture).llm_log:
        if _system_prompt(entry["request"]) == system_prompt:
            for tool in entry["request"].get("tools") or ():
                definition = _as_openai(tool)
                sent.setdefault(definition["function"]["name"], definition)
    assert sent, f"no request of {capture} under {system_prompt!r}"
    return sent


def _by_name(trajectory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    definitions = trajectory["agent"].get("tool_definitions") or []
    found = {d["function"]["name"]: d for d in definitions}
    assert len(found) == len(definitions), "a tool defined twice"
    return found


def _system_step(trajectory: dict[str, Any]) -> str:
    return next(s["message"] for s in trajectory["steps"] if s["source"] == "system")


@pytest.mark.parametrize("capture", sorted(RAN))
def test_each_agent_has_the_definitions_of_the_tools_it_ran_as_its_model_was_sent_them(capture: str) -> None:
    document = capture_document(capture, corpus.load(capture).meta["session_id"])
    trajectories = list(_trajectories(document))
    assert [t["agent"]["name"] for t in trajectories] == [name for name, _ in RAN[capture]]
    for trajectory, (name, ran) in zip(trajectories, RAN[capture], strict=True):
        if not ran:
            assert "tool_definitions" not in trajectory["agent"], name
            continue
        sent = _sent(capture, _system_step(trajectory))
        assert _by_name(trajectory) == {tool: sent[tool] for tool in ran}, name


def _agent_spans(spans: list[Span], name: str) -> list[Span]:
    return [s for s in spans if s.attributes.get("gen_ai.operation.name") == "invoke_agent"
            and s.attributes.get("gen_ai.agent.name") == name]


def _specialist(document: dict[str, Any]) -> dict[str, Any]:
    """The swarm's weather specialist (its one run: it ran the tools turn one asked for)."""
    return next(t for t in _trajectories(document) if t["agent"]["name"] == "weather_specialist")


def test_a_tool_the_agent_never_ran_is_named_but_not_defined() -> None:
    """The weather specialist was offered the swarm's handoff tool: named on its agent span, sent, never defined."""
    specialist = _specialist(capture_document(SWARM, SWARM_SESSION))
    sent = _sent(SWARM, _system_step(specialist))
    assert "handoff_to_agent" in sent
    agent_span = _agent_spans(capture_spans(SWARM), "weather_specialist")[0]
    assert "handoff_to_agent" in json.loads(agent_span.attributes["gen_ai.agent.tools"])
    assert set(_by_name(specialist)) == {"get_weather", "get_forecast"}


def test_the_agent_spans_definitions_under_the_opt_in_are_read_as_strands_writes_them() -> None:
    """`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_tool_definitions`: the weather specialist's agent span as Strands 1.62
    writes it then (tracer.py `_construct_tool_definitions`, checked against a run of 1.62: each tool's spec, its
    input schema under `json`), built from the tools its requests sent. All three are its definitions, the handoff
    tool it never ran too, each as sent (not `{"json": …}` for its parameters)."""
    spans = capture_spans(SWARM)
    specialist_span = _agent_spans(spans, "weather_specialist")[0]
    sent = _sent(SWARM, _system_step(_specialist(capture_document(SWARM, SWARM_SESSION))))
    specs = [{"name": d["function"]["name"], "description": d["function"]["description"],
              "inputSchema": {"json": d["function"]["parameters"]}, "outputSchema": None} for d in sent.values()]
    with_definitions = replace(specialist_span, attributes={
        **specialist_span.attributes, "gen_ai.tool.definitions": json.dumps(specs)})
    result = trajectory_from_spans([with_definitions if s is specialist_span else s for s in spans],
                                   session_id=SWARM_SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    assert list(sent) == ["get_weather", "get_forecast", "handoff_to_agent"]
    assert _by_name(_specialist(result.document())) == sent
