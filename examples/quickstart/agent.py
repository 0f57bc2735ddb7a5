"""A small pydantic-ai agent that runs offline: its "model" is a Python function (FunctionModel).

It looks a city up with a tool, then answers. pydantic-ai's own OpenTelemetry
instrumentation records the model call and the tool call; evalkit nests those
spans under each run's root span and builds the trajectory from them.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

CAPITALS = {"france": "Paris", "japan": "Tokyo", "kenya": "Nairobi", "peru": "Lima"}


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Stands in for an LLM: first ask the tool, then answer with what it returned."""
    returns = [part for message in messages for part in getattr(message, "parts", [])
               if isinstance(part, ToolReturnPart)]
    if not returns:
        question = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        country = question.rstrip("?").split()[-1]
        return ModelResponse(parts=[ToolCallPart(tool_name="lookup_capital", args={"country": country},
                                                 tool_call_id="call_1")],
                             usage=RequestUsage(input_tokens=40, output_tokens=12))
    return ModelResponse(parts=[TextPart(content=f"The capital is {returns[-1].content}.")],
                         usage=RequestUsage(input_tokens=60, output_tokens=8))


# pydantic-ai's own instrumentation, into the global tracer provider (evalkit's, during a run).
Agent.instrument_all()
agent = Agent(FunctionModel(scripted_model, model_name="scripted-capitals"), name="capitals",
              instructions="Answer with the capital city.")


@agent.tool_plain
def lookup_capital(country: str) -> str:
    """The capital of a country."""
    return CAPITALS.get(country.lower(), "unknown")


async def answer(input: Any) -> str:
    """The task evalkit calls once per case and repetition."""
    question = input["question"] if isinstance(input, dict) else str(input)
    result = await agent.run(question)
    return result.output


if __name__ == "__main__":
    import asyncio

    print(json.dumps(asyncio.run(answer({"question": "What is the capital of Japan?"}))))
