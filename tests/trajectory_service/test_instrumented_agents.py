"""Real instrumentations exporting through the real OTLP exporter to the running service, then the
trajectory over HTTP: pydantic-ai (FunctionModel), and an OpenAI client instrumented by OpenInference
and by OpenLLMetry against a local fake OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.trajectory_service.conftest import Service, assert_schema_and_atif_valid, shared_svc

# One service for the module's tests (each sends to agents of its own): a service per test was ~1 s of each.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def svc(module_service: Service) -> Service:
    return shared_svc(module_service)


def _provider(svc: Service, key: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "agent-under-test"}))
    exporter = OTLPSpanExporter(endpoint=f"{svc.running.otlp_http}/v1/traces",
                                headers={"authorization": f"Bearer {key}"})
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def _in_session(provider: TracerProvider, session: str, work: Callable[[], Any]) -> Any:
    """What an app does: one root span naming the session around the agent's work."""
    with provider.get_tracer("app").start_as_current_span("session", attributes={"session.id": session}):
        return work()


async def test_pydantic_ai_function_model(svc: Service) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import RequestUsage

    agent_id, key = await svc.new_agent()
    provider = _provider(svc, key)

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(tool_name="add", args={"a": 2, "b": 3}, tool_call_id="c1")],
                                 usage=RequestUsage(input_tokens=100, output_tokens=10))
        return ModelResponse(parts=[TextPart(content="5")], usage=RequestUsage(input_tokens=120, output_tokens=2))

    agent = Agent(FunctionModel(script), name="calc", system_prompt="You add.", capabilities=[
        Instrumentation(settings=InstrumentationSettings(tracer_provider=provider, version=5))])

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    # Blocking exports: run the agent off the event loop that serves them.
    output = await asyncio.to_thread(_in_session, provider, "pai-1", lambda: agent.run_sync("2+3?").output)
    provider.shutdown()
    assert output == "5"
    reply = await svc.trajectory(agent_id, "pai-1")
    assert reply.status == 200, reply.text
    document = reply.body
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid"
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("system", "You add."), ("user", "2+3?"), ("agent", ""), ("agent", "5")]
    call = document["steps"][2]["tool_calls"][0]
    assert (call["function_name"], call["arguments"]) == ("add", {"a": 2, "b": 3})
    result = document["steps"][2]["observation"]["results"][0]
    assert (result["source_call_id"], result["content"]) == (call["tool_call_id"], "5")
    # prices.yaml: function:* at $2 in, $8 out per million: (220 x 2 + 12 x 8) / 1e6
    assert document["final_metrics"]["total_prompt_tokens"] == 220
    assert document["final_metrics"]["total_completion_tokens"] == 12
    assert document["final_metrics"]["total_cost_usd"] == 0.000536
    assert document["agent"]["name"] == "calc"
    assert "pydantic-ai" in " ".join(document["extra"]["emitters"]) or document["extra"]["emitters"]
    assert_schema_and_atif_valid(document)
    listed = (await svc.get(f"/api/agents/{agent_id}/sessions")).body["sessions"][0]
    assert (listed["steps"], listed["prompt_tokens"], listed["cost_usd"]) == (2, 220, 0.000536)


# -- a fake OpenAI-compatible endpoint ----------------------------------------------------------------------------
def _completion(message: dict[str, Any], prompt: int, completion: int, finish: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_760_000_000, "model": "test-model-1",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}}


async def _chat(request: web.Request) -> web.Response:
    body = await request.json()
    if not any(m["role"] == "tool" for m in body["messages"]):
        return web.json_response(_completion({"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_w1", "type": "function",
             "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}]}, 50, 20,
            "tool_calls"))
    return web.json_response(_completion({"role": "assistant", "content": "It is sunny in Paris."}, 80, 10, "stop"))


@contextlib.asynccontextmanager
async def _openai_endpoint(chat: Callable[[web.Request], Awaitable[web.Response]]) -> AsyncIterator[str]:
    """A local OpenAI-compatible endpoint answering chat completions with `chat`; yields its base URL."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


@pytest_asyncio.fixture(loop_scope="module")  # served in the loop the module's tests run in
async def fake_openai() -> AsyncIterator[str]:
    async with _openai_endpoint(_chat) as url:
        yield url


def _weather_agent(base_url: str) -> str:
    """Plain OpenAI client code: ask, run the tool it asks for, ask again."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    messages: list[Any] = [{"role": "system", "content": "You report weather."},
                           {"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.create(model="test-model-1", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny, 24C"})
    second = client.chat.completions.create(model="test-model-1", messages=messages, tools=tools)
    return str(second.choices[0].message.content)


@pytest.mark.parametrize("instrumentation", ["openinference", "openllmetry"])
async def test_instrumented_openai_client(svc: Service, fake_openai: str, instrumentation: str) -> None:
    if instrumentation == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
    else:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # type: ignore[no-redef]
    agent_id, key = await svc.new_agent()
    provider = _provider(svc, key)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        answer = await asyncio.to_thread(_in_session, provider, f"oa-{instrumentation}",
                                         lambda: _weather_agent(fake_openai))
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    assert answer == "It is sunny in Paris."
    reply = await svc.trajectory(agent_id, f"oa-{instrumentation}")
    assert reply.status == 200, reply.text
    document = reply.body
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid"
    steps = [(s["source"], s.get("message")) for s in document["steps"]]
    assert steps == [("system", "You report weather."), ("user", "Weather in Paris?"), ("agent", ""),
                     ("agent", "It is sunny in Paris.")], steps
    tool_step = document["steps"][2]
    assert tool_step["tool_calls"][0]["function_name"] == "get_weather"
    assert tool_step["tool_calls"][0]["arguments"] == {"city": "Paris"}
    result = tool_step["observation"]["results"][0]
    assert result["source_call_id"] == "call_w1" and result["content"] == "sunny, 24C"
    # test-model*: $1 in, $4 out per million: (50 + 80) x 1 + (20 + 10) x 4 = 250
    assert (document["final_metrics"]["total_prompt_tokens"], document["final_metrics"]["total_completion_tokens"]
            ) == (130, 30)
    assert document["final_metrics"]["total_cost_usd"] == 0.00025
    assert all(s["metrics"]["extra"]["price_source"] == "prices.yaml" for s in document["steps"][2:])
    assert_schema_and_atif_valid(document)


# -- a model call that fails before the model answers ------------------------------------------------------------
async def _capitals(request: web.Request) -> web.Response:
    """Japan's capital is known; any other question gets the provider's 500."""
    body = await request.json()
    if "Japan" not in str(body["messages"][-1]["content"]):
        return web.json_response({"error": {"message": "upstream overloaded", "type": "server_error"}}, status=500)
    return web.json_response(_completion({"role": "assistant", "content": "Tokyo."}, 30, 3, "stop"))


@pytest_asyncio.fixture(loop_scope="module")  # served in the loop the module's tests run in
async def capitals_openai() -> AsyncIterator[str]:
    async with _openai_endpoint(_capitals) as url:
        yield url


def _closed_port_url() -> str:
    """An address nothing listens on: the connection is refused."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _openai_agent(base_url: str, provider: TracerProvider, instructions: str | None = None) -> Any:
    """A pydantic-ai agent on an OpenAI-compatible endpoint, instrumented as its docs say."""
    import openai
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    model = OpenAIChatModel("test-model-1", provider=OpenAIProvider(openai_client=client))
    return Agent(model, name="capitals", instructions=instructions, capabilities=[
        Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))])


def _raised(work: Callable[[], Any]) -> str:
    try:
        work()
    except Exception as exc:  # what the agent's caller sees
        return type(exc).__name__
    raise AssertionError("the agent run was expected to fail")


@pytest.mark.parametrize("failure", ["500", "refused"])
async def test_pydantic_ai_first_call_failing_keeps_the_prompt(svc: Service, capitals_openai: str,
                                                               failure: str) -> None:
    """pydantic-ai records a call's messages only once the model answers: when the first call raises,
    the prompt is on the agent run's span alone, and the trajectory still opens with it."""
    agent_id, key = await svc.new_agent()
    provider = _provider(svc, key)
    agent = _openai_agent(capitals_openai if failure == "500" else _closed_port_url(), provider)
    raised = await asyncio.to_thread(_in_session, provider, f"pai-{failure}",
                                     lambda: _raised(lambda: agent.run_sync("What is the capital of Peru?")))
    provider.shutdown()
    exception = {"500": "ModelServerError", "refused": "ModelConnectionError"}[failure]
    assert raised == exception
    reply = await svc.trajectory(agent_id, f"pai-{failure}")
    assert reply.status == 200, reply.text
    document = reply.body
    steps = [(s["source"], s["message"]) for s in document["steps"]]
    assert steps == [("user", "What is the capital of Peru?"), ("agent", "")], steps
    error = document["steps"][1]["extra"]["error"]
    assert error["status"] == "error" and error["exceptions"][0]["type"] == f"pydantic_ai.exceptions.{exception}"
    assert document["steps"][0]["extra"]["from"] == "agent span"
    assert_schema_and_atif_valid(document)


async def test_pydantic_ai_failed_second_turn_shows_its_question_once(svc: Service, capitals_openai: str) -> None:
    """A conversation's second turn fails on its first call: its question (the last of the run's
    conversation, not the first) is shown; the first turn, whose call recorded its input, is unchanged."""
    agent_id, key = await svc.new_agent()
    provider = _provider(svc, key)
    agent = _openai_agent(capitals_openai, provider, instructions="Answer with the capital city.")

    def conversation() -> str:
        first = agent.run_sync("What is the capital of Japan?")
        return _raised(lambda: agent.run_sync("And of Peru?", message_history=first.all_messages()))

    raised = await asyncio.to_thread(_in_session, provider, "pai-turns", conversation)
    provider.shutdown()
    assert raised == "ModelServerError"
    reply = await svc.trajectory(agent_id, "pai-turns")
    assert reply.status == 200, reply.text
    document = reply.body
    steps = [(s["source"], s["message"]) for s in document["steps"]]
    assert steps == [("system", "Answer with the capital city."), ("user", "What is the capital of Japan?"),
                     ("agent", "Tokyo."), ("user", "And of Peru?"), ("agent", "")], steps
    assert "error" not in document["steps"][2].get("extra", {})
    assert document["steps"][4]["extra"]["error"]["status"] == "error"
    assert_schema_and_atif_valid(document)
