"""Haystack's own tracing (trajectory/mappers/haystack.py), beyond `corpus.compare`: what a person reading the
trajectory expects of each recorded run, with tools serialisable (JSON tags) or not (`repr` tags), and a pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from tests.trajectory_service.conftest import Service, shared_svc
from tests.trajectory_service.test_capture_sdks_and_sessions import _replayed

# One service for the module's tests (each sends to agents of its own): a service per test was ~1 s of each.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def svc(module_service: Service) -> Service:
    return shared_svc(module_service)


def _shape(document: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    return [(s["source"], s["message"], [c["function_name"] for c in s.get("tool_calls") or ()])
            for s in document["steps"]]


async def test_haystack_agent_two_turns_with_a_failed_tool_whether_its_tools_serialise_or_not(svc: Service) -> None:
    shapes = []
    for name in ("haystack_native", "haystack_native_local-tools"):
        _, document = await _replayed(svc, name)
        assert document["extra"]["emitters"] == ["haystack"]
        assert document["extra"]["unmapped_attributes"] == []
        # The system prompt once; each turn's question once, though turn two re-sends turn one's messages.
        assert _shape(document) == [
            ("system", "You are a terse weather assistant.", []),
            ("user", "Weather in Paris and Atlantis?", []),
            ("agent", "", ["get_weather", "get_weather"]),
            ("agent", "Paris is sunny at 21°C; I could not find Atlantis.", []),
            ("user", "And the next two days in Paris?", []),
            ("agent", "", ["get_forecast"]),
            ("agent", "Tomorrow and the day after in Paris: sunny, then light rain.", []),
        ], name
        first = document["steps"][2]
        results = {r["source_call_id"]: r for r in first["observation"]["results"]}
        paris, atlantis = (results[c["tool_call_id"]] for c in first["tool_calls"])
        assert paris["content"] == "sunny, 21°C" and not paris.get("extra", {}).get("is_error")
        # Haystack's {"error": …} wrapping taken off: the text the model was shown, flagged as an error.
        assert atlantis["content"].startswith("Failed to invoke Tool `get_weather`")
        assert atlantis["extra"]["is_error"] is True
        assert [s.get("model_name") for s in document["steps"] if s["source"] == "agent"] == ["gpt-4o"] * 4
        tools = [t["function"]["name"] for t in document["agent"].get("tool_definitions") or ()]
        shapes.append(tools)
    # Serialisable tools are defined on the spans; a closure's are `repr` text there, not read.
    assert shapes == [["get_weather", "get_forecast"], []]


async def test_haystack_rag_pipeline_is_its_prompts_and_answers(svc: Service) -> None:
    _, document = await _replayed(svc, "haystack_native_rag-pipeline")
    assert document["extra"]["unmapped_attributes"] == []
    system, first_question, first_answer, second_question, second_answer = document["steps"]
    assert (system["source"], system["message"]) == ("system", "You answer questions about Paris landmarks.")
    # The generator's prompt as the prompt builder rendered it, with the two documents retrieved.
    assert first_question["source"] == "user"
    assert "- The Eiffel Tower is 330 metres" in first_question["message"]
    assert first_question["message"].endswith("Question: How tall is the Eiffel Tower?")
    assert (first_answer["message"], first_answer["model_name"]) == ("The Eiffel Tower is 330 metres tall.",
                                                                     "gpt-4o-mini")
    assert first_answer["extra"]["component"] == "OpenAIChatGenerator"
    assert first_answer["extra"]["provider"] == "openai"
    assert second_question["message"].endswith("Question: When was the Eiffel Tower finished?")
    assert second_answer["message"] == "It was finished in 1889."
