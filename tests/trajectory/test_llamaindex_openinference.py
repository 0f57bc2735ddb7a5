"""OpenInference's llama-index instrumentation on a single workflow agent, read from its captures: the agent's name.

A lone `FunctionAgent` / `ReActAgent` run makes no AGENT span: the run is a CHAIN span (`FunctionAgent.run`), its
output the StopEvent's repr cut short before the agent's name, and its steps' spans the only ones whose events name
the agent (`current_agent_name='travel_agent'`, the app's `FunctionAgent(name=…)`). The session's agent is named so
(`trajectory/mappers/llamaindex.py`, `lone_agent`), as OpenLLMetry's record of the same runs names it (its workflow
span's AgentOutput), where it was the service's name (`travel-agent`) before.
"""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.trajectory.mappers import llamaindex
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

LONE_AGENTS = ("llamaindex_openinference", "llamaindex_openinference_no-session", "llamaindex_openinference_react")
APP_NAME = "travel_agent"  # each record.py's `FunctionAgent(name=…)` / `ReActAgent(name=…)`
SERVICE = "travel-agent"  # each record.py's tracer provider's service name
# The same scenarios traced by OpenLLMetry, whose workflow span's output names the agent.
OPENLLMETRY_ALIKE = {"llamaindex_openinference": "llamaindex_openllmetry",
                     "llamaindex_openinference_react": "llamaindex_openllmetry_react"}


def _document(name: str) -> dict[str, Any]:
    return capture_document(name, corpus.load(name).session_id)


def _agent_runs(spans: list[Span]) -> list[Span]:
    return [span for span in spans if span.name.endswith("Agent.run")]


@pytest.mark.parametrize("name", LONE_AGENTS)
def test_a_lone_agents_run_names_it_only_in_its_steps_events(name: str) -> None:
    """As recorded: no span is an AGENT's, the run's own output is cut short before the name, and the steps' events
    name the app's agent; that name is the lone agent's."""
    spans = capture_spans(name)
    runs = _agent_runs(spans)
    assert runs and all(span.attributes["openinference.span.kind"] == "CHAIN" for span in runs)
    assert not any(span.attributes.get("openinference.span.kind") == "AGENT" for span in spans)
    assert all(APP_NAME not in str(span.attributes.get("output.value")) for span in runs)
    assert {span.resource_attributes["service.name"] for span in spans} == {SERVICE}
    assert llamaindex.lone_agent(spans) == APP_NAME


@pytest.mark.parametrize("name", LONE_AGENTS)
def test_the_trajectorys_agent_is_the_one_the_app_named(name: str) -> None:
    """Before, the service's name (`travel-agent`): no run named the agent."""
    assert _document(name)["agent"]["name"] == APP_NAME


@pytest.mark.parametrize(("name", "openllmetry"), OPENLLMETRY_ALIKE.items())
def test_both_emitters_name_the_agent_alike(name: str, openllmetry: str) -> None:
    assert _document(name)["agent"]["name"] == _document(openllmetry)["agent"]["name"] == APP_NAME


def test_an_agent_workflows_run_is_no_lone_agents() -> None:
    """An AgentWorkflow's agents take turns (a handoff makes the receiving agent's steps a subagent): its steps name
    each agent in turn, none of them the lone agent of the session, which stays named as OpenLLMetry's record of the
    same workflow names it."""
    name = "llamaindex_openinference_agent-workflow"
    spans = capture_spans(name)
    assert {agent for agent in llamaindex.step_agents(spans).values() if agent} == {"travel_agent", "booking_agent"}
    assert llamaindex.lone_agent(spans) is None
    assert _document(name)["agent"]["name"] == _document("llamaindex_openllmetry_agent-workflow")["agent"]["name"]
