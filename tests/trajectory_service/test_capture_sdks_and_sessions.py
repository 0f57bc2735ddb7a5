"""Framework-specific checks of the Anthropic SDK, Logfire, Strands, pydantic-ai, OpenTelemetry openai-v2, Langfuse SDK,
MLflow and Traceloop SDK captures, beyond `corpus.compare` (which test_capture_corpus.py runs on every capture)."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import pytest

from tests.captures import corpus, questions
from tests.trajectory_service.conftest import Service, shared_svc

# One service for the module (each test replays into agents of its own): a service per test was ~1 s of each.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def svc(module_service: Service) -> Service:
    return shared_svc(module_service)


async def _replayed(svc: Service, name: str, encoding: str = "protobuf") -> tuple[str, dict[str, Any]]:
    capture = corpus.load(name)
    agent, key = await svc.new_agent(name.replace("_", "-")[:60])
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key, encoding)
    session = capture.session_id
    if session is None:
        listed = await svc.get(f"/api/agents/{agent}/sessions")
        session = listed.body["sessions"][0]["session_id"]
    reply = await svc.trajectory(agent, str(session), "?wait=10")
    assert reply.status == 200, reply.text
    return agent, reply.body


def _scopes(name: str) -> dict[str, str]:
    """span id (hex) -> the instrumentation scope that reported it, from the capture's own exports."""
    found = {}
    for export in corpus.load(name).exports:
        if export.signal != "traces":
            continue
        for resource in json.loads(corpus.as_otlp_json(export))["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    found[span["spanId"]] = scope["scope"]["name"]
    return found


async def test_anthropic_sdk_and_openllmetry_spans_of_one_call_are_one_step(svc: Service) -> None:
    agent, document = await _replayed(svc, "anthropic-sdk_openllmetry")
    agent_steps = [s for s in document["steps"] if s["source"] == "agent"]
    assert len(agent_steps) == 2
    # The SDK's span (the inner one) is kept; the tool definitions only OpenLLMetry's span had are kept too.
    scopes = _scopes("anthropic-sdk_openllmetry")
    assert [scopes[s["extra"]["span_id"]] for s in agent_steps] == ["com.anthropic.sdk.python"] * 2
    assert [t["function"]["name"] for t in document["agent"]["tool_definitions"]] == ["get_weather"]
    assert agent_steps[1]["metrics"]["completion_tokens"] == 6  # what the SDK saw; OpenLLMetry counted 7
    assert any("reporting a call another span reports" in w for w in document["extra"]["warnings"])
    # The session list counts each call once too, with the same tokens and cost.
    (row,) = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    final = document["final_metrics"]
    assert (row["llm_calls"], row["prompt_tokens"], row["completion_tokens"]) == (
        2, final["total_prompt_tokens"], final["total_completion_tokens"])
    assert row["cost_usd"] == final["total_cost_usd"]
    # The same figure has the same name in the session's summary, and the list keeps its older name for it.
    summary = (await svc.get(f"/api/agents/{agent}/sessions/{quote(row['session_id'], safe='')}")).body
    assert summary["summary"]["llm_calls"] == row["llm_calls"] == row["steps"]


async def test_logfire_streamed_calls_are_one_priced_call_each(svc: Service) -> None:
    agent, document = await _replayed(svc, "logfire_openai_streaming")
    agent_steps = [s for s in document["steps"] if s["source"] == "agent"]
    # Three calls, each a request span and a "streaming response" span: three priced steps, never six.
    assert len(agent_steps) == 3
    assert all("cost_usd" in s["metrics"] for s in agent_steps), agent_steps
    assert document["final_metrics"]["total_cost_usd"] is not None
    # The session list too: three calls, priced (a request span alone has no usage and would make it null).
    (row,) = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert (row["steps"], row["cost_priced"], row["unpriced"]) == (3, True, [])
    assert row["cost_usd"] == document["final_metrics"]["total_cost_usd"]
    assert row["prompt_tokens"] == document["final_metrics"]["total_prompt_tokens"]


async def test_logfire_scrubbed_session_id_names_no_session(svc: Service) -> None:
    agent, document = await _replayed(svc, "logfire_openai_scrubbed-session")
    (row,) = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    # The trace is a session of its own, named by its trace id, not by "[Scrubbed due to 'session']".
    assert len(row["session_id"]) == 32 and int(row["session_id"], 16) >= 0
    assert document["session_id"] == row["session_id"]
    scrubbed = "[Scrubbed due to 'session']"
    assert (await svc.get(f"/api/agents/{agent}/sessions/{quote(scrubbed)}")).status == 404


async def test_pydantic_ai_independent_runs_and_a_nested_run_with_its_own_conversation_id(svc: Service) -> None:
    agent, document = await _replayed(svc, "pydantic-ai_openai_turns-and-nested-run")
    # The same question asked by two independent runs (no history passed) is asked twice.
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "What is 2 + 2?", "What is 2 + 2?", "When did the Eiffel Tower open?"]
    (sub,) = document["subagent_trajectories"]
    assert sub["agent"]["name"] == "researcher"
    # The nested run's own conversation id is no second session repeating the parent's turn.
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert [row["session_id"] for row in listed] == ["pai-conversation-1"]
    assert listed[0]["steps"] == 5
    spans = (await svc.get(f"/api/agents/{agent}/sessions/pai-conversation-1")).body["spans"]
    nested_ids = {s["attributes"].get("gen_ai.conversation.id") for s in spans} - {"pai-conversation-1", None}
    assert len(nested_ids) == 1, nested_ids
    assert (await svc.get(f"/api/agents/{agent}/sessions/{nested_ids.pop()}")).status == 404


async def test_pydantic_ai_history_re_sent_each_turn_retry_and_a_run_ended_by_its_tool(svc: Service) -> None:
    name = "pydantic-ai_openai_history-retry-parallel"
    _agent, document = await _replayed(svc, name)
    # Each run is given the ones before it (message_history): every question once, nothing copied.
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "Weather in Paris and Atlantis? If Atlantis has none, Oslo.", "Which is warmer?",
        "Book me a hotel in the warmer one."]
    assert not [s for s in document["steps"] if s.get("is_copied_context")]
    # The conversation that happened, the retry's result as the OpenAI adapter sent it ({"error": …}, rebuilt from
    # the tool span's retry cause: trajectory/mappers/pydantic_ai_tool_errors.py).
    truth = corpus.GroundTruth.of(corpus.load(name).llm_log)
    assert corpus.compare(document, truth, call_ids=True) == []
    parallel = next(s for s in document["steps"] if len(s.get("tool_calls") or ()) == 2)
    results = {r["source_call_id"]: r for r in parallel["observation"]["results"]}
    paris, atlantis = (results[c["tool_call_id"]] for c in parallel["tool_calls"])
    assert paris["content"] == "sunny, 21°C" and "is_error" not in paris["extra"]
    assert atlantis["extra"]["is_error"] is True
    assert atlantis["content"] == '{"error":"No weather station in Atlantis; ask about another city."}'
    # The last run raised its tool's exception: its failed result is the last step, shown once.
    last = document["steps"][-1]
    (failed,) = last["observation"]["results"]
    assert failed["extra"]["error"]["exceptions"][0]["type"] == "ConnectionError"
    assert [s for s in document["steps"] if (s.get("extra") or {}).get("run_error")] == []


async def test_strands_default_conventions_read_from_events_like_the_latest_ones(svc: Service) -> None:
    shapes = []
    for name in ("strands_native", "strands_native_latest-semconv"):
        agent, document = await _replayed(svc, name)
        first, last = [s for s in document["steps"] if s["source"] == "agent"]
        assert [(c["function_name"], c["arguments"]) for c in first["tool_calls"]] == [
            ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Atlantis"})]
        results = {r["source_call_id"]: r for r in first["observation"]["results"]}
        paris, atlantis = (results[c["tool_call_id"]] for c in first["tool_calls"])
        assert paris["content"] == "sunny, 21°C" and not paris.get("extra", {}).get("is_error")
        assert atlantis["extra"]["is_error"] is True
        assert last["message"] == "Paris is sunny at 21°C; I could not find Atlantis."
        shapes.append([(s["source"], s["message"], len(s.get("tool_calls") or ())) for s in document["steps"]])
        if name == "strands_native":
            # The event-loop spans' events restate the cycle: read by no mapper, so listed as unmapped.
            summary = (await svc.get(f"/api/agents/{agent}/sessions/strands-weather-1")).body["summary"]
            assert "event gen_ai.choice: tool.result" in summary["unmapped_attributes"]
    assert shapes[0] == shapes[1]


async def test_opentelemetry_openai_v2_is_read_as_otel_genai_in_both_conventions(svc: Service) -> None:
    """OpenTelemetry's own openai-v2 instrumentation: messages as log records (default) or on the spans
    (latest), two user turns of one session, the same trajectory either way, reported as otel-genai."""
    shapes = []
    for name in ("openai-sdk_otel-genai", "openai-sdk_otel-genai_latest-semconv"):
        agent, document = await _replayed(svc, name)
        # Its scope is `opentelemetry.instrumentation.openai_v2`: the OpenTelemetry project's, not OpenLLMetry's.
        assert document["extra"]["emitters"] == ["otel-genai"], document["extra"]["emitters"]
        agent_steps = [s for s in document["steps"] if s["source"] == "agent"]
        assert {s["extra"]["emitter"] for s in agent_steps} == {"otel-genai"}
        assert {s["model_name"] for s in agent_steps} == {"gpt-4o"}
        first = agent_steps[0]
        results = {r["source_call_id"]: r for r in first["observation"]["results"]}
        paris, atlantis = (results[c["tool_call_id"]] for c in first["tool_calls"])
        assert (paris["content"], atlantis["content"]) == ("sunny, 21°C", "error: unknown city: Atlantis")
        (row,) = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
        assert (row["session_id"], row["trace_count"], row["llm_calls"]) == ("otel-genai-weather-1", 2, 4)
        if name.endswith("latest-semconv"):
            # The failing tool's execute_tool span (util-genai's `fail`) marks its result an error.
            assert atlantis["extra"]["is_error"] is True and atlantis["extra"]["error"]["type"] == "ValueError"
            assert row["errors"] == 1
        shapes.append([(s["source"], s["message"],
                        [(c["function_name"], c["arguments"]) for c in s.get("tool_calls") or ()])
                       for s in document["steps"]])
    assert shapes[0] == shapes[1]
    assert [(source, message) for source, message, _ in shapes[0] if source != "agent"] == [
        ("system", "You are a terse weather assistant."), ("user", "Weather in Paris and Atlantis?"),
        ("user", "And in Lisbon?")]


async def test_langfuse_sdk_two_turns_one_session_with_a_failed_tool(svc: Service) -> None:
    _agent, document = await _replayed(svc, "langfuse-sdk_openai")
    # Two traces (one per @observe'd turn) grouped by propagate_attributes(session_id=…).
    assert document["extra"]["settlement"]["trace_count"] == 2
    assert [(s["source"], s["message"]) for s in document["steps"] if s["source"] in ("system", "user")] == [
        ("system", "You are a terse weather assistant."), ("user", "Weather in Paris and Atlantis?"),
        ("user", "What should I wear in Paris?")]
    assert not [s for s in document["steps"] if s.get("is_copied_context")]
    assert document["agent"]["name"] == "weather-agent"
    first = next(s for s in document["steps"] if s.get("tool_calls"))
    results = {r["source_call_id"]: r for r in first["observation"]["results"]}
    paris, atlantis = (results[c["tool_call_id"]] for c in first["tool_calls"])
    assert paris["content"] == "sunny, 21°C" and not paris["extra"].get("is_error")
    assert atlantis["extra"]["is_error"] is True
    assert atlantis["extra"]["error"]["message"] == "unknown city: Atlantis"
    # The SDK names the trace's user `user.id` (not `langfuse.user.id`): read, so not listed as unmapped.
    assert document["extra"]["unmapped_attributes"] == []


async def test_langfuse_sdk_session_list_counts_the_trajectory_s_tokens_and_cost(svc: Service) -> None:
    """Before: the list summed typed span columns read from flat token attributes only, and Langfuse's usage is one
    JSON attribute (`langfuse.observation.usage_details`): the list showed 0 tokens and no cost for a session
    whose trajectory had both. The flattening now reads that JSON (ingest/attribution.py)."""
    agent, document = await _replayed(svc, "langfuse-sdk_openai")
    (row,) = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    final = document["final_metrics"]
    assert (row["llm_calls"], row["prompt_tokens"], row["completion_tokens"]) == (
        3, final["total_prompt_tokens"], final["total_completion_tokens"])
    assert row["cost_usd"] == final["total_cost_usd"]


async def test_mlflow_each_turn_s_trace_is_the_conversation_of_its_calls(svc: Service) -> None:
    # MLflow's OTLP export carries no session (KNOWN_GAPS in test_capture_corpus.py): each turn's trace is a
    # session of its own, and each is compared with the calls it made (turn 1: calls 0-1, turn 2: call 2).
    name = "mlflow_openai"
    capture = corpus.load(name)
    agent, key = await svc.new_agent(name.replace("_", "-"))
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    listed = (await svc.get(f"/api/agents/{agent}/sessions?sort=first_seen")).body["sessions"]
    assert len(listed) == 2
    documents = []
    for row in reversed(listed):  # oldest first
        reply = await svc.trajectory(agent, row["session_id"], "?wait=10")
        assert reply.status == 200, reply.text
        documents.append(reply.body)
    turn_1, turn_2 = documents
    assert corpus.compare(turn_1, corpus.GroundTruth.of(capture.llm_log[:2])) == []
    assert corpus.compare(turn_2, corpus.GroundTruth.of(capture.llm_log[2:])) == []
    first = next(s for s in turn_1["steps"] if s.get("tool_calls"))
    results = {r["source_call_id"]: r for r in first["observation"]["results"]}
    paris, atlantis = (results[c["tool_call_id"]] for c in first["tool_calls"])
    assert paris["content"] == "sunny, 21°C" and not paris["extra"].get("is_error")
    assert atlantis["extra"]["error"]["exceptions"][0]["type"] == "ValueError"
    assert turn_1["agent"]["name"] == "weather-agent"
    # autolog's copies of the request's model and tools, and each span's log level, are read.
    for document in documents:
        assert document["extra"]["unmapped_attributes"] == []


async def test_mlflow_session_list_names_the_model_and_counts_tokens(svc: Service) -> None:
    """Before: MLflow writes every attribute as JSON, so the list named the model '"gpt-4o"' (quotes included), and
    its token counts are one JSON attribute (`mlflow.chat.tokenUsage`): 0 tokens, no cost."""
    agent, key = await svc.new_agent("mlflow-openai")
    await asyncio.to_thread(corpus.replay, corpus.load("mlflow_openai"), svc.running.otlp_http, key)
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert len(listed) == 2
    for row in listed:
        reply = await svc.trajectory(agent, row["session_id"], "?wait=10")
        final = reply.body["final_metrics"]
        assert row["models"] == ["gpt-4o"]
        assert (row["prompt_tokens"], row["completion_tokens"], row["cost_usd"]) == (
            final["total_prompt_tokens"], final["total_completion_tokens"], final["total_cost_usd"])


async def test_dspy_mlflow_each_turn_s_trace_is_its_calls_and_listed_so(svc: Service) -> None:
    """MLflow's DSPy autolog (KNOWN_GAPS in test_capture_corpus.py: no session on the wire, no LM call's tokens): each
    turn's trace, read through the service, is the conversation of its five calls, each question once, its tokens the
    run's total (trajectory/run_totals.py: no step's); the session list counts five calls (not the Predict spans
    around them, also typed LLM), no tokens yet (the root span's total is no call's: the list's part of the gap), the
    model, and errors where the raising tool is flagged."""
    name = "dspy_mlflow"
    capture = corpus.load(name)
    agent, key = await svc.new_agent(name.replace("_", "-"))
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    listed = (await svc.get(f"/api/agents/{agent}/sessions?sort=first_seen")).body["sessions"]
    assert len(listed) == 2
    for turn, row in enumerate(reversed(listed)):  # oldest first
        reply = await svc.trajectory(agent, row["session_id"], "?wait=10")
        assert reply.status == 200, reply.text
        document, log = reply.body, capture.llm_log[turn * 5:turn * 5 + 5]
        truth = corpus.GroundTruth.of(log)
        assert corpus.compare(document, truth) == []
        assert document["final_metrics"]["extra"]["tokens_from"] == "run total"
        assert questions.missing_questions(document, log) == []
        assert (row["llm_calls"], row["prompt_tokens"], row["completion_tokens"]) == (5, 0, 0)
        assert row["models"] == ["openai/gpt-4o-mini"]
        assert (row["errors"] > 0) == (turn == 1)
        assert document["extra"]["unmapped_attributes"] == []

# The Traceloop SDK capture, beyond `corpus.compare`: its decorator spans are no steps, its failing tool is flagged.
async def test_traceloop_sdk_workflow_agent_and_tool_spans_two_turns_one_session(svc: Service) -> None:
    _agent, document = await _replayed(svc, "openai-sdk_traceloop-sdk")
    # Two traces (one @workflow per turn) grouped by the `session_id` association property.
    assert document["extra"]["settlement"]["trace_count"] == 2
    # The @workflow and @agent spans (their entity input is the history, their output the answer) are no steps:
    # the system prompt and each question once, though turn 2 re-sends turn 1, and one agent step per call.
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    assert [s["message"] for s in document["steps"] if s["source"] != "agent"] == [
        "You are a terse travel assistant.", "What is the weather in Lisbon and Porto?",
        "Book me a hotel in Porto for 2 nights."]
    assert not [s for s in document["steps"] if s.get("is_copied_context")]
    assert document["agent"]["name"] == "trip_assistant"
    # The @tool spans answer their calls by id: the parallel weather results, and the raising hotel tool flagged
    # with its exception, its content the error text the loop sent the model.
    results = {r["source_call_id"]: r for s in document["steps"]
               for r in (s.get("observation") or {}).get("results", ())}
    assert [(r["content"], bool(r["extra"].get("is_error"))) for r in results.values()] == [
        ("sunny, 24°C", False), ("cloudy, 18°C", False), ("Error: no rooms free in Porto for 2 nights", True)]
    assert results["call_2_0"]["extra"]["error"]["exceptions"][0]["type"] == "RuntimeError"
    # The streamed calls (turn 2, include_usage) have their tokens like the others.
    assert all(s["metrics"]["completion_tokens"] > 0 for s in document["steps"] if s["source"] == "agent")
    assert document["extra"]["unmapped_attributes"] == []
